#!/usr/bin/env bash
# eden_walk_test.sh EPHEMERA: gc mode sampling every object finds young objects
# by walking eden after each collection (no call per allocation), as it
# does with a class filter; sample=every:1 (fixed gaps) takes the
# per-allocation path instead.  All three must give the same records —
# class, site, size, births, deaths, how — all but the wall times, which
# differ from run to run.  With two threads sharing each scavenge's walk
# (threads=2, eden cut into pieces of 16 KiB here), the records must
# also come in the same order as with one (and that run's stop hands its
# records to the writer's thread, EPHEMERA_STOP_THREAD_MIN=1, where the
# one-thread run's stop encodes them itself); and so at 1/3 with a class
# filter, where the sampler draws by each object's clock (any thread can
# draw for any object), keeping about a third of the filter's objects.
# A small old space makes full GCs too, where the walk is one thread's
# (each needs the full GC's mark), and the old list is settled.
set -euo pipefail
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# columns: id class site size weight birth_bytes birth_wall ... (ephemera dump --csv)
in_order() { "$bin" dump "$1" --csv | cut -d, -f1-6,8-10,12-14,16-20; }
fields() { in_order "$1" | sort; }
for wl in dataframe agents gcbench modelload kvstore boids; do
  run=(run "$wl" --size small --gc eden=256K,headroom=64K,ratio=0.05)
  fulls=$("$bin" "${run[@]}" --profile mode=gc,sample=1/1,threads=1 -o "$dir/walk.eph" | grep -oE '[0-9]+ full GCs')
  EPHEMERA_WALK_PIECE_MIN=16384 EPHEMERA_STOP_THREAD_MIN=1 "$bin" "${run[@]}" --profile mode=gc,sample=1/1,threads=2 \
    -o "$dir/shared.eph" >/dev/null
  classes=$("$bin" dump "$dir/walk.eph" --csv | awk -F, 'NR > 1 {print $2}' | sort -u | paste -sd, -)
  "$bin" "${run[@]}" --profile "mode=gc,sample=1/1,classes=$classes" -o "$dir/filter.eph" >/dev/null
  "$bin" "${run[@]}" --profile "mode=gc,sample=every:1" -o "$dir/hook.eph" >/dev/null
  fields "$dir/walk.eph" >"$dir/walk.txt"
  fields "$dir/filter.eph" >"$dir/filter.txt"
  fields "$dir/hook.eph" >"$dir/hook.txt"
  n=$(wc -l <"$dir/walk.txt")
  if ! cmp -s <(in_order "$dir/walk.eph") <(in_order "$dir/shared.eph"); then
    echo "FAIL: $wl: one thread and two threads walking eden give other records or another order:"
    diff <(in_order "$dir/walk.eph") <(in_order "$dir/shared.eph") | head -n 6
    exit 1
  fi
  for other in filter hook; do
    if ! cmp -s "$dir/walk.txt" "$dir/$other.txt"; then
      echo "FAIL: $wl: the eden walk and the $other run differ:"
      diff "$dir/walk.txt" "$dir/$other.txt" | head -n 6
      exit 1
    fi
  done
  ((n > 100)) || { echo "FAIL: $wl: only $n records"; exit 1; }
  # every other class by number of objects (the commonest first), a third
  # of their objects, on one thread and on two
  half=$(awk -F, '$1 != "id" {print $2}' "$dir/walk.txt" | sort | uniq -c | sort -rn | awk 'NR % 2 {print $2}' | paste -sd, -)
  "$bin" "${run[@]}" --profile "mode=gc,sample=1/3,classes=$half,threads=1" -o "$dir/third1.eph" >/dev/null
  EPHEMERA_WALK_PIECE_MIN=16384 "$bin" "${run[@]}" --profile "mode=gc,sample=1/3,classes=$half,threads=2" \
    -o "$dir/third2.eph" >/dev/null
  if ! cmp -s <(in_order "$dir/third1.eph") <(in_order "$dir/third2.eph"); then
    echo "FAIL: $wl: at 1/3 with a filter, one thread and two give other records or another order:"
    diff <(in_order "$dir/third1.eph") <(in_order "$dir/third2.eph") | head -n 6
    exit 1
  fi
  in_half=$(awk -F, -v c=",$half," '$1 != "id" && index(c, "," $2 ",") {k++} END {print k + 0}' "$dir/walk.txt")
  kept=$(($(in_order "$dir/third1.eph" | wc -l) - 1))
  # binomial(in_half, 1/3): within five standard deviations
  awk -v n="$in_half" -v k="$kept" 'BEGIN {m = n / 3; sd = sqrt(n * 2 / 9); exit !(n > 30 && k > m - 5 * sd && k < m + 5 * sd)}' ||
    { echo "FAIL: $wl: 1/3 of $in_half objects of the filtered classes kept $kept"; exit 1; }
  echo "ok: $wl: $n records, $fulls and the stop's, identical (two threads: in the same order); 1/3 of $in_half filtered: $kept, same on two threads"
done
