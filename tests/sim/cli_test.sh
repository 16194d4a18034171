#!/bin/sh
# sim.cli: `ephemera sim` end to end — the three outputs, a granulated trace
# with each sync scheme, the paper's collectors, calibration into a model
# file and its use, and the errors (exit 2 usage, 3 bad input file).
set -u
cli=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
check() { # check NAME EXPECTED_EXIT COMMAND...
  name=$1 want=$2
  shift 2
  "$@" >"$dir/out" 2>"$dir/err"
  got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL $name: exit $got, expected $want"; cat "$dir/err"; fail=1
  fi
}
has() { # has NAME PATTERN FILE
  grep -q -- "$2" "$3" || { echo "FAIL $1: no '$2' in $3:"; head -5 "$3"; fail=1; }
}

"$cli" run lambda --size small --profile mode=merlin --trace -o "$dir/t.eph" --quiet >/dev/null || exit 1
check text 0 "$cli" sim "$dir/t.eph" --gc eden=64K --gc eden=16K,tenure=1 --events
has text "trace input" "$dir/out"
has text "17 scavenges" "$dir/out"
check csv 0 "$cli" sim "$dir/t.eph" --gc eden=64K --format csv
has csv "^config,collector,input,scavenges" "$dir/out"
[ "$(wc -l <"$dir/out")" -eq 2 ] || { echo "FAIL csv: expected 2 lines"; fail=1; }
check json 0 "$cli" sim "$dir/t.eph" --gc eden=64K --format json
has json '"kind":"trace"' "$dir/out"
has json '"scavenges":17' "$dir/out"
for c in ss fg vg of; do
  check "collector $c" 0 "$cli" sim "$dir/t.eph" --collector "$c" --heap 2x,4M
  has "collector $c" "^$c heap=" "$dir/out"
done
"$cli" trace granulate "$dir/t.eph" "$dir/g.eph" --granule 4K >/dev/null || exit 1
for s in unsync syncearly syncmid synclate; do
  check "sync $s" 0 "$cli" sim "$dir/g.eph" --gc eden=64K --sync "$s"
  has "sync $s" "granulated trace" "$dir/out"
done
check granularity 0 "$cli" sim "$dir/t.eph" --gc eden=64K --granularity 1K,16K
has granularity "syncmid" "$dir/out"
check granularity-granulated 1 "$cli" sim "$dir/g.eph" --granularity 1K
"$cli" run lambda --size small --profile mode=merlin -o "$dir/l.eph" --quiet >/dev/null || exit 1
check lifetimes 0 "$cli" sim "$dir/l.eph" --gc eden=64K
has lifetimes "lifetimes input" "$dir/out"
has lifetimes "no nepotism" "$dir/out"
"$cli" run lambda --size small --gc eden=64K --profile mode=gc,sample=1/4 -o "$dir/s.eph" --quiet >/dev/null || exit 1
check sampled 0 "$cli" sim "$dir/s.eph" --gc eden=64K
has sampled "sampled input" "$dir/out"

check calibrate 0 "$cli" sim calibrate --model "$dir/model" --size middle --gc eden=64K,headroom=64K --gc eden=16K,tenure=1
has calibrate "fit error" "$dir/out"
has calibrate "^per_byte_copied " "$dir/model"
check with-model 0 "$cli" sim "$dir/t.eph" --model "$dir/model"
has with-model "cost model: fitted" "$dir/out"
echo "per_scavenge fast" >"$dir/bad-model"
check bad-model 3 "$cli" sim "$dir/t.eph" --model "$dir/bad-model"
has bad-model "line 1" "$dir/err"

check missing 3 "$cli" sim "$dir/none.eph"
head -c 3000 "$dir/t.eph" >"$dir/trunc.eph"
check truncated 3 "$cli" sim "$dir/trunc.eph"
check no-file 2 "$cli" sim
check two-files 2 "$cli" sim "$dir/t.eph" "$dir/t.eph"
check collector 2 "$cli" sim "$dir/t.eph" --collector foo
check format 2 "$cli" sim "$dir/t.eph" --format xml
check gc 2 "$cli" sim "$dir/t.eph" --gc eden=fast
has gc "eden" "$dir/err"
check heap 2 "$cli" sim "$dir/t.eph" --collector ss --heap abc
check heap-spur 2 "$cli" sim "$dir/t.eph" --heap 2x
check sync 2 "$cli" sim "$dir/t.eph" --sync sometimes
check stress 1 "$cli" sim "$dir/t.eph" --gc stress=1
check option 2 "$cli" sim "$dir/t.eph" --frobnicate
[ $fail = 0 ] && echo "sim cli: all checks passed"
exit $fail
