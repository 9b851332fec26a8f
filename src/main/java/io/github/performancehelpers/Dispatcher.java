package io.github.performancehelpers;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import io.github.performancehelpers.internal.Access;
import io.github.performancehelpers.loop.PowerFlowController;

/**
 * A {@link PowerFlowExecutor}'s dispatcher: one virtual thread that waits for work, then for a
 * slot, takes the next queued task, waits until the rate limiter admits it, and hands it off
 * ({@link #dispatchOne()}, one method per step). It paces: it is the path when tasks wait for
 * admission; the fast paths (the submitter's, {@code PowerFlowExecutor.tryDirect}, and a finishing
 * worker's, {@link Job}) keep it out of the common cases. See "Pacing" in the executor's class
 * description for the catch-up it lets the limiter make.
 *
 * <p>The order of the steps (work, then slot, then take) keeps the dispatcher out of the way of
 * the fast paths: it holds no task while it waits for a slot, so a finishing worker takes the next
 * task itself instead of handing its slot to the dispatcher, and it holds no slot while it waits
 * for work, so a submitter finds one free.
 *
 * <p><b>Thread safety.</b> The steps run on the dispatcher thread only; {@link #takeBack(List)}
 * is called by {@code shutdownNow()} from any thread, under {@link #lock}.
 */
final class Dispatcher {

    private static final System.Logger LOG = System.getLogger(PowerFlowExecutor.class.getName());
    private static final Access.ControllerAccess LOOP = Access.controller();

    private static final long MAX_CATCH_UP_NANOS = PowerFlowExecutor.MAX_CATCH_UP.toNanos();

    /** How long the dispatcher backs off when a global limiter refuses and the local one would admit. */
    private static final long GLOBAL_RETRY_NANOS = 1_000_000L;

    // What a step tells dispatchOne().
    /** The dispatcher must exit. */
    private static final int EXIT = 0;
    /** Start over: re-read the state. */
    private static final int AGAIN = 1;
    /** Go on to the next step, without having waited. */
    private static final int GO = 2;
    /** Go on to the next step, after a wait for work or for a slot. */
    private static final int WAITED = 3;

    private final PowerFlowExecutor ex;
    private final PowerFlowController<Runnable> controller;
    private final Delegate delegate;
    private final Ticker ticker;
    private final boolean hasGlobalLimiter;
    final Thread thread;

    /**
     * Guards the writes to {@code PowerFlowExecutor.held} (the task the dispatcher has taken from
     * the queue and not yet handed off). The dispatcher holds it while it polls the queue and
     * while it hands off; {@code shutdownNow()} holds it while it drains the queue and takes the
     * held task ({@link #takeBack(List)}).
     */
    private final ReentrantLock lock = new ReentrantLock();
    /** The placeholder {@code held} holds while the dispatcher polls the queue. */
    private final Job claim;
    /** What {@link #take()} returns when the executor is stopping. */
    private final Job stopped;
    /**
     * Set, under {@link #lock}, by a {@code shutdown()} that found the executor idle and
     * terminates it itself: the dispatcher takes nothing more and exits at its next step.
     */
    private volatile boolean retired;
    /** The stripe of the slot the dispatcher holds (taken in step 2); its own thread's only. */
    private int slot;

    Dispatcher(PowerFlowExecutor ex, PowerFlowController<Runnable> controller, Delegate delegate, Ticker ticker,
            boolean hasGlobalLimiter) {
        this.ex = ex;
        this.controller = controller;
        this.delegate = delegate;
        this.ticker = ticker;
        this.hasGlobalLimiter = hasGlobalLimiter;
        this.claim = new Job(ex, () -> { }, 0L);
        this.stopped = new Job(ex, () -> { }, 0L);
        this.thread = Thread.ofVirtual().name(ex.name() + "-dispatcher").unstarted(this::dispatchLoop);
    }

    /**
     * The lateness the limiter may catch up at a rate: {@link PowerFlowExecutor#MAX_CATCH_UP}, or
     * two emission intervals at rates below 100/s, where one interval is longer than the bound and
     * a wake-up late by more than the bound would otherwise lose a whole admission (at most two
     * extra admissions).
     *
     * @param rate the rate in force, per second
     * @return nanoseconds
     */
    static long catchUpNanos(double rate) {
        double twoIntervals = 2e9 / rate;
        return twoIntervals > MAX_CATCH_UP_NANOS ? (long) Math.min(twoIntervals, 0x1p30) : MAX_CATCH_UP_NANOS;
    }

