-- Known call paths: make() allocates under two callers, via_a doing four
-- times via_b's work; the calls are not tail calls, so both frames stay.
local keep = {}
local function make(n)
  local t = {}
  for i = 1, n do t[i] = {i} end
  return t
end
local function via_a() local t = make(4000); return t end
local function via_b() local t = make(1000); return t end
local function run()
  for _ = 1, 20 do
    keep[#keep + 1] = via_a()
    via_b()
  end
end
run()
