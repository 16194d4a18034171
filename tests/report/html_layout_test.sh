#!/bin/sh
# html_layout_test.sh GEN EPHEMERA WORK HAVE_LUA: every kind of HTML page
# Ephemera writes, laid out by headless Chromium (Debian: chromium) in a
# 1280- and a 1920-pixel window, fits the window: no table wider than the
# box it sits in, no figure or image wider than its column, no sideways
# scrolling (layout_check.js measures; each problem is printed).  Pages: the
# report of a sampled gc-mode profile by class and by site, of an exact
# trace (Merlin's heap views), of a Lua program, and `ephemera bench`'s page.
# Screenshots of each page at both widths are left in WORK.
# Exit 77 (skipped) when gnuplot or chromium is missing.
set -u
GEN=$1 EPH=$2 WORK=$3 HAVE_LUA=${4:-OFF}
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
command -v gnuplot >/dev/null || { echo "gnuplot missing: skipped"; exit 77; }
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || { echo "chromium missing: skipped"; exit 77; }
export XDG_CACHE_HOME="$WORK/cache"

# The pages.
"$EPH" run dataframe --size 20000 --profile mode=gc,sample=1/10 -o "$WORK/df.eph" >/dev/null || { echo "FAIL: profiling"; exit 1; }
"$EPH" report "$WORK/df.eph" --format html -o "$WORK/classes" >/dev/null || { echo "FAIL: report"; exit 1; }
"$EPH" report "$WORK/df.eph" --by site --format html -o "$WORK/sites" >/dev/null || { echo "FAIL: report --by site"; exit 1; }
"$GEN" "$WORK/trace.eph" 2 || exit 1
"$EPH" report "$WORK/trace.eph" --format html -o "$WORK/trace" >/dev/null || { echo "FAIL: report of a trace"; exit 1; }
PAGES="classes/report.html sites/report.html trace/report.html"
if [ "$HAVE_LUA" = ON ]; then
  "$EPH" lua -o "$WORK/lua.eph" "$HERE/../lua/scripts/many.lua" >/dev/null || { echo "FAIL: ephemera lua"; exit 1; }
  "$EPH" report "$WORK/lua.eph" --format html -o "$WORK/lua" >/dev/null || { echo "FAIL: report of a Lua profile"; exit 1; }
  PAGES="$PAGES lua/report.html"
fi
"$EPH" bench gcbench:10 binarytrees:10 --gc eden=1M --gc eden=4M --heap 1.5,3 --invocations 2 --warmup 0 \
  --html "$WORK/bench" >/dev/null || { echo "FAIL: bench --html"; exit 1; }
PAGES="$PAGES bench/index.html"

FLAGS="--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars"
PROFILE=$(mktemp -d)
fail=0
for page in $PAGES; do
  dir=$(dirname "$WORK/$page")
  name=$(basename "$dir")
  { cat "$WORK/$page"; echo '<script>'; cat "$HERE/layout_check.js"; echo '</script>'; } >"$dir/layout-check.html"
  for w in 1280 1920; do
    timeout 120 "$CHROME" $FLAGS --user-data-dir="$PROFILE" --window-size=$w,1000 --virtual-time-budget=5000 \
      --dump-dom "file://$dir/layout-check.html" >"$dir/dom-$w.html" 2>"$dir/chrome-$w.err"
    # the pre element's text: problems, then the LAYOUT line
    res=$(sed -n '/<pre id="layout-check">/,/<\/pre>/p' "$dir/dom-$w.html" | sed 's/.*<pre id="layout-check">//; s/<\/pre>.*//')
    case "$res" in
      *"LAYOUT viewport=$w "*"problems=0"*) echo "$name at $w px: fits ($(echo "$res" | grep -o 'tables=[0-9]*'))" ;;
      *"LAYOUT viewport="*) echo "FAIL: $name at $w px:"; echo "$res" | sed 's/^/  /'; fail=1 ;;
      *) echo "FAIL: $name at $w px: chromium gave no layout result"; tail -3 "$dir/chrome-$w.err"; fail=1 ;;
    esac
    timeout 120 "$CHROME" $FLAGS --user-data-dir="$PROFILE" --window-size=$w,2400 --screenshot="$WORK/$name-$w.png" \
      "file://$WORK/$page" >/dev/null 2>&1
  done
done
rm -rf "$PROFILE"
[ $fail = 0 ] && echo "html layout: every page fits at 1280 and 1920 px (screenshots in $WORK)"
exit $fail
