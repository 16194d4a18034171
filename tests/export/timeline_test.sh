#!/bin/sh
# timeline_test.sh EPHEMERA CHECK GEN WORK: the heap timeline of a real run.
#  - `ephemera export --chrome-trace` is valid trace-event JSON with one
#    slice per collection of the profile (`ephemera dump`'s count) and two
#    heap counters each (eph-chrome-check, with jansson);
#  - `ephemera report --format csv` has a timeline table with two rows per
#    collection, used bytes matching the trace's first collection;
#  - the HTML report has the timeline plot and the flame graph, and in
#    headless Chromium (when installed) the plot decodes and the flame
#    graph's frames are laid out (non-zero width), root the widest;
#  - a profile without collection events (docs/eph-format.md's example, from
#    GEN = eph-format-gen) warns and writes an empty trace.
set -u
EPH=$1 CHECK=$2 GEN=$3 WORK=$4
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
fail=0
"$EPH" run dataframe --size 50000 --profile mode=gc,sample=1/20 -o "$WORK/t.eph" >/dev/null || { echo "FAIL: profiling"; exit 1; }
ngcs=$("$EPH" dump "$WORK/t.eph" | sed -n 's/^gcs: \([0-9]*\) .*/\1/p')
[ "${ngcs:-0}" -ge 2 ] || { echo "FAIL: the profile has ${ngcs:-no} collections"; exit 1; }
"$EPH" export "$WORK/t.eph" --chrome-trace "$WORK/t.json" >/dev/null || { echo "FAIL: export"; exit 1; }
"$CHECK" "$WORK/t.json" "$ngcs" || fail=1
"$EPH" report "$WORK/t.eph" --format csv -o "$WORK/csv" >/dev/null || { echo "FAIL: report csv"; exit 1; }
rows=$(awk 'NR > 1' "$WORK/csv/timeline.csv" | wc -l)
[ "$rows" -eq $((2 * ngcs)) ] || { echo "FAIL: timeline.csv has $rows rows for $ngcs collections"; fail=1; }
used_csv=$(awk -F, 'NR == 2 { print $5 }' "$WORK/csv/timeline.csv")
grep -q "\"used_before\":$used_csv," "$WORK/t.json" || { echo "FAIL: first used_before $used_csv not in the trace"; fail=1; }
"$EPH" report "$WORK/t.eph" --format html -o "$WORK/html" >/dev/null || { echo "FAIL: report html"; exit 1; }
H="$WORK/html/report.html"
grep -q 'id=timeline' "$H" || { echo "FAIL: no timeline section"; fail=1; }
if command -v gnuplot >/dev/null; then
  grep -q 'id="plot-timeline"><img' "$H" || { echo "FAIL: no timeline plot"; fail=1; }
  [ -s "$WORK/html/timeline.svg" ] || { echo "FAIL: timeline.svg not written"; fail=1; }
fi
grep -q 'id=flame-svg' "$H" || { echo "FAIL: no flame graph"; fail=1; }
nframes=$(grep -c '<g class=frame>' "$H")
[ "$nframes" -ge 3 ] || { echo "FAIL: flame graph with $nframes frames"; fail=1; }
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROME" ]; then
  cp "$H" "$WORK/html/check.html"
  cat >>"$WORK/html/check.html" <<'JS'
<script>
window.addEventListener('load', function () {
  var img = document.querySelector('#plot-timeline img');
  var decoded = img && img.complete && img.naturalWidth > 0 ? 1 : 0;
  var rects = document.querySelectorAll('#flame-svg rect'), wide = 0, root = 0, max = 0;
  rects.forEach(function (r) { var w = r.getBBox().width; if (w > 0) wide++; if (w > max) max = w; });
  if (rects.length) root = rects[0].getBBox().width;
  var d = document.createElement('pre'); d.id = 'result';
  d.textContent = 'RESULT timeline=' + decoded + ' frames=' + wide + ' rootwidest=' + (root >= max && root > 0 ? 1 : 0);
  document.body.appendChild(d);
});
</script>
JS
  PROFILE=$(mktemp -d)
  timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$PROFILE" --virtual-time-budget=5000 --dump-dom \
    "file://$(realpath "$WORK/html/check.html")" >"$WORK/dom.html" 2>"$WORK/chrome.err"
  rm -rf "$PROFILE"
  res=$(grep -o 'RESULT timeline=[0-9][^<]*' "$WORK/dom.html")
  echo "chromium: $res"
  want_t=0
  command -v gnuplot >/dev/null && want_t=1
  case "$res" in
    "RESULT timeline=$want_t frames="*" rootwidest=1") [ "$(echo "$res" | sed 's/.*frames=\([0-9]*\).*/\1/')" -ge 3 ] ||
      { echo "FAIL: chromium laid out too few flame frames"; fail=1; } ;;
    *) echo "FAIL: chromium: '$res'"; tail -3 "$WORK/chrome.err"; fail=1 ;;
  esac
else
  echo "chromium missing: the browser check is skipped"
fi
# A profile without collection events.
"$GEN" example "$WORK/noev.eph" || { echo "FAIL: eph-format-gen example"; exit 1; }
"$EPH" export "$WORK/noev.eph" --chrome-trace "$WORK/noev.json" >/dev/null 2>"$WORK/noev.err" || { echo "FAIL: export without events"; fail=1; }
grep -q 'no collection events' "$WORK/noev.err" || { echo "FAIL: no warning for a profile without events"; fail=1; }
"$CHECK" "$WORK/noev.json" 0 >/dev/null || fail=1
# Bad input: one line, exit 3 (bad file), 2 (usage), 1 (cannot write).
printf 'garbage' >"$WORK/bad.eph"
for c in "3 $WORK/bad.eph --chrome-trace $WORK/x.json" "3 $WORK/missing.eph --pprof $WORK/x.pb.gz" "2 $WORK/t.eph" \
         "1 $WORK/t.eph --chrome-trace $WORK/no/dir/x.json" "1 $WORK/t.eph --pprof $WORK/no/dir/x.pb.gz"; do
  set -- $c
  want=$1; shift
  "$EPH" export "$@" >/dev/null 2>"$WORK/err.txt"; rc=$?
  [ "$rc" = "$want" ] && [ "$(wc -l <"$WORK/err.txt")" = 1 ] || { echo "FAIL: export $*: exit $rc (want $want), stderr:"; cat "$WORK/err.txt"; fail=1; }
done
[ $fail = 0 ] && echo "timeline: ok ($ngcs collections)"
exit $fail
