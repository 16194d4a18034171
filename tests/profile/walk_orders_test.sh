#!/usr/bin/env bash
# walk_orders_test.sh EPHEMERA: gc mode's shared eden walk gives the records of
# a walk on one thread, field for field and in order, whatever order its
# two threads run in.  Eden is cut into the most pieces (the smallest
# piece size), and one thread or the other is held back before each piece
# and before it writes ahead (EPHEMERA_WALK_DELAY), so that the second
# thread is still walking or writing when the mutator runs on, when the
# next collection starts, and when the profile stops and starts the
# writer's thread (EPHEMERA_STOP_THREAD_MIN=1).  With and without eden
# pairs (the walk running on past its scavenge).  Every chunk is checked
# as it is sealed (EPHEMERA_CHECK_CHUNKS=1).
set -euo pipefail
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
in_order() { "$bin" dump "$1" --csv | cut -d, -f1-6,8-10,12-14,16-20; }
export EPHEMERA_CHECK_CHUNKS=1
for wl in dataframe agents kvstore; do
  run=(run "$wl" --size small --gc eden=256K,headroom=64K)
  "$bin" "${run[@]}" --profile mode=gc,sample=1/1,threads=1 -o "$dir/one.eph" >/dev/null
  in_order "$dir/one.eph" >"$dir/one.txt"
  n=$(($(wc -l <"$dir/one.txt") - 1))
  ((n > 1000)) || { echo "FAIL: $wl: only $n records"; exit 1; }
  for pair in 1 0; do
    for delay in "" main:300 second:300 second:20000; do
      EPHEMERA_EDEN_PAIR=$pair EPHEMERA_WALK_DELAY=$delay EPHEMERA_WALK_PIECE_MIN=1 EPHEMERA_STOP_THREAD_MIN=1 \
        "$bin" "${run[@]}" --profile mode=gc,sample=1/1,threads=2 -o "$dir/two.eph" >/dev/null
      if ! in_order "$dir/two.eph" | cmp -s - "$dir/one.txt"; then
        echo "FAIL: $wl: eden pairs $pair, delay '${delay:-none}': two threads give other records than one:"
        diff <(in_order "$dir/two.eph") "$dir/one.txt" | head -n 6
        exit 1
      fi
    done
  done
  echo "ok: $wl: $n records, the same in order on two threads in 8 schedules"
done
