package io.github.performancehelpers.loop;

import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import io.github.performancehelpers.internal.Access;
import io.github.performancehelpers.limit.PowerGCRA;
import io.github.performancehelpers.limit.PowerRateLimit;
import io.github.performancehelpers.limit.RateLimiter;

/**
 * The admission side of a {@link PowerFlowController}: its bounded queue, its local GCRA (with an
 * optional global limiter every admission must also pass), and the submitted and admitted
 * counters. {@link #admit()} is the controller's own consumer path; the others are the executor's
 * fast paths, reached through {@link ControllerHooks}.
 *
 * <p><b>Thread safety.</b> Thread-safe. {@link #admit()} and {@link #clear()} hold
 * {@code admitLock}, so that peek, consume and poll are atomic with respect to other consumers:
 * the head that was admitted is the head that is removed, and admission is never consumed when the
 * queue is empty. The executor's paths and the producers take no lock.
 *
 * @param <T> the type of queued item
 */
final class FlowAdmission<T> {

    private static final Access.GcraAccess GCRA = Access.gcra();

    final PowerGCRA limiter;
    final PowerQueue<T> queue;
    private final RateLimiter globalLimiter;
    /** The local limiter, composed with the global one when there is one. */
    private final RateLimiter limiters;
    private final ReentrantLock admitLock = new ReentrantLock();
    /**
     * Items that bypassed the queue (the executor's submit-side fast path), each both submitted
     * and admitted: one counter, so that such an item costs one update. The queue's own successful
     * offers are {@link PowerQueue#offered()}.
     */
    private final LongAdder direct = new LongAdder();
    /**
     * Direct admissions taken back ({@link #unadmitDirect}). Counted apart rather than taken off
     * {@link #direct}, so that {@link #directCount()} never falls (the executor derives untimed
     * completions from it, see there).
     */
    private final LongAdder directTakenBack = new LongAdder();
    /** Items admitted from the queue. */
    private final LongAdder admitted = new LongAdder();

    FlowAdmission(PowerGCRA limiter, RateLimiter globalLimiter, int queueCapacity) {
        this.limiter = limiter;
        this.globalLimiter = globalLimiter;
        this.limiters = globalLimiter == null ? limiter : PowerRateLimit.of(limiter, globalLimiter);
        this.queue = new PowerQueue<>(queueCapacity);
    }

    /** The next item if the limiters admit one now; empty, without touching them, on an empty queue. */
    Optional<T> admit() {
        admitLock.lock();
        try {
            if (queue.peek() == null || !limiters.tryConsume(1)) {
                return Optional.empty();
            }
            T item = queue.poll();
            // Only consumers remove, and they hold admitLock; clear() holds it too.
            assert item != null;
            admitted.increment();
            return Optional.of(item);
        } finally {
            admitLock.unlock();
        }
    }

    /** Empties the queue, under {@code admitLock}. */
    void clear() {
        admitLock.lock();
        try {
            queue.clear();
        } finally {
            admitLock.unlock();
        }
    }

    /** Items submitted: accepted by the queue, or admitted directly. */
    long submittedCount() {
        return queue.offered() + direct.sum() - directTakenBack.sum();
    }

    /** Direct admissions made ({@link #tryAdmitDirect()}), those taken back included: never falls. */
    long directCount() {
        return direct.sum();
    }

    /** Direct admissions taken back ({@link #unadmitDirect}). */
    long directTakenBackCount() {
        return directTakenBack.sum();
    }

    /** Items admitted. */
    long admittedCount() {
        return admitted.sum() + direct.sum() - directTakenBack.sum();
    }

    /** Blocks until the queue holds an item, without removing it: the dispatcher's wait for work. */
    void awaitWork() throws InterruptedException {
        queue.awaitNotEmpty();
    }

    /**
     * For the executor's workers: admits and removes the head item if the local limiter admits
     * one at {@code now} (the finished task's end time), catching up by at most
     * {@code maxCatchUpNanos} as {@link #tryAdmitHeld(long)} does; null when the queue is empty or
     * the limiter refuses. Admission is consumed before the poll (an item is never removed
     * unadmitted) and refunded when the queue turns out empty. Not counted as admitted: the
     * caller counts with {@link #countAdmitted(long)}. Only without a global limiter, which cannot
     * be refunded.
     */
    T pollAdmitted(long maxCatchUpNanos, long now) {
        // No peek first: in a backlog the peek would read the lines the poll reads once more per
        // item. An empty queue costs a refund instead, once per run of tasks.
        if (!GCRA.tryConsumeCatchingUpAt(limiter, 1, maxCatchUpNanos, now)) {
            return null;
        }
        T item = queue.poll();
        if (item == null) {
            GCRA.refund(limiter, 1);
        }
        return item;
    }

    /** Counts {@code n} admissions made with {@link #pollAdmitted(long, long)}. */
    void countAdmitted(long n) {
        admitted.add(n);
    }

    /** Refunds one admission made with {@link #pollAdmitted(long, long)} that the caller did not use. */
    void refundAdmission() {
        GCRA.refund(limiter, 1);
    }

    /**
     * Consumes admission for an item that bypasses the queue (the executor's submit-side fast
     * path, taken only when the queue is empty), counting it as submitted and admitted. An open
     * limiter (one admission a nanosecond, the executor's rate until latency calls for less) is
     * not consulted: it cannot refuse a caller that pays a clock read per call, and consulting it
     * cost a clock read and a CAS on a line every submitter writes. Only without a global limiter.
     *
     * @return one of {@link Access.ControllerAccess#DIRECT_REFUSED}, {@code DIRECT_CHARGED} or
     *     {@code DIRECT_OPEN}
     */
    int tryAdmitDirect() {
        int admission;
        if (GCRA.isOpen(limiter)) {
            admission = Access.ControllerAccess.DIRECT_OPEN;
        } else if (limiter.tryConsume(1)) {
            admission = Access.ControllerAccess.DIRECT_CHARGED;
        } else {
            return Access.ControllerAccess.DIRECT_REFUSED;
        }
        direct.increment();
        return admission;
    }

    /**
     * Takes back a {@link #tryAdmitDirect()} admission the caller could not use: uncounted, and
     * refunded if the limiter was charged.
     */
    void unadmitDirect(int admission) {
        if (admission == Access.ControllerAccess.DIRECT_CHARGED) {
            refundAdmission();
        }
        directTakenBack.increment();
    }

    /**
     * Consumes admission for one item the caller already holds, counting it as admitted on
     * success. The local limiter may catch up by at most {@code maxCatchUpNanos} of the caller's
     * wake-up lateness; see {@link PowerGCRA#tryConsumeCatchingUp(long, long)}.
     */
    boolean tryAdmitHeld(long maxCatchUpNanos) {
        boolean ok;
        if (globalLimiter == null) {
            ok = GCRA.tryConsumeCatchingUp(limiter, 1, maxCatchUpNanos);
        } else {
            // Local first, because only the local limiter can be refunded exactly: a global
            // limiter (say, on Redis) is never charged for an item the local one refused.
            ok = globalLimiter.hasCapacity() && GCRA.tryConsumeCatchingUp(limiter, 1, maxCatchUpNanos);
            if (ok && !globalLimiter.tryConsume(1)) {
                GCRA.refund(limiter, 1);
                ok = false;
            }
        }
        if (ok) {
            admitted.increment();
        }
        return ok;
    }

    /** Nanoseconds until the local limiter would admit one operation; 0 if it would now. */
    long admitWaitNanos() {
        return limiter.retryAfterNanos(1);
    }
}
