#!/usr/bin/env bash
# exhaustion_test.sh EPHEMERA SANITIZED WORKDIR: every workload run into heap
# exhaustion (EPHEMERA_GC=eden=64K,max=2M) ends with a one-line "heap
# exhausted" error and a non-zero exit, and -- in the ASan build, where
# LeakSanitizer checks at exit -- leaks nothing: the runner's longjmp skips
# the workload's own frees, so its memory off the heap must come back
# through wl_malloc's list.  Also with a profile running: the file is
# finished (complete) when the heap goes away.
set -uo pipefail
bin=$1 sanitized=$2 dir=$3
mkdir -p "$dir"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The size (and heap) at which each workload runs out; a workload not
# listed here (a new one) gets its default size with max=2M.
args_of() {
  case $1 in
    sph) echo "--size large" ;;
    boids) echo "--size 5000 --gc eden=64K,max=256K" ;; # its default size fits in 2M
    *) echo "--size default" ;;
  esac
}

check_run() { # check_run NAME STDERR-FILE STATUS
  local name=$1 err=$2 rc=$3
  if [[ $rc -eq 0 ]]; then fail "$name: exit status 0 (the heap was not exhausted?)"; fi
  if ! grep -q "heap exhausted" "$err"; then fail "$name: no 'heap exhausted' error"; sed 's/^/    /' "$err" | head -5; fi
  if grep -Eq "LeakSanitizer|AddressSanitizer|runtime error" "$err"; then
    fail "$name: sanitizer report"
    grep -E "SUMMARY|leak of|#[12] " "$err" | head -12 | sed 's/^/    /'
  fi
}

export EPHEMERA_GC=eden=64K,max=2M
for wl in $("$bin" workloads | awk 'NR > 1 {print $1}'); do
  # shellcheck disable=SC2046
  "$bin" run "$wl" $(args_of "$wl") >"$dir/$wl.out" 2>"$dir/$wl.err"
  rc=$?
  check_run "$wl" "$dir/$wl.err" $rc
  echo "$wl: exit $rc: $(head -1 "$dir/$wl.err")"
done

# Exhaustion while a profile runs: the profile is stopped at the heap's end.
for mode in gc finalization; do
  "$bin" run kvstore --profile mode=$mode,sample=1/10 -o "$dir/kv-$mode.eph" >"$dir/kv.out" 2>"$dir/kv.err"
  rc=$?
  check_run "kvstore, mode=$mode" "$dir/kv.err" $rc
  if "$bin" dump "$dir/kv-$mode.eph" >"$dir/kv.dump" 2>&1 && grep -q ", complete," "$dir/kv.dump"; then
    echo "kvstore, mode=$mode: exit $rc, $(grep -m1 '^records' "$dir/kv.dump")"
  else
    fail "kvstore, mode=$mode: the profile is not complete"
    head -3 "$dir/kv.dump" | sed 's/^/    /'
  fi
done

if [[ $sanitized != 1 ]]; then echo "(not a sanitizer build: leaks are checked in the ASan build)"; fi
[[ $fails -eq 0 ]] && echo ok
exit $((fails > 0))
