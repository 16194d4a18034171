#!/usr/bin/env bash
# duplicates_test.sh SRC_ROOT: the heap's profiler (src/profile), the runtime
# adapter core (src/runtime) and the Lua adapter on it (src/runtime/lua)
# share their sampling and clock-table core (src/sampling), and the Lua
# adapter uses the adapter core, instead of repeating them: `duplicates`
# (six or more lines alike) finds no pair between the adapter core and the
# Lua adapter, none between either and src/profile, and none between any
# of the three and src/sampling.  Skipped (77) where the duplicates command
# is not installed.
set -euo pipefail
root=$1
command -v duplicates >/dev/null || { echo "skip: no duplicates command"; exit 77; }
out=$(cd "$root/src" && duplicates --most 200 --seconds 60)
rows=$(echo "$out" | grep -E '^D[0-9]+ ' || true)
# the folders of a row's two places ("D1 a:1-9 ~ b:3-11 ..." -> "TAG_A TAG_B"):
# core (src/runtime's own files), lua (src/runtime/lua), profile, sampling, other
tags() {
  awk '{ for (i = 2; i <= 4; i += 2) {
           p = $i; t = "other"
           if (p ~ /^runtime\/lua\//) t = "lua"; else if (p ~ /^runtime\/[^\/]+:/) t = "core"
           else if (p ~ /^profile\//) t = "profile"; else if (p ~ /^sampling\//) t = "sampling"
           printf "%s%s", t, (i == 2 ? " " : "\n") } }'
}
status=0
check() { # check TAG_A TAG_B WHAT: no row pairs the two folders
  local pairs
  pairs=$(paste -d ' ' <(echo "$rows" | tags) <(echo "$rows") |
    awk -v a="$1" -v b="$2" '($1 == a && $2 == b) || ($1 == b && $2 == a)' | cut -d ' ' -f 3-)
  if [[ -n $pairs ]]; then echo "FAIL: $3 repeat each other:"; echo "$pairs"; status=1; fi
}
if [[ -n $rows ]]; then
  check core lua "the adapter core (src/runtime) and the Lua adapter (src/runtime/lua)"
  check core profile "the adapter core (src/runtime) and the profiler (src/profile)"
  check lua profile "the Lua adapter (src/runtime/lua) and the profiler (src/profile)"
  check core sampling "src/sampling's core and the adapter core (src/runtime)"
  check lua sampling "src/sampling's core and the Lua adapter (src/runtime/lua)"
  check profile sampling "src/sampling's core and the profiler (src/profile)"
fi
if echo "$out" | grep -q '^incomplete:'; then echo "FAIL: duplicates did not finish: $(echo "$out" | grep '^incomplete:')"; exit 1; fi
[[ $status == 0 ]] &&
  echo "ok: no pair between src/runtime, src/runtime/lua, src/profile and src/sampling ($(echo "$out" | head -n 1))"
exit $status
