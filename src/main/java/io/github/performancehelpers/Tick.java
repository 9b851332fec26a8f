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
 * applies the rate that returns to the delegate's size ({@link #applyRate}): law, rate limiter,
 * pool size, in that order, on this one thread. In fixed-rate mode it only rolls the windows over.
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

    private final ScheduledExecutorService scheduler;
    private final boolean ownsScheduler;
    private final ScheduledFuture<?> future;
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
        ScheduledFuture<?> f;
        try {
            f = this.scheduler.scheduleWithFixedDelay(this::run, observeIntervalNanos, observeIntervalNanos,
                    TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
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

    /** Whether a tick is running on {@code t} now (a callback of it calling the executor back). */
    boolean runsOn(Thread t) {
        return runner == t;
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
            if (fixedRate) {
                controller.latency().snapshotAndReset();
                ex.queueWait.snapshotAndReset();
                ex.endWindow();
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
            double previous = controller.rate();
            double rate = controller.observe(elapsed / 1e6); // in the rate limiter on return
            ex.endWindow(); // the wait budget follows the law's new reading
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
     * Applies a rate the law moved to (already in the rate limiter): resizes the delegate, wakes
     * the dispatcher, then calls the user's {@code onRateChange(rate, previous)}. A sizer or
     * delegate that throws, or a listener, is counted and logged and stops nothing; a
     * {@link VirtualMachineError} from the listener reaches the tick's handler.
     */
    private void applyRate(double rate, double previous) {
        try {
            ex.delegate.resize(ex.sizeFor(rate));
        } catch (RuntimeException e) {
            ex.internalFailures.incrementAndGet();
            LOG.log(Level.WARNING, ex.name() + ": resizing the delegate for rate " + rate + " failed", e);
        }
        LockSupport.unpark(dispatcher);
        Listeners.rateChanged(onRateChange, rate, previous, ex.internalFailures, LOG, ex.name() + ": ");
    }

    /**
     * Stops the tick: cancels it, waits for one in progress, and stops an owned scheduler and
     * waits for it. Called once, by the executor's termination.
     */
    void stop() {
        future.cancel(false);
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
}
