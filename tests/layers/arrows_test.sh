#!/usr/bin/env bash
# arrows_test.sh ROOT: every include under src/ and workloads/ follows an
# arrow of docs/architecture.md.  A folder may include
#   - its own headers, by bare name ("profiler.h");
#   - another folder's headers by path from src/ ("analysis/analysis.h",
#     "runtime/lua/lua_advice.h") or from the root ("workloads/workload.h"),
#     and public headers as "ephemera/NAME.h", each only when that folder
#     (or the public header's layer) is in the ALLOWED list below;
# and never a "../" path, a bare name from another folder, or another
# folder's private header (*_internal.h, internal.h, profiler.h).  Prints every
# offending line and exits 1; 0 when all follow the arrows.
set -euo pipefail
root=$1

# What each folder may include besides itself (the layers below it).
declare -A allowed=(
  [base]=""
  [heap]="base"
  [sampling]="base"
  [format]="base"
  [profile]="base heap sampling format"
  [runtime]="base sampling format"
  [runtime/lua]="base sampling format runtime"
  [runtime/jvm]="base"
  [workloads]="base heap"
  [analysis]="base format"
  [trace]="base heap format"
  [sim]="base heap format"
  [harness]="base heap sampling format profile workloads sim runtime/jvm"
  [tune]="base heap format analysis sim harness runtime/lua"
  [render]="base heap sampling format profile workloads analysis trace sim harness tune"
  [cli]="base heap sampling format profile runtime runtime/lua runtime/jvm workloads analysis trace sim harness tune render"
)
# The layer each public header (include/ephemera/) belongs to.
declare -A public=(
  [base.h]=base [gc_event.h]=base [value.h]=heap [heap.h]=heap [ephemeron.h]=heap [observer.h]=heap
  [spec.h]=sampling [format.h]=format [profile.h]=profile [sim.h]=sim [bench.h]=harness [tune.h]=tune
)
# Generated into the build tree, included by bare name.
generated="profile.pb-c.h wl_list.h"
private_re='(_internal\.h|/internal\.h|/profiler\.h)$'

status=0
fail() { echo "FAIL: $1"; status=1; }
checked=0
while IFS= read -r file; do
  rel=${file#"$root"/}
  dir=$(dirname "$rel")
  case $dir in
    src/*) folder=${dir#src/} ;;
    *) folder=$dir ;;
  esac
  if [[ -z ${allowed[$folder]+x} ]]; then
    fail "$rel: folder '$folder' has no place in the layers (add it to docs/architecture.md and this test)"
    continue
  fi
  checked=$((checked + 1))
  while IFS=: read -r line inc; do
    inc=${inc#*\"}
    inc=${inc%%\"*}
    owner=""
    if [[ $inc == ../* || $inc == */../* ]]; then
      fail "$rel:$line: #include \"$inc\" climbs out of the folder (include by path from src/)"
      continue
    elif [[ $inc == ephemera/* ]]; then
      owner=${public[${inc#ephemera/}]:-}
      [[ -n $owner ]] || { fail "$rel:$line: #include \"$inc\": no such public header"; continue; }
    elif [[ $inc == */* ]]; then
      if [[ -f $root/src/$inc ]]; then owner=$(dirname "$inc")
      elif [[ -f $root/$inc ]]; then owner=$(dirname "$inc")
      else fail "$rel:$line: #include \"$inc\": no such file under src/ or the root"; continue
      fi
      if [[ $owner != "$folder" && "/$inc" =~ $private_re ]]; then
        fail "$rel:$line: #include \"$inc\" is $owner's private header"
        continue
      fi
    else
      if [[ -f $root/$dir/$inc ]]; then owner=$folder
      elif [[ " $generated " == *" $inc "* ]]; then owner=$folder
      else fail "$rel:$line: #include \"$inc\" by bare name from another folder (include it by path)"; continue
      fi
    fi
    if [[ $owner != "$folder" && " ${allowed[$folder]} " != *" $owner "* ]]; then
      fail "$rel:$line: #include \"$inc\": $folder may not include $owner (docs/architecture.md)"
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" || true)
done < <(find "$root/src" "$root/workloads" -name '*.[ch]' | sort)
((checked > 0)) || fail "no sources found under $root/src"
[[ $status == 0 ]] && echo "ok: $checked files under src/ and workloads/ include only along the arrows"
exit $status
