#!/bin/sh
# pprof_test.sh EPHEMERA WORK: `ephemera export --pprof` read back by
# `go tool pprof -top` (Debian: golang-go) agrees with the profile:
#  - per site, objects and bytes equal `ephemera report --by site --format csv`
#    (both weighted estimates; pprof rounds each sample to an integer);
#  - the totals of objects, bytes, space-time (bytes x lifetime over the
#    run's length, in bytes) and alive-at-exit equal sums over
#    `ephemera dump --csv`'s records, computed here with awk;
#  - the top site by bytes is the report's;
#  - every sample type has a unit pprof scales (count or bytes), and the
#    legend names the workload as the file (the web UI's title).
# The profile is sampled 1 in 10 (weights 10) with a retained class
# (records alive at exit).  Exit 77 (skipped) when go is missing.
set -u
EPH=$1 WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
command -v go >/dev/null || { echo "go missing (apt-get install golang-go): skipped"; exit 77; }
export HOME="$WORK" GOCACHE="$WORK/gocache" GOFLAGS=-mod=mod
"$EPH" run dataframe --size 20000 --retain Fraction --profile mode=gc,sample=1/10 -o "$WORK/t.eph" >/dev/null ||
  { echo "FAIL: profiling"; exit 1; }
"$EPH" export "$WORK/t.eph" --pprof "$WORK/t.pb.gz" >"$WORK/export.out" || { echo "FAIL: export"; exit 1; }
gzip -t "$WORK/t.pb.gz" || { echo "FAIL: not gzip"; exit 1; }
"$EPH" report "$WORK/t.eph" --by site --format csv -o "$WORK/report" >/dev/null || { echo "FAIL: report"; exit 1; }
"$EPH" dump "$WORK/t.eph" --csv >"$WORK/records.csv" || { echo "FAIL: dump"; exit 1; }

# top TYPE: "value function file:line" per site, value raw (-unit=B).
top() {
  go tool pprof -top -lines -nodefraction=0 -nodecount=100000 -unit=B -sample_index="$1" "$WORK/t.pb.gz" \
    2>"$WORK/pprof-$1.err" >"$WORK/pprof-$1.txt" || { echo "FAIL: go tool pprof -sample_index=$1"; cat "$WORK/pprof-$1.err"; exit 1; }
  # rows: flat flat% sum% cum cum% function file:line
  awk '$2 ~ /%$/ && $3 ~ /%$/ { v=$1; sub(/B$/, "", v); n=split($NF, p, "/"); print v, $(NF-1), p[n] }' "$WORK/pprof-$1.txt"
}
total() { sed -n 's/.*Total samples = \([0-9]*\)B.*/\1/p' "$WORK/pprof-$1.txt"; }
fail=0
top objects >"$WORK/objects.txt" || exit 1
top bytes >"$WORK/bytes.txt" || exit 1
top space_time >/dev/null || exit 1
top alive_at_exit >/dev/null || exit 1
[ -s "$WORK/bytes.txt" ] || { echo "FAIL: pprof listed no site"; cat "$WORK/pprof-bytes.txt"; exit 1; }

# The report's sites: "function file:line",...,objects(4th),bytes(6th)
awk -F, 'NR > 1 { gsub(/"/, "", $1); print $1, $4, $6 }' "$WORK/report/classes.csv" >"$WORK/sites.txt"
nsites=$(wc -l <"$WORK/sites.txt")
[ "$nsites" -ge 5 ] || { echo "FAIL: only $nsites sites in the report"; fail=1; }
# Each report site in pprof with the same objects and bytes (to rounding: one per sample of the site).
awk -v fail=0 '
  FILENAME == ARGV[1] { obj[$2 " " $3] = $1; next }
  FILENAME == ARGV[2] { byt[$2 " " $3] = $1; next }
  { key = $1 " " $2; o = $3; b = $4;
    if (!(key in byt)) { print "FAIL: site " key " not in pprof"; fail = 1; next }
    if ((obj[key] - o) ^ 2 > 36 || (byt[key] - b) ^ 2 > 36) {
      print "FAIL: " key ": pprof objects " obj[key] " bytes " byt[key] ", report " o " " b; fail = 1 } else n++ }
  END { print n " sites agree"; exit fail }' "$WORK/objects.txt" "$WORK/bytes.txt" "$WORK/sites.txt" || fail=1
# The top site by bytes.
ptop=$(sort -k1,1nr "$WORK/bytes.txt" | head -1 | cut -d' ' -f2-)
rtop=$(sort -k4,4nr "$WORK/sites.txt" | head -1 | cut -d' ' -f1,2)
[ "$ptop" = "$rtop" ] || { echo "FAIL: top site by bytes: pprof '$ptop', report '$rtop'"; fail=1; }

# Totals from the records (columns: size 4, weight 5, censored 19, lifetime_bytes 20);
# the space-time over the run's length on the allocation clock (the report's run_bytes).
"$EPH" report "$WORK/t.eph" --format json -o "$WORK/json" >/dev/null || { echo "FAIL: report --format json"; exit 1; }
run_bytes=$(sed -n 's/.*"run_bytes":\([0-9.e+]*\).*/\1/p' "$WORK/json/report.json")
[ -n "$run_bytes" ] || { echo "FAIL: no run_bytes in report.json"; exit 1; }
set -- $(awk -F, -v rb="$run_bytes" 'NR > 1 { o += $5; b += $5 * $4; st += $5 * $4 * $20; if ($19 == 1) a += $5 * $4 }
                  END { printf "%.0f %.0f %.0f %.0f\n", o, b, st / rb, a }' "$WORK/records.csv")
for pair in "objects $1" "bytes $2" "space_time $3" "alive_at_exit $4"; do
  set -- $pair
  got=$(total "$1")
  awk -v g="$got" -v w="$2" -v n="$1" 'BEGIN { d = g - w; if (d < 0) d = -d;
      if (w == 0 || d / w > 1e-6 + 100 / w) { print "FAIL: total " n ": pprof " g ", records " w; exit 1 }
      print "total " n ": " g " (records " w ")" }' || fail=1
done
[ "$(total alive_at_exit)" -gt 0 ] 2>/dev/null || { echo "FAIL: nothing alive at exit (--retain Fraction)"; fail=1; }
# Units pprof knows, and the file in the legend.
go tool pprof -raw "$WORK/t.pb.gz" 2>/dev/null | sed -n '/^Samples:/{n;p;q}' | tr -s ' ' '\n' >"$WORK/types.txt"
for t in objects/count bytes/bytes 'space_time/bytes[dflt]' space_time_wall/bytes alive_at_exit/bytes; do
  grep -qxF "$t" "$WORK/types.txt" || { echo "FAIL: sample type $t missing: $(tr '\n' ' ' <"$WORK/types.txt")"; fail=1; }
done
grep -q '^File: dataframe$' "$WORK/pprof-bytes.txt" || { echo "FAIL: no 'File: dataframe' in pprof's legend"; fail=1; }
# The labels.
go tool pprof -tags "$WORK/t.pb.gz" >"$WORK/tags.txt" 2>/dev/null
for t in 'class:' 'lifetime:' 'Fraction' 'alive at exit'; do
  grep -q "$t" "$WORK/tags.txt" || { echo "FAIL: label '$t' missing from pprof -tags"; fail=1; }
done
[ $fail = 0 ] && echo "pprof round trip: ok"
exit $fail
