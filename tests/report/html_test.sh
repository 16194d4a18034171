#!/bin/sh
# html_test.sh GEN EPHEMERA WORK: the HTML report of an exact tiny profile
# has every plot and table; without gnuplot it keeps the tables and says how
# to get the plots; loaded in headless Chromium (Debian: chromium) the DOM
# has them all, and a screenshot is saved to WORK/report.png.
# Exit 77 (skipped) when gnuplot or chromium is missing.
set -u
GEN=$1 EPH=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
"$GEN" "$WORK/t.eph" 2 || exit 1
fail=0
# without gnuplot
EPH_GNUPLOT= "$EPH" report "$WORK/t.eph" --format html >"$WORK/noplot.html" || { echo "FAIL: html without gnuplot"; exit 1; }
grep -q 'apt-get install gnuplot-nox' "$WORK/noplot.html" || { echo "FAIL: no hint on getting the plots"; fail=1; }
for id in summary classes table-hist-rel table-hist-bytes; do
  grep -q "id=\"$id\"" "$WORK/noplot.html" || { echo "FAIL: no table $id without gnuplot"; fail=1; }
done
command -v gnuplot >/dev/null || { echo "gnuplot missing: skipped"; exit 77; }
"$EPH" report "$WORK/t.eph" --format html -o "$WORK/out" >/dev/null || { echo "FAIL: html report"; exit 1; }
H="$WORK/out/report.html"
PLOTS="hist-rel hist-bytes survival heap-profile heap-inverted demise-map"
for id in $PLOTS; do
  grep -q "id=\"plot-$id\"><img" "$H" || { echo "FAIL: plot $id missing"; fail=1; }
  [ -s "$WORK/out/$id.svg" ] || { echo "FAIL: $id.svg not written"; fail=1; }
done
grep -q 'plot not drawn' "$H" && { echo "FAIL: a plot was not drawn"; fail=1; }
[ $fail = 0 ] || exit 1
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || { echo "chromium missing: static checks passed, browser part skipped"; exit 77; }
FLAGS="--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking --disable-component-update --disable-sync"
PROFILE=$(mktemp -d)
# rendered DOM: images decoded (naturalWidth > 0) are reported by a script appended to a copy
cp "$H" "$WORK/out/check.html"
cat >>"$WORK/out/check.html" <<'JS'
<script>
window.addEventListener('load', function () {
  var imgs = document.querySelectorAll('figure.plot img'), ok = 0;
  imgs.forEach(function (i) { if (i.complete && i.naturalWidth > 0) ok++; });
  var tables = document.querySelectorAll('table').length;
  var d = document.createElement('pre'); d.id = 'result';
  d.textContent = 'RESULT plots=' + imgs.length + ' decoded=' + ok + ' tables=' + tables;
  document.body.appendChild(d);
});
</script>
JS
timeout 120 $CHROME $FLAGS --user-data-dir="$PROFILE" --virtual-time-budget=5000 --dump-dom "file://$WORK/out/check.html" >"$WORK/dom.html" 2>"$WORK/chrome.err"
res=$(grep -o 'RESULT plots=[0-9][^<]*' "$WORK/dom.html")
echo "$res"
case "$res" in
  *"plots=6 decoded=6 tables="*) ;;
  *) echo "FAIL: chromium did not render all 6 plots"; tail -5 "$WORK/chrome.err"; fail=1 ;;
esac
ntab=$(echo "$res" | sed 's/.*tables=//')
[ "${ntab:-0}" -ge 5 ] || { echo "FAIL: expected >= 5 tables, got $ntab"; fail=1; }
timeout 120 $CHROME $FLAGS --user-data-dir="$PROFILE" --window-size=1280,2400 --hide-scrollbars --screenshot="$WORK/report.png" "file://$H" >/dev/null 2>&1
[ -s "$WORK/report.png" ] || { echo "FAIL: no screenshot"; fail=1; }
rm -rf "$PROFILE"
[ $fail = 0 ] && echo "html: all passed (screenshot $WORK/report.png)"
exit $fail
