#!/usr/bin/env bash
# stop_threads_test.sh EPHEMERA WORKLOAD [RETAIN]: Merlin's records at the
# stop, written on the program's thread alone (threads=1) and with a helper
# encoding blocks into a fork (threads=2, src/profile/stop_records.c), are
# the same records in the same order: every field but the wall times,
# which differ from run to run.  Which blocks the helper encodes and which
# the program's thread takes back depends on when the helper runs, so
# threads=2 runs five times.  RETAIN: classes kept alive to the end
# (--retain), so that the stop writes censored records after the dead.
set -euo pipefail
bin=$1 workload=$2 retain=${3:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# profile RUN THREADS: the records of run RUN as $dir/RUN.csv
profile() {
  "$bin" run "$workload" --size small ${retain:+--retain "$retain"} --profile "mode=merlin,threads=$2" \
    -o "$dir/$1.eph" >/dev/null
  # all columns but birth_wall_ns (7), death_wall_ns (11), alive_until_wall_ns (15), lifetime_ns (21)
  "$bin" dump "$dir/$1.eph" --csv | cut -d, -f1-6,8-10,12-14,16-20 >"$dir/$1.csv"
}
profile 1 1
n=$(($(wc -l <"$dir/1.csv") - 1))
# more than two blocks of 4096 records, or the helper never runs
[[ $n -gt 8192 ]] || { echo "FAIL: $workload: only $n records"; exit 1; }
censored=$(awk -F, 'NR > 1 && $15 == "censored"' "$dir/1.csv" | wc -l)
[[ -z $retain || $censored -gt 0 ]] || { echo "FAIL: $workload: nothing censored with --retain $retain"; exit 1; }
for run in 2 3 4 5 6; do
  profile $run 2
  if ! cmp -s "$dir/1.csv" "$dir/$run.csv"; then
    echo "FAIL: $workload: the stop's records differ with a helper; first differences:"
    diff "$dir/1.csv" "$dir/$run.csv" | head -n 10
    exit 1
  fi
done
echo "ok: $workload: $n records ($censored censored), the same in the same order with and without the stop's helper"
