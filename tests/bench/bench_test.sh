#!/bin/sh
# bench_test.sh EPHEMERA SRCDIR WORKDIR HAVE_LUA -- `ephemera bench` end to end:
# the minimum heap of a program with a known need, plan + GNU parallel +
# merge against a local run, a Lua script under a heap limit, bad targets,
# factors and result files (one line each), the HTML page.
set -eu
E=$1
SRC=$2
W=$3
LUA=${4:-OFF}
rm -rf "$W"
mkdir -p "$W"
cd "$W"
export XDG_CACHE_HOME="$W/cache"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

echo "== minheap of a program needing exactly 50000000 bytes, to 1 %"
out=$("$E" bench minheap "cmd:sh $SRC/needs.sh 50000000" --warmup 0)
echo "$out"
bytes=$(echo "$out" | sed -n 's/.*minheap_bytes=\([0-9]*\).*/\1/p')
[ "$bytes" -ge 50000000 ] && [ "$bytes" -le 50500000 ] || fail "minheap $bytes is not within 1 % above 50000000"
"$E" bench minheap "cmd:sh $SRC/needs.sh 50000000" --warmup 0 | grep -q ' cached$' || fail "the second minheap was not cached"
"$E" bench minheap "cmd:sh $SRC/needs.sh 50000000" --warmup 0 --no-cache | grep -q ' cached$' && fail "--no-cache used the cache"

echo "== plan + parallel + merge against a local run"
set -- gcbench:12 binarytrees:12 --gc eden=1M --heap 1.5,3 --invocations 2 --warmup 0
"$E" bench "$@" --format csv >local.csv
"$E" bench plan "$@" --emit-jobs jobs.txt --results-dir results
[ "$(wc -l <jobs.txt)" -eq 8 ] || fail "plan wrote $(wc -l <jobs.txt) jobs, expected 2 targets x 2 factors x 2 invocations"
parallel -j2 <jobs.txt
[ "$(ls results | wc -l)" -eq 8 ] || fail "parallel left $(ls results | wc -l) result files"
"$E" bench merge results --format csv >merged.csv
# what does not depend on timing: targets, configurations, heap limits,
# invocations, failures, GC counts, peak heap, bytes allocated
cut -d, -f1-6,15-17 local.csv >local.det
cut -d, -f1-6,15-17 merged.csv >merged.det
cat local.det
diff local.det merged.det || fail "merge differs from the local run"
[ "$(wc -l <local.det)" -eq 5 ] || fail "expected 4 rows"
awk -F, 'NR > 1 && ($5 != 2 || $6 != 0 || $7 <= 0) { exit 1 }' local.det || fail "runs failed or counted no GCs"
"$E" bench merge results --format md | grep -q '^| `gcbench:12` | heap=1.5x eden=1M | 2 |' || fail "markdown table"
"$E" bench merge results -o merged.json >/dev/null
"$E" bench report merged.json --format csv | cut -d, -f1-6,15-17 >report.det
diff local.det report.det || fail "the results file does not give the same table"

echo "== under the profiler"
"$E" bench gcbench:12 --gc eden=1M --heap 3 --invocations 1 --warmup 0 --profile mode=gc,sample=1/10,out=p.eph --format csv >prof.csv
[ -s p.eph ] || fail "--profile wrote no profile"
sed -n 2p prof.csv | grep -q '^gcbench:12,eden=1M,3,[0-9]*,1,0,.*,"mode=gc,sample=1/10,out=p.eph"$' ||
  fail "profiled run: $(sed -n 2p prof.csv)"
"$E" dump p.eph --csv >/dev/null || fail "the profile does not read back"

echo "== a command's heaps report their collections through EPHEMERA_STATS"
out=$("$E" bench "cmd:$E run gcbench --size small --quiet" "cmd:true" --gc eden=256K --invocations 2 --warmup 0)
gcs=$(printf '%s\n' "$out" | awk '/^cmd:/ {t=$0} /^  eden=256K/ {print t "|" $8}')
printf '%s\n' "$gcs" | grep -q "gcbench.*|[1-9]" || fail "no collections read from a command embedding the heap: $gcs"
printf '%s\n' "$gcs" | grep -q "cmd:true|-" || fail "a command without a heap got GC figures: $gcs"

echo "== the HTML page"
"$E" bench report merged.json --html html >/dev/null
grep -q 'LBO, wall clock' html/index.html || fail "no LBO plot"
if command -v gnuplot >/dev/null; then grep -q '<svg' html/index.html || fail "no SVG plot"; fi

echo "== --ci adds invocations up to the cap"
"$E" bench gcbench:8 --invocations 2 --warmup 0 --ci 0.0001% --max-invocations 4 --format csv >ci.csv
awk -F, 'NR == 2 && $5 != 4 { exit 1 }' ci.csv || fail "--ci did not reach the cap of 4: $(sed -n 2p ci.csv | cut -d, -f5)"

