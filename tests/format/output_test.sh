#!/bin/sh
# output_test.sh GEN EPHEMERA WORKDIR — how the writer treats the path it
# is given: an existing profile is replaced by a new file (unlinked, not
# truncated: see create_output in src/format/writer.c), and a hard link to
# it keeps the old contents; a symbolic link is written through; a device
# (/dev/null) stays what it is.
set -u
gen=$1 eph=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
complete() { "$eph" dump "$1" | head -n 1 | grep -q ", complete," || fail "$1 is not a complete profile"; }

# over an existing profile, with a second name
"$gen" sample "$dir/p.eph" --records 50 >/dev/null || fail "gen sample"
ln "$dir/p.eph" "$dir/hard.eph" || fail "ln"
before=$(stat -c %i "$dir/p.eph") old=$(cksum <"$dir/p.eph")
"$gen" sample "$dir/p.eph" --records 80 >/dev/null || fail "gen sample over p.eph"
complete "$dir/p.eph"
[ "$(stat -c %i "$dir/p.eph")" != "$before" ] || fail "p.eph was truncated in place, not replaced"
[ "$(cksum <"$dir/hard.eph")" = "$old" ] || fail "the hard link's old profile changed"

# through a symbolic link
printf 'not a profile\n' >"$dir/target.eph"
ln -s target.eph "$dir/link.eph" || fail "ln -s"
"$gen" sample "$dir/link.eph" --records 20 >/dev/null || fail "gen sample through a link"
[ -L "$dir/link.eph" ] || fail "link.eph is no longer a symbolic link"
complete "$dir/target.eph"

# a device
"$gen" sample /dev/null --records 20 >/dev/null || fail "gen sample to /dev/null"
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
echo "ok: replaced (hard link kept the old), written through a symbolic link, /dev/null left alone"
