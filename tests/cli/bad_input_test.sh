#!/usr/bin/env bash
# bad_input_test.sh EPHEMERA GEN HAVE_LUA — the whole CLI's bad-input sweep:
# every command with unknown options, bad numbers, missing and extra
# arguments, malformed files, and its output on /dev/full (or a file it
# writes that fails).  Each case must exit with the documented status
# (1 failed operation or write, 2 usage, 3 bad input file) and say so in
# exactly one line on stderr, "ephemera: ..." naming the problem.
set -uo pipefail
eph=$1 gen=$2 have_lua=${3:-OFF}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0 cases=0

# expect STATUS PATTERN CMD...: exit STATUS, one stderr line "ephemera: ..."
# matching PATTERN (grep -E); usage and input errors write nothing on stdout.
expect() {
  local status=$1 pattern=$2
  shift 2
  cases=$((cases + 1))
  "$@" >"$dir/out" 2>"$dir/err"
  local rc=$? lines
  lines=$(wc -l <"$dir/err")
  if [[ $rc -ne $status || $lines -ne 1 ]] || ! grep -Eq -- "^ephemera: .*$pattern" "$dir/err" ||
    { [[ $status -ge 2 ]] && [[ -s $dir/out ]]; }; then
    echo "FAIL: '$*': exit $rc (expected $status), stderr $lines lines (expected one matching '$pattern'):"
    sed 's/^/    /' "$dir/err"
    [[ $status -ge 2 && -s $dir/out ]] && echo "    and it wrote on stdout"
    fails=$((fails + 1))
  fi
}
# full STATUS... CMD...: the command with stdout on /dev/full fails with 1
# and one line saying the device is full.
full() {
  cases=$((cases + 1))
  "$@" >/dev/full 2>"$dir/err"
  local rc=$? lines
  lines=$(wc -l <"$dir/err")
  if [[ $rc -ne 1 || $lines -ne 1 ]] || ! grep -Eq "^ephemera: .*writing .*: No space left on device$" "$dir/err"; then
    echo "FAIL: '$* >/dev/full': exit $rc (expected 1), stderr $lines lines:"
    sed 's/^/    /' "$dir/err"
    fails=$((fails + 1))
  fi
}

# --- inputs -------------------------------------------------------------------------
"$eph" run gcbench --size small --quiet --profile mode=gc -o "$dir/p.eph" >/dev/null 2>&1 || { echo "FAIL: cannot record a profile"; exit 1; }
"$eph" run lambda --size small --quiet --trace -o "$dir/t.eph" >/dev/null 2>&1 || { echo "FAIL: cannot record a trace"; exit 1; }
"$gen" sample "$dir/s.eph" --records 50 >/dev/null || { echo "FAIL: gen sample"; exit 1; }
off=$("$gen" corrupt "$dir/s.eph" "$dir/corrupt.eph") || { echo "FAIL: gen corrupt"; exit 1; }
head -c 40 "$dir/p.eph" >"$dir/cut.eph"    # inside the header: no records at all
head -c 4000 /dev/urandom >"$dir/junk.eph"
: >"$dir/empty.eph"
mkdir "$dir/adir.eph"
p=$dir/p.eph t=$dir/t.eph

# --- the top level ----------------------------------------------------------------
expect 2 "no command given" "$eph"
expect 2 "unknown command 'frobnicate'" "$eph" frobnicate
expect 2 "unexpected argument 'x'" "$eph" --help x

# --- options common to every command: unknown, missing values, --help -----------
for cmd in workloads run dump merlin report compare trace lua; do
  [[ $cmd == lua && $have_lua != ON ]] && continue
  "$eph" $cmd --help >"$dir/help" 2>&1 || { echo "FAIL: $cmd --help: exit $?"; fails=$((fails + 1)); }
  grep -q "3 bad input file" "$dir/help" || { echo "FAIL: $cmd --help does not document the exit status"; fails=$((fails + 1)); }
  full "$eph" $cmd --help
