-- Writes deterministic inputs: gen-data.lua csv ROWS FILE | gen-data.lua json ITEMS FILE
local kind, n, path = arg[1], tonumber(arg[2]), arg[3]
local f = assert(io.open(path, "w"))
local seed = 42
local function rnd() seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 end
if kind == "csv" then
  f:write("id,name,value,city\n")
  local cities = { "Lyon", "Lille", "Paris", "Nantes", "Brest" }
  for i = 1, n do
    f:write(string.format("%d,item%d,%.4f,%s\n", i, i, rnd() * 1000, cities[i % #cities + 1]))
  end
else
  f:write('{"name":"bench","items":[')
  for i = 1, n do
    if i > 1 then f:write(",") end
    f:write(string.format('{"id":%d,"label":"item number %d","value":%.4f,"ok":%s,"tags":["a%d","b","c"]}',
      i, i, rnd() * 1000, i % 2 == 0 and "true" or "false", i % 7))
  end
  f:write("]}")
end
f:close()