    private void dispatchLoop() {
        try {
            for (;;) {
                try {
                    if (!dispatchOne()) {
                        break;
                    }
                } catch (Throwable t) {
                    if (t instanceof VirtualMachineError vme) {
                        LOG.log(Level.ERROR, ex.name() + ": dispatcher error", vme);
                    }
                    ex.internalFailures.incrementAndGet();
                    LOG.log(Level.WARNING, ex.name() + ": dispatcher step failed; continuing", t);
                }
            }
        } finally {
            Thread.interrupted(); // a wake-up interrupt is not the termination's business
            ex.dispatcherExited();
        }
    }

    /**
     * For a {@code shutdown()} or {@code shutdownNow()} that would terminate an idle executor on
     * its own thread: under {@link #lock}, so that no take or hand-off is in progress, checks that
     * nothing is queued, held or in flight, and if so retires the dispatcher (it takes nothing more).
     * The state is already {@code SHUTDOWN} or more, so nothing new can be accepted; a producer
     * whose offer raced with the check finds the state on its re-check and takes its task back.
     *
     * @return whether the dispatcher is retired
     */
    boolean retireIfIdle() {
        lock.lock();
        try {
            if (!retired && ex.held == null && controller.queue().isEmpty() && ex.inFlight() == 0) {
                retired = true;
            }
            return retired;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits for work and a slot, then takes, paces and hands off one task.
     *
     * @return false when the dispatcher must exit
     */
    private boolean dispatchOne() {
        // 1. Wait for work, holding nothing.
        int work = awaitWork();
        if (work < GO) {
            return work == AGAIN;
        }
        // 2. Wait for a slot in the delegate.
        int slot = awaitSlot();
        if (slot < GO) {
            return slot == AGAIN;
        }
        // 3. Take the next task (the workers or the fast path may have taken it meanwhile).
        Job job = take();
        if (job == null || job == stopped) {
            return job == null;
        }
        // 4. Wait until the limiter admits it; a cancelled task is skipped without admission.
        int admitted = awaitAdmission(job, work == WAITED || slot == WAITED);
        if (admitted < GO) {
            return admitted == AGAIN;
        }
        // 5. Hand off.
        return handOff(job);
    }

    /** Step 1: returns EXIT, AGAIN (interrupted), GO (work is queued) or WAITED. */
    private int awaitWork() {
        Thread.interrupted(); // an interrupt is a wake-up; the state says why
        int s = ex.state;
        if (s >= PowerFlowExecutor.STOP || retired) {
            return EXIT;
        }
        if (!controller.queue().isEmpty()) {
            return GO;
        }
        if (s == PowerFlowExecutor.SHUTDOWN) {
            return EXIT; // drained
        }
        try {
            LOOP.awaitWork(controller);
        } catch (InterruptedException e) {
            return AGAIN; // re-read the state
        }
        return WAITED;
    }

    /** Step 2: returns AGAIN (interrupted), GO (a slot was free) or WAITED; a slot is held after GO or WAITED. */
    private int awaitSlot() {
        try {
            long acquired = delegate.acquireSlot();
            slot = (int) acquired;
            return (acquired & Delegate.WAITED) != 0 ? WAITED : GO;
        } catch (InterruptedException e) {
            return AGAIN; // re-read the state
        }
    }

    /**
     * Step 3: takes the queue's head and holds it, under {@link #lock}. Returns the job; null if
     * the queue was empty, or {@link #stopped} if the executor is stopping (the slot is given
     * back in both cases).
     */
    private Job take() {
        lock.lock();
        try {
            if (ex.state >= PowerFlowExecutor.STOP || retired) {
                ex.releaseSlot(slot);
                return stopped;
            }
            ex.held = claim; // the fast paths stand back from here
            Job job = null;
            for (Runnable r; job == null && (r = controller.queue().poll()) != null; ) {
                ex.roomFreed(); // a submitter waiting under BLOCK may offer
                job = r instanceof Job j && j.owner == ex ? j : new Job(ex, r, ticker.read());
                long now = ex.sheddable(job) ? ticker.read() : 0L; // a clock read only where it can matter
                if (ex.isLate(job, now)) {
                    ex.shed(job, now); // too late for the target: its Future says so
                    job = null;
                }
            }
            if (job == null) {
                ex.held = null;
                ex.releaseSlot(slot);
                return null;
            }
            ex.held = job;
            return job;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Step 4: waits until the limiter admits the held job. Lateness is caught up only if the task
     * was waiting throughout: not after an idle wait, nor after a wait for a slot, during which
     * the limiter was not the bottleneck. Returns GO once admitted; AGAIN if the job was cancelled
     * (skipped without admission); EXIT if the executor is stopping ({@code shutdownNow()} takes
     * the held job). The slot is given back unless GO.
     */
    private int awaitAdmission(Job job, boolean waited) {
        long catchUp = waited ? 0L : catchUpNanos(controller.rate());
        int dueButRefused = 0;
        for (;;) {
            if (job.isCancelled()) {
                if (release(job)) {
                    ex.cancelled.increment();
                }
                ex.releaseSlot(slot);
                return AGAIN;
            }
            long now = ex.sheddable(job) ? ticker.read() : 0L;
            if (ex.isLate(job, now)) {
                if (release(job)) {
                    ex.shed(job, now); // it waited for the limiter past the budget
                }
                ex.releaseSlot(slot);
                return AGAIN;
            }
            if (LOOP.tryAdmitHeld(controller, catchUp)) {
                return GO;
            }
            if (ex.state >= PowerFlowExecutor.STOP) {
                ex.releaseSlot(slot);
                return EXIT; // shutdownNow() takes `held`
            }
            long wait = LOOP.admitWaitNanos(controller);
            if (wait > 0) {
                dueButRefused = 0;
            } else if (hasGlobalLimiter) {
                wait = GLOBAL_RETRY_NANOS; // the global limiter refused; it gives no retry time
            } else if (++dueButRefused > 2) {
                wait = 10_000L; // a race with a rate change resolves at once; never spin
            }
            if (wait > 0) {
                park(wait);
            }
            Thread.interrupted();
            catchUp = catchUpNanos(controller.rate()); // the task waited throughout
        }
    }

    /** Parks for the time the limiter says; a wake-up that late with work waiting is a pause. */
    private void park(long wait) {
        long due = ticker.read() + wait;
        LockSupport.parkNanos(ex, wait); // the executor is the blocker a thread dump shows
        long late = ticker.read() - due;
        if (late > PowerFlowExecutor.STALL_NOTE_NANOS) {
            // Woken this late with work waiting: the process (or the machine) paused.
            LOOP.noteStall(controller, late);
        }
    }

    /**
     * Step 5: hands off the admitted job, under {@link #lock}, unless {@code shutdownNow()} took it
     * meanwhile.
     *
     * @return false if it was taken back (the dispatcher must exit)
     */
    private boolean handOff(Job job) {
        lock.lock();
        try {
            if (ex.held != job) { // taken back by shutdownNow()
                ex.releaseSlot(slot);
                return false;
            }
            ex.held = null;
            job.holdsSlotOf(slot);
            job.startsAt(ex.inFlight()); // its slot, taken in step 2, counts it in flight
            Thread.interrupted(); // do not hand a wake-up interrupt to a delegate's execute()
            ex.handOff(job);
        } finally {
            lock.unlock();
        }
        return true;
    }

    /** Drops the held job if the dispatcher still holds it; false if shutdownNow() took it. */
    private boolean release(Job job) {
        lock.lock();
        try {
            if (ex.held != job) {
                return false;
            }
            ex.held = null;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * For {@code shutdownNow()}, after the state is STOP: waits for a hand-off in progress, then
     * takes the held task and drains the queue into {@code never}, held task first, each as it was
     * submitted.
     */
    void takeBack(List<Runnable> never) {
        lock.lock(); // waits for a hand-off in progress, or for take() to see the interrupt
        try {
            Job h = ex.held;
            ex.held = null;
            List<Runnable> queued = new ArrayList<>();
            controller.queue().drainTo(queued);
            if (h != null && h != claim) {
                never.add(h.task);
            }
            for (Runnable r : queued) {
                never.add(r instanceof Job j ? j.task : r);
            }
        } finally {
            lock.unlock();
        }
    }
}