done
expect 2 "workloads: unknown option '--bogus'" "$eph" workloads --bogus
expect 2 "workloads: unknown option '-x'" "$eph" workloads -x
expect 2 "workloads: unexpected argument 'extra'" "$eph" workloads -v extra
expect 2 "dump: unknown option '--bogus'" "$eph" dump "$p" --bogus
expect 2 "dump: unknown option '-q'" "$eph" dump "$p" -q
expect 2 "dump: --head needs a value" "$eph" dump "$p" --head
expect 2 "report: unknown option '--bogus'" "$eph" report "$p" --bogus
expect 2 "report: --format needs a value" "$eph" report "$p" --format
expect 2 "report: -o needs a value" "$eph" report "$p" -o
expect 2 "compare: unknown option '--bogus'" "$eph" compare "$p" "$p" --bogus
expect 2 "compare: --z needs a value" "$eph" compare "$p" "$p" --z
expect 2 "merlin: unknown option '--bogus'" "$eph" merlin "$t" --bogus
expect 2 "merlin: -o needs a value" "$eph" merlin "$t" -o
expect 2 "trace granulate: unknown option '--bogus'" "$eph" trace granulate "$t" "$dir/g.eph" --granule 4K --bogus
expect 2 "trace granulate: --granule needs a value" "$eph" trace granulate "$t" "$dir/g.eph" --granule
expect 2 "run: unknown option '--bogus'" "$eph" run gcbench --size small --bogus 1
expect 2 "run: unknown option '-q'" "$eph" run gcbench -q
expect 2 "run: --size needs a value" "$eph" run gcbench --size
expect 2 "run: --gc needs a value" "$eph" run gcbench --gc

# --- bad numbers and bad words: the option and the value named ------------------
expect 2 "run: --seed: bad value '-1'" "$eph" run gcbench --size small --seed -1
expect 2 "run: --seed: bad value '0'" "$eph" run gcbench --size small --seed 0
expect 2 "run: --seed: bad value '12x'" "$eph" run gcbench --size small --seed 12x
expect 2 "run: --seed: bad value '99999999999999999999'" "$eph" run gcbench --size small --seed 99999999999999999999
expect 2 "run: --size: bad size 'huge'" "$eph" run gcbench --size huge
expect 2 "run: --size: bad size '-5'" "$eph" run gcbench --size -5
expect 2 "run: --gc: .*ratio" "$eph" run gcbench --size small --gc ratio=fast
expect 2 "run: --retain: gcbench has no class 'Nope'" "$eph" run gcbench --size small --retain Nope
expect 2 "run: --profile: " "$eph" run gcbench --size small --profile mode=psychic
# a workload's own options go through the same parser
expect 2 "run: --keys: bad value '-1'" "$eph" run kvstore --size small --keys -1
expect 2 "run: --theta: bad value '1'" "$eph" run kvstore --size small --theta 1
expect 2 "run: --theta: bad value 'nan'" "$eph" run kvstore --size small --theta nan
expect 2 "run: --frames: bad value '0'" "$eph" run boids --size small --frames 0
expect 2 "run: --frames needs a value" "$eph" run boids --size small --frames
expect 2 "run: --steps: bad value '1e3'" "$eph" run sph --size small --steps 1e3
expect 2 "run: --ticks: bad value '-5'" "$eph" run agents --size small --ticks=-5
expect 2 "run: --variant: bad value 'ternary'" "$eph" run treereplace --size small --variant ternary
expect 2 "run: --height: bad value '99'" "$eph" run treereplace --size small --height 99
expect 2 "run: --class-counts takes no value" "$eph" run dataframe --size small --class-counts=3
expect 2 "dump: --csv takes no value" "$eph" dump "$p" --csv=yes
expect 2 "dump: --head: bad value '-1'" "$eph" dump "$p" --head -1
expect 2 "dump: --head: bad value '1x'" "$eph" dump "$p" --head 1x
expect 2 "dump: --head: bad value ''" "$eph" dump "$p" --head ''
expect 2 "report: --curves: bad value 'abc'" "$eph" report "$p" --curves abc
expect 2 "report: --curves: bad value '-1'" "$eph" report "$p" --curves -1
expect 2 "report: --short: bad value '101'" "$eph" report "$p" --short 101
expect 2 "report: --short: bad value 'nan'" "$eph" report "$p" --short nan
expect 2 "report: --most: bad value '5%%'" "$eph" report "$p" --most 5%%
expect 2 "report: --format: bad value 'pdf' \(expected text, csv, json or html\)" "$eph" report "$p" --format pdf
expect 2 "report: --by: bad value 'module'" "$eph" report "$p" --by module
expect 2 "report: --end: bad value 'later'" "$eph" report "$p" --end later
expect 2 "report: --survival-clock: bad value 'hours'" "$eph" report "$p" --survival-clock hours
expect 2 "compare: --z: bad value 'nan'" "$eph" compare "$p" "$p" --z nan
expect 2 "compare: --z: bad value 'inf'" "$eph" compare "$p" "$p" --z inf
expect 2 "compare: --z: bad value '-3'" "$eph" compare "$p" "$p" --z -3
expect 2 "compare: --z: bad value '3sigma'" "$eph" compare "$p" "$p" --z 3sigma
expect 2 "compare: --format: bad value 'html'" "$eph" compare "$p" "$p" --format html
expect 2 "compare: --end: bad value 'x'" "$eph" compare "$p" "$p" --end x
expect 2 "trace granulate: --granule: bad value '0'" "$eph" trace granulate "$t" "$dir/g.eph" --granule 0
expect 2 "trace granulate: --granule: bad value '4Q'" "$eph" trace granulate "$t" "$dir/g.eph" --granule 4Q
expect 2 "trace granulate: --granule: bad value '-5'" "$eph" trace granulate "$t" "$dir/g.eph" --granule=-5

