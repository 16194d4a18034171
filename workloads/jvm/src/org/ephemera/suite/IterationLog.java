package org.ephemera.suite;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The lines for the harness, appended to the file that EPHEMERA_JVM_ITERS
 * names: one per iteration, then one per request of a latency workload.
 * The file is flushed after each iteration, so a run that dies later still
 * leaves the iterations it finished.
 */
final class IterationLog {
    private final FileOutputStream out;

    private IterationLog(FileOutputStream out) {
        this.out = out;
    }

    /** The log of EPHEMERA_JVM_ITERS, or null if the variable is unset or empty. */
    static IterationLog open() throws IOException {
        String path = System.getenv("EPHEMERA_JVM_ITERS");
        if (path == null || path.isEmpty()) {
            return null;
        }
        return new IterationLog(new FileOutputStream(path, true));
    }

    void write(int index, boolean warmup, long start, long end, long cpuStart, long cpuEnd, Events events)
            throws IOException {
        StringBuilder b = new StringBuilder(128 + 64 * events.count());
        b.append("ephemera-jvm-iteration index=").append(index)
                .append(" warmup=").append(warmup ? 1 : 0)
                .append(" start_ns=").append(start)
                .append(" end_ns=").append(end)
                .append(" cpu_start_ns=").append(cpuStart)
                .append(" cpu_end_ns=").append(cpuEnd)
                .append(" check=ok\n");
        for (int i = 0; i < events.count(); i++) {
            b.append("ephemera-jvm-event iteration=").append(index)
                    .append(" start_ns=").append(events.start(i))
                    .append(" end_ns=").append(events.end(i)).append('\n');
        }
        out.write(b.toString().getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    void close() throws IOException {
        out.close();
    }
}
