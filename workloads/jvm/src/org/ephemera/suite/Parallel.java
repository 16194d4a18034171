package org.ephemera.suite;

/** Runs one task per thread on fresh threads and waits for all of them. */
final class Parallel {
    interface Task {
        void run(int thread) throws Exception;
    }

    private Parallel() {
    }

    /**
     * Runs task(0) .. task(threads-1) concurrently and rethrows a failure
     * once all threads have ended: an Error first, else the first
     * exception.  Running out of memory ends the process at once instead
     * (status 3): the other threads could wait long for a lock of the
     * failed one (H2's), and their own failures would hide the cause.
     */
    static void run(String name, int threads, Task task) throws Exception {
        Throwable[] failures = new Throwable[threads];
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            workers[t] = new Thread(() -> {
                try {
                    task.run(id);
                } catch (Throwable e) {
                    if (Main.isOutOfMemory(e)) {
                        Main.outOfMemory(e);
                    }
                    failures[id] = e;
                }
            }, name + "-" + t);
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        Throwable first = null;
        for (Throwable f : failures) {
            if (f != null && (first == null || f instanceof Error && !(first instanceof Error))) {
                first = f;
            }
        }
        if (first instanceof Error) {
            throw (Error) first;
        }
        if (first != null) {
            throw (Exception) first;
        }
    }
}
