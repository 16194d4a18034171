-- Objects that die at known points: run with --gc incremental.
collectgarbage("stop")
collectgarbage()
local keep = {}
for i = 1, 100 do keep[i] = {} end -- line 5: 100 tables, freed by the 3rd collection below
for i = 1, 50 do local t = {} end -- line 6: 50 tables, garbage at once
collectgarbage() -- frees line 6's tables (survived 0 cycles)
collectgarbage()
keep = nil
collectgarbage() -- frees line 5's tables (survived 2 cycles)
local s = {}
for i = 1, 20 do s[i] = string.rep("x", 100) .. i end -- line 12: 40 long strings, censored
local function mk(n) return function() return n end end
local fs = {}
for i = 1, 30 do fs[i] = mk(i) end -- line 15 (closures made at line 13): 30 Lua closures + 30 upvalues
fs = nil
collectgarbage() -- frees them (survived 0 cycles)
LIVE = s
print("known done")
