#!/usr/bin/env bash
# fin_walk_test.sh EPHEMERA: finalization mode at 100 % with pretenuring arms
# young samples' ephemerons in runs before the next collection, walking
# eden (docs/finalization.md).  Arming each at its allocation instead
# (EPHEMERA_FIN_WALK=0, or sample=every:1, which takes the sampler's path)
# must give the same records — class, site, size, births, deaths, how —
# all but the wall times, which differ from run to run.  A small eden and
# old space make many scavenges and full GCs; --retain keeps some samples
# alive to the end, censored.  The first run's stop hands its records to
# the writer's thread (EPHEMERA_STOP_THREAD_MIN=1), the second's encodes
# them on the program's thread (the bound set past any count).  The first
# run's finalisers hand their records to the writer's thread with births
# as clock points, stamped by the writer's replica of the clock tables;
# the second has no writer's thread (EPHEMERA_WRITER_THREAD=0) and stamps
# them itself.
set -euo pipefail
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# columns: id class site size weight birth_bytes birth_wall ... (ephemera dump --csv)
fields() { "$bin" dump "$1" --csv | cut -d, -f2-6,8-10,12-14,16-20 | sort; }
for wl in dataframe agents gcbench modelload kvstore boids sph; do
  run=(run "$wl" --size small --gc eden=256K,headroom=64K,ratio=0.05)
  first=$("$bin" workloads -v | awk -v w="$wl" '$1 == w {getline; sub(/.*classes: /, ""); print $1}')
  for retain in "" "--retain $first"; do
    # shellcheck disable=SC2086
    out=$(EPHEMERA_STOP_THREAD_MIN=1 "$bin" "${run[@]}" $retain --profile mode=finalization -o "$dir/walk.eph")
    # shellcheck disable=SC2086
    EPHEMERA_FIN_WALK=0 EPHEMERA_STOP_THREAD_MIN=999999999999 EPHEMERA_WRITER_THREAD=0 "$bin" "${run[@]}" $retain --profile mode=finalization -o "$dir/each.eph" >/dev/null
    # shellcheck disable=SC2086
    "$bin" "${run[@]}" $retain --profile mode=finalization,sample=every:1 -o "$dir/hook.eph" >/dev/null
    fields "$dir/walk.eph" >"$dir/walk.txt"
    for other in each hook; do
      if ! cmp -s "$dir/walk.txt" <(fields "$dir/$other.eph"); then
        echo "FAIL: $wl $retain: arming in runs and the $other run differ:"
        diff "$dir/walk.txt" <(fields "$dir/$other.eph") | head -n 6
        exit 1
      fi
    done
    n=$(wc -l <"$dir/walk.txt")
    scavenges=$(grep -oE '[0-9]+ scavenges' <<<"$out" | grep -oE '[0-9]+')
    censored=$(grep -c ',censored,' <("$bin" dump "$dir/walk.eph" --csv) || true)
    ((n > 1000 && scavenges >= 2)) || { echo "FAIL: $wl: only $n records, $scavenges scavenges"; exit 1; }
    [[ -z $retain ]] || ((censored > 0)) || { echo "FAIL: $wl $retain: no censored record"; exit 1; }
    echo "$wl ${retain:-}: $n records alike ($scavenges scavenges, $censored censored)"
  done
done
echo "ok: arming in runs gives the same records as arming at each allocation"
