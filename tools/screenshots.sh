#!/usr/bin/env bash
# Re-takes the documentation's screenshots from real runs: the demo's
# report page at 1280 and 1920 pixels (docs/report-dataframe-*.png, headless
# chromium alone), pprof's web UI (docs/viewing-pprof.png, go tool pprof),
# and speedscope and the trace viewer (docs/viewing-speedscope.png,
# docs/viewing-trace.png).
#
# NOT part of the build or the tests, and the last two need what they never
# use: npm, which installs speedscope and puppeteer-core (to drive the Debian
# chromium) into a scratch directory outside the repository, once. Nothing
# from npm becomes a dependency of Ephemera.
# Optional Debian packages: optipng (smaller PNGs), fonts-noto-color-emoji
# (speedscope's toolbar icons; boxes without it).
#
#   tools/screenshots.sh [BUILD_DIR]     (default build; needs build/ephemera)
#   SHOTS_DIR=/tmp/ephemera-shots        where npm installs and the profiles go
set -euo pipefail
cd "$(dirname "$0")/.."
E=${1:-build}/ephemera
SHOTS=${SHOTS_DIR:-/tmp/ephemera-shots}

[ -x "$E" ] || { echo "screenshots.sh: no $E (build first: cmake --build build)" >&2; exit 1; }
for tool in npm node chromium go curl; do
  command -v $tool >/dev/null || { echo "screenshots.sh: needs $tool" >&2; exit 1; }
done

mkdir -p "$SHOTS/run"
if [ ! -d "$SHOTS/node_modules/puppeteer-core" ] || [ ! -d "$SHOTS/node_modules/speedscope" ]; then
  (cd "$SHOTS" && npm install --no-save --no-audit --no-fund speedscope@1.25.0 puppeteer-core@24.43.1)
fi
rm -rf "$SHOTS/run/speedscope"
cp -r "$SHOTS/node_modules/speedscope/dist/release" "$SHOTS/run/speedscope"

# The runs docs/viewing.md names (the same as the pprof and report pictures).
"$E" lua --profile sample=1/20,stacks=16 -o "$SHOTS/run/json.eph" examples/jsonround.lua
"$E" export "$SHOTS/run/json.eph" --pprof "$SHOTS/run/json.pb.gz"
"$E" run dataframe --size 200000 --profile mode=gc,sample=1/100 -o "$SHOTS/run/df.eph"
"$E" export "$SHOTS/run/df.eph" --chrome-trace "$SHOTS/run/df.json"

CHROME="chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --user-data-dir=$SHOTS/chrome"

# The demo's report page (./run demo's profile), whole, at both widths.
"$E" report "$SHOTS/run/df.eph" --format html -o "$SHOTS/run/report" >/dev/null
{ cat "$SHOTS/run/report/report.html"
  echo "<script>addEventListener('load',()=>{const p=document.createElement('pre');p.id='height';"
  echo "p.textContent='HEIGHT='+document.documentElement.scrollHeight;document.body.appendChild(p)})</script>"; } \
  >"$SHOTS/run/report/height.html"
for w in 1280 1920; do
  h=$($CHROME --window-size=$w,1000 --virtual-time-budget=5000 --dump-dom "file://$SHOTS/run/report/height.html" 2>/dev/null |
      grep -o 'HEIGHT=[0-9][0-9]*' | cut -d= -f2)
  $CHROME --window-size=$w,"${h:?no page height}" --screenshot="docs/report-dataframe-$w.png" \
    "file://$SHOTS/run/report/report.html" >/dev/null 2>&1
done

# pprof's web UI: the flame graph of the default sample type.
port=18089
go tool pprof -http=127.0.0.1:$port -no_browser "$SHOTS/run/json.pb.gz" >"$SHOTS/pprof.log" 2>&1 &
pprof_pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.2; done
$CHROME --window-size=1400,800 --virtual-time-budget=3000 --screenshot=docs/viewing-pprof.png \
  "http://127.0.0.1:$port/ui/flamegraph?si=space_time" >/dev/null 2>&1
kill $pprof_pid

NODE_PATH="$SHOTS/node_modules" node tools/screenshots.js "$SHOTS/run" \
  docs/viewing-speedscope.png docs/viewing-trace.png
SHOTS_PNG="docs/report-dataframe-1280.png docs/report-dataframe-1920.png docs/viewing-pprof.png docs/viewing-speedscope.png docs/viewing-trace.png"
if command -v optipng >/dev/null; then
  optipng -quiet -o2 $SHOTS_PNG
fi
ls -l $SHOTS_PNG
