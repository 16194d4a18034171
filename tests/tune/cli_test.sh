#!/bin/sh
# tests/tune/cli_test.sh EPHEMERA EMBED — `ephemera tune` end to end on a tiny
# workload (small size, 2 invocations, 2 verified configurations), and bad
# usage / a failing --cmd giving one clear line and the documented exit code.
set -u
eph=$1 embed=$2
fail=0
err=$(mktemp) outf=$(mktemp)
trap 'rm -f "$err" "$outf"' EXIT

# expect CODE PATTERN ARGS...: exit code CODE, one stderr line matching PATTERN.
expect() {
  code=$1 pat=$2; shift 2
  "$eph" tune "$@" >/dev/null 2>"$err"
  rc=$?
  if [ "$rc" -ne "$code" ] || [ "$(wc -l <"$err")" -ne 1 ] || ! grep -q -- "$pat" "$err"; then
    echo "FAIL: tune $*: exit $rc (want $code), stderr:"; cat "$err"; fail=1
  fi
}
expect 2 "unknown objective 'fast'" gcbench --objective fast
expect 2 "bad heap size" gcbench --objective time-within-heap=lots
expect 2 "unknown workload 'nope'" nope
expect 2 "name a WORKLOAD" --objective time
expect 2 "bad number 'x'" gcbench --invocations x
expect 2 "at most 5" gcbench --verify 6
expect 2 "unknown option" gcbench --frobnicate
expect 2 "takes no WORKLOAD" --cmd true gcbench
expect 1 "the profiled run of 'false' failed (exit status 1)" --cmd false
expect 1 "exit status 3" --cmd 'exit 3'

# End to end: a recommendation line, a verified table and the kv line.
if ! "$eph" tune gcbench --size small --invocations 2 --verify 2 --kv >"$outf" 2>"$err"; then
  echo "FAIL: tune gcbench --size small"; cat "$err" "$outf"; fail=1
fi
grep -q "profile    1 run (mode=merlin,trace=on)" "$outf" || { echo "FAIL: no merlin trace profile line"; fail=1; }
grep -q "^recommendation: " "$outf" || { echo "FAIL: no recommendation"; fail=1; }
grep -Eq "^    (def|\*  ) eden=15M,headroom=16M,shrink=32M,ratio=0.33,tenure=3 " "$outf" || { echo "FAIL: default not verified"; fail=1; }
grep -q "^kv pick=.* verified=2 invocations=2 grid=1[0-9][0-9][0-9] advisor_runs=3$" "$outf" || { echo "FAIL: kv line"; cat "$outf"; fail=1; }
# The recommended string is one the heap accepts.
pick=$(sed -n 's/^kv pick=\([^ ]*\) .*/\1/p' "$outf")
if [ "$pick" != default ] && ! "$eph" run gcbench --size small --gc "$pick" --quiet >/dev/null; then
  echo "FAIL: the pick '$pick' is not accepted by ephemera run --gc"; fail=1
fi
# A space-time objective through --cmd (EPHEMERA_GC and EPHEMERA_PROFILE).
if ! "$eph" tune --cmd "$embed" --objective space-time --invocations 2 --verify 2 >"$outf" 2>"$err"; then
  echo "FAIL: tune --cmd"; cat "$err" "$outf"; fail=1
fi
grep -q "objective space-time" "$outf" || { echo "FAIL: objective not shown"; fail=1; }
grep -q "^recommendation: " "$outf" || { echo "FAIL: --cmd gave no recommendation"; cat "$outf"; fail=1; }
# Lua 5.4's collector (when this ephemera has Lua): a script's own arguments pass through.
if "$eph" lua --help >/dev/null 2>&1; then
  lua=$(mktemp)
  printf 'local t = {}\nfor i = 1, tonumber(arg[1]) do t[i %% 100] = {i} end\n' >"$lua"
  if ! "$eph" tune --invocations 2 --verify 2 --kv --lua "$lua" 20000 >"$outf" 2>"$err"; then
    echo "FAIL: tune --lua"; cat "$err" "$outf"; fail=1
  fi
  grep -q "^kv pick=.* verified=2 invocations=2$" "$outf" || { echo "FAIL: tune --lua kv line"; cat "$outf"; fail=1; }
  "$eph" tune --lua "$lua" >/dev/null 2>"$err" && { echo "FAIL: tune --lua without the script's argument succeeded"; fail=1; }
  grep -q "failed (exit status 1)" "$err" || { echo "FAIL: a failing Lua script: no clear line"; cat "$err"; fail=1; }
  rm -f "$lua"
fi
[ $fail -eq 0 ] && echo "tune cli: ok"
exit $fail
