-- The reproduction of a lost GC-cycle count (locals.lua's "tbc variable
-- high in the stack"): a stack overflow in a coroutine whose message
-- handler allocates with the stack full, where Lua cannot run a finaliser;
-- then more allocation.  Prints the collections a Lua __gc tracer armed
-- after the overflow saw: the profile must count at least those.
local function tracer()
  local n = 0
  local mt = {}
  mt.__gc = function() n = n + 1; setmetatable({}, mt) end
  setmetatable({}, mt)
  return function() return n end
end
local function func2close(f) return setmetatable({}, { __close = f }) end
local function overflow(n) overflow(n + 1) end
local function errorh(m)
  assert(string.find(m, "stack overflow"))
  local x <close> = func2close(function(o) o[1] = 10 end)
  return x
end
local early = tracer() -- may die in the overflow, as the adapter's own sentinel did
local co = coroutine.wrap(function()
  local y <close> = func2close(function() end)
  return xpcall(overflow, errorh, 0)
end)
local st, obj = co()
assert(not st and obj[1] == 10)
local late = tracer()
local keep = {}
for i = 1, tonumber(arg[1]) or 1000000 do keep[i % 1000 + 1] = { i, tostring(i) } end
print(string.format("early=%d late=%d", early(), late()))
