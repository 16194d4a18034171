-- Attaches the module to this running state, then detaches.
local before = {}
for i = 1, 200 do before[i] = {i} end -- allocated before the profiler attached
local eph = require "ephemera"
local out = eph.start{ out = arg[1], sample = arg[2] or "1/1" } -- arg[2]: module_host --own-alloc runs
collectgarbage()
for i = 1, 100 do local t = {} end -- line 7
before = nil -- freed while attached: blocks it never saw
collectgarbage()
local st = eph.stats()
assert(st.cycles >= 2, "cycles counted: " .. tostring(st.cycles))
local n = eph.stop()
assert(n and (n >= 100 or arg[2]), "records: " .. tostring(n))
-- the state goes on with its own allocator
local after = {}
for i = 1, 1000 do after[i] = { tostring(i) } end
after = nil
collectgarbage()
print("attach ok", out)
