#!/usr/bin/env bash
# errors_test.sh EPHEMERA [WORKLOAD]: the trace commands' bad inputs.  Each
# must fail with the documented exit status (2 bad usage, 3 bad input
# file, 1 a failed write) and
# one line on stderr, "ephemera: ..." naming the problem, and leave no
# output file behind.
set -uo pipefail
bin=$1 wl=${2:-lambda}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0

# expect STATUS PATTERN CMD...: exit STATUS, one stderr line matching PATTERN.
expect() {
  local status=$1 pattern=$2
  shift 2
  "$@" >"$dir/out" 2>"$dir/err"
  local rc=$? lines
  lines=$(wc -l <"$dir/err")
  if [[ $rc -ne $status || $lines -ne 1 ]] || ! grep -q "^ephemera: .*$pattern" "$dir/err"; then
    echo "FAIL: '$*': exit $rc (expected $status), stderr ($lines lines, expected one matching '$pattern'):"
    cat "$dir/err"
    fails=$((fails + 1))
  else
    echo "ok: '$*' -> $rc: $(cat "$dir/err")"
  fi
}

"$bin" run "$wl" --size small --trace --quiet -o "$dir/t.eph" >/dev/null 2>&1 || { echo "FAIL: cannot record a trace of $wl"; exit 1; }
"$bin" run "$wl" --size small --quiet -o "$dir/profile.eph" >/dev/null 2>&1 || { echo "FAIL: cannot record a profile of $wl"; exit 1; }
size=$(stat -c %s "$dir/t.eph")
head -c $((size / 2)) "$dir/t.eph" >"$dir/truncated.eph"
head -c 4000 /dev/urandom >"$dir/junk.eph"

g=(trace granulate "$dir/t.eph" "$dir/out.eph")
expect 2 "--granule: bad value '0'" "$bin" "${g[@]}" --granule 0
expect 2 "--granule: bad value '4Q'" "$bin" "${g[@]}" --granule 4Q
expect 2 "--granule: bad value '-5'" "$bin" "${g[@]}" --granule=-5
expect 2 "--granule: bad value ''" "$bin" "${g[@]}" --granule ''
expect 2 "--granule: bad value '99999999999999999999'" "$bin" "${g[@]}" --granule 99999999999999999999
expect 2 "needs --granule" "$bin" "${g[@]}"
expect 2 "--granule needs a value" "$bin" "${g[@]}" --granule
expect 2 "needs IN and OUT" "$bin" trace granulate "$dir/t.eph" --granule 4K
expect 2 "unknown option '--bogus'" "$bin" "${g[@]}" --granule 4K --bogus
expect 2 "unknown subcommand 'squash'" "$bin" trace squash
expect 3 "missing.eph: No such file" "$bin" trace granulate "$dir/missing.eph" "$dir/out.eph" --granule 4K
expect 3 "truncated.eph: incomplete trace" "$bin" trace granulate "$dir/truncated.eph" "$dir/out.eph" --granule 4K
expect 3 "profile.eph: not a trace" "$bin" trace granulate "$dir/profile.eph" "$dir/out.eph" --granule 4K
expect 3 "junk.eph" "$bin" trace granulate "$dir/junk.eph" "$dir/out.eph" --granule 4K
expect 1 "no/such/dir/out.eph" "$bin" trace granulate "$dir/t.eph" "$dir/no/such/dir/out.eph" --granule 4K
[[ -e $dir/out.eph ]] && { echo "FAIL: a failed granulate left out.eph"; fails=$((fails + 1)); }

expect 2 "unknown option '--bogus'" "$bin" merlin "$dir/t.eph" --bogus
expect 2 "one trace at a time" "$bin" merlin "$dir/t.eph" "$dir/t.eph"
expect 2 "-o needs a value" "$bin" merlin "$dir/t.eph" -o
expect 3 "missing.eph: No such file" "$bin" merlin "$dir/missing.eph"
expect 3 "truncated.eph: incomplete trace" "$bin" merlin "$dir/truncated.eph" --check
expect 3 "profile.eph: not a trace" "$bin" merlin "$dir/profile.eph" --check
expect 3 "junk.eph" "$bin" merlin "$dir/junk.eph"
"$bin" merlin "$dir/t.eph" -o "$dir/no/such/dir/out.eph" >/dev/null 2>"$dir/err"
rc=$?
if [[ $rc -ne 1 ]] || ! grep -q "^ephemera: .*no/such/dir/out.eph" "$dir/err"; then
  echo "FAIL: merlin -o into a missing directory: exit $rc"; cat "$dir/err"; fails=$((fails + 1))
fi

# A granulated trace is still a trace: offline Merlin ignores its DEATH and
# TICK events, and --check then reports the moved deaths.
"$bin" trace granulate "$dir/t.eph" "$dir/g.eph" --granule 64K >/dev/null || { echo "FAIL: granulate"; fails=$((fails + 1)); }
"$bin" merlin "$dir/g.eph" --check >"$dir/out" 2>&1
rc=$?
if [[ $rc -ne 1 ]] || ! grep -q "differences" "$dir/out"; then
  echo "FAIL: merlin --check on a granulated trace: exit $rc"; cat "$dir/out"; fails=$((fails + 1))
fi

if [[ $fails -ne 0 ]]; then
  echo "FAIL: $fails cases"
  exit 1
fi
echo "ok: all error cases"
