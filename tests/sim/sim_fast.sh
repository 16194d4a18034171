#!/bin/sh
# sim.fast.WL: spur's fast path against the replay of every event, bit for
# bit (tests/sim/sim_fast.c), on a Merlin trace of WL at small and on the
# same profile without events, over settings from eden 16K to 128M, tenure
# 1 to 15, small and large ratios, headroom and shrink, and maximum heaps
# near the live size (full GCs forced by the maximum; on some workloads
# the heap is exhausted).
set -eu
cli=$1 fast=$2 wl=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" run "$wl" --size small --profile mode=merlin --trace -o "$dir/t.eph" --quiet >/dev/null
exec "$fast" "$dir/t.eph" \
  eden=16K,headroom=16K,ratio=0.2,tenure=1 \
  eden=16K,headroom=4K,shrink=4K,ratio=0.3,tenure=3 \
  eden=32K,headroom=16K,shrink=16K,ratio=0.5,tenure=2 \
  eden=48K,headroom=1M,shrink=1M,ratio=3,tenure=1 \
  eden=64K,headroom=64K \
  eden=64K,headroom=32K,ratio=4,tenure=15 \
  eden=128K,headroom=64K,shrink=64K,ratio=1,tenure=5 \
  eden=256K,headroom=128K,tenure=8 \
  eden=512K,headroom=16K,shrink=8K,ratio=0.2,tenure=12 \
  eden=1M,headroom=256K,ratio=0.25 \
  eden=4M,ratio=2,tenure=4 \
  eden=128M \
  eden=16K,headroom=16K,shrink=16K,max=128K \
  eden=16K,headroom=16K,shrink=16K,max=192K \
  eden=16K,headroom=8K,shrink=8K,max=320K,tenure=1 \
  eden=32K,headroom=16K,max=480K,ratio=0.2
