package io.github.performancehelpers;

import java.lang.System.Logger.Level;
import java.util.concurrent.Future;
import io.github.performancehelpers.Recorders.Recorder;
import io.github.performancehelpers.internal.Access;

/**
 * A task of a {@link PowerFlowExecutor} (the submitted {@code Runnable}, its enqueue time, its
 * runner while it runs) and the worker's chain: the {@code Runnable} handed to the delegate, which
 * runs the task and then, while the worker-side fast path allows, the next queued ones. On a
 * {@code ThreadPoolExecutor} the next task runs in the same pool thread (as a pool worker takes
 * its next task), on the default delegate in a new virtual thread that inherits the slot
 * ({@link Delegate#continueChain}). So in a steady backlog a finishing worker hands its slot
 * straight to the next task, and the dispatcher, which would cost two thread wake-ups per task,
 * stays parked.
 *
 * <p><b>Thread safety.</b> A job runs on one thread at a time; {@link #interrupt()} may be called
 * from any thread.
 */
final class Job implements Runnable {

    private static final System.Logger LOG = System.getLogger(PowerFlowExecutor.class.getName());
    private static final Access.ControllerAccess LOOP = Access.controller();

    final PowerFlowExecutor owner;
    final Runnable task;
    /**
     * The ticker reading when the task was accepted, ns; for a direct task that is not timed
     * ({@link #weight} 0), 0. Written before the task is queued or handed off, which publishes it.
     */
    long enqueuedAt;
    /**
     * How the task is timed. 0: it went through the queue, and its start is read when it starts.
     * {@code k >= 1}: the submitter handed it straight to the delegate and timed it, and its
     * times stand for {@code k} tasks in the histograms ({@code k} above 1 while the virtual
     * delegate samples, see {@code PowerFlowExecutor.sampleMask}); it waited nothing in the
     * queue, so its run time counts from its submission (the delegate's own start-up, a virtual
     * thread's scheduling or a pool thread's wake-up, is time on the delegate) and its thread
     * needs no clock read to learn its start. {@link #UNTIMED_DIRECT}: handed straight to the
     * delegate and not timed. Written before the hand-off. One int rather than a weight and a
     * flag: the job stays at 40 bytes.
     */
    int timing;

    /** {@link #timing}: a direct task that is not timed. */
    static final int UNTIMED_DIRECT = -1;

    /** Whether the submitter handed this task straight to the delegate. */
    boolean direct() {
        return timing != 0;
    }

    /** The tasks this one's times stand for in the histograms. */
    private int weight() {
        return Math.max(1, timing);
    }
    /** The thread running the task, while it runs and running tasks are tracked; else null. */
    volatile Thread runner;
    /**
     * The stripe of the slot this task holds (see {@code ConcurrencyLimit}) in the top
     * {@link #SLOT_BITS} bits, and in the others the tasks in flight when it was handed to the
     * delegate, itself included, for the start-load test ({@link StartLoad}); for a chained task,
     * those in flight as the chain takes it; 0 until then or where the task is not timed. One int
     * for both: the job stays at 40 bytes. Written before the hand-off, which publishes it.
     */
    private int slotAndLoad;

    private static final int SLOT_BITS = Integer.numberOfTrailingZeros(ConcurrencyLimit.MAX_STRIPES);
    private static final int LOAD_MASK = (1 << (Integer.SIZE - SLOT_BITS)) - 1;

    /** Notes that this task holds a slot of stripe {@code stripe} (below {@code 2^SLOT_BITS}). */
    void holdsSlotOf(int stripe) {
        slotAndLoad = stripe << (Integer.SIZE - SLOT_BITS) | (slotAndLoad & LOAD_MASK);
    }

    /** The stripe of the slot this task holds, for {@code releaseSlot}. */
    int slot() {
        return slotAndLoad >>> (Integer.SIZE - SLOT_BITS);
    }

    /** The tasks in flight when this one started (see {@link #startsAt}), 0 if not recorded. */
    int concurrency() {
        return slotAndLoad & LOAD_MASK;
    }

