-- Loads a CSV file with Penlight's pl.data and summarises it.
-- usage: csv-penlight.lua FILE   (make one with gen-data.lua csv ROWS FILE)
local data = require "pl.data"
local d = assert(data.read(arg[1]))
local n, sum = 0, 0
for _, row in ipairs(d) do
  n = n + 1
  sum = sum + (tonumber(row[3]) or 0)
end
print(string.format("rows=%d fields=%s sum=%.3f", n, table.concat(d.fieldnames, "|"), sum))
