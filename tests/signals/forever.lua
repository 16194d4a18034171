-- forever.lua: allocates until a signal ends it (tests/signals): tables and
-- strings, one in a hundred kept alive (up to 100 000 at a time), so that
-- an interrupted profile has deaths and censored records.
local keep, i = {}, 0
while true do
  i = i + 1
  local t = {i, tostring(i)}
  if i % 100 == 0 then
    keep[#keep + 1] = t
    if #keep == 100000 then keep = {} end
  end
end
