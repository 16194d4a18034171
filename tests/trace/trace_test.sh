#!/usr/bin/env bash
# trace_test.sh EPHEMERA CHECK_GRANULE WORKLOAD [plain|scavenge]
#   Records WORKLOAD's trace at small size (scavenge: a 64K eden without
#   pretenuring, so that online Merlin works in many batches), then:
#   - `ephemera merlin --check` must agree with the trace on every object;
#   - the profile it writes (-o) must hold the trace's own records (id,
#     birth and death in bytes and in collections, kind; wall times are
#     estimates, which the profiler itself does not always give one byte
#     time alike, so only lifetimes >= 0 in ns are checked);
#   - `ephemera trace granulate` to 4K and 64K must pass CHECK_GRANULE.
set -uo pipefail
bin=$1 check=$2 wl=$3 variant=${4:-plain}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args=(--size small --trace --quiet)
[[ $variant == scavenge ]] && args+=(--profile mode=merlin,pretenure=off --gc eden=64K,headroom=64K)

"$bin" run "$wl" "${args[@]}" -o "$dir/t.eph" >"$dir/run.out" 2>"$dir/run.err"
rc=$?
if [[ $rc -ne 0 ]]; then
  echo "FAIL: $wl ($variant): the traced run failed (exit $rc):"
  tail -n 5 "$dir/run.err"
  exit 1
fi

"$bin" merlin "$dir/t.eph" --check -o "$dir/offline.eph" >"$dir/merlin.out" 2>&1
rc=$?
cat "$dir/merlin.out"
if [[ $rc -ne 0 ]] || ! grep -q ": all agree$" "$dir/merlin.out"; then
  echo "FAIL: $wl ($variant): offline Merlin disagrees with the trace (exit $rc)"
  exit 1
fi

# id, birth (bytes, scavenges, full GCs), death (the same), kind
for f in t offline; do
  "$bin" dump "$dir/$f.eph" --csv | awk -F, 'NR > 1 {print $1, $6, $8, $9, $10, $12, $13, $18}' | sort -n >"$dir/$f.txt"
done
if ! cmp -s "$dir/t.txt" "$dir/offline.txt"; then
  echo "FAIL: $wl ($variant): the offline profile differs from the trace's records; first differences (id birth scav full death scav full kind):"
  diff "$dir/t.txt" "$dir/offline.txt" | head -n 10
  exit 1
fi
negative=$("$bin" dump "$dir/offline.eph" --csv | awk -F, 'NR > 1 && $21 < 0' | wc -l)
[[ $negative -eq 0 ]] || { echo "FAIL: $wl ($variant): $negative records of the offline profile have negative lifetimes in ns"; exit 1; }
grep -q "offline_merlin *yes" <("$bin" dump "$dir/offline.eph") || { echo "FAIL: no offline_merlin=yes in the profile"; exit 1; }

for k in 4K 64K; do
  bytes=$(( ${k%K} * 1024 ))
  if ! "$bin" trace granulate "$dir/t.eph" "$dir/g$k.eph" --granule "$k"; then
    echo "FAIL: $wl ($variant): granulate --granule $k failed"
    exit 1
  fi
  "$check" "$dir/t.eph" "$dir/g$k.eph" "$bytes" || { echo "FAIL: $wl ($variant): granule $k"; exit 1; }
done
echo "ok: $wl ($variant)"
