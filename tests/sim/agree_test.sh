#!/bin/sh
# sim.agree.WL: `spur` from a Merlin trace of WL at small size against
# unprofiled real runs with 12 GC settings (tests/sim/agree_check.c): counts
# exact, bytes within 1 % (also where a survivor space overflowed).
set -eu
cli=$1 agree=$2 wl=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" run "$wl" --size small --profile mode=merlin --trace -o "$dir/t.eph" --quiet >/dev/null
# shellcheck disable=SC2046 # one setting per word
exec "$agree" "$dir/t.eph" "$wl" small $(grep -v '^#' "$(dirname "$0")/small_settings")
