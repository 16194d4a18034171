#!/usr/bin/env bash
# contention_test.sh EPHEMERA [ROUNDS [quick]]: profiles taken on a busy machine are
# whole.  Many profiled runs of several workloads, in every mode and
# thread setting, two at a time beside a busy loop (a quiet machine hides
# races between the profiler's threads); every file is then read back
# completely, by `dump` and by `report`, and must say it is complete.
# Every chunk is also checked as it is sealed (EPHEMERA_CHECK_CHUNKS=1),
# and the writer's thread takes the stop's records (EPHEMERA_STOP_THREAD_MIN=1).
# `quick` (the ThreadSanitizer build, ten times slower, where one run of a
# race is enough): every workload at its small size, eden shared from
# 16 KiB pieces, no repeats of DataFrame.
set -euo pipefail
bin=$1
rounds=${2:-2}
quick=${3:-}
df_size=20000 repeats=5
if [[ $quick == quick ]]; then
  df_size=small repeats=0
  export EPHEMERA_WALK_PIECE_MIN=16384
fi
dir=$(mktemp -d)
busy=
cleanup() { [ -z "$busy" ] || kill "$busy" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
export EPHEMERA_CHECK_CHUNKS=1 EPHEMERA_STOP_THREAD_MIN=1

# workload and size; then the profile specs each is run with
runs=()
for r in $(seq "$rounds"); do
  for wl in "dataframe $df_size" "agents small" "sph small" "kvstore small"; do
    for spec in mode=gc mode=gc,threads=1 mode=gc,threads=2 mode=gc,sample=1/100 mode=finalization \
                mode=finalization,threads=1; do
      runs+=("$wl|$spec|$r")
    done
  done
  runs+=("lambda small|mode=merlin|$r" "binarytrees small|mode=merlin|$r" "boids small|mode=merlin,threads=1|$r")
  # the default mode on DataFrame, where a race between the eden walk's
  # threads and the stop once spoilt a third of the profiles
  for ((k = 0; k < repeats; k++)); do runs+=("dataframe $df_size|mode=gc|$r"); done
done

( while :; do :; done ) &
busy=$!
pids=()
i=0
for item in "${runs[@]}"; do
  IFS='|' read -r wl spec r <<<"$item"
  read -r name size <<<"$wl"
  i=$((i + 1))
  "$bin" run "$name" --size "$size" --profile "$spec" -o "$dir/$i.eph" >"$dir/$i.out" 2>&1 &
  pids+=($!)
  if ((${#pids[@]} == 2)); then
    for p in "${pids[@]}"; do wait "$p" || true; done
    pids=()
  fi
done
for p in "${pids[@]}"; do wait "$p" || true; done
kill "$busy"; busy=

bad=0
i=0
for item in "${runs[@]}"; do
  i=$((i + 1))
  IFS='|' read -r wl spec r <<<"$item"
  what="$wl, $spec, round $r"
  if ! grep -q "profile .*records" "$dir/$i.out"; then
    echo "BAD: $what: the run did not finish its profile:"; tail -n 3 "$dir/$i.out"; bad=$((bad + 1)); continue
  fi
  if ! "$bin" dump "$dir/$i.eph" --csv >"$dir/dump.csv" 2>"$dir/err"; then
    echo "BAD: $what: dump: $(head -c 300 "$dir/err")"; bad=$((bad + 1)); continue
  fi
  if ! "$bin" dump "$dir/$i.eph" 2>/dev/null | head -n 1 | grep -q ", complete,"; then
    echo "BAD: $what: the file does not say it is complete"; bad=$((bad + 1)); continue
  fi
  if ! "$bin" report "$dir/$i.eph" >/dev/null 2>"$dir/err"; then
    echo "BAD: $what: report: $(head -c 300 "$dir/err")"; bad=$((bad + 1)); continue
  fi
done
echo "$((${#runs[@]} - bad)) of ${#runs[@]} profiles taken two at a time beside a busy loop read back whole"
((bad == 0))
