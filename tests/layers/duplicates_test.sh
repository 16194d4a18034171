#!/usr/bin/env bash
# duplicates_test.sh SRC_ROOT: the heap's profiler (src/profile) and the Lua
# adapter (src/lua) share their sampling and clock-table core (src/sampling)
# instead of repeating it, or it: `duplicates` (six or more lines alike)
# finds no pair between any two of the three.  Skipped (77) where the
# duplicates command is not installed.
set -euo pipefail
root=$1
command -v duplicates >/dev/null || { echo "skip: no duplicates command"; exit 77; }
out=$(cd "$root/src" && duplicates --most 200 --seconds 60)
if pairs=$(echo "$out" | grep -E '^D[0-9]+ ' | grep -E '(^| )lua/[^ ]+ ~ profile/|(^| )profile/[^ ]+ ~ lua/'); then
  echo "FAIL: src/lua and src/profile repeat each other:"; echo "$pairs"
  exit 1
fi
if pairs=$(echo "$out" | grep -E '^D[0-9]+ ' | grep -E '(^| )(lua|profile)/[^ ]+ ~ sampling/|(^| )sampling/[^ ]+ ~ (lua|profile)/'); then
  echo "FAIL: src/sampling's core is repeated in src/lua or src/profile:"; echo "$pairs"
  exit 1
fi
if echo "$out" | grep -q '^incomplete:'; then echo "FAIL: duplicates did not finish: $(echo "$out" | grep '^incomplete:')"; exit 1; fi
echo "ok: no pair between src/lua, src/profile and src/sampling ($(echo "$out" | head -n 1))"
