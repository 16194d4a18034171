#!/usr/bin/env bash
# retain_test.sh EPHEMERA WORKLOAD CLASS: --retain CLASS must keep instances
# alive: a positive retained count and a higher peak of bytes in objects.
set -euo pipefail
bin=$1 workload=$2 class=$3
if [[ $class == auto ]]; then
  class=$("$bin" workloads -v | awk -v w="$workload" '$1 == w {found = 1; next} found && /short-lived:/ {print $2; exit}')
  [[ -n $class ]] || { echo "FAIL: $workload names no short-lived class"; exit 1; }
fi
peak() { sed -n 's/.*MiB committed (\([0-9.]*\) MiB in objects).*/\1/p' <<<"$1"; }
# A small eden, so that collections happen and the peak measures what
# survives them rather than everything ever allocated.
gc=eden=128K,headroom=128K,shrink=256K
base=$("$bin" run "$workload" --size small --gc "$gc")
kept=$("$bin" run "$workload" --size small --gc "$gc" --retain "$class")
retained=$(sed -n 's/^  retained *\([0-9]*\) objects.*/\1/p' <<<"$kept")
echo "baseline peak $(peak "$base") MiB; with --retain $class: peak $(peak "$kept") MiB, $retained objects retained"
[[ ${retained:-0} -gt 0 ]] || { echo "FAIL: nothing retained"; exit 1; }
awk -v a="$(peak "$base")" -v b="$(peak "$kept")" 'BEGIN { exit !(b > a) }' || { echo "FAIL: peak did not rise"; exit 1; }
echo "ok"
