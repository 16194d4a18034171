#!/usr/bin/env bash
# exact_test.sh EPHEMERA WORKLOAD [SIZE [GC]]: merlin and brute force (a full
# GC before every allocation) must give every object the same death time;
# GC: parameters for both runs (--gc), e.g. a small eden, so that merlin
# finds deaths at scavenges with the writer's thread running.
set -euo pipefail
bin=$1 workload=$2 size=${3:-small} gc=${4:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for mode in merlin brute; do
  "$bin" run "$workload" --size "$size" ${gc:+--gc "$gc"} --profile "mode=$mode" -o "$dir/$mode.eph" >/dev/null
  # id (= birth time), death time, death kind
  "$bin" dump "$dir/$mode.eph" --csv | awk -F, 'NR > 1 {print $1, $10, $18}' | sort -n >"$dir/$mode.txt"
done
n=$(wc -l <"$dir/merlin.txt")
[[ $n -gt 0 ]] || { echo "FAIL: no records"; exit 1; }
if ! cmp -s "$dir/merlin.txt" "$dir/brute.txt"; then
  echo "FAIL: $workload: merlin and brute force disagree ($(diff "$dir/merlin.txt" "$dir/brute.txt" | grep -c '^<') of $n objects); first differences (id death kind):"
  diff "$dir/merlin.txt" "$dir/brute.txt" | head -n 10
  exit 1
fi
echo "ok: $workload: $n objects, identical death times in merlin and brute force"
