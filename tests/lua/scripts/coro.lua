-- Coroutines and finalisers under the profiler.
local co = coroutine.wrap(function()
  for i = 1, 10 do coroutine.yield({ i }) end
end)
local got = 0
for _ = 1, 10 do got = got + co()[1] end
setmetatable({}, { __gc = function() local x = { "made in __gc" } end })
collectgarbage()
collectgarbage()
print("coro", got)
