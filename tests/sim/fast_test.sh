#!/bin/sh
# sim.fast.WL: spur's fast path against the replay of every event, bit for
# bit (tests/sim/fast_check.c), on a Merlin trace of WL at small and on the
# same profile without events, over sim.agree's settings (small_settings)
# and maximum heaps near the live size (full GCs forced by the maximum; on
# some workloads the heap is exhausted).
set -eu
cli=$1 fast=$2 wl=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" run "$wl" --size small --profile mode=merlin --trace -o "$dir/t.eph" --quiet >/dev/null
# shellcheck disable=SC2046 # one setting per word
exec "$fast" "$dir/t.eph" $(grep -v '^#' "$(dirname "$0")/small_settings") \
  eden=16K,headroom=16K,shrink=16K,max=128K \
  eden=16K,headroom=16K,shrink=16K,max=192K \
  eden=16K,headroom=8K,shrink=8K,max=320K,tenure=1 \
  eden=32K,headroom=16K,max=480K,ratio=0.2
