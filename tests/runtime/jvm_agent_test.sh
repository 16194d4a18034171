#!/bin/sh
# jvm_agent_test.sh EPHEMERA AGENT SRCDIR WORK: the JVMTI agent
# (libephemera-jvm.so) under every collector this JDK has records one
# stop-the-world period per pause the collectors' own MXBeans count
# (Parallel: a full GC that follows a scavenge in one safepoint is one
# period), each with its ends in order; it loads through -agentpath and
# through JAVA_TOOL_OPTIONS with EPHEMERA_STATS; a bad option stops the
# JVM with one line; and `ephemera bench jcmd:...` reads the pauses back
# (GC time and counts), refusing a bad --collector.  Exit 77 (skipped)
# without java and javac.
set -u
EPH=$1 AGENT=$2 SRC=$3 WORK=$4
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
command -v java >/dev/null && command -v javac >/dev/null || { echo "java or javac missing: skipped"; exit 77; }
javac -d "$WORK" "$SRC/Churn.java" || { echo "FAIL: javac"; exit 1; }
fail=0
n=0
for col in Serial Parallel G1 Shenandoah Z; do
  java -XX:+Use${col}GC -version >/dev/null 2>&1 || { echo "$col: not in this JDK"; continue; }
  S="$WORK/stats-$col.txt"
  java -agentpath:"$AGENT"=stats="$S" -XX:+Use${col}GC -Xmx64m -cp "$WORK" Churn 2000000 >"$WORK/out-$col.txt" ||
    { echo "FAIL: $col: java exited $?"; fail=1; continue; }
  res=$(awk -v col=$col '
    /^ephemera-jvm-pause / { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      if (v["end_ns"] < v["start_ns"] || v["cpu_end_ns"] < v["cpu_start_ns"]) bad++; p++ }
    /^ephemera-jvm-collector / { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      name = v["name"]; c = v["count"]
      if (name ~ /Cycles$/) next                      # concurrent cycles are not pauses
      beans += c; if (name == "PS_Scavenge") young = c }
    /^ephemera-jvm-end / { ends++ }
    END {
      ok = p > 0 && !bad && ends == 1 && (col == "Parallel" ? (p <= beans && p >= young) : p == beans)
      printf "%s %d pauses, the collectors count %d%s\n", ok ? "ok" : "FAIL", p, beans, bad ? ", ends out of order" : "" }' "$S")
  echo "$col: $res"
  case $res in ok*) n=$((n + 1)) ;; *) fail=1 ;; esac
done
[ $n -ge 1 ] || { echo "FAIL: no collector could be checked"; fail=1; }

# JAVA_TOOL_OPTIONS and EPHEMERA_STATS
EPHEMERA_STATS="$WORK/tool.txt" JAVA_TOOL_OPTIONS="-agentpath:$AGENT" java -Xmx64m -cp "$WORK" Churn 500000 >/dev/null 2>&1 ||
  { echo "FAIL: through JAVA_TOOL_OPTIONS"; fail=1; }
grep -q '^ephemera-jvm-end ' "$WORK/tool.txt" 2>/dev/null || { echo "FAIL: nothing written through JAVA_TOOL_OPTIONS + EPHEMERA_STATS"; fail=1; }
# a bad option: the JVM does not start, one line says why
if java -agentpath:"$AGENT"=bogus -version >/dev/null 2>"$WORK/bad.err"; then echo "FAIL: a bad agent option was accepted"; fail=1; fi
grep -q "ephemera-jvm: unknown option 'bogus'" "$WORK/bad.err" || { echo "FAIL: no message for a bad option"; cat "$WORK/bad.err"; fail=1; }

# ephemera bench on a Java command
export XDG_CACHE_HOME="$WORK/cache"
"$EPH" bench "jcmd:java -cp $WORK Churn 1000000" --collector serial --invocations 2 --warmup 0 --format csv \
  >"$WORK/bench.csv" 2>"$WORK/bench.err" || { echo "FAIL: bench jcmd:"; cat "$WORK/bench.err"; fail=1; }
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
         { gc = $col["gc_mean_s"]; n = $col["gc_count_mean"]; if (!(gc > 0) || !(n > 0)) { print "FAIL: bench read no pauses: gc_s " gc ", gc_count " n; exit 1 }
           print "bench jcmd: gc_s " gc ", gc_count " n }' "$WORK/bench.csv" || fail=1
"$EPH" bench "jcmd:java -version" --collector bogus >/dev/null 2>"$WORK/bad-col.err"
[ $? = 2 ] && grep -q "unknown collector 'bogus'" "$WORK/bad-col.err" || { echo "FAIL: --collector bogus"; cat "$WORK/bad-col.err"; fail=1; }
"$EPH" bench gcbench:small --collector g1 >/dev/null 2>"$WORK/mixed.err"
[ $? = 2 ] && grep -q "is for Java targets" "$WORK/mixed.err" || { echo "FAIL: --collector without a Java target"; cat "$WORK/mixed.err"; fail=1; }
[ $fail = 0 ] && echo "jvm agent: all passed"
exit $fail
