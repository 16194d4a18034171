-- Many tables for sampling estimates.
collectgarbage("stop")
local n = tonumber(arg[1]) or 20000
for i = 1, n do local t = {i} end -- line 4
collectgarbage()
print("many done")
