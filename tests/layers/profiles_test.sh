#!/usr/bin/env bash
# profiles_test.sh EPHEMERA GOLDEN [--update]: the profiles of fixed runs
# (five workloads x gc 1/1, gc 1/100, gc bytes:4096, finalization 1/10 and
# Merlin, on fixed seeds; three Lua profiles of one script) hold the same
# records and metadata as when GOLDEN was written: every column of
# `ephemera dump --csv` but the wall-clock ones, sites without their line
# numbers, the metadata but date, host and command.  Each profile is one
# line "NAME SHA256 RECORDS" in GOLDEN.  A change of structure must leave
# them all alone; a change that means to change what a profile holds
# rewrites GOLDEN with --update (and says so in its commit).
set -euo pipefail
eph=$1 golden=$2 update=${3:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
here=$(cd "$(dirname "$0")" && pwd)

records() { "$eph" dump "$1" --csv | cut -d, -f1-6,8-10,12-14,16-20 | sed -E 's@,[^,]*/([^/,:]+):[0-9]+:@,\1:@'; }
meta() { "$eph" dump "$1" --head 0 | sed -n '/^metadata:/,/^tables/p' | grep -vE '^ +(date|host|command) '; }
digest() { # NAME FILE
  local n
  n=$(records "$2" | wc -l)
  echo "$1 $({ records "$2"; meta "$2"; } | sha256sum | cut -d' ' -f1) $((n - 1))"
}

out=$dir/now
: >"$out"
for wl in dataframe agents gcbench kvstore lambda; do
  for spec in mode=gc,sample=1/1,threads=1 mode=gc,sample=1/100,seed=7 mode=gc,sample=bytes:4096,seed=3 \
              mode=finalization,sample=1/10,seed=5 mode=merlin; do
    "$eph" run "$wl" --size small --seed 11 --profile "$spec" -o "$dir/p.eph" >/dev/null
    digest "$wl:$spec" "$dir/p.eph" >>"$out"
  done
done
if "$eph" lua --no-profile /dev/null 2>/dev/null; then
  # Lua's byte clock counts the strings of arg[] and the chunk name: the
  # interpreter and the script run from paths of one length everywhere.
  ln -s "$(realpath "$eph")" "$dir/ephemera"
  cp "$here/../lua/scripts/many.lua" "$dir/many.lua"
  for spec in sample=1/1 sample=1/10,seed=9 sample=bytes:512,seed=4; do
    (cd "$dir" && ./ephemera lua --profile "$spec" -o p.eph many.lua >/dev/null)
    digest "lua:$spec" "$dir/p.eph" >>"$out"
  done
fi

if [[ $update == --update ]]; then
  cp "$out" "$golden"
  echo "wrote $golden ($(wc -l <"$out") profiles)"
  exit 0
fi
status=0
while read -r name sum n; do
  want=$(grep -F "$name " "$golden" | head -n 1 || true)
  if [[ -z $want ]]; then
    echo "FAIL: $name: not in $golden"
    status=1
  elif [[ $want != "$name $sum $n" ]]; then
    echo "FAIL: $name: the profile changed (records now $n, golden: ${want##* })"
    status=1
  fi
done <"$out"
[[ $status == 0 ]] && echo "ok: $(wc -l <"$out") profiles, $(awk '{s += $3} END {print s}' "$out") records, as in $(basename "$golden")"
exit $status