# --- missing and extra arguments ---------------------------------------------------
expect 2 "run: needs a WORKLOAD" "$eph" run
expect 2 "run: unknown workload 'nope'" "$eph" run nope
expect 2 "run: unexpected argument 'stray'" "$eph" run gcbench --size small stray
expect 2 "run: unknown option '--frames'" "$eph" run gcbench --frames 3
expect 2 "dump: needs a FILE" "$eph" dump
expect 2 "dump: one file at a time" "$eph" dump "$p" "$p"
expect 2 "report: needs a FILE" "$eph" report
expect 2 "report: one FILE only" "$eph" report "$p" "$p"
expect 2 "compare: needs two files" "$eph" compare "$p"
expect 2 "compare: two files only" "$eph" compare "$p" "$p" "$p"
expect 2 "merlin: needs a TRACE" "$eph" merlin
expect 2 "merlin: one trace at a time" "$eph" merlin "$t" "$t"
expect 2 "trace: needs a subcommand" "$eph" trace
expect 2 "trace: unknown subcommand 'squash'" "$eph" trace squash
expect 2 "trace granulate: needs IN and OUT" "$eph" trace granulate "$t" --granule 4K
expect 2 "trace granulate: one input and one output" "$eph" trace granulate "$t" "$dir/g.eph" "$dir/h.eph" --granule 4K
expect 2 "trace granulate: needs --granule" "$eph" trace granulate "$t" "$dir/g.eph"

# --- bad input files: exit 3, the file named ---------------------------------------
for f in corrupt junk empty cut missing adir; do
  in=$dir/$f.eph
  if [[ $f != cut ]]; then # dump shows what a cut file holds (with a warning), exit 0
    expect 3 "$f\.eph" "$eph" dump "$in"
    expect 3 "$f\.eph" "$eph" dump "$in" --json
  fi
  expect 3 "$f\.eph" "$eph" report "$in"
  expect 3 "$f\.eph" "$eph" compare "$p" "$in"
  expect 3 "$f\.eph" "$eph" merlin "$in"
  expect 3 "$f\.eph" "$eph" trace granulate "$in" "$dir/g.eph" --granule 4K
done
expect 3 "corrupt\.eph: .*at byte $off" "$eph" dump "$dir/corrupt.eph" --csv
expect 3 "missing\.eph: No such file" "$eph" report "$dir/missing.eph"
expect 3 "p\.eph: not a trace" "$eph" merlin "$p"

