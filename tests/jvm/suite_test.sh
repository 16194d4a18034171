#!/bin/sh
# suite_test.sh CLASSPATH_FILE WORKDIR -- the Java workload suite's driver
# contract (workloads/jvm/README.md), which `ephemera bench` relies on.
# Every workload at size small, one warm-up and one measured iteration,
# under -Xmx512m: exit 0, the summary line alone on stdout, exactly two
# iteration lines in EPHEMERA_JVM_ITERS (warmup=1 then 0, end >= start,
# cpu_end >= cpu_start, check=ok), event lines inside their iteration for
# h2 and lusearch only.  Then: an unknown name exits 2 with one line on
# stderr; h2 and luindex under -Xmx8m exit non-zero.  Exit 77 (skip)
# without java ($JAVA, default java).
set -eu
CPFILE=$1
W=$2
JAVA=${JAVA:-java}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
command -v "$JAVA" >/dev/null 2>&1 || {
  echo "SKIP: no java ($JAVA)"
  exit 77
}
[ -r "$CPFILE" ] || fail "no class path file $CPFILE"
CP=$(cat "$CPFILE")
rm -rf "$W"
mkdir -p "$W"
cd "$W"

for name in fop h2 jython luindex lusearch xalan javac; do
  echo "== $name small 1 1"
  rc=0
  EPHEMERA_JVM_ITERS="$W/$name.iters" "$JAVA" -Xmx512m -cp "$CP" org.ephemera.suite.Main "$name" small 1 1 \
    >"$name.out" 2>"$name.err" || rc=$?
  cat "$name.out"
  [ "$rc" -eq 0 ] || { cat "$name.err" >&2; fail "$name exited with status $rc"; }
  [ "$(wc -l <"$name.out")" -eq 1 ] || fail "$name wrote $(wc -l <"$name.out") lines on stdout, expected the summary alone"
  grep -Eq "^$name small: 1 iterations, last [0-9]+\.[0-9]{3} s, check ok\$" "$name.out" ||
    fail "$name's summary line is not in the expected format"
  latency=0
  case $name in h2 | lusearch) latency=1 ;; esac
  awk -v latency=$latency '
    function bad(why) { print "line " NR ": " why ": " $0 > "/dev/stderr"; failed = 1; exit 1 }
    /^ephemera-jvm-iteration / {
      if ($0 !~ /^ephemera-jvm-iteration index=[0-9]+ warmup=[01] start_ns=[0-9]+ end_ns=[0-9]+ cpu_start_ns=[0-9]+ cpu_end_ns=[0-9]+ check=ok$/)
        bad("malformed iteration line")
      for (k = 2; k <= 7; k++) { split($k, kv, "="); v[kv[1]] = kv[2] + 0 }
      if (v["index"] != iters) bad("index " v["index"] ", expected " iters)
      if (v["warmup"] != (iters == 0 ? 1 : 0)) bad("wrong warmup flag")
      if (v["end_ns"] < v["start_ns"]) bad("ends before it starts")
      if (v["cpu_end_ns"] < v["cpu_start_ns"]) bad("CPU time goes back")
      start = v["start_ns"]; end = v["end_ns"]; iters++
      next
    }
    /^ephemera-jvm-event / {
      if ($0 !~ /^ephemera-jvm-event iteration=[0-9]+ start_ns=[0-9]+ end_ns=[0-9]+$/) bad("malformed event line")
      if (!latency) bad("an event line from a workload without latency events")
      split($2, a, "="); split($3, b, "="); split($4, c, "=")
      if (a[2] + 0 != iters - 1) bad("event of iteration " a[2] " after iteration " iters - 1)
      if (c[2] + 0 < b[2] + 0) bad("event ends before it starts")
      if (b[2] + 0 < start || c[2] + 0 > end) bad("event outside its iteration")
      events[iters - 1]++
      next
    }
    { bad("unexpected line") }
    END {
      if (failed) exit 1
      if (iters != 2) { print iters " iteration lines, expected 2" > "/dev/stderr"; exit 1 }
      if (latency && (events[0] == 0 || events[0] != events[1])) {
        print "event counts " events[0] " and " events[1] ": expected the same number > 0" > "/dev/stderr"; exit 1
      }
      if (latency) print events[1] " events per iteration"
    }' "$name.iters" || fail "$name's iteration file"
done

echo "== an unknown workload"
rc=0
"$JAVA" -cp "$CP" org.ephemera.suite.Main nosuch small 1 1 >bad.out 2>bad.err || rc=$?
cat bad.err
[ "$rc" -eq 2 ] || fail "an unknown name exited with status $rc, expected 2"
[ "$(wc -l <bad.err)" -eq 1 ] && [ ! -s bad.out ] || fail "an unknown name should print one line on stderr and nothing on stdout"
grep -q "nosuch" bad.err || fail "the message does not name the workload"

for name in h2 luindex; do
  echo "== $name under -Xmx8m"
  rc=0
  "$JAVA" -Xmx8m -cp "$CP" org.ephemera.suite.Main "$name" small 0 1 >small.out 2>small.err || rc=$?
  cat small.err
  [ "$rc" -ne 0 ] || fail "$name ran in an 8 MB heap"
  [ ! -s small.out ] || fail "$name printed a summary though it failed"
done
echo "ok"
