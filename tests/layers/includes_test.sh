#!/usr/bin/env bash
# includes_test.sh SRC_ROOT CC: each low layer compiles with only the public
# headers of itself and the layers below it (docs/architecture.md):
#   base      base.h
#   heap      base.h gc_event.h value.h heap.h ephemeron.h observer.h
#   sampling  base.h spec.h (and its own sampling.h)
#   format    base.h gc_event.h format.h
# Each folder's sources are compiled (-fsyntax-only) with an include path
# holding a copy of just those headers and the folder itself: an include of
# a layer above (profile.h, format.h from the heap, ...) fails to compile.
# An include that climbs out of the folder ("../") fails the test too.
set -euo pipefail
root=$1 cc=${2:-cc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
declare -A allowed=(
  [base]="base.h"
  [heap]="base.h gc_event.h value.h heap.h ephemeron.h observer.h"
  [sampling]="base.h spec.h"
  [format]="base.h gc_event.h format.h"
)
status=0
for layer in base heap sampling format; do
  inc=$dir/$layer/include/ephemera
  mkdir -p "$inc"
  for h in ${allowed[$layer]}; do cp "$root/include/ephemera/$h" "$inc/"; done
  if grep -n '#include "\.\./' "$root/src/$layer"/*.[ch]; then
    echo "FAIL: src/$layer includes a file outside its folder"
    status=1
  fi
  for src in "$root/src/$layer"/*.c; do
    if ! out=$("$cc" -std=c11 -D_GNU_SOURCE -fsyntax-only -I "$dir/$layer/include" -iquote "$root/src/$layer" "$src" 2>&1); then
      echo "FAIL: src/$layer/$(basename "$src") needs a header beyond ${allowed[$layer]}:"
      echo "$out" | grep -m 3 -E 'error|fatal' || echo "$out" | head -n 3
      status=1
    fi
  done
done
[[ $status == 0 ]] && echo "ok: src/base, src/heap, src/sampling and src/format compile with only their layers' headers"
exit $status
