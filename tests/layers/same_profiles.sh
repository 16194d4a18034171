#!/usr/bin/env bash
# same_profiles.sh REF_EPHEMERA NEW_EPHEMERA: the profiles two builds write
# for the same runs on fixed seeds hold the same records (every column of
# `ephemera dump --csv` but the wall-clock ones, which differ from run to
# run; sites named from the source tree, wherever it is), in the same
# order, and the same metadata but date and host.  For
# checking that a change of structure changed no output: run it against a
# build of the previous commit.  Exits 1 at the first difference.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Both run from paths of one length: the Lua runner keeps its command's
# path as a Lua string, which Lua's allocation clock counts.
mkdir "$dir/a" "$dir/b"
ln -s "$(realpath "$1")" "$dir/a/ephemera"
ln -s "$(realpath "$2")" "$dir/b/ephemera"
ref=$dir/a/ephemera new=$dir/b/ephemera
records() { "$1" dump "$2" --csv | cut -d, -f1-6,8-10,12-14,16-20 | sed -E 's@,[^,]*/(workloads|src)/@,\1/@'; }
meta() { "$1" dump "$2" --head 0 | sed -n '/^metadata:/,/^tables/p' | grep -vE '^ +(date|host|command) '; }
n=0
for wl in dataframe agents gcbench kvstore lambda; do
  for spec in mode=gc,sample=1/1,threads=1 mode=gc,sample=1/100,seed=7 mode=gc,sample=bytes:4096,seed=3 \
              mode=finalization,sample=1/10,seed=5 mode=merlin; do
    for b in ref new; do
      bin=${!b}
      "$bin" run "$wl" --size small --seed 11 --profile "$spec" -o "$dir/$b.eph" >/dev/null
    done
    if ! cmp -s <(records "$ref" "$dir/ref.eph") <(records "$new" "$dir/new.eph"); then
      echo "FAIL: $wl $spec: the records differ"
      diff <(records "$ref" "$dir/ref.eph") <(records "$new" "$dir/new.eph") | head -n 6
      exit 1
    fi
    if ! cmp -s <(meta "$ref" "$dir/ref.eph") <(meta "$new" "$dir/new.eph"); then
      echo "FAIL: $wl $spec: the metadata differ"
      diff <(meta "$ref" "$dir/ref.eph") <(meta "$new" "$dir/new.eph") | head -n 6
      exit 1
    fi
    n=$((n + $(records "$new" "$dir/new.eph" | wc -l) - 1))
  done
done
# Lua: the adapter's sampler comes from src/sampling, its sessions, records
# and sites from src/runtime (the byte clock of Lua's allocator is
# deterministic for a script; sites are the script's).
if "$new" lua --no-profile /dev/null 2>/dev/null; then
  scripts=$(dirname "$0")/../lua/scripts
  nlua=0
  for run in many.lua:sample=1/1 many.lua:sample=1/10,seed=9 many.lua:sample=bytes:512,seed=4 \
             coro.lua:sample=1/3,seed=2,stacks=6; do
    script=$scripts/${run%%:*} spec=${run#*:}
    for b in ref new; do
      bin=${!b}
      # one argv[0] for both: Lua allocates it (arg[-1]), so its length moves the byte clock
      (exec -a ephemera "$bin" lua --profile "$spec" -o "$dir/$b.eph" "$script" >/dev/null)
    done
    if ! cmp -s <(records "$ref" "$dir/ref.eph") <(records "$new" "$dir/new.eph"); then
      echo "FAIL: lua $run: the records differ"
      diff <(records "$ref" "$dir/ref.eph") <(records "$new" "$dir/new.eph") | head -n 6
      exit 1
    fi
    n=$((n + $(records "$new" "$dir/new.eph" | wc -l) - 1)) nlua=$((nlua + 1))
  done
  echo "ok: 25 heap profiles and $nlua Lua profiles, $n records, the same from both builds"
else
  echo "ok: 25 profiles, $n records, the same from both builds (no Lua adapter)"
fi
