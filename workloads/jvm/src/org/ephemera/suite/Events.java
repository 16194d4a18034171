package org.ephemera.suite;

import java.util.Arrays;

/** The start and end (System.nanoTime) of each request of one iteration, from any thread. */
final class Events {
    private long[] starts = new long[1024];
    private long[] ends = new long[1024];
    private int count;

    synchronized void record(long start, long end) {
        if (count == starts.length) {
            starts = Arrays.copyOf(starts, count * 2);
            ends = Arrays.copyOf(ends, count * 2);
        }
        starts[count] = start;
        ends[count] = end;
        count++;
    }

    synchronized void clear() {
        count = 0;
    }

    synchronized int count() {
        return count;
    }

    synchronized long start(int i) {
        return starts[i];
    }

    synchronized long end(int i) {
        return ends[i];
    }
}
