package io.github.performancehelpers;

import java.lang.System.Logger.Level;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import io.github.performancehelpers.internal.Access;
import io.github.performancehelpers.internal.Listeners;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.loop.RateChangeListener;

/**
 * A {@link PowerFlowExecutor}'s observation tick, every observe interval on its scheduler: it moves
 * the recorders' samples into the window, passes the window to the control law
 * ({@link PowerFlowController#observe(double)}, which puts the new rate into the rate limiter) and
 * applies the rate that returns ({@link #applyRate}): law and rate limiter on this thread, then
 * the user's callbacks (the {@link PoolSizer} and the resize, then {@code onRateChange}) on the
 * callback thread ({@link Callbacks}), so that a callback that blocks never stalls the loop. In
 * fixed-rate mode it only rolls the windows over.
 *
 * <p>Only the tick moves the controller's rate while the executor runs (the controller's mutators
 * are not for callers then, see {@link PowerFlowExecutor#controller()}), so the rate read just
 * before {@code observe} is the one the law starts from, and no listener on the controller is
 * needed.
 *
 * <p><b>Thread safety.</b> A tick runs under {@link #lock}, so {@link #stop()} waits for one in
 * progress; a failure in a tick is counted and logged, and the next tick runs.
 */
final class Tick {

    private static final System.Logger LOG = System.getLogger(PowerFlowExecutor.class.getName());
    private static final Access.ControllerAccess LOOP = Access.controller();

    private final PowerFlowExecutor ex;
    private final PowerFlowController<Runnable> controller;
    private final ExecutorObservability observability;
    private final Ticker ticker;
    private final boolean fixedRate;
    /** The user's listener, or null. */
    private final RateChangeListener onRateChange;
    /** Woken when the rate moves, so that a waiting dispatcher re-reads the limiter at once. */
    private final Thread dispatcher;
    /** The observe interval, ns: a tick that comes much later than this was held up by a pause. */
    private final long observeIntervalNanos;

    /** Where the user's callbacks of a rate change run: off the observation thread. */
    private final Callbacks callbacks;

    private final ScheduledExecutorService scheduler;
    private final boolean ownsScheduler;
    private final ScheduledFuture<?> future;
    /**
     * The JVM's pause watch, which notes pauses inside a window to the controller; null in
     * fixed-rate mode, and on a ticker not the system's (a test's clock has no pauses).
     */
    private final PauseWatch.Subscription pauses;
    private final ReentrantLock lock = new ReentrantLock();
    // Guarded by lock.
    private boolean stopped;
    // Guarded by lock.
    private long lastTickNanos;
    /** The thread running a tick now, or null; written under lock. */
    private volatile Thread runner;

