-- blocked.lua: keeps 10 000 tables, then blocks reading a line from stdin
-- (tests/signals: only a second signal ends it).
local keep = {}
for i = 1, 10000 do keep[i] = {i} end
io.write("blocked\n")
io.flush()
return io.read("l")
