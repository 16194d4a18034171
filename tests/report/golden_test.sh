#!/bin/sh
# golden_test.sh GEN EPHEMERA GOLDEN_DIR WORK: tiny profiles through
# report/compare in every format, diffed against tests/report/golden/
# (UPDATE_GOLDEN=1 rewrites them); bad files give one line with the offset.
set -u
GEN=$1 EPH=$2 GOLD=$3 WORK=$4
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
fail=0
for v in 0 1 2 3 4; do "$GEN" "$WORK/tiny$v.eph" $v || exit 1; done
check() { # name command...
  name=$1; shift
  "$@" >"$WORK/$name" 2>"$WORK/$name.err" || { echo "FAIL: $name exited $?"; cat "$WORK/$name.err"; fail=1; return; }
  if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then cp "$WORK/$name" "$GOLD/$name"; fi
  diff -u "$GOLD/$name" "$WORK/$name" >"$WORK/$name.diff" || { echo "FAIL: $name differs from golden"; head -40 "$WORK/$name.diff"; fail=1; }
}
check gc.txt "$EPH" report "$WORK/tiny0.eph"
check gc-site.txt "$EPH" report "$WORK/tiny0.eph" --by site --short 10 --most 40
check gc-alive.csv "$EPH" report "$WORK/tiny0.eph" --format csv --end alive
check exact.txt "$EPH" report "$WORK/tiny2.eph"
check exact.json "$EPH" report "$WORK/tiny2.eph" --format json
check sampled.txt "$EPH" report "$WORK/tiny3.eph"
check lua.txt "$EPH" report "$WORK/tiny4.eph"
check lua.json "$EPH" report "$WORK/tiny4.eph" --format json
# the Lua advice appears only for runtime=lua profiles
if grep -q 'Lua collector advice' "$WORK/gc.txt"; then echo "FAIL: Lua advice in a non-Lua report"; fail=1; fi
EPH_GNUPLOT= "$EPH" report "$WORK/tiny4.eph" --format html -o "$WORK/luahtml" >/dev/null 2>&1 &&
  grep -q '<h2>Lua collector advice</h2>' "$WORK/luahtml/report.html" ||
  { echo "FAIL: no Lua advice section in the HTML report"; fail=1; }
check compare.txt "$EPH" compare "$WORK/tiny0.eph" "$WORK/tiny1.eph"
check compare.csv "$EPH" compare "$WORK/tiny0.eph" "$WORK/tiny1.eph" --format csv
check compare.json "$EPH" compare "$WORK/tiny0.eph" "$WORK/tiny1.eph" --format json
# identical deaths: no change, overall and per class
"$EPH" compare "$WORK/tiny0.eph" "$WORK/tiny0.eph" >"$WORK/same.txt" 2>&1 || { echo "FAIL: compare A A"; fail=1; }
grep -q 'no change: the deaths are identical' "$WORK/same.txt" || { echo "FAIL: compare A A does not say no change"; cat "$WORK/same.txt"; fail=1; }
if grep -q 'CHANGED\|  !  ' "$WORK/same.txt"; then echo "FAIL: compare A A flags a change"; fail=1; fi
# --exact: the calibration table; refused when EXACT is not exact
check calibrate.txt "$EPH" compare --exact "$WORK/tiny2.eph" "$WORK/tiny0.eph"
check calibrate.csv "$EPH" compare --exact "$WORK/tiny2.eph" "$WORK/tiny0.eph" --format csv
"$EPH" compare --exact "$WORK/tiny0.eph" "$WORK/tiny2.eph" >/dev/null 2>"$WORK/notexact.err"; rc=$?
[ $rc = 1 ] && grep -q 'not an exact profile' "$WORK/notexact.err" || { echo "FAIL: --exact with a gc profile: exit $rc"; cat "$WORK/notexact.err"; fail=1; }
# -o DIR with csv writes one file per table
"$EPH" report "$WORK/tiny2.eph" --format csv -o "$WORK/csvdir" >/dev/null || { echo "FAIL: csv -o"; fail=1; }
for t in summary histogram classes survival heap; do
  [ -s "$WORK/csvdir/$t.csv" ] || { echo "FAIL: no $t.csv"; fail=1; }
done
# bad files: exit 3, one line naming the byte offset
cp "$WORK/tiny0.eph" "$WORK/bad.eph"
printf 'XXXX' | dd of="$WORK/bad.eph" bs=1 seek=40 conv=notrunc 2>/dev/null
"$EPH" report "$WORK/bad.eph" >/dev/null 2>"$WORK/bad.err"; rc=$?
[ $rc = 3 ] || { echo "FAIL: bad file exit $rc"; fail=1; }
[ "$(wc -l <"$WORK/bad.err")" = 1 ] || { echo "FAIL: bad file message not one line"; cat "$WORK/bad.err"; fail=1; }
grep -q 'byte' "$WORK/bad.err" || { echo "FAIL: bad file message names no byte offset"; cat "$WORK/bad.err"; fail=1; }
[ "$(grep -o 'bad\.eph' "$WORK/bad.err" | wc -l)" = 1 ] || { echo "FAIL: bad file message names the file other than once"; cat "$WORK/bad.err"; fail=1; }
printf 'not an eph file at all' >"$WORK/junk.eph"
"$EPH" compare "$WORK/tiny0.eph" "$WORK/junk.eph" >/dev/null 2>"$WORK/junk.err"; rc=$?
[ $rc = 3 ] && [ "$(grep -o 'junk\.eph' "$WORK/junk.err" | wc -l)" = 1 ] || { echo "FAIL: compare junk exit $rc"; cat "$WORK/junk.err"; fail=1; }
"$EPH" report "$WORK/missing.eph" >/dev/null 2>&1; [ $? = 3 ] || { echo "FAIL: missing file"; fail=1; }
"$EPH" report "$WORK/tiny0.eph" --format pdf >/dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: bad format not usage error"; fail=1; }
# truncated: loads with a warning
head -c 300 "$WORK/tiny0.eph" >"$WORK/trunc.eph"
"$EPH" report "$WORK/trunc.eph" >/dev/null 2>"$WORK/trunc.err"; echo "truncated: exit $? ($(head -1 "$WORK/trunc.err"))"
grep -q 'truncated at byte' "$WORK/trunc.err" || { echo "FAIL: a cut file's report does not say it is cut"; cat "$WORK/trunc.err"; fail=1; }
[ $fail = 0 ] && echo "golden: all passed"
exit $fail