    /**
     * Records, as the task is queued, how many tasks wait ahead of it, in the bits that hold its
     * concurrency once it starts ({@link #startsAt} replaces it then; no slot is held while it
     * waits): the door reads the queue's pace from the head's wait and this count
     * ({@code PowerFlowExecutor.lateAtDoor}). The job stays at 40 bytes.
     */
    void queuedBehind(int ahead) {
        slotAndLoad = Math.min(AHEAD_UNKNOWN, Math.max(0, ahead));
    }

    /**
     * {@link #queuedAhead}: not known as a pace, for a task whose submitter waited for room before
     * queueing it (its wait from its submission is not the queue's).
     */
    static final int AHEAD_UNKNOWN = LOAD_MASK;

    /**
     * The tasks that waited ahead of this one when it was queued ({@link #queuedBehind}), while it
     * waits. Read by the door from another thread, unsynchronised with a consumer that takes the
     * job and records its start: a read that races with that sees the concurrency instead, a
     * whole int either way, and misjudges one decision of the door at most.
     */
    int queuedAhead() {
        return slotAndLoad & LOAD_MASK;
    }

    /** Records {@code inFlight}, the in-flight count as this task starts, as its concurrency. */
    void startsAt(long inFlight) {
        slotAndLoad = (slotAndLoad & ~LOAD_MASK) | (int) Math.min(LOAD_MASK, Math.max(0L, inFlight));
    }

    Job(PowerFlowExecutor owner, Runnable task, long enqueuedAt) {
        this.owner = owner;
        this.task = task;
        this.enqueuedAt = enqueuedAt;
    }

    /** A job whose {@link #enqueuedAt} the submitter sets before it queues or hands it off. */
    Job(PowerFlowExecutor owner, Runnable task) {
        this.owner = owner;
        this.task = task;
    }

    boolean isCancelled() {
        return task instanceof Future<?> f && f.isCancelled();
    }

    void interrupt() {
        Thread t = runner;
        if (t != null) {
            t.interrupt();
        }
    }

    /**
     * Runs this task and then the chain (see the class description). The slot and in-flight count
     * the job holds are given back when the chain ends, also when a task throws (its exception
     * reaches the delegate's thread).
     */
    @Override
    public void run() {
        PowerFlowExecutor ex = owner;
        Delegate d = ex.delegate;
        Job j = this;
        Recorder rec = null;
        if (!d.threadPerTask) {
            ex.running.increment(); // once per chain: the thread runs tasks until the chain ends
        }
        long now = direct() ? enqueuedAt : ex.ticker.read();
        for (;;) {
            boolean threw = true;
            try {
                if (j.timing == UNTIMED_DIRECT) {
                    j.runUntimed(ex, d);
                    // The chain goes on only if work waits; then it needs the time.
                    now = d.chains && !ex.controller.queue().isEmpty() ? ex.ticker.read() : UNTIMED;
                } else {
                    now = j.runTask(ex, d, rec, now);
                }
                threw = false;
            } finally {
                if (threw) { // the task's exception reaches the delegate's thread, as before
                    endChain(ex, d, rec, slot());
                }
            }
            Job next = d.chains && now != UNTIMED ? nextJobOrEnd(ex, d, now) : null;
            if (next == null) {
                break;
            }
            // The worker keeps its in-flight count for the next task: what is in flight now is
            // that task's concurrency (a read of a line other tasks write, once per chained task).
            next.holdsSlotOf(slot());
            next.startsAt(d.inFlight());
            if (!d.continueChain(ex, next)) {
                return; // handed off to a thread of its own, which goes on with the chain
            }
            if (ex.state < PowerFlowExecutor.STOP) {
                Thread.interrupted(); // as a pool worker between tasks: no stale interrupt
            }
            if (rec == null) {
                Recorders rs = d.recorders();
                rec = rs != null ? rs.claim() : null; // a chain has begun: record and count without contention
            }
            if (rec == null) {
                LOOP.countAdmitted(ex.controller, 1);
            } else if (++rec.admitted >= Recorders.COUNT_FLUSH_EVERY) {
                rec.flush(ex);
            }
            j = next;
        }
        endChain(ex, d, rec, slot());
    }

