#!/bin/sh
# example_test.sh GEN EPHEMERA DOC WORKDIR — the worked example of
# docs/eph-format.md §10 is what the writer writes: `eph-format-gen example`
# byte for byte against the hex dump in the document; and it reads back as
# the records the document describes.
set -u
gen=$1 eph=$2 doc=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$gen" example "$dir/example.eph" || { echo "FAIL: eph-format-gen example" >&2; exit 1; }
python3 - "$doc" "$dir/example.eph" <<'PY'
import re, sys
text = open(sys.argv[1], encoding='utf-8').read()
section = text[text.index('## 10. Example'):]
block = section[section.index('```\n') + 4:]
block = block[:block.index('```')]
want = bytearray()
for line in block.splitlines():
    m = re.match(r'([0-9a-f]{8}): ((?:[0-9a-f]{2,4} ?)+)', line)
    assert m, 'not a hex dump line: %r' % line
    assert int(m.group(1), 16) == len(want), 'offset %s out of sequence' % m.group(1)
    want += bytes.fromhex(m.group(2).replace(' ', ''))
got = open(sys.argv[2], 'rb').read()
if got != want:
    n = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
    sys.exit('FAIL: the writer and docs/eph-format.md §10 differ at byte %d (%d bytes written, %d in the document);\n'
             'update the document from: xxd example.eph' % (n, len(got), len(want)))
m = re.search(r'uncompressed \((\d+) bytes\)', section)
assert m and int(m.group(1)) == len(got), 'the text should say %d bytes' % len(got)
print('example test: the document matches the writer (%d bytes)' % len(got))
PY
[ $? -eq 0 ] || exit 1
"$eph" dump "$dir/example.eph" --csv >"$dir/example.csv" || { echo "FAIL: dump of the example" >&2; exit 1; }
cat >"$dir/want.csv" <<'CSV'
1,Node,t.lua:12:f,48,1,1000,5000,0,0,1800,9000,1,0,1000,5000,0,0,scavenge,0,800,4000
2,Node,t.lua:12:f,48,1,1100,5400,0,0,1800,9000,1,0,1100,5400,0,0,scavenge,0,700,3600
CSV
tail -n +2 "$dir/example.csv" | cmp -s - "$dir/want.csv" || { echo "FAIL: the example reads back as:" >&2; cat "$dir/example.csv" >&2; exit 1; }
echo "example test: ok"
