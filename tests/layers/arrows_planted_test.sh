#!/usr/bin/env bash
# arrows_planted_test.sh ROOT: arrows_test.sh fails on includes that break
# the layering.  Each case copies the sources, plants one include, and
# expects the check to fail naming that file; the unplanted copy passes.
set -euo pipefail
root=$1
here=$(dirname "$0")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

copy() {
  rm -rf "$dir/t"
  mkdir -p "$dir/t"
  cp -r "$root/src" "$root/workloads" "$root/include" "$dir/t/"
}

copy
bash "$here/arrows_test.sh" "$dir/t" >/dev/null || { echo "FAIL: the unplanted copy does not pass"; exit 1; }

n=0
# file to plant into | the include | what it breaks
while IFS='|' read -r target inc why; do
  copy
  sed -i "0,/^#include/s@^#include@#include \"$inc\"\n#include@" "$dir/t/$target"
  grep -q "\"$inc\"" "$dir/t/$target" || { echo "FAIL: could not plant into $target"; exit 1; }
  if out=$(bash "$here/arrows_test.sh" "$dir/t"); then
    echo "FAIL: $why ($target includes $inc) passed the check"
    exit 1
  fi
  if ! grep -q "$target" <<<"$out"; then
    echo "FAIL: $why: the check failed without naming $target:"
    echo "$out" | head -n 3
    exit 1
  fi
  n=$((n + 1))
done <<'EOF'
src/heap/heap.c|ephemera/profile.h|upward: the heap names the profiler
src/format/reader.c|ephemera/heap.h|sideways: the format uses the heap
src/analysis/analysis.c|trace/trace.h|sideways: analysis uses traces
src/sim/run.c|harness/bench_workload.h|upward: the simulator uses the harness
src/tune/advisor.c|render/render.h|upward: tune uses a renderer
src/runtime/lua/alloc.c|profile/profiler.h|sideways and private: the Lua adapter uses the profiler's internals
workloads/support.c|analysis/analysis.h|upward: a workload uses analysis
src/runtime/lua/site.c|runtime/internal.h|private: the Lua adapter uses the adapter core's internals
src/render/render_text.c|analysis.h|a bare name from another folder
src/profile/profiler.c|../format/format_internal.h|a ../ path
EOF
echo "ok: the check fails on each of $n planted includes and passes without them"
