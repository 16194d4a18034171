#!/bin/sh
# utf8_test.sh EPHEMERA GEN WORKDIR — a profile whose names hold invalid
# UTF-8, control characters, quotes and commas (gen sample --extreme)
# through every renderer: each output is strict UTF-8, and the JSON ones
# parse (no bare inf or nan either).
set -u
eph=$1 gen=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
"$gen" sample "$dir/x.eph" --extreme --records 300 --gcs 5 >/dev/null || fail "gen sample"
for f in text csv json html; do
  "$eph" report "$dir/x.eph" --format $f >"$dir/report.$f" 2>/dev/null || fail "report --format $f: exit $?"
done
"$eph" report "$dir/x.eph" --by site --format json >"$dir/sites.json" 2>/dev/null || fail "report --by site: exit $?"
"$eph" compare "$dir/x.eph" "$dir/x.eph" --format json >"$dir/compare.json" 2>/dev/null || fail "compare json: exit $?"
"$eph" compare "$dir/x.eph" "$dir/x.eph" --format csv >"$dir/compare.csv" 2>/dev/null || fail "compare csv: exit $?"
"$eph" dump "$dir/x.eph" --json >"$dir/dump.json" 2>/dev/null || fail "dump json: exit $?"
"$eph" dump "$dir/x.eph" --csv >"$dir/dump.csv" 2>/dev/null || fail "dump csv: exit $?"
python3 - "$dir" <<'PY' || fail "outputs"
import json, os, sys
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    if name.endswith('.eph'):
        continue
    raw = open(os.path.join(d, name), 'rb').read()
    text = raw.decode('utf-8', errors='strict')  # never invalid UTF-8
    if name.endswith('.json'):
        json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(name + ': bare ' + c)))
    print('ok:', name, len(raw), 'bytes')
PY
echo "utf8 test: ok"