# --- every output on /dev/full: exit 1, one line -----------------------------------
full "$eph" workloads
full "$eph" workloads -v
full "$eph" --help
full "$eph" run gcbench --size small --quiet
full "$eph" run gcbench --size small --quiet --kv --profile mode=gc -o "$dir/p2.eph"
for f in "" --csv --json; do full "$eph" dump "$p" $f; done
full "$eph" dump "$p" --head 0
for f in text csv json html; do full "$eph" report "$p" --format $f; done
for f in text csv json; do full "$eph" compare "$p" "$p" --format $f; done
full "$eph" merlin "$t"
full "$eph" merlin "$t" --check
full "$eph" trace granulate "$t" "$dir/g.eph" --granule 4K
for f in text csv json; do full "$eph" sim "$t" --format $f; done
full "$eph" sim "$t" --granularity 1K,4K
for c in sim bench tune; do full "$eph" $c --help; done

# --- the simulator, the harness and the advisor ---------------------------------------
expect 2 "--heap" "$eph" sim "$t" --collector ss --heap abc
expect 2 "unknown option" "$eph" sim "$t" --bogus
expect 3 "corrupt\.eph" "$eph" sim "$dir/corrupt.eph"
expect 2 "needs a TARGET" "$eph" bench
expect 2 "bad value '-1'" "$eph" bench gcbench:small --invocations -1
expect 2 "bad factor" "$eph" bench gcbench:small --heap 1.5,x
expect 2 "--size: bad size 'abc'" "$eph" tune lambda --size abc
expect 2 "unknown workload" "$eph" tune nosuch

# --- files a command writes, failing -------------------------------------------------
expect 1 "writing .*rep/report.txt: No space left on device" env sh -c \
  "mkdir -p '$dir/rep' && ln -sf /dev/full '$dir/rep/report.txt' && exec '$eph' report '$p' -o '$dir/rep'"
expect 1 "writing .*rep/report.json: No space left on device" env sh -c \
  "ln -sf /dev/full '$dir/rep/report.json' && exec '$eph' report '$p' --format json -o '$dir/rep'"
expect 1 "writing CSV into .*rep: No space left on device" env sh -c \
  "ln -sf /dev/full '$dir/rep/classes.csv' && exec '$eph' report '$p' --format csv -o '$dir/rep'"
if command -v gnuplot >/dev/null 2>&1; then
  expect 1 "writing .*rep/survival.svg: No space left on device" env sh -c \
    "ln -sf /dev/full '$dir/rep/survival.svg' && exec '$eph' report '$p' --format html -o '$dir/rep'"
fi
expect 1 "report: cannot create .*p.eph/sub" "$eph" report "$p" -o "$p/sub"
expect 1 "/dev/full" "$eph" merlin "$t" -o /dev/full
expect 1 "/dev/full" "$eph" trace granulate "$t" /dev/full --granule 4K
expect 1 "/dev/full" "$eph" run gcbench --size small --quiet --profile mode=gc -o /dev/full

# --- lua ------------------------------------------------------------------------------
if [[ $have_lua == ON ]]; then
  printf 'print("hello")\n' >"$dir/hello.lua"
  expect 2 "lua: no script given" "$eph" lua
  expect 2 "lua: unknown option '--bogus'" "$eph" lua --bogus "$dir/hello.lua"
  expect 2 "lua: --gc: 'fast'" "$eph" lua --gc fast "$dir/hello.lua"
  expect 2 "lua: --gc: pause: bad value '-1'" "$eph" lua --gc incremental,pause=-1 "$dir/hello.lua"
  expect 2 "lua: --profile: " "$eph" lua --profile sample=1/0 "$dir/hello.lua"
  expect 2 "lua: -o needs a value" "$eph" lua -o
  expect 1 "/dev/full" "$eph" lua -o /dev/full "$dir/hello.lua"
  cases=$((cases + 1))
  "$eph" lua --no-profile "$dir/hello.lua" >/dev/full 2>"$dir/err"
  rc=$?
  if [[ $rc -ne 1 || $(wc -l <"$dir/err") -ne 1 ]] || ! grep -q "^ephemera: lua: writing the script's output" "$dir/err"; then
    echo "FAIL: lua with stdout on /dev/full: exit $rc"; cat "$dir/err"; fails=$((fails + 1))
  fi
fi

if [[ $fails -ne 0 ]]; then
  echo "FAIL: $fails of $cases cases"
  exit 1
fi
echo "ok: $cases bad-input cases"