echo "== bad targets, factors, result files: one line each"
one_line() { # one_line STATUS PATTERN COMMAND...
  st=$1 pat=$2
  shift 2
  set +e
  "$@" >out.txt 2>err.txt
  rc=$?
  set -e
  [ "$rc" -eq "$st" ] || fail "$*: exit $rc, expected $st ($(cat err.txt))"
  [ "$(wc -l <err.txt)" -eq 1 ] || fail "$*: $(wc -l <err.txt) lines on stderr"
  grep -q "$pat" err.txt || fail "$*: '$(cat err.txt)' does not say '$pat'"
  cat err.txt
}
one_line 2 "no workload 'nosuch'" "$E" bench nosuch:default
one_line 2 "bad size 'huge'" "$E" bench gcbench:huge
one_line 2 "no command after 'cmd:'" "$E" bench cmd:
one_line 2 "cannot read missing.lua" "$E" bench lua:missing.lua
one_line 2 "bad factor 'abc'" "$E" bench gcbench:8 --heap 1.5,abc
one_line 2 "bad factor '-2'" "$E" bench gcbench:8 --heap -2
one_line 2 "bad value 'x'" "$E" bench gcbench:8 --invocations x
one_line 2 "unknown option '--bogus'" "$E" bench gcbench:8 --bogus
mkdir empty
one_line 3 "no .json result files" "$E" bench merge empty
echo '{"runs": [' >broken.json
one_line 3 "broken.json: line" "$E" bench report broken.json
echo '{"x": 1}' >other.json
one_line 3 "other.json: not an ephemera bench run or results file" "$E" bench report other.json
one_line 3 "missing.json" "$E" bench report missing.json
sed 's/"target_index":0/"target_index":-1/' results/run-000-000-000.json >negative.json
one_line 3 "negative.json: not an ephemera bench run" "$E" bench report negative.json
run='{"ephemera_bench_run":1,"target":"gcbench:8","target_index":0,"config_index":0,"invocation":0,"ok":true,'
echo "$run"'"iterations":[{"wall_s":1,"nevents":2,"events":"5000000,1000000 x"}]}' >badevent.json
one_line 3 "badevent.json: iteration 0: event 1 is not START_DELTA,DURATION" "$E" bench report badevent.json
echo "$run"'"iterations":[{"wall_s":1,"nevents":3,"events":"5,1"}]}' >fewevents.json
one_line 3 "fewevents.json: iteration 0: the event string holds 1 events, not 3" "$E" bench report fewevents.json
echo "$run"'"iterations":[{"wall_s":1,"nevents":2,"events":"5000000,1000000 3000000,2000000"}]}' >twoevents.json
"$E" bench report twoevents.json --format csv | awk -F, 'NR == 2 && ($26 != 2 || $32 != "2.0000") { exit 1 }' ||
  fail "a hand-written run's 2 events (1 and 2 ms): $("$E" bench report twoevents.json --format csv | sed -n 2p)"
one_line 3 "not a nominal statistics file" "$E" workloads --nominal other.json

echo "== nominal statistics"
"$E" bench nominal --size small --invocations 1 -o nominal.json 2>/dev/null
"$E" workloads --nominal nominal.json >nominal.txt
cat nominal.txt
rows=$(awk '$2 ~ /^[0-9.]+$/' nominal.txt | wc -l)
[ "$rows" -eq "$("$E" workloads | tail -n +2 | wc -l)" ] || fail "nominal: $rows rows, not one per workload"
grep -q '^kvstore .* [0-9.]* *[0-9.]*$' nominal.txt || fail "nominal: kvstore has no latency"

if [ "$LUA" = ON ] || [ "$LUA" = 1 ] || [ "$LUA" = TRUE ]; then
  echo "== a Lua script under a heap limit"
  out=$("$E" bench minheap "lua:$SRC/alloc.lua 20000" --warmup 0)
  echo "$out"
  need=$(echo "$out" | sed -n 's/.*minheap_bytes=\([0-9]*\).*/\1/p')
  # 20000 strings of ~100 bytes: more than 2 MB, less than 8 MB with the table and Lua's own state
  [ "$need" -gt 2000000 ] && [ "$need" -lt 8000000 ] || fail "Lua minimum heap $need is implausible"
  set +e
  "$E" bench "lua:$SRC/alloc.lua 20000" --heap 0.9 --invocations 2 --warmup 0 >lua-tight.txt 2>&1
  rc=$?
  set -e
  cat lua-tight.txt
  [ "$rc" -eq 1 ] || fail "below its minimum heap the Lua script did not fail (exit $rc)"
  grep -q "not enough memory" lua-tight.txt || fail "no 'not enough memory' below the minimum heap"
  "$E" bench "lua:$SRC/alloc.lua 20000" --heap 1.05 --invocations 2 --warmup 0 >lua-ok.txt
  cat lua-ok.txt
  grep -q "latency simple .*(40 events)" lua-ok.txt || fail "the Lua script's 2 x 20 events are missing"
fi
echo "all bench tests passed"
