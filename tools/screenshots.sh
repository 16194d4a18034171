#!/usr/bin/env bash
# Re-takes docs/viewing.md's speedscope and trace-viewer screenshots
# (docs/viewing-speedscope.png, docs/viewing-trace.png) from real runs.
#
# NOT part of the build or the tests, and it needs what they never use:
# npm, which installs speedscope and puppeteer-core (to drive the Debian
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
for tool in npm node chromium; do
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

NODE_PATH="$SHOTS/node_modules" node tools/screenshots.js "$SHOTS/run" \
  docs/viewing-speedscope.png docs/viewing-trace.png
if command -v optipng >/dev/null; then
  optipng -quiet -o2 docs/viewing-speedscope.png docs/viewing-trace.png
fi
ls -l docs/viewing-speedscope.png docs/viewing-trace.png
