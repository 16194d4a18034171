#!/bin/sh
# lua_stacks_test.sh EPHEMERA WORK: Lua call stacks at sampled allocations.
# tests/export/paths.lua allocates at one line (make, line 6) under two
# callers, via_a (line 9, called at line 13) doing 4x the work of via_b
# (line 10, called at line 14).  Profiled 1 in 10 with stacks=8:
#  - the metadata flags the stacks (stacks=8);
#  - `report --by site --stack-depth 4` has both paths, their objects in
#    the ratio 4:1 (within 3.3..4.8: sampling noise is ~1 %);
#  - `report --by site` (depth 1) folds them back into one row, equal to
#    their sum;
#  - the pprof export has the callers as frames (go tool pprof -top -cum:
#    via_a's and via_b's lines with their paths' objects), when go is here;
#  - the HTML flame graph names the callers;
#  - without stacks=, the file has no stacks and the report one row.
set -u
EPH=$(realpath "$1") WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
WORK=$(realpath "$WORK")
cd "$(dirname "$0")" || exit 1 # Lua names the chunk as given: "paths.lua"
SCRIPT=paths.lua
fail=0
"$EPH" lua --profile sample=1/10,stacks=8 -o "$WORK/s.eph" "$SCRIPT" || { echo "FAIL: ephemera lua"; exit 1; }
"$EPH" dump "$WORK/s.eph" | grep -q '^  stacks  *8$' || { echo "FAIL: no stacks=8 metadata"; fail=1; }
# objects of the report row whose label is exactly $2, in the CSV $1
objects() { awk -F, -v want="$2" 'NR > 1 { l = $1; gsub(/"/, "", l); if (l == want) print $4 }' "$1"; }
"$EPH" report "$WORK/s.eph" --by site --stack-depth 4 --format csv -o "$WORK/d4" >/dev/null || { echo "FAIL: report"; exit 1; }
"$EPH" report "$WORK/s.eph" --by site --format csv -o "$WORK/d1" >/dev/null || { echo "FAIL: report"; exit 1; }
LEAF="function <paths.lua:4> paths.lua:6"
A=$(objects "$WORK/d4/classes.csv" "$LEAF < function <paths.lua:9> paths.lua:9 < function <paths.lua:11> paths.lua:13 < main chunk paths.lua:17")
B=$(objects "$WORK/d4/classes.csv" "$LEAF < function <paths.lua:10> paths.lua:10 < function <paths.lua:11> paths.lua:14 < main chunk paths.lua:17")
S=$(objects "$WORK/d1/classes.csv" "$LEAF")
[ -n "$A" ] && [ -n "$B" ] && [ -n "$S" ] || { echo "FAIL: paths missing (via_a '$A', via_b '$B', site '$S')"; cat "$WORK/d4/classes.csv"; exit 1; }
awk -v a="$A" -v b="$B" -v s="$S" 'BEGIN {
  r = a / b; printf "via_a %d, via_b %d objects (ratio %.2f); folded %d\n", a, b, r, s
  if (r < 3.3 || r > 4.8) { print "FAIL: ratio " r ", expected about 4"; exit 1 }
  if (a + b != s) { print "FAIL: the folded row " s " is not the sum " a + b; exit 1 } }' || fail=1
if command -v go >/dev/null; then
  export HOME="$WORK" GOCACHE="$WORK/gocache"
  "$EPH" export "$WORK/s.eph" --pprof "$WORK/s.pb.gz" >/dev/null || { echo "FAIL: export"; exit 1; }
  go tool pprof -top -cum -lines -nodefraction=0 -unit=B -sample_index=objects "$WORK/s.pb.gz" >"$WORK/cum.txt" 2>/dev/null ||
    { echo "FAIL: go tool pprof"; exit 1; }
  # cum (4th column) of the frame "function paths.lua:N paths.lua:N"
  cum() { awk -v f="function paths.lua:$1" -v l="paths.lua:$1" '$(NF-1) == l && index($0, f) { v = $4; sub(/B$/, "", v); print v }' "$WORK/cum.txt"; }
  ca=$(cum 9) cb=$(cum 10)
  awk -v ca="${ca:-0}" -v cb="${cb:-0}" -v a="$A" -v b="$B" 'BEGIN {
    # the caller frames also hold make()s own table (line 4): a few objects more
    if (ca < a || ca > a + 100 || cb < b || cb > b + 100) { print "FAIL: pprof caller frames: via_a " ca " (path " a "), via_b " cb " (path " b ")"; exit 1 }
    print "pprof: via_a frame " ca ", via_b frame " cb }' || { fail=1; cat "$WORK/cum.txt"; }
fi
"$EPH" report "$WORK/s.eph" --format html -o "$WORK/html" >/dev/null || { echo "FAIL: html"; exit 1; }
grep -q 'by call stack</h2>' "$WORK/html/report.html" || { echo "FAIL: the flame graph is not by call stack"; fail=1; }
grep -q '<title>function &lt;paths.lua:9&gt; paths.lua:9:' "$WORK/html/report.html" || { echo "FAIL: via_a not in the flame graph"; fail=1; }
# Without stacks.
"$EPH" lua --profile sample=1/10 -o "$WORK/n.eph" "$SCRIPT" || { echo "FAIL: ephemera lua"; exit 1; }
"$EPH" dump "$WORK/n.eph" | grep -q '^  stacks ' && { echo "FAIL: stacks metadata without stacks="; fail=1; }
"$EPH" report "$WORK/n.eph" --by site --stack-depth 4 --format csv -o "$WORK/n4" >/dev/null || { echo "FAIL: report"; exit 1; }
[ -n "$(objects "$WORK/n4/classes.csv" "$LEAF")" ] || { echo "FAIL: no plain site row without stacks"; fail=1; }
[ $fail = 0 ] && echo "lua stacks: ok"
exit $fail
