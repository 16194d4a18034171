package org.ephemera.suite;

/**
 * One program of the suite.  Main calls setup once, then for every
 * iteration prepare, iterate (the only timed call) and check, then teardown.
 */
interface Workload {
    /** Untimed: builds the inputs, deterministically from a fixed seed. */
    void setup(boolean small) throws Exception;

    /** Untimed, before each iteration: puts the input state back as it was. */
    default void prepare() throws Exception {
    }

    /** The measured work: the whole workload once.  Latency workloads record each request in events. */
    void iterate(Events events) throws Exception;

    /** Untimed, after each iteration: null if the iteration's output is right, otherwise why not. */
    String check() throws Exception;

    /** Untimed: frees what setup made (temporary files, connections). */
    default void teardown() throws Exception {
    }

    /** True for the workloads whose requests are latency events (h2, lusearch). */
    default boolean latency() {
        return false;
    }
}
