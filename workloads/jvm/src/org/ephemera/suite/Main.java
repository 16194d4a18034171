package org.ephemera.suite;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * java -cp CLASSPATH org.ephemera.suite.Main NAME SIZE WARMUP ITERATIONS
 *
 * Runs WARMUP + ITERATIONS iterations of one workload in this JVM.  Exit
 * status: 0 done, 1 a self-check failed or the workload threw, 2 bad
 * arguments, 3 out of memory (the harness bisects -Xmx on it).
 */
public final class Main {
    private static final Map<String, Supplier<Workload>> WORKLOADS = new TreeMap<>();

    static {
        WORKLOADS.put("fop", Fop::new);
        WORKLOADS.put("h2", H2::new);
        WORKLOADS.put("jython", Jython::new);
        WORKLOADS.put("luindex", LuIndex::new);
        WORKLOADS.put("lusearch", LuSearch::new);
        WORKLOADS.put("xalan", Xalan::new);
        WORKLOADS.put("javac", Javac::new);
    }

    private static final String USAGE =
            "usage: org.ephemera.suite.Main NAME SIZE WARMUP ITERATIONS (NAME: " + String.join(", ", WORKLOADS.keySet())
                    + "; SIZE: small or default; ITERATIONS >= 1)";

    private static String name = "ephemera-suite";
    /** Made before the run: printing the message of an OutOfMemoryError can itself run out of memory. */
    private static byte[] outOfMemoryLine;

    private Main() {
    }

    public static void main(String[] args) {
        // Only the summary line goes to stdout: the libraries' chatter goes to stderr.
        PrintStream stdout = System.out;
        System.setOut(System.err);
        System.setProperty("java.awt.headless", "true");
        // FOP logs through commons-logging: keep its INFO lines out of stderr.
        System.setProperty("org.apache.commons.logging.Log", "org.apache.commons.logging.impl.NoOpLog");
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> {
            if (isOutOfMemory(e)) {
                outOfMemory(e);
            }
            System.err.println(name + ": uncaught in thread " + t.getName() + ": " + firstLine(e));
        });

        if (args.length != 4) {
            usage("expected 4 arguments, got " + args.length);
        }
        Supplier<Workload> make = WORKLOADS.get(args[0]);
        if (make == null) {
            usage("unknown workload '" + args[0] + "'");
        }
        name = args[0];
        outOfMemoryLine = (name + ": out of memory\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        String size = args[1];
        if (!size.equals("small") && !size.equals("default")) {
            usage("unknown size '" + size + "'");
        }
        int warmup = count(args[2], "WARMUP", 0);
        int iterations = count(args[3], "ITERATIONS", 1);

        try {
            run(make.get(), size, warmup, iterations, stdout);
        } catch (Throwable e) {
            if (isOutOfMemory(e)) {
                outOfMemory(e);
            }
            System.err.println(name + ": failed: " + firstLine(e));
            exit(1);
        }
        System.exit(0); // shutdown hooks run (a flight recording is written); the libraries' threads are not waited for
    }

    private static void run(Workload w, String size, int warmup, int iterations, PrintStream stdout) throws Exception {
        IterationLog log = IterationLog.open();
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        Events events = new Events();
        long last = 0;
        w.setup(size.equals("small"));
        for (int i = 0; i < warmup + iterations; i++) {
            w.prepare();
            events.clear();
            long cpuStart = os.getProcessCpuTime();
            long start = System.nanoTime();
            w.iterate(events);
            long end = System.nanoTime();
            long cpuEnd = os.getProcessCpuTime();
            String why = w.check();
            if (why != null) {
                System.err.println(name + ": self-check failed: " + why);
                exit(1);
            }
            if (!w.latency() && events.count() != 0) {
                throw new IllegalStateException("events recorded by a workload that has none");
            }
            if (log != null) {
                log.write(i, i < warmup, start, end, cpuStart, cpuEnd, events);
            }
            last = end - start;
        }
        w.teardown();
        if (log != null) {
            log.close();
        }
        stdout.printf(Locale.ROOT, "%s %s: %d iterations, last %.3f s, check ok%n", name, size, iterations,
                last / 1e9);
        stdout.flush();
    }

    /** An OutOfMemoryError anywhere in the chain of causes, or H2's report of one (error 90108). */
    static boolean isOutOfMemory(Throwable e) {
        return outOfMemoryCause(e) != null;
    }

    private static Throwable outOfMemoryCause(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof OutOfMemoryError
                    || c instanceof SQLException && ((SQLException) c).getErrorCode() == 90108) {
                return c;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return null;
    }

    static void outOfMemory(Throwable e) {
        try {
            System.err.println(name + ": out of memory: " + firstLine(outOfMemoryCause(e)));
        } catch (Throwable again) {
            if (outOfMemoryLine != null) {
                System.err.write(outOfMemoryLine, 0, outOfMemoryLine.length);
            }
        }
        exit(3);
    }

    /** The first line of e's description (Jython's exceptions describe themselves with a traceback). */
    private static String firstLine(Throwable e) {
        String s = String.valueOf(e);
        int end = s.indexOf('\n');
        return (end < 0 ? s : s.substring(0, end)).strip();
    }

    private static int count(String s, String what, int min) {
        try {
            int n = Integer.parseInt(s);
            if (n >= min) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        usage(what + " must be an integer >= " + min + ", got '" + s + "'");
        return 0;
    }

    private static void usage(String why) {
        System.err.println(name + ": " + why + "; " + USAGE);
        exit(2);
    }

    /** Ends a failed run now: no shutdown hooks (which could need memory or locks), no waiting for threads. */
    private static void exit(int status) {
        System.err.flush();
        Runtime.getRuntime().halt(status);
    }
}
