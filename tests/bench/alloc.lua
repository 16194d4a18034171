-- alloc.lua N: keeps N strings of 100 bytes alive (about N * 130 bytes of
-- Lua heap) and marks each batch of 1000 as a latency event.
local eph = require "ephemera"
local n = tonumber(arg[1]) or 10000
local keep = {}
for i = 1, n, 1000 do
  eph.event_begin()
  for k = i, math.min(n, i + 999) do keep[k] = string.rep("x", 90) .. k end
  eph.event_end()
end
assert(#keep == n)
