#!/bin/sh
# dump_test.sh GEN EPHEMERA WORKDIR — `ephemera dump` on good, corrupt and
# truncated files, in all three output formats.
set -u
gen=$1 eph=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }

n=$("$gen" sample "$dir/good.eph" --extreme --records 300 --events 500 --gcs 20) || fail "gen sample"
"$gen" sample "$dir/good-z.eph" --compress --records 200 --flush-every 50 >/dev/null || fail "gen sample -z"

# text
"$eph" dump "$dir/good.eph" >"$dir/out.txt" 2>"$dir/err.txt" || fail "dump text: exit $?"
[ -s "$dir/err.txt" ] && fail "dump text wrote to stderr: $(cat "$dir/err.txt")"
grep -q "records: $n " "$dir/out.txt" || fail "text summary lacks 'records: $n'"
grep -q "complete" "$dir/out.txt" || fail "text summary lacks 'complete'"
grep -q "first 10 records" "$dir/out.txt" || fail "text summary lacks the first records"
"$eph" dump "$dir/good-z.eph" --head 3 | grep -q "first 3 records" || fail "--head 3"

# csv: a header and one row per record, every row with the header's columns
"$eph" dump "$dir/good.eph" --csv >"$dir/out.csv" || fail "dump csv: exit $?"
python3 - "$dir/out.csv" "$n" <<'PY' || fail "csv check"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline='', encoding='utf-8', errors='strict')))
head, body = rows[0], rows[1:]
assert head[:5] == ['id', 'class', 'site', 'size', 'weight'], head
for col in ('birth_bytes', 'death_wall_ns', 'alive_until_full_gcs', 'death_kind', 'censored', 'lifetime_bytes', 'lifetime_ns'):
    assert col in head, col
assert len(body) == int(sys.argv[2]), (len(body), sys.argv[2])
assert all(len(r) == len(head) for r in body)
kinds = {r[head.index('death_kind')] for r in body}
assert kinds <= {'finalized', 'scavenge', 'full_gc', 'censored', 'exact', 'freed'}, kinds
assert any(',' in r[1] or '"' in r[1] for r in body), 'odd class names survive quoting'
PY

# json: valid (json.tool) and complete
"$eph" dump "$dir/good.eph" --json >"$dir/out.json" || fail "dump json: exit $?"
python3 -m json.tool "$dir/out.json" >/dev/null || fail "json.tool rejects the output"
python3 - "$dir/out.json" "$n" <<'PY' || fail "json check"
import json, sys
d = json.load(open(sys.argv[1], encoding='utf-8'))
for k in ('meta', 'classes', 'sites', 'records', 'gcs', 'totals'):
    assert k in d, k
assert d['complete'] is True and d['warning'] is None
assert len(d['records']) == int(sys.argv[2])
assert len(d['gcs']) == 20
assert d['meta']['runtime'] == 'ephemera'
assert 'odd, "quoted"\nvalue' in d['meta']
assert d['totals']['peak_heap'] == 2**64 - 1
r = d['records'][0]
for k in ('id', 'class', 'site', 'size', 'weight', 'birth', 'death', 'alive_until', 'death_kind', 'censored', 'lifetime_bytes', 'lifetime_ns'):
    assert k in r, k
PY
"$eph" dump "$dir/good-z.eph" --json | python3 -m json.tool >/dev/null || fail "json.tool rejects the compressed file's output"

# corrupt: exit 3, one line naming the file and the byte offset, nothing on stdout
off=$("$gen" corrupt "$dir/good.eph" "$dir/bad.eph") || fail "gen corrupt"
for f in "" --csv --json; do
  "$eph" dump "$dir/bad.eph" $f >"$dir/out" 2>"$dir/err"
  rc=$?
  [ $rc -eq 3 ] || fail "corrupt file ($f): exit $rc, expected 3"
  [ "$(wc -l <"$dir/err")" -eq 1 ] || fail "corrupt file ($f): stderr is not one line: $(cat "$dir/err")"
  grep -q "^ephemera: $dir/bad.eph: .*at byte $off" "$dir/err" || fail "corrupt file ($f): message: $(cat "$dir/err")"
  [ -s "$dir/out" ] && fail "corrupt file ($f): wrote to stdout"
done

# truncated: data, a warning on stderr, exit 0
"$gen" truncate "$dir/good.eph" "$dir/cut.eph" >/dev/null || fail "gen truncate"
"$eph" dump "$dir/cut.eph" >"$dir/out" 2>"$dir/err" || fail "truncated file: exit $?"
grep -q "INCOMPLETE" "$dir/out" || fail "truncated file: summary does not say INCOMPLETE"
grep -q "^ephemera: $dir/cut.eph: warning: truncated at byte [0-9]" "$dir/err" || fail "truncated file: warning: $(cat "$dir/err")"
"$eph" dump "$dir/cut.eph" --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["complete"] is False and d["totals"] is None and d["warning"]' \
  || fail "truncated file: json"

# usage and missing files
"$eph" dump >/dev/null 2>&1; [ $? -eq 2 ] || fail "no file: expected exit 2"
"$eph" dump "$dir/good.eph" --bogus >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad option: expected exit 2"
"$eph" dump "$dir/missing.eph" 2>"$dir/err"; [ $? -eq 3 ] || fail "missing file: expected exit 3"
[ "$(wc -l <"$dir/err")" -eq 1 ] || fail "missing file: not one line"
echo "dump test: ok ($n records)"
