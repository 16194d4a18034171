#!/bin/sh
# c_stacks_test.sh EPHEMERA PROGRAM WORK: call stacks of a C program marked
# with EPH_CALLER (c_stacks.c: make() under via_a, 4x the work, and via_b,
# both under run()).  In gc mode (1/20: the profiler sees each sample as it
# is made) and in finalization mode (1/20), with stacks=4:
#  - `report --by site --stack-depth 3` has both paths, objects in the
#    ratio 4:1 (3.3..4.8), and depth 1 folds them into the one site;
#  - the metadata flags stacks=4;
#  - without stacks=, EPH_CALLER does nothing: one plain site.
set -u
EPH=$1 PROG=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
fail=0
objects() { awk -F, -v want="$2" 'NR > 1 { l = $1; gsub(/"/, "", l); if (l ~ want) s += $4 } END { print s + 0 }' "$1"; }
for mode in gc finalization; do
  "$PROG" "mode=$mode,sample=1/20,stacks=4,out=$WORK/$mode.eph" || { echo "FAIL: $mode: the program"; fail=1; continue; }
  "$EPH" dump "$WORK/$mode.eph" | grep -q '^  stacks  *4$' || { echo "FAIL: $mode: no stacks=4 metadata"; fail=1; }
  "$EPH" report "$WORK/$mode.eph" --by site --stack-depth 3 --format csv -o "$WORK/$mode-3" >/dev/null || { echo "FAIL: report"; exit 1; }
  "$EPH" report "$WORK/$mode.eph" --by site --format csv -o "$WORK/$mode-1" >/dev/null || { echo "FAIL: report"; exit 1; }
  A=$(objects "$WORK/$mode-3/classes.csv" '^make c_stacks.c:[0-9]+ < via_a c_stacks.c:[0-9]+ < run c_stacks.c:[0-9]+$')
  B=$(objects "$WORK/$mode-3/classes.csv" '^make c_stacks.c:[0-9]+ < via_b c_stacks.c:[0-9]+ < run c_stacks.c:[0-9]+$')
  S=$(objects "$WORK/$mode-1/classes.csv" '^make c_stacks.c:[0-9]+$')
  awk -v m="$mode" -v a="$A" -v b="$B" -v s="$S" 'BEGIN {
    if (b == 0) { print "FAIL: " m ": no via_b path"; exit 1 }
    r = a / b; printf "%s: via_a %d, via_b %d objects (ratio %.2f), folded %d\n", m, a, b, r, s
    if (r < 3.3 || r > 4.8) { print "FAIL: " m ": ratio " r ", expected about 4"; exit 1 }
    if (a + b != s) { print "FAIL: " m ": the folded row " s " is not the sum " a + b; exit 1 } }' || { fail=1; cat "$WORK/$mode-3/classes.csv"; }
done
"$PROG" "mode=gc,sample=1/20,out=$WORK/plain.eph" || { echo "FAIL: the program without stacks"; exit 1; }
"$EPH" report "$WORK/plain.eph" --by site --stack-depth 3 --format csv -o "$WORK/plain" >/dev/null || { echo "FAIL: report"; exit 1; }
[ "$(objects "$WORK/plain/classes.csv" '<')" = 0 ] || { echo "FAIL: stacks without stacks="; fail=1; }
[ "$(objects "$WORK/plain/classes.csv" '^make c_stacks.c:[0-9]+$')" -gt 0 ] || { echo "FAIL: no plain site"; fail=1; }
[ $fail = 0 ] && echo "C stacks: ok"
exit $fail
