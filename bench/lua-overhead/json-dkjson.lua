-- Decodes a JSON file with dkjson (pure Lua) and summarises it.
-- usage: json-dkjson.lua FILE   (make one with gen-data.lua json N FILE)
local json = require "dkjson"
local f = assert(io.open(arg[1], "rb"))
local text = f:read("a")
f:close()
local obj, _, err = json.decode(text, 1, nil)
assert(obj, err)
local n, sum, tags = 0, 0, 0
for _, item in ipairs(obj.items) do
  n = n + 1
  sum = sum + item.value
  tags = tags + #item.tags
end
print(string.format("items=%d sum=%.3f tags=%d name=%s", n, sum, tags, obj.name))