    /**
     * Schedules the tick.
     *
     * @param scheduler the caller's scheduler (not owned), or null for an owned single daemon
     *     thread named {@code name-tick}
     * @throws IllegalArgumentException if a caller's scheduler refuses the tick (shut down)
     * @throws RuntimeException if the scheduler refuses the tick otherwise (an owned one is then stopped)
     */
    Tick(PowerFlowExecutor ex, ExecutorObservability observability, boolean fixedRate,
            RateChangeListener onRateChange, Thread dispatcher, ScheduledExecutorService scheduler,
            long observeIntervalNanos) {
        this.ex = ex;
        this.controller = ex.controller;
        this.observability = observability;
        this.ticker = ex.ticker;
        this.fixedRate = fixedRate;
        this.onRateChange = onRateChange;
        this.dispatcher = dispatcher;
        this.callbacks = new Callbacks(ex.name() + "-callbacks", this::runCallbacks, ex.internalFailures);
        if (scheduler != null) {
            this.scheduler = scheduler;
            this.ownsScheduler = false;
        } else {
            String name = ex.name() + "-tick";
            ScheduledThreadPoolExecutor stpe = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, name);
                t.setDaemon(true);
                return t;
            });
            stpe.setRemoveOnCancelPolicy(true);
            this.scheduler = stpe;
            this.ownsScheduler = true;
        }
        this.lastTickNanos = ticker.read();
        this.observeIntervalNanos = observeIntervalNanos;
        PowerFlowController<Runnable> c = controller;
        this.pauses = fixedRate || ticker != Ticker.system() ? null
                : PauseWatch.shared(nanos -> LOOP.noteStall(c, nanos));
        ScheduledFuture<?> f;
        try {
            f = this.scheduler.scheduleWithFixedDelay(this::run, observeIntervalNanos, observeIntervalNanos,
                    TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            if (pauses != null) {
                pauses.close();
            }
            if (ownsScheduler) {
                this.scheduler.shutdownNow();
            }
            if (e instanceof java.util.concurrent.RejectedExecutionException) {
                // A caller's scheduler shut down between build()'s check and here: name the option.
                throw new IllegalArgumentException("scheduler refused the observation tick (shut down?): "
                        + this.scheduler, e);
            }
            throw e;
        }
        this.future = f;
    }

    /**
     * Whether {@code t} is running a tick or a user's callback now (a callback calling the
     * executor back), which termination would wait for.
     */
    boolean runsOn(Thread t) {
        return runner == t || callbacks.runsOn(t);
    }

    private void run() {
        lock.lock();
        runner = Thread.currentThread();
        try {
            if (stopped) {
                return;
            }
            observability.onTick();
            ex.drainRecorders();
            ex.flushRecorderCounts();
            if (fixedRate) {
                controller.latency().snapshotAndReset();
                ex.queueWait.snapshotAndReset();
                ex.countRefusals();
                ex.endWindow(1); // a fixed rate keeps no cap on the tasks in flight
                return;
            }
            long now = ticker.read();
            long elapsed = now - lastTickNanos;
            if (elapsed <= 0) {
                return; // no time has passed (or the ticker went backwards): nothing to observe
            }
            lastTickNanos = now;
            long late = elapsed - observeIntervalNanos;
            if (late > PowerFlowExecutor.STALL_NOTE_NANOS) {
                // The tick itself came late: a pause of the process straddled the window's end
                // (the dispatcher, woken by the same pause, may note it only in the next window).
                LOOP.noteStall(controller, late);
            }
            StartLoad.Verdict load = ex.startLoad.take();
            LOOP.noteStartLoad(controller, load.slowZ(), load.runZ());
            ex.countRefusals();
            double capGrowth = ex.stepInFlightCap(load, elapsed / 1e9); // before the law: one actuator a window
            double previous = controller.rate();
            double rate = controller.observe(elapsed / 1e6); // in the rate limiter on return
            ex.endWindow(capGrowth); // the wait budget follows the law's new reading and the cap's growth
            ex.setDrainFrom(load.meanRunMs()); // and the door the pace at which the queue starts tasks
            if (rate != previous) {
                applyRate(rate, previous);
            }
            ex.queueWait.snapshotAndReset();
        } catch (Throwable t) {
            ex.internalFailures.incrementAndGet();
            LOG.log(Level.WARNING, ex.name() + ": observation failed; the tick continues", t);
        } finally {
            runner = null;
            lock.unlock();
        }
    }

    /**
     * Applies a rate the law moved to (already in the rate limiter): wakes the dispatcher, then
     * hands the user's callbacks (the {@link PoolSizer} and the resize, then
     * {@code onRateChange(rate, previous)}) to the callback thread ({@link Callbacks}) and waits
     * for them at most {@link PowerFlowExecutor#MAX_CALLBACK_WAIT}, not at all while an earlier
     * one is still running: a callback that blocks delays only later callbacks, never the loop.
     */
    private void applyRate(double rate, double previous) {
        LockSupport.unpark(dispatcher);
        callbacks.post(rate, previous);
    }

    /** The user's callbacks for one (coalesced) rate change, on the callback thread. */
    private void runCallbacks(double rate, double previous) {
        try {
            ex.delegate.resize(ex.sizeFor(rate));
        } catch (RuntimeException e) {
            ex.internalFailures.incrementAndGet();
            LOG.log(Level.WARNING, ex.name() + ": resizing the delegate for rate " + rate + " failed", e);
        }
        Listeners.rateChanged(onRateChange, rate, previous, ex.internalFailures, LOG, ex.name() + ": ");
    }

    /**
     * Stops the tick: cancels it, waits for one in progress, and stops an owned scheduler and
     * waits for it. Called once, by the executor's termination.
     */
    void stop() {
        future.cancel(false);
        if (pauses != null) {
            pauses.close();
        }
        callbacks.stop(); // first: a tick waiting for a callback returns at once
        lock.lock();
        try {
            stopped = true;
        } finally {
            lock.unlock();
        }
        if (ownsScheduler) {
            scheduler.shutdownNow();
            Delegate.awaitUninterruptibly(scheduler);
        }
    }

    /** Runs a coalesced rate change's callbacks: {@code (rate, previous)}. */
    @FunctionalInterface
    interface RateAction {
        void run(double rate, double previous);
    }

    /**
     * The hand-off of a rate change's user callbacks to one daemon thread of their own
     * ({@code name-callbacks}, started when needed and ended after a second idle), so that a
     * callback that blocks stalls neither the observations nor {@code close()}.
     *
     * <p>Coalescing: a change posted while another waits to run replaces it (the latest rate wins;
     * the {@code previous} is the one the waiting change had, the rate the callbacks last saw), so
     * a blocked callback delays later callbacks, and then they run once, with the latest rate. The
     * poster waits for its change to be run at most {@link PowerFlowExecutor#MAX_CALLBACK_WAIT},
     * and not at all while an earlier callback is still running: with quick callbacks, the tick
     * returns with the pool resized and the listener called, as if it had run them itself.
     * {@link #stop()} drops what waits, interrupts a callback still running and waits for it at
     * most {@code MAX_CALLBACK_WAIT}.
     *
     * <p><b>Thread safety.</b> Thread-safe; the state is guarded by {@link #lock}.
     */
    static final class Callbacks {
        private static final long WAIT_NANOS = PowerFlowExecutor.MAX_CALLBACK_WAIT.toNanos();

        private final RateAction action;
        private final java.util.concurrent.atomic.AtomicLong failures;
        private final java.util.concurrent.ThreadPoolExecutor thread;
        private final ReentrantLock lock = new ReentrantLock();
        private final java.util.concurrent.locks.Condition ran = lock.newCondition();
        // All guarded by lock.
        private boolean pending;
        private double rate;
        private double previous;
        /** A drain task is queued or running on the thread. */
        private boolean draining;
        /** The thread running a callback now, or null. Written under lock. */
        private volatile Thread inCallback;
        private long posted;
        private long done;
        private boolean stopped;

        Callbacks(String name, RateAction action, java.util.concurrent.atomic.AtomicLong failures) {
            this.action = action;
            this.failures = failures;
            this.thread = new java.util.concurrent.ThreadPoolExecutor(1, 1, 1, TimeUnit.SECONDS,
                    new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
                        Thread t = new Thread(r, name);
                        t.setDaemon(true);
                        return t;
                    });
            this.thread.allowCoreThreadTimeOut(true);
        }

        boolean runsOn(Thread t) {
            return inCallback == t;
        }

        /** Posts a rate change, and waits a bounded time for it to run (see the class description). */
        void post(double newRate, double oldRate) {
            lock.lock();
            try {
                if (stopped) {
                    return;
                }
                rate = newRate;
                if (!pending) {
                    previous = oldRate;
                    pending = true;
                }
                long mine = ++posted;
                if (inCallback != null) {
                    return; // an earlier callback is still running: coalesce, do not wait
                }
                if (!draining) {
                    draining = true;
                    thread.execute(this::drain);
                }
                long nanos = WAIT_NANOS;
                while (done < mine && !stopped && nanos > 0) {
                    try {
                        nanos = ran.awaitNanos(nanos);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt(); // the tick is being stopped
                        return;
                    }
                }
            } finally {
                lock.unlock();
            }
        }

        private void drain() {
            for (;;) {
                double r;
                double p;
                long upTo;
                lock.lock();
                try {
                    if (!pending || stopped) {
                        draining = false;
                        return;
                    }
                    pending = false;
                    r = rate;
                    p = previous;
                    upTo = posted;
                    inCallback = Thread.currentThread();
                } finally {
                    lock.unlock();
                }
                try {
                    action.run(r, p);
                } catch (Throwable t) {
                    failures.incrementAndGet();
                    LOG.log(t instanceof VirtualMachineError ? Level.ERROR : Level.WARNING,
                            "a rate-change callback failed; the loop continues", t);
                } finally {
                    lock.lock();
                    try {
                        inCallback = null;
                        done = upTo;
                        ran.signalAll();
                    } finally {
                        lock.unlock();
                    }
                }
                Thread.interrupted(); // an interrupt meant for this callback ends with it
            }
        }

        /** Drops what waits, interrupts a callback still running, and waits for it at most MAX_CALLBACK_WAIT. */
        void stop() {
            lock.lock();
            try {
                stopped = true;
                pending = false;
                ran.signalAll();
            } finally {
                lock.unlock();
            }
            thread.shutdownNow();
            if (Thread.currentThread() == inCallback) {
                return; // a callback stopping the executor: do not wait for itself
            }
            try {
                thread.awaitTermination(WAIT_NANOS, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
