-- steady births and deaths: a ring of live tables, the collector running
local ring, n = {}, tonumber(arg[1]) or 1000000
for i = 1, n do ring[i % 5000] = {i, tostring(i)} end
print("ring done")
