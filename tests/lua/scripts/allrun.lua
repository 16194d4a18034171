-- all.lua with a Lua __gc tracer that counts the collections that run
-- finalisers, kept alive as the suite keeps its own (tracegc.lua): around
-- the stack-overflow tests (tracegc.stop/start) the collector is stopped,
-- so that no finaliser meets a full stack and no collection goes unseen.
local count, write, format, collectgarbage, setmetatable = 0, io.write, string.format, collectgarbage, setmetatable
local mt = {}
mt.__gc = function() count = count + 1; setmetatable({}, mt) end
package.loaded.tracegc = {
  start = function() collectgarbage("restart") end,
  stop = function() collectgarbage(); collectgarbage("stop") end,
}
setmetatable({}, mt)
_port = true
dofile("all.lua")
write(format("tracer cycles: %d\n", count))
