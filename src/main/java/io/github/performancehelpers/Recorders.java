package io.github.performancehelpers;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import io.github.performancehelpers.internal.Access;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.loop.PowerHistogram;

/**
 * The uncontended recorders of a {@link PowerFlowExecutor}. On a {@code ThreadPoolExecutor} whose
 * threads run chains of tasks, a pool thread claims one {@link Recorder} for the length of a
 * chain, records the chain's run times and queue waits in it without contention, and counts the
 * chain's admissions, completions and recorded latencies in it. On the default virtual-thread
 * delegate each task claims one as it ends, for its three records and counts, and gives it back at
 * once. The tick and {@code stats()} move what the recorders hold into the shared histograms
 * before they read them ({@link #drain}).
 *
 * <p>Why: with every worker recording each task into the shared histograms (a phaser, a bucket
 * and a sum, each an atomic operation on a cache line all workers write), short tasks spent much
 * of their time contending on those lines (see benchmarks/executor.md, section "What changed: the
 * fast paths"). A claimed recorder has one writer, so a record is a few plain stores
 * ({@link PowerHistogram.Builder#singleWriter}).
 *
 * <p><b>Thread safety.</b> {@link #claim()} and {@link #drain} may be called from any thread; a
 * claimed recorder is written only by its claimer. The claim (a CAS) and the release (a volatile
 * write) order one chain's records before the next claimer's, as the single-writer contract asks.
 */
final class Recorders {

    private static final Access.ControllerAccess LOOP = Access.controller();

    /** The most recorders an executor keeps (each is two histograms, about 48 KiB). */
    static final int MAX_RECORDERS = 16;

    /** A chain adds its recorder's counts to the shared counters at least this often (tasks). */
    static final int COUNT_FLUSH_EVERY = 64;

    private final Recorder[] recorders;

    /**
     * @param maxConcurrency   the most pool threads that run at once
     * @param relativeAccuracy the histograms' relative accuracy
     */
    Recorders(int maxConcurrency, double relativeAccuracy) {
        // One per thread that can run at once; more pool threads than that only take turns.
        int n = Math.min(maxConcurrency, Math.max(2, 2 * Runtime.getRuntime().availableProcessors()));
        this.recorders = new Recorder[Math.min(n, MAX_RECORDERS)];
        for (int i = 0; i < recorders.length; i++) {
            recorders[i] = new Recorder(relativeAccuracy);
        }
    }

    /**
     * A free recorder, claimed by the calling thread; null if there is none (the chain then
     * records into the shared histograms and counters).
     */
    Recorder claim() {
        Recorder[] rs = recorders;
        int start = (int) (Thread.currentThread().threadId() % rs.length);
        for (int k = 0; k < rs.length; k++) {
            Recorder r = rs[(start + k) % rs.length];
            if (r.tryClaim()) {
                return r;
            }
        }
        return null;
    }

    /**
     * Moves what the recorders hold into the shared histograms the loop and {@code stats()} read;
     * each sample lands in exactly one window.
     */
    void drain(PowerHistogram latency, PowerHistogram queueWait, PowerHistogram endToEnd) {
        for (Recorder r : recorders) {
            // No emptiness check first: count() takes a whole snapshot itself, and merging an
            // empty one returns at once.
            latency.merge(r.run.snapshotAndReset());
            queueWait.merge(r.wait.snapshotAndReset());
            endToEnd.merge(r.endToEnd.snapshotAndReset());
        }
    }

    /**
     * Adds the counts that free recorders hold to the shared counters. Tasks that claim a
     * recorder only as they end leave their counts in it (a shared counter's first update from a
     * new thread is a contended one), so this runs before the counters are read; a recorder in use
     * is skipped, and its claimer flushes it within {@link #COUNT_FLUSH_EVERY} tasks.
     */
    void flushFree(PowerFlowExecutor ex) {
        for (Recorder r : recorders) {
            if (r.tryClaim()) {
                r.flush(ex);
                r.release();
            }
        }
    }

    /**
     * A pool thread's own pair of single-writer histograms (run time and queue wait) and counts,
     * claimed for the length of a chain of tasks.
     */
    static final class Recorder {
        final PowerHistogram run;
        final PowerHistogram wait;
        final PowerHistogram endToEnd;
        /**
         * 1 while claimed. A field of the recorder itself rather than an {@code AtomicBoolean}:
         * the claim, the counts and the release then touch one cache line, where a virtual-thread
         * task that claims a recorder only to count its completion otherwise moved two.
         */
        private volatile int claimed;
        /** The concurrency the claiming chain's tasks started at, not yet added to the executor's. */
        final StartLoad.Batch load = new StartLoad.Batch();
        /** Counts of the claiming chain not yet added to the shared counters (owner-only, plain). */
        int admitted;
        int completed;
        int recorded;

        private static final VarHandle CLAIMED;

        static {
            try {
                CLAIMED = MethodHandles.lookup().findVarHandle(Recorder.class, "claimed", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        Recorder(double relativeAccuracy) {
            this.run = PowerHistogram.builder().relativeAccuracy(relativeAccuracy).singleWriter(true).build();
            this.wait = PowerHistogram.builder().relativeAccuracy(relativeAccuracy).singleWriter(true).build();
            this.endToEnd = PowerHistogram.builder().relativeAccuracy(relativeAccuracy).singleWriter(true).build();
        }

        /**
         * Adds the counts (and the start-load sums) to the executor's: every
         * {@link #COUNT_FLUSH_EVERY} tasks of a chain and when the chain ends, so a running chain's
         * counts lag by at most that many tasks and an ended one's not at all. Only the claiming
         * thread calls this.
         */
        void flush(PowerFlowExecutor ex) {
            PowerFlowController<?> controller = ex.controller;
            ex.startLoad.addAll(load);
            if (admitted != 0) {
                LOOP.countAdmitted(controller, admitted);
                admitted = 0;
            }
            if (recorded != 0) {
                LOOP.countRecorded(controller, recorded);
                recorded = 0;
            }
            if (completed != 0) {
                ex.completed.add(completed);
                completed = 0;
            }
        }

        /** Claims the recorder if it is free (a read first: a taken one costs no write). */
        boolean tryClaim() {
            return claimed == 0 && CLAIMED.compareAndSet(this, 0, 1);
        }

        /**
         * Gives the recorder back; the next claimer sees everything written before: a release
         * store, which the next claim's CAS reads (a full volatile store would add a fence per task
         * on the virtual delegate, where every task claims and releases).
         */
        void release() {
            CLAIMED.setRelease(this, 0);
        }
    }
}