    /** In {@link #run()}: the task was not timed, so there is no end time to go on with. */
    private static final long UNTIMED = Long.MIN_VALUE;

    /**
     * Runs a direct task that is not timed (see {@link #timing}): no clock read, no latency
     * record and no write for its completion, which the executor derives
     * ({@code PowerFlowExecutor.untimedCompleted}); a failure or cancellation is counted, also as
     * an untimed task's. The slot and in-flight count are the caller's.
     */
    private void runUntimed(PowerFlowExecutor ex, Delegate d) {
        Thread t = Thread.currentThread();
        d.running(this, t);
        if (ex.state >= PowerFlowExecutor.STOP && !t.isInterrupted()) {
            t.interrupt(); // as in runTask
        }
        boolean threw = true;
        try {
            task.run();
            threw = false;
        } finally {
            d.ran(this);
            // Before the slot is given back (endChain), as untimedCompleted's reads require.
            if (threw) {
                ex.failed.increment();
                ex.untimedAbnormal.increment();
            } else if (!classify(ex)) {
                ex.untimedAbnormal.increment();
            }
        }
    }

    /**
     * Ends a chain on its thread: the recorder's counts are added and the recorder is given back
     * (if one was claimed), then the running gauge, and the slot (of stripe {@code slot}), which
     * is the in-flight count.
     */
    private static void endChain(PowerFlowExecutor ex, Delegate d, Recorder rec, int slot) {
        if (rec != null) {
            rec.flush(ex);
            rec.release();
        }
        if (!d.threadPerTask) {
            ex.running.decrement();
        }
        ex.releaseSlot(slot);
    }

    /**
     * Runs the task itself, timed and accounted, its times recorded and its completion counted in
     * {@code rec} if non-null, else (where the delegate {@linkplain Delegate#threadPerTask records
     * per task}) in a recorder claimed when the task ends, else in the shared histograms and
     * counters; the slot and in-flight count are the caller's. {@code start} is a fresh reading of
     * the ticker (for a chained task, the previous task's end: the time between them, normally a
     * few hundred nanoseconds, more if the poll waited for a descheduled producer or skipped
     * cancelled tasks, counts as this task's run time rather than its wait).
     *
     * <p>A task that claims its recorder at the end records its queue wait then too, so a wait
     * lands in the window its task ends in rather than the one it starts in: one claim per task,
     * and a task that blocks holds no recorder.
     *
     * @return the ticker reading at the task's end, ns
     */
    private long runTask(PowerFlowExecutor ex, Delegate d, Recorder rec, long start) {
        Thread t = Thread.currentThread();
        d.running(this, t);
        if (ex.state >= PowerFlowExecutor.STOP && !t.isInterrupted()) {
            t.interrupt(); // as a ThreadPoolExecutor worker: a stopping pool's tasks see it
        }
        long waited = Math.max(0L, start - enqueuedAt);
        boolean claimAtEnd = rec == null && d.threadPerTask;
        if (!claimAtEnd) {
            (rec != null ? rec.wait : ex.queueWait).recordNanos(waited);
        }
        boolean threw = true;
        long end = start;
        try {
            task.run();
            threw = false;
        } finally {
            end = ex.ticker.read();
            long ran = Math.max(0L, end - start);
            long total = Math.max(0L, end - enqueuedAt);
            Recorder r = rec;
            int w = weight();
            if (claimAtEnd) {
                r = d.recorders().claim();
                (r != null ? r.wait : ex.queueWait).recordNanos(waited, w);
            }
            long slowRun = ex.slowRunNanos;
            if (r != null) {
                r.run.recordNanos(ran, w);
                r.endToEnd.recordNanos(total, w);
                r.recorded++;
                int concurrency = concurrency();
                if (slowRun > 0 && concurrency > 0) {
                    r.load.add(concurrency, ran, ran > slowRun, ex.startLoad.isHigh(concurrency));
                }
            } else {
                ex.controller.latency().recordNanos(ran, w);
                ex.endToEnd.recordNanos(total, w);
                int concurrency = concurrency();
                if (slowRun > 0 && concurrency > 0) {
                    ex.startLoad.add(concurrency, ran, ran > slowRun);
                }
                // Counted last: whoever sees the count move sees every record of the task.
                LOOP.countRecorded(ex.controller, 1);
            }
            d.ran(this);
            if (threw) {
                ex.failed.increment();
            } else if (classify(ex)) {
                if (r != null) {
                    r.completed++;
                } else {
                    ex.completed.increment();
                }
            }
            if (claimAtEnd && r != null) {
                if (r.recorded >= Recorders.COUNT_FLUSH_EVERY) {
                    r.flush(ex);
                }
                r.release();
            }
        }
        return end;
    }

