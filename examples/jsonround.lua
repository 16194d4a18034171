-- Encode and decode a generated document with dkjson, keeping every tenth.
local json = require("dkjson")
local kept = {}
local function record(i)
  return {id = i, name = "item" .. i, tags = {"a", "b", tostring(i % 7)}, score = i * 0.5}
end
local function document(n)
  local d = {}
  for i = 1, n do d[i] = record(i) end
  return d
end
local function roundtrip(n)
  local text = json.encode(document(n))
  local back = json.decode(text)
  return back
end
for round = 1, 40 do
  local back = roundtrip(300)
  if round % 10 == 0 then kept[#kept + 1] = back end
end
