#!/usr/bin/env bash
# actionability_test.sh EPHEMERA MODE: FiLiP's RQ1.  Profiling dataframe with
# --retain NumberParser must raise NumberParser's mean lifetime by a large
# factor (>= 10x) and leave unrelated classes nearly unchanged (within
# 0.67x..1.5x).  ReadStream is related: every NumberParser holds its stream.
set -euo pipefail
bin=$1 mode=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
means() { # per class: mean lifetime in bytes
  "$bin" dump "$1" --csv | awk -F, 'NR > 1 {n[$2]++; s[$2] += $20} END {for (c in n) print c, s[c] / n[c]}' | sort
}
run=(run dataframe --size 20000 --gc eden=1M --profile "mode=$mode,sample=1/10")
"$bin" "${run[@]}" -o "$dir/base.eph" >/dev/null
"$bin" "${run[@]}" -o "$dir/kept.eph" --retain NumberParser >/dev/null
join <(means "$dir/base.eph") <(means "$dir/kept.eph") | awk '
  {ratio = $3 / $2; printf "%-14s %14.0f %14.0f  x%.2f\n", $1, $2, $3, ratio}
  $1 == "NumberParser" {seen = 1; if (ratio < 10) {print "FAIL: NumberParser rose only x" ratio; bad = 1}}
  $1 ~ /^(Fraction|ByteString|Float|Array)$/ && (ratio < 0.67 || ratio > 1.5) {print "FAIL: unrelated class " $1 " changed x" ratio; bad = 1}
  END {if (!seen) {print "FAIL: no NumberParser records"; bad = 1}; exit bad}'
echo "ok: $mode mode is actionable"