    /** Counts a failed or cancelled Future's outcome; true if the task completed normally. */
    private boolean classify(PowerFlowExecutor ex) {
        if (task instanceof Future<?> f) {
            Future.State s;
            try {
                s = f.state();
            } catch (RuntimeException e) {
                s = Future.State.SUCCESS;
            }
            switch (s) {
                case FAILED -> ex.failed.increment();
                case CANCELLED -> ex.cancelled.increment();
                default -> {
                    return true;
                }
            }
            return false;
        }
        return true;
    }

    /**
     * The worker-side fast path, for a worker that has just finished a task and still holds its
     * slot and in-flight count: the next queued task, admitted, if the limiter admits one now and
     * nothing stands in the way; otherwise null, and the worker gives its slot back. It stands
     * back while the dispatcher holds a task (pacing is the dispatcher's: the task it holds is
     * older), when the slot limit was lowered below the slots in use, and once the executor or a
     * caller's pool is stopping. {@code now} is the finished task's end time, which serves as the
     * admission instant (one clock read less per task).
     */
    private static Job nextJob(PowerFlowExecutor ex, Delegate d, long now) {
        if (ex.state >= PowerFlowExecutor.STOP || ex.held != null || d.overLimit() || d.stopping()) {
            return null;
        }
        if (d.threadPerTask && ex.controller.queue().isEmpty()) {
            // Each task is its own chain here: an admission taken and refunded on an empty queue
            // would be two writes to the limiter's contended line per task, not per run of tasks.
            return null;
        }
        for (;;) {
            // Work is waiting: catch up. The caller counts the admission (see run()).
            Runnable r = LOOP.pollAdmitted(ex.controller, Dispatcher.catchUpNanos(ex.controller.rate()), now);
            if (r == null) {
                return null;
            }
            ex.roomFreed(); // a submitter waiting under BLOCK may offer
            Job job = r instanceof Job j && j.owner == ex ? j : new Job(ex, r, now);
            if (ex.isLate(job, now)) {
                LOOP.refundAdmission(ex.controller); // too late for the target: shed, not run
                ex.shed(job, now);
                continue;
            }
            if (!job.isCancelled()) {
                return job;
            }
            LOOP.refundAdmission(ex.controller); // a cancelled task is skipped without admission
            ex.cancelled.increment();
        }
    }

    /**
     * {@link #nextJob}, or null if it threw (a refund reading a clock that moved backwards, say):
     * the chain then ends as if the queue were empty, so the slot, the in-flight count and the
     * recorder are given back, and the failure is counted and logged. Nothing is lost: a job is
     * returned only once it is admitted and polled, and the throwing steps come before that.
     */
    private static Job nextJobOrEnd(PowerFlowExecutor ex, Delegate d, long now) {
        try {
            return nextJob(ex, d, now);
        } catch (RuntimeException | Error e) {
            ex.internalFailures.incrementAndGet();
            LOG.log(Level.WARNING, ex.name() + ": taking the next task failed; the dispatcher takes over", e);
            return null;
        }
    }
}
