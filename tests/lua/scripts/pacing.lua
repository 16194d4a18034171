-- What Lua's collector decides by itself, printed so that a run under the
-- profiler can be compared with plain lua5.4: the profiler must not change
-- it.  pacing.lua steps | generational
local function tracer() -- counts the collections that run finalisers
  local n = 0
  local mt = {}
  mt.__gc = function() n = n + 1; setmetatable({}, mt) end
  setmetatable({}, mt)
  return function() return n end
end
local keep = {}
if arg[1] == "steps" then
  -- how many collectgarbage("step", n) finish a cycle, on a heap of about 40 KB
  collectgarbage("incremental")
  for i = 1, 400 do keep[i] = { i, tostring(i) } end
  for _, n in ipairs { 1, 2, 10 } do
    collectgarbage()
    local steps = 0
    repeat steps = steps + 1 until collectgarbage("step", n)
    io.write(string.format("step(%d): %d steps, ", n, steps))
  end
  print(string.format("count %.4f KB", collectgarbage("count")))
else
  -- a fixed generational workload: how many collections it runs
  collectgarbage("generational")
  local collections = tracer()
  for i = 1, 300000 do
    keep[i % 2000 + 1] = { i }
    if i % 3 == 0 then keep[i % 500 + 1] = tostring(i) end
  end
  print(string.format("collections %d, count %.4f KB", collections(), collectgarbage("count")))
end
