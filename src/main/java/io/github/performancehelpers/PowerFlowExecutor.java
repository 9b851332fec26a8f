package io.github.performancehelpers;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import io.github.performancehelpers.internal.Access;
import io.github.performancehelpers.limit.RateLimiter;
import io.github.performancehelpers.limit.Take;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.loop.PowerHistogram;
import io.github.performancehelpers.loop.RateChangeListener;
import io.github.performancehelpers.metrics.MetricsCollector;
import io.github.performancehelpers.metrics.PowerFlowExecutorMXBean;

/**
 * An {@link ExecutorService} that runs admission control, queueing and latency feedback in one
 * closed loop: a drop-in replacement for a thread pool that holds the tail latency of its tasks
 * at a target by moving the rate at which it starts them.
 *
 * <pre>
 *  execute()/submit() ── nothing waiting, slot free, limiter admits ──► delegate (fast path)
 *          │ otherwise
 *          ▼
 *     bounded queue ── full ──► RejectionPolicy (QueueFullException by default)
 *          │
 *          ├─ a worker that finishes a task takes the next one if the limiter admits it now
 *          │
 *          └─ dispatcher (one virtual thread): wait for work → wait for a slot → take
 *                   → wait until the rate limiter admits → hand off
 *                              ▼
 *          delegate ── runs the task, timed ──► latency window (run time on the delegate)
 *                              ▲
 *  tick every observeInterval: observe(measured elapsed ms) → control law → new rate
 *          → rate limiter, PoolSizer → delegate size, dispatcher woken, onRateChange
 * </pre>
 *
 * <p>Every task is admitted by the same rate limiter and runs under the same slot bound,
 * whichever of three paths hands it off. The dispatcher paces: it waits for the limiter, so it
 * is the path when tasks wait for admission. Two fast paths keep it out of the common cases,
 * where it would cost two thread wake-ups per task: a submitter that finds the queue empty, the
 * dispatcher holding nothing, a free slot and the limiter admitting hands its task off itself
 * (as {@code ThreadPoolExecutor.execute} starts a worker); and a worker that finishes a task
 * while others are queued takes the next one if the limiter admits it now, keeping its slot: on
 * a {@code ThreadPoolExecutor} it runs it in the same pool thread (as a pool worker takes its
 * next task), on the default delegate in a new virtual thread. Both stand back while the
 * dispatcher holds a task (that task is older) and with a {@linkplain Builder#globalLimiter
 * global limiter}, whose admissions cannot be refunded. Tasks are admitted in queue order, except
 * that tasks taken at the same moment by different threads start in either order, as in any
 * thread pool.
 *
 * <p>It composes a {@link PowerFlowController} ({@link #controller()}): the controller's bounded
 * queue holds the waiting tasks, its GCRA paces the dispatcher, its histogram receives each task's
 * run time on the delegate, and its control law ({@link PowerFlowController.ControlLaw#KNEE_AWARE}
 * by default here, see {@link Builder#controlLaw}) moves the rate at every observation. The time a task
 * waits before it starts (queue, rate limiter and slot) is tracked separately
 * ({@link Stats#queueWaitP99()}): it is the consequence of the rate, not the plant's latency, and
 * feeding it back would make the loop chase its own shadow.
 *
 * <pre>{@code
 * try (PowerFlowExecutor executor = PowerExecutors.newFixedFlowPool(8, Duration.ofMillis(50))) {
 *     Future<Response> f = executor.submit(() -> client.call(request));
 *     ...
 * } // close(): waits for queued and running tasks
 * }</pre>
 *
 * <h2>Delegates</h2>
 * <ul>
 * <li>The default: one virtual thread per task under a concurrency bound that the loop resizes
 *     with the {@link PoolSizer}. Owned.</li>
 * <li>A {@link ThreadPoolExecutor}: resized with {@code setCorePoolSize}/{@code setMaximumPoolSize}
 *     (grow: maximum first; shrink: core first; so the calls never throw), and this executor keeps
 *     at most that size of tasks in flight on it; every other task waits in the bounded, counted
 *     queue here. A pool thread that finishes one of these tasks may run the next queued ones
 *     before it returns to the pool (see above), so the pool's {@code beforeExecute},
 *     {@code afterExecute} and task counts see one task where this executor ran several. With a
 *     global limiter, whose workers do not take tasks themselves, the bound is twice the size: one
 *     running and one waiting in the pool's queue per pool thread, so that a worker finds its next
 *     task already queued instead of waiting for the dispatcher ({@link Stats#depth()} does not
 *     count those). Owned only if {@link Builder#ownsDelegate(boolean)}.</li>
 * <li>Any other {@code ExecutorService}: used as is, neither resized nor bounded
 *     ({@link Stats#poolSize()} is -1). Owned only if {@link Builder#ownsDelegate(boolean)}.</li>
 * </ul>
 * An owned delegate is shut down when this executor terminates ({@code shutdownNow} when it is
 * stopped); a caller's is never shut down.
 *
 * <h2>Pacing</h2>
 * The dispatcher parks ({@link LockSupport#parkNanos(long)}) for exactly the time the limiter
 * says the next admission is due, and admits every due task at each wake-up. The operating system
 * wakes a parked thread tens of microseconds late; a GCRA admitting from {@code max(now, tat)}
 * forgets that lateness, and a dispatcher that does so loses it at every wake-up and runs slow
 * (at 100k/s a 10 µs interval and a 50 µs lateness would cut the rate by 80%). So when the
 * dispatcher had work waiting continuously (it was pacing, not idle) it lets the limiter catch up
 * by at most {@link #MAX_CATCH_UP} of lateness; after waiting on an empty queue it passes 0, as
 * idle time is correctly forgotten. The bound caps the burst a long stall (a GC pause, a
 * descheduled carrier) can release at {@code rate × 20 ms} tasks (and the delegate's slots
 * still bound how many run at once), which is what an on-time dispatcher would have admitted over
 * that time. The bound is 20 ms rather than the few tens of microseconds of an ordinary wake-up
 * because on a loaded machine a thread is routinely kept off a CPU for one scheduler period (a
 * few to tens of milliseconds), and every stall beyond the bound is lost from the long-run rate
 * for good. Below 100/s, where one emission interval is longer than 20 ms, the bound is two
 * intervals instead, so that one late wake-up never costs a whole admission. A worker that
 * finishes a task and finds others queued admits the next with the same catch-up, since work was
 * waiting; it never waits for the limiter, so pacing stays the dispatcher's. A wake-up more than
 * 10 ms late, with a task waiting, or a tick more than 10 ms after its interval, is noted to the
 * controller as a pause of the process: the knee-aware law does not cut on the latency of a long
 * one (see {@link PowerFlowController.ControlLaw#KNEE_AWARE}, "Pauses"). A rate change wakes the
 * dispatcher, so it takes effect at once, also when the dispatcher is already waiting. The
 * dispatcher is a virtual thread, so it shares the carrier threads with the default delegate's
 * tasks: CPU-bound tasks that keep every carrier busy delay it (use a {@code ThreadPoolExecutor}
 * delegate for such work).
 *
 * <h2>Statistics</h2>
 * {@link #stats()}: the controller's loop figures plus the executor's task accounting. Every task
 * accepted by {@code execute}/{@code submit} ends as exactly one of: completed, failed, cancelled
 * (a {@code Future} cancelled by its owner), or returned by {@link #shutdownNow()}; every task
 * refused counts in {@code rejected}.
 *
 * <h2>Observability</h2>
 * {@link Builder#observability(boolean)} publishes the numbers in a {@link MetricsCollector}
 * (pulled: nothing is added per task), {@link Builder#jmx(boolean)} as a
 * {@link PowerFlowExecutorMXBean}; both are unregistered when the executor terminates. The loop
 * commits JFR events ({@code io.github.performancehelpers.Observation}, {@code RateChange},
 * {@code Drops}, {@code StaleLoop}) subject to the JFR settings. When the tick has not run for
 * longer than {@link Builder#staleAfter(Duration)} the loop is reported stale.
 *
 * <p><b>Thread-safety:</b> all methods are thread-safe.
 *
 * <p><b>Note</b> (departures from the {@link ExecutorService} contract and from
 * {@code ThreadPoolExecutor}):
 * <ul>
 * <li>The queue is bounded ({@link Builder#queueCapacity(int)}): a full queue refuses a task
 *     with {@link QueueFullException} (under the default {@link RejectionPolicy#ABORT}), where
 *     {@code Executors.newFixedThreadPool} would queue without bound.</li>
 * <li>With a caller's delegate that is not a {@code ThreadPoolExecutor}, {@link #shutdownNow()}
 *     cannot take back tasks already handed to it: they are not in the returned list and still
 *     run (with their thread interrupted). Termination waits for every task handed to a delegate
 *     to finish, so a caller's delegate that drops accepted work (shut down by its owner, a
 *     discarding policy) keeps this executor from terminating.</li>
 * <li>A task is "started", and no longer returned by {@code shutdownNow()}, once it is handed to
 *     the delegate or taken by a worker that finished its previous task; if it begins running
 *     after {@code shutdownNow()}, it runs with its thread interrupted, as a
 *     {@code ThreadPoolExecutor} worker does.</li>
 * </ul>
 *
 * @since 0.1.0
 */
public final class PowerFlowExecutor extends AbstractExecutorService implements AutoCloseable {

    /*
     * Lifecycle. `state` moves only forward, and every transition is made under mainLock:
     *
     *   RUNNING:    accepts tasks; the dispatcher takes, paces and hands them off.
     *   SHUTDOWN:   refuses new tasks; the dispatcher still runs every queued task under the
     *               limiter, then exits when it finds the queue empty.
     *   STOP:       refuses new tasks; the queued tasks and the one the dispatcher holds were
     *               taken by shutdownNow(), which interrupts the running ones; the dispatcher
     *               exits at its next step.
     *   TERMINATED: the dispatcher has exited, no task is in flight on the delegate, the owned
     *               delegate and the tick (and its owned scheduler) have terminated.
     *
     *   RUNNING -> SHUTDOWN:            shutdown() (close() calls it)
     *   RUNNING or SHUTDOWN -> STOP:    shutdownNow() (close() calls it when interrupted)
     *   SHUTDOWN or STOP -> TERMINATED: by the dispatcher, as its last act: after it exits its
     *                                   loop it waits for the tasks in flight to finish, shuts
     *                                   down the owned delegate and the tick, then sets
     *                                   TERMINATED and signals awaitTermination().
     *
     * The numeric order matters: `state >= SHUTDOWN` means "refuse new tasks", `state >= STOP`
     * means "start nothing more".
     *
     * Locking rules.
     *  - mainLock guards the transitions and the `terminated` condition.
     *  - dispatchLock guards writes to `held` (the task the dispatcher has taken from the queue
     *    and not yet handed off). The dispatcher holds it while it polls the queue and while it
     *    hands off; shutdownNow holds it while it drains the queue and takes `held`. So a task the
     *    dispatcher takes is exactly one of: in the queue, held, handed to the delegate, or
     *    returned, and never two, and the owned delegate is never shut down under its hand-off.
     *  - The fast paths take no lock. A worker takes tasks from the queue only by polling it (the
     *    queue gives each element to one consumer), so a task is still exactly one of: queued,
     *    taken by one worker, held, handed off, or returned. A worker that took a task after
     *    shutdownNow() drained the queue runs it interrupted, as a task handed off then does.
     *  - A submitter on the fast path counts its task in `inFlight` before it re-checks the state:
     *    either it sees the shutdown and takes the task back (and refuses it), or the dispatcher's
     *    terminate() sees it in flight and waits for it. If shutdownNow() stops the owned delegate
     *    between the re-check and the hand-off, the delegate's refusal is turned into this
     *    executor's refusal: the task was never accepted.
     *  - A producer enqueues and then re-checks the state (as ThreadPoolExecutor does): if the
     *    executor was shut down in between and the task can still be removed from the queue, it
     *    is refused; if it cannot, the dispatcher or shutdownNow owns it.
     *  - The dispatcher treats an interrupt as "wake up and re-read the state": shutdown() and
     *    shutdownNow() write the state before they interrupt, so an observed interrupt always
     *    comes with the new state (JLS 17.4.4).
     *  - The tick runs under tickLock, so stopping it waits for one in progress.
     */

    private static final System.Logger LOG = System.getLogger(PowerFlowExecutor.class.getName());
    private static final Access.ControllerAccess LOOP = Access.controller();

    /**
     * The most wake-up lateness the dispatcher lets the rate limiter catch up when it had work
     * waiting continuously: 20 ms. See "Pacing" in the class description.
     */
    public static final Duration MAX_CATCH_UP = Duration.ofMillis(20);

    private static final long MAX_CATCH_UP_NANOS = MAX_CATCH_UP.toNanos();
    /**
     * A pacing wake-up, or a tick, later than this is noted to the controller as a pause of the
     * process ({@code PowerFlowController.noteStall}); the knee-aware law reads only far longer
     * ones.
     */
    private static final long STALL_NOTE_NANOS = 10_000_000L;

    /** How long the dispatcher backs off when a global limiter refuses and the local one would admit. */
    private static final long GLOBAL_RETRY_NANOS = 1_000_000L;

    /** A chain adds its recorder's counts to the shared counters at least this often (tasks). */
    static final int COUNT_FLUSH_EVERY = 64;

    /**
     * How many tasks per pool thread this executor keeps in flight on a ThreadPoolExecutor
     * delegate when its workers cannot take the next task themselves (with a global limiter,
     * whose admissions cannot be refunded): 2, so up to {@code poolSize} tasks wait in the pool's
     * own queue. With exactly {@code poolSize} in flight the pool's queue would always be empty
     * and the workers would move in lockstep with the dispatcher: a worker that finishes a task
     * frees a slot and wakes the parked dispatcher, which hands off and wakes a parked worker, two
     * thread wake-ups in series per task (for trivial tasks 0.01x the throughput of a plain fixed
     * pool). With a second task per thread already queued, a worker that finishes takes its next
     * task at once while the dispatcher refills the queue in parallel.
     *
     * <p>Otherwise (the usual case) the in-flight bound is the pool size itself: a finishing
     * worker takes the next queued task itself (see {@link Job#run()}), so there is no lockstep to
     * avoid, and a second task per thread in the pool's queue would wait there behind the tasks
     * the workers take from this executor's queue.
     */
    static final int POOL_IN_FLIGHT_FACTOR = 2;

    /** The most {@link Recorder}s an executor keeps (each is two histograms, about 48 KiB). */
    static final int MAX_RECORDERS = 16;

    /** The default ceiling on the pool size or concurrency bound the default sizer chooses. */
    static final int DEFAULT_MAX_CONCURRENCY = 10_000;

    private static final AtomicInteger POOL_NUMBER = new AtomicInteger();

    private static final int RUNNING = 0;
    private static final int SHUTDOWN = 1;
    private static final int STOP = 2;
    private static final int TERMINATED = 3;

    private final String name;
    private final PowerFlowController<Runnable> controller;
    private final Ticker ticker;
    private final PowerHistogram queueWait;
    private final RejectionPolicy rejectionPolicy;
    private final PoolSizer poolSizer;
    private final boolean fixedRate;
    private final boolean hasGlobalLimiter;

    /** The caller's or owned delegate; null for the default (virtual threads). */
    private final ExecutorService delegate;
    private final boolean ownsDelegate;
    /** Non-null when {@link #delegate} is a ThreadPoolExecutor. */
    private final ThreadPoolExecutor pool;
    /**
     * The slot gate; null for a delegate that is neither the default nor a ThreadPoolExecutor. Its
     * limit is what {@link #slotsFor(int)} gives for the size in force.
     */
    private final ConcurrencyLimit limit;
    /** The size in force (the PoolSizer's figure: pool threads or the concurrency bound); 0 if unsized. */
    private volatile int sizeInForce;
    /**
     * Whether running tasks register in {@link #runningJobs} so that shutdownNow() can interrupt
     * them: false only for an owned ThreadPoolExecutor, whose own shutdownNow() interrupts its
     * workers (and so the tasks running on them).
     */
    private final boolean trackRunning;
    /** Starts the default delegate's virtual threads; null for a caller's delegate. */
    private final ThreadFactory workerFactory;

    private final ScheduledExecutorService scheduler;
    private final boolean ownsScheduler;
    private final ScheduledFuture<?> tickFuture;
    private final ReentrantLock tickLock = new ReentrantLock();
    /** Guarded by tickLock. */
    private boolean tickStopped;
    /** The observe interval, ns: a tick that comes much later than this was held up by a pause. */
    private final long observeIntervalNanos;
    /** The ticker reading at the previous tick; guarded by tickLock. */
    private long lastTickNanos;

    private final Thread dispatcher;

    private final ReentrantLock mainLock = new ReentrantLock();
    private final Condition terminatedCondition = mainLock.newCondition();
    private final Condition quiescent = mainLock.newCondition();
    /** Written only under mainLock. */
    private volatile int state = RUNNING;

    private final ReentrantLock dispatchLock = new ReentrantLock();
    /**
     * The task the dispatcher has taken from the queue and not yet handed off; written only under
     * dispatchLock, read without it by the fast paths (which stand back while it is non-null).
     * {@link #claim} while the dispatcher is taking from the queue.
     */
    private volatile Job held;
    /** The placeholder {@link #held} holds while the dispatcher polls the queue. */
    private final Job claim = new Job(() -> { }, 0L);
    /**
     * Whether the fast paths are on: submit-side hand-off and worker-side hand-off. Off with a
     * global limiter, whose admissions cannot be refunded.
     */
    private final boolean fastPaths;
    /** Whether a finishing worker may take the next task itself: only for a sized delegate. */
    private final boolean chaining;
    /**
     * The recorders a pool thread running a chain of tasks claims (see {@link Recorder}); null
     * unless the delegate is a ThreadPoolExecutor whose workers chain.
     */
    private final Recorder[] recorders;

    /** Tasks handed to the delegate that have not finished (or been taken back). */
    private final AtomicLong inFlight = new AtomicLong();
    /** The running tasks, if {@link #trackRunning}: one set node per task. */
    private final Set<Job> runningJobs = ConcurrentHashMap.newKeySet();
    private final LongAdder running = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    /** Tasks the controller counted as submitted but the shutdown re-check took back and refused. */
    private final LongAdder retracted = new LongAdder();
    private final LongAdder completed = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder cancelled = new LongAdder();
    private final AtomicLong internalFailures = new AtomicLong();
    /** Metrics, MXBean and the staleness check; see ExecutorObservability. */
    private final ExecutorObservability observability;

    private PowerFlowExecutor(Builder b, PowerFlowController.Builder<Runnable> flow) {
        this.name = b.name != null ? b.name : nextName();
        this.ticker = b.ticker;
        this.rejectionPolicy = b.rejectionPolicy;
        this.fixedRate = b.fixedRate;
        this.hasGlobalLimiter = b.globalLimiter != null;
        this.queueWait = PowerHistogram.builder().relativeAccuracy(b.relativeAccuracy).build();

        if (b.delegate == null) {
            this.delegate = null;
            this.ownsDelegate = true;
            this.pool = null;
            // One shared name for every worker ("name-worker"), not a numbered one: a numbered
            // name makes the JDK build a new String per virtual thread, i.e. per task (about 50 B,
            // a third of this executor's allocation per task over newVirtualThreadPerTaskExecutor,
            // whose threads are unnamed). The shared name still tells, in a thread dump, which
            // executor a worker belongs to; the virtual thread's id tells workers apart.
            this.workerFactory = Thread.ofVirtual().name(name + "-worker").factory();
        } else {
            this.delegate = b.delegate;
            this.ownsDelegate = b.ownsDelegate != null && b.ownsDelegate;
            this.pool = b.delegate instanceof ThreadPoolExecutor tpe ? tpe : null;
            this.workerFactory = null;
        }
        boolean bounded = delegate == null || pool != null;
        this.trackRunning = !(pool != null && ownsDelegate);
        int maxConcurrency = b.maxConcurrency > 0 ? b.maxConcurrency
                : pool != null ? Math.min(Math.max(1, pool.getMaximumPoolSize()), DEFAULT_MAX_CONCURRENCY)
                : DEFAULT_MAX_CONCURRENCY;
        this.poolSizer = b.poolSizer != null ? b.poolSizer
                : PoolSizer.littlesLaw(Duration.ofNanos(Math.max(1L, (long) (b.targetP99 * 1e6))), 1, maxConcurrency);
        int size = sizeFor(b.rate);
        this.sizeInForce = bounded ? size : 0;
        this.fastPaths = !hasGlobalLimiter;
        this.chaining = fastPaths && bounded;
        this.limit = bounded ? new ConcurrencyLimit(slotsFor(size)) : null;
        if (chaining && pool != null) {
            // One per thread that can run at once; more pool threads than that only take turns.
            int n = Math.min(maxConcurrency, Math.max(2, 2 * Runtime.getRuntime().availableProcessors()));
            this.recorders = new Recorder[Math.min(n, MAX_RECORDERS)];
            for (int i = 0; i < recorders.length; i++) {
                recorders[i] = new Recorder(b.relativeAccuracy);
            }
        } else {
            this.recorders = null;
        }
        if (pool != null) {
            resizePool(size);
        }

        RateChangeListener user = b.onRateChange;
        flow.onRateChange((rate, previous) -> {
            onRateChange(rate);
            if (user != null) {
                user.onRateChange(rate, previous); // the controller reports and counts a throw
            }
        });
        this.controller = flow.name(name).build();

        this.dispatcher = Thread.ofVirtual().name(name + "-dispatcher").unstarted(this::dispatchLoop);
        long staleAfter = b.staleAfter != null ? b.staleAfter.toNanos() : 3 * b.observeInterval.toNanos();
        this.observability = new ExecutorObservability(this, ticker, staleAfter, fixedRate, b.collector, b.jmx);
        observability.publish(); // before any thread starts: a duplicate name fails the build cleanly

        if (b.scheduler != null) {
            this.scheduler = b.scheduler;
            this.ownsScheduler = false;
        } else {
            ScheduledThreadPoolExecutor stpe = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, name + "-tick");
                t.setDaemon(true);
                return t;
            });
            stpe.setRemoveOnCancelPolicy(true);
            this.scheduler = stpe;
            this.ownsScheduler = true;
        }
        this.lastTickNanos = ticker.read();
        long interval = b.observeInterval.toNanos();
        this.observeIntervalNanos = interval;
        ScheduledFuture<?> f;
        try {
            f = scheduler.scheduleWithFixedDelay(this::tick, interval, interval, TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            if (ownsScheduler) {
                scheduler.shutdownNow();
            }
            observability.close();
            throw e;
        }
        this.tickFuture = f;
        dispatcher.start();
    }

    static String nextName() {
        return "power-flow-" + POOL_NUMBER.incrementAndGet();
    }

    /**
     * Returns a builder. {@code rate} and {@code minRate} are required, as for
     * {@link PowerFlowController}; in {@linkplain Builder#fixedRate(boolean) fixed-rate} mode only
     * {@code rate} is.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    // ---------------------------------------------------------------- submission

    /**
     * Queues a task to run on the delegate once the rate limiter admits it.
     *
     * @param command the task
     * @throws NullPointerException       if {@code command} is null
     * @throws RejectedExecutionException if the executor is shut down, or (a
     *                                    {@link QueueFullException}) the queue is full under
     *                                    {@link RejectionPolicy#ABORT}
     */
    @Override
    public void execute(Runnable command) {
        Objects.requireNonNull(command, "command");
        if (state != RUNNING) {
            rejected.increment();
            throw shutDownRejection();
        }
        Job job = new Job(command, ticker.read());
        observability.onSubmit(job.enqueuedAt);
        if (fastPaths && tryDirect(job)) {
            return;
        }
        if (!controller.submit(job)) {
            rejected.increment();
            rejectFull(command);
            return;
        }
        // Re-check: shutdown may have happened between the state read and the offer, after the
        // dispatcher last looked at the queue.
        if (state != RUNNING && controller.queue().remove(job)) {
            retracted.increment();
            rejected.increment();
            throw shutDownRejection();
        }
    }

    /**
     * The submit-side fast path: when nothing waits (the queue is empty and the dispatcher holds
     * no task), a slot is free and the limiter admits now, the submitting thread hands the task
     * off itself, as {@code ThreadPoolExecutor.execute} starts a worker, and the dispatcher is
     * not involved. Nothing that waits is overtaken: the queue is empty.
     *
     * @return true if handed off (or refused by the delegate and accounted); false to queue it
     * @throws RejectedExecutionException if the executor was shut down meanwhile
     */
    private boolean tryDirect(Job job) {
        // The queue first, then `held`: the dispatcher writes `held` before it polls, so a queue
        // seen empty because the dispatcher took its head is followed by a non-null `held`.
        if ((limit != null && limit.inUse() >= limit.limit()) // no slot: skip the queue's contended lines
                || !controller.queue().isEmpty() || held != null || job.isCancelled()) {
            return false;
        }
        if (limit != null && !limit.tryAcquire()) {
            return false;
        }
        if (!LOOP.tryAdmitDirect(controller)) {
            releaseSlot();
            return false;
        }
        // In flight before the state re-check: either this thread sees the shutdown, or the
        // dispatcher's terminate() sees this task in flight and waits for it (both are volatile).
        inFlight.incrementAndGet();
        if (state == RUNNING) {
            try {
                start(job);
                return true;
            } catch (RuntimeException | Error e) {
                if (!(e instanceof RejectedExecutionException) || state == RUNNING) {
                    delegateRefused(job, e);
                    return true;
                }
                // shutdownNow() stopped the owned delegate between the re-check and the hand-off:
                // refuse the task, as if it had come a moment later.
            }
        }
        LOOP.unadmitDirect(controller);
        releaseSlot();
        jobDone();
        rejected.increment();
        throw shutDownRejection();
    }

    /** Hands a job to the delegate (or its own virtual thread). The caller has counted it in flight. */
    private void start(Job job) {
        if (delegate == null) {
            workerFactory.newThread(job).start();
        } else {
            delegate.execute(job);
        }
    }

    private RejectedExecutionException shutDownRejection() {
        return new RejectedExecutionException(this + " is shut down");
    }

    private void rejectFull(Runnable command) {
        switch (rejectionPolicy) {
            case ABORT -> throw new QueueFullException(
                    "queue full (queueCapacity " + controller.queueCapacity() + "): " + this);
            case CALLER_RUNS -> command.run();
            case DISCARD -> {
                if (command instanceof Future<?> f) {
                    f.cancel(false);
                }
            }
        }
    }

    // ---------------------------------------------------------------- the dispatcher

    private void dispatchLoop() {
        try {
            for (;;) {
                try {
                    if (!dispatchOne()) {
                        break;
                    }
                } catch (Throwable t) {
                    if (t instanceof VirtualMachineError vme) {
                        LOG.log(Level.ERROR, name + ": dispatcher error", vme);
                    }
                    internalFailures.incrementAndGet();
                    LOG.log(Level.WARNING, name + ": dispatcher step failed; continuing", t);
                }
            }
        } finally {
            terminate();
        }
    }

    /**
     * Waits for work and a slot, then takes, paces and hands off one task.
     *
     * <p>The order (work, then slot, then take) keeps the dispatcher out of the way of the fast
     * paths: it holds no task while it waits for a slot, so a finishing worker takes the next
     * task itself instead of handing its slot to the dispatcher (see {@link Job#run()}), and it
     * holds no slot while it waits for work, so a submitter finds one free.
     *
     * @return false when the dispatcher must exit
     */
    private boolean dispatchOne() {
        // 1. Wait for work, holding nothing.
        Thread.interrupted(); // an interrupt is a wake-up; the state says why
        int s = state;
        if (s >= STOP) {
            return false;
        }
        boolean waited = false;
        if (controller.queue().isEmpty()) {
            if (s == SHUTDOWN) {
                return false; // drained
            }
            try {
                LOOP.awaitWork(controller);
            } catch (InterruptedException e) {
                return true; // re-read the state
            }
            waited = true;
        }

        // 2. Wait for a slot in the delegate.
        if (limit != null && !limit.tryAcquire()) {
            try {
                limit.acquire();
            } catch (InterruptedException e) {
                return true; // re-read the state
            }
            waited = true;
        }

        // 3. Take the next task (the workers or the fast path may have taken it meanwhile).
        Job job;
        dispatchLock.lock();
        try {
            if (state >= STOP) {
                releaseSlot();
                return false;
            }
            held = claim; // the fast paths stand back from here
            Runnable r = controller.queue().poll();
            if (r == null) {
                held = null;
                releaseSlot();
                return true;
            }
            job = r instanceof Job j && j.owner() == this ? j : new Job(r, ticker.read());
            held = job;
        } finally {
            dispatchLock.unlock();
        }

        // 4. Wait until the limiter admits it; a cancelled task is skipped without admission.
        // Lateness is caught up only if the task was waiting throughout: not after an idle wait,
        // nor after a wait for a slot, during which the limiter was not the bottleneck.
        long catchUp = waited ? 0L : catchUpNanos();
        int dueButRefused = 0;
        for (;;) {
            if (job.isCancelled()) {
                if (release(job)) {
                    cancelled.increment();
                }
                releaseSlot();
                return true;
            }
            if (LOOP.tryAdmitHeld(controller, catchUp)) {
                break;
            }
            if (state >= STOP) {
                releaseSlot();
                return false; // shutdownNow() takes `held`
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
                long due = ticker.read() + wait;
                LockSupport.parkNanos(this, wait);
                long late = ticker.read() - due;
                if (late > STALL_NOTE_NANOS) {
                    // Woken this late with work waiting: the process (or the machine) paused.
                    LOOP.noteStall(controller, late);
                }
            }
            Thread.interrupted();
            catchUp = catchUpNanos(); // the task waited throughout
        }

        // 5. Hand off.
        dispatchLock.lock();
        try {
            if (held != job) { // taken back by shutdownNow()
                releaseSlot();
                return false;
            }
            held = null;
            inFlight.incrementAndGet();
            Thread.interrupted(); // do not hand a wake-up interrupt to a delegate's execute()
            handOff(job);
        } finally {
            dispatchLock.unlock();
        }
        return true;
    }

    /**
     * The lateness the limiter may catch up: {@link #MAX_CATCH_UP}, or two emission intervals at
     * rates below 100/s, where one interval is longer than the bound and a wake-up late by more
     * than the bound would otherwise lose a whole admission (at most two extra admissions).
     */
    private long catchUpNanos() {
        double twoIntervals = 2e9 / controller.rate();
        return twoIntervals > MAX_CATCH_UP_NANOS ? (long) Math.min(twoIntervals, 0x1p30) : MAX_CATCH_UP_NANOS;
    }

    /** Drops the held task if the dispatcher still holds it; false if shutdownNow() took it. */
    private boolean release(Job job) {
        dispatchLock.lock();
        try {
            if (held != job) {
                return false;
            }
            held = null;
            return true;
        } finally {
            dispatchLock.unlock();
        }
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
    private Job nextJob(long now) {
        if (state >= STOP || held != null || limit.inUse() > limit.limit()
                || (pool != null && pool.isShutdown())) {
            return null;
        }
        for (;;) {
            // Work is waiting: catch up. The caller counts the admission (see Job.run).
            Runnable r = LOOP.pollAdmitted(controller, catchUpNanos(), now);
            if (r == null) {
                return null;
            }
            Job job = r instanceof Job j && j.owner() == this ? j : new Job(r, now);
            if (!job.isCancelled()) {
                return job;
            }
            LOOP.refundAdmission(controller); // a cancelled task is skipped without admission
            cancelled.increment();
        }
    }

    /**
     * {@link #nextJob(long)}, or null if it threw (a refund reading a clock that moved backwards,
     * say): the chain then ends as if the queue were empty, so the slot, the in-flight count and
     * the recorder are given back, and the failure is counted and logged. Nothing is lost: a job
     * is returned only once it is admitted and polled, and the throwing steps come before that.
     */
    private Job nextJobOrEnd(long now) {
        try {
            return nextJob(now);
        } catch (RuntimeException | Error e) {
            internalFailures.incrementAndGet();
            LOG.log(Level.WARNING, name + ": taking the next task failed; the dispatcher takes over", e);
            return null;
        }
    }

    /**
     * Hands off a job that holds a slot and is counted in flight (by the dispatcher, or by a
     * finishing worker for the next task); a refusal is {@link #delegateRefused}.
     */
    private void handOff(Job job) {
        try {
            start(job);
        } catch (RuntimeException | Error e) {
            delegateRefused(job, e);
        }
    }

    /**
     * The delegate refused an admitted task: its slot and in-flight count are given back, and it
     * ends cancelled (a Future) or failed, reported as an internal failure.
     */
    private void delegateRefused(Job job, Throwable e) {
        releaseSlot();
        jobDone();
        internalFailures.incrementAndGet();
        if (job.task instanceof Future<?> f) {
            f.cancel(false);
            cancelled.increment();
            LOG.log(Level.WARNING, name + ": the delegate refused an admitted task; its Future is cancelled", e);
        } else {
            failed.increment();
            LOG.log(Level.WARNING, name + ": the delegate refused an admitted task; it is dropped", e);
        }
    }

    private void releaseSlot() {
        if (limit != null) {
            limit.release();
        }
    }

    private void jobDone() {
        if (inFlight.decrementAndGet() == 0 && state >= SHUTDOWN) {
            mainLock.lock();
            try {
                quiescent.signalAll();
            } finally {
                mainLock.unlock();
            }
        }
    }

    /** The dispatcher's last act: wait for the tasks in flight, stop what is owned, terminate. */
    private void terminate() {
        mainLock.lock();
        try {
            while (inFlight.get() > 0) {
                try {
                    quiescent.await();
                } catch (InterruptedException e) {
                    // shutdownNow() may interrupt us again; keep waiting
                }
            }
        } finally {
            mainLock.unlock();
        }
        if (delegate != null && ownsDelegate) {
            delegate.shutdown();
            awaitUninterruptibly(delegate);
        }
        tickFuture.cancel(false);
        tickLock.lock();
        try {
            tickStopped = true;
        } finally {
            tickLock.unlock();
        }
        if (ownsScheduler) {
            scheduler.shutdownNow();
            awaitUninterruptibly(scheduler);
        }
        observability.close();
        mainLock.lock();
        try {
            state = TERMINATED;
            terminatedCondition.signalAll();
        } finally {
            mainLock.unlock();
        }
        Thread.interrupted();
    }

    private static void awaitUninterruptibly(ExecutorService e) {
        for (;;) {
            try {
                if (e.awaitTermination(1, TimeUnit.DAYS)) {
                    return;
                }
            } catch (InterruptedException ignored) {
                // keep waiting: termination must cover the delegate
            }
        }
    }

    // ---------------------------------------------------------------- the loop

    private void tick() {
        tickLock.lock();
        try {
            if (tickStopped) {
                return;
            }
            observability.onTick();
            drainRecorders();
            if (fixedRate) {
                controller.latency().snapshotAndReset();
                queueWait.snapshotAndReset();
                return;
            }
            long now = ticker.read();
            long elapsed = now - lastTickNanos;
            if (elapsed <= 0) {
                return; // no time has passed (or the ticker went backwards): nothing to observe
            }
            lastTickNanos = now;
            long late = elapsed - observeIntervalNanos;
            if (late > STALL_NOTE_NANOS) {
                // The tick itself came late: a pause of the process straddled the window's end
                // (the dispatcher, woken by the same pause, may note it only in the next window).
                LOOP.noteStall(controller, late);
            }
            controller.observe(elapsed / 1e6);
            queueWait.snapshotAndReset();
        } catch (Throwable t) {
            internalFailures.incrementAndGet();
            LOG.log(Level.WARNING, name + ": observation failed; the tick continues", t);
        } finally {
            tickLock.unlock();
        }
    }

    /** Runs inside the controller's observe(), under its loop lock. */
    private void onRateChange(double rate) {
        try {
            int size = sizeFor(rate);
            if (limit != null) {
                sizeInForce = size;
                limit.setLimit(slotsFor(size));
                if (pool != null) {
                    resizePool(size);
                }
            }
        } catch (RuntimeException e) {
            internalFailures.incrementAndGet();
            LOG.log(Level.WARNING, name + ": resizing the delegate for rate " + rate + " failed", e);
        }
        LockSupport.unpark(dispatcher); // a waiting dispatcher re-reads the limiter at once
    }

    private int sizeFor(double rate) {
        return Math.max(1, poolSizer.poolSize(rate));
    }

    /**
     * The tasks this executor keeps in flight on a delegate of the given size: the size itself for
     * the default delegate (where a task in flight is a running virtual thread) and for a
     * ThreadPoolExecutor whose workers chain, {@link #POOL_IN_FLIGHT_FACTOR} times it for one whose
     * workers cannot (with a global limiter).
     */
    private int slotsFor(int size) {
        return pool != null && !chaining ? (int) Math.min(Integer.MAX_VALUE, (long) POOL_IN_FLIGHT_FACTOR * size) : size;
    }

    /** Resizes the pool in the order that never throws (core <= maximum at every step). */
    private void resizePool(int size) {
        if (size >= pool.getCorePoolSize()) {
            pool.setMaximumPoolSize(size);
            pool.setCorePoolSize(size);
        } else {
            pool.setCorePoolSize(size);
            pool.setMaximumPoolSize(size);
        }
    }

    // ---------------------------------------------------------------- lifecycle

    /**
     * Starts an orderly shutdown: no new task is accepted, and every task already queued still
     * runs, under the rate limiter. Does not wait; use {@link #awaitTermination}. Idempotent.
     */
    @Override
    public void shutdown() {
        mainLock.lock();
        try {
            if (state == RUNNING) {
                state = SHUTDOWN;
            }
        } finally {
            mainLock.unlock();
        }
        dispatcher.interrupt(); // a dispatcher waiting on an empty queue re-reads the state
        if (inFlight.get() == 0) {
            jobDoneSignal();
        }
    }

    private void jobDoneSignal() {
        mainLock.lock();
        try {
            quiescent.signalAll();
        } finally {
            mainLock.unlock();
        }
    }

    /**
     * Stops the executor: no new task is accepted, no queued task is started, and the running
     * ones are interrupted (a task that ignores interrupts runs to its end). Does not wait for
     * running tasks; use {@link #awaitTermination}.
     *
     * @return every accepted task that never started, in queue order where there is one: the
     *     queued tasks, the one the dispatcher held, and those handed to a
     *     {@code ThreadPoolExecutor} delegate that had not started; each as it was given to this
     *     executor (for {@code submit}, the {@link java.util.concurrent.FutureTask} that
     *     {@code submit} returned)
     */
    @Override
    public List<Runnable> shutdownNow() {
        mainLock.lock();
        try {
            if (state < STOP) {
                state = STOP;
            }
        } finally {
            mainLock.unlock();
        }
        dispatcher.interrupt();
        List<Runnable> never = new ArrayList<>();
        dispatchLock.lock(); // waits for a hand-off in progress, or for take() to see the interrupt
        try {
            Job h = held;
            held = null;
            List<Runnable> queued = new ArrayList<>();
            controller.queue().drainTo(queued);
            if (h != null && h != claim) {
                never.add(h.task);
            }
            for (Runnable r : queued) {
                never.add(r instanceof Job j ? j.task : r);
            }
        } finally {
            dispatchLock.unlock();
        }
        if (pool != null) {
            List<Runnable> fromPool;
            if (ownsDelegate) {
                fromPool = pool.shutdownNow();
            } else {
                fromPool = new ArrayList<>();
                for (Runnable r : pool.getQueue().toArray(new Runnable[0])) {
                    if (r instanceof Job j && j.owner() == this && pool.remove(r)) {
                        fromPool.add(r);
                    }
                }
            }
            for (Runnable r : fromPool) {
                if (r instanceof Job j && j.owner() == this) {
                    never.add(j.task);
                    releaseSlot();
                    jobDone();
                } else {
                    never.add(r); // the owned pool's own tasks, given to it directly
                }
            }
        } else if (delegate != null && ownsDelegate) {
            for (Runnable r : delegate.shutdownNow()) {
                if (r instanceof Job j && j.owner() == this) {
                    never.add(j.task);
                    jobDone();
                } else {
                    never.add(r);
                }
            }
        }
        for (Job j : runningJobs) {
            j.interrupt();
        }
        if (inFlight.get() == 0) {
            jobDoneSignal();
        }
        return never;
    }

    /**
     * Returns whether {@link #shutdown()} or {@link #shutdownNow()} has been called.
     *
     * @return {@code true} once the executor refuses new tasks
     */
    @Override
    public boolean isShutdown() {
        return state >= SHUTDOWN;
    }

    /**
     * Returns whether the executor has terminated: shut down, every accepted task finished or
     * returned, the dispatcher ended, and the owned delegate and tick terminated.
     *
     * @return {@code true} once terminated
     */
    @Override
    public boolean isTerminated() {
        return state == TERMINATED && !dispatcher.isAlive();
    }

    /**
     * Returns whether the executor is shutting down but has not terminated.
     *
     * @return {@code true} between shutdown and termination
     */
    public boolean isTerminating() {
        return state >= SHUTDOWN && !isTerminated();
    }

    /**
     * Blocks until the executor has terminated (see {@link #isTerminated()}), the timeout
     * elapses, or the current thread is interrupted, whichever happens first.
     *
     * @param timeout the longest wait
     * @param unit    the unit of {@code timeout}
     * @return {@code true} if terminated, {@code false} if the timeout elapsed first
     * @throws InterruptedException if interrupted while waiting
     * @throws NullPointerException if {@code unit} is null
     */
    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        long nanos = unit.toNanos(timeout);
        long deadline = System.nanoTime() + nanos;
        mainLock.lock();
        try {
            while (state != TERMINATED) {
                if (nanos <= 0L) {
                    return false;
                }
                nanos = terminatedCondition.awaitNanos(nanos);
            }
        } finally {
            mainLock.unlock();
        }
        // TERMINATED is the dispatcher's last write; wait for it to end too.
        long left = deadline - System.nanoTime();
        if (dispatcher.isAlive()) {
            if (left <= 0) {
                return false;
            }
            return dispatcher.join(Duration.ofNanos(left));
        }
        return true;
    }

    /**
     * Shuts down and waits for termination, with the semantics of
     * {@link ExecutorService#close()} (JDK 19+): queued and running tasks complete first; if the
     * calling thread is interrupted while waiting, the executor is stopped with
     * {@link #shutdownNow()}, the wait continues until termination, and the method returns with
     * the thread's interrupt status set. Idempotent.
     */
    @Override
    public void close() {
        super.close();
    }

    // ---------------------------------------------------------------- read-outs

    /**
     * Returns a snapshot of the loop's figures and the executor's task accounting. The set is not
     * one atomic cut, and the counters are striped (as {@link java.util.concurrent.atomic.LongAdder}
     * is, so that workers do not contend on them): each is exact whenever no update to it is in
     * progress, and otherwise lies between its values at the start and the end of the call. A
     * pool thread that runs queued tasks back to back counts their admissions, completions and
     * recorded latencies locally and adds them every 64 tasks and when it stops, so while such a
     * run lasts {@code admitted}, {@code completed} and {@code recorded} may lag by up to 64 tasks
     * per pool thread (as {@code ThreadPoolExecutor}'s task counts are approximate while it runs);
     * once the executor is idle they are exact.
     *
     * @return the statistics
     */
    public Stats stats() {
        drainRecorders();
        PowerFlowController.Stats c = controller.stats();
        return new Stats(c.rate(), c.minRate(), c.maxRate(), c.targetP99(), c.quantile(), c.depth(),
                c.queueCapacity(), c.submitted() - retracted.sum(), c.admitted(), c.recorded(), c.dropped(), c.observations(),
                c.p99(), c.saturated(), rejected.sum(), runningNow(), completed.sum(), failed.sum(),
                cancelled.sum(), poolSize(), queueWait.quantile(0.99), controller.lastObservedP99(), c.pausesExcused());
    }

    /** The running-tasks gauge; never negative, even while a task's +1 and -1 sit in different cells. */
    int runningNow() {
        return (int) Math.max(0L, running.sum());
    }

    // Single counters of stats(), for the metrics and MXBean read-outs: stats() also drains the
    // recorders and takes two histogram images, which a counter read has no use for.

    long submittedCount() {
        return LOOP.submittedCount(controller) - retracted.sum();
    }

    long rejectedCount() {
        return rejected.sum();
    }

    long completedCount() {
        return completed.sum();
    }

    long failedCount() {
        return failed.sum();
    }

    long cancelledCount() {
        return cancelled.sum();
    }

    /**
     * Returns the size in force for the delegate: the concurrency bound of the default delegate or
     * of a {@code ThreadPoolExecutor} delegate (whose pool size is kept equal to it), or -1 for
     * another delegate, which is not sized.
     *
     * @return the pool size, or -1
     */
    public int poolSize() {
        return limit != null ? sizeInForce : -1;
    }

    /**
     * Returns the composed flow controller: the live one, for reading its figures and its
     * primitives ({@link PowerFlowController#limiter()}, {@link PowerFlowController#latency()},
     * ...). Its queue holds this executor's internal task wrappers. A pool thread running a chain
     * of tasks records their run times in a recorder of its own, which the observation tick and
     * {@link #stats()} move into {@link PowerFlowController#latency()}: read the latency there
     * through {@link #stats()}, or expect the samples of running chains to arrive at the next
     * tick. Do not call its mutators
     * ({@code submit}, {@code admit}, {@code observe}, {@code reset}, {@code clear},
     * {@code close}) while the executor is in use: they bypass the executor's accounting, and a
     * task removed through them is neither run nor returned by {@link #shutdownNow()}.
     *
     * @return the controller
     */
    public PowerFlowController<Runnable> controller() {
        return controller;
    }

    /**
     * Returns whether the observation tick has not run for longer than
     * {@link Builder#staleAfter(Duration)}: the rate in force is stale. Runs the staleness check.
     *
     * @return {@code true} while the loop is stalled
     */
    public boolean isStale() {
        return observability.isStale();
    }

    /**
     * Returns the name used for this executor's threads ({@code name-dispatcher},
     * {@code name-tick}, and {@code name-worker} for every worker of the default delegate).
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * Returns how many internal failures were reported and survived: observations, pool sizing
     * and dispatcher steps that threw, delegates that refused an admitted task, plus the
     * controller's {@code onRateChange} listener failures.
     *
     * @return the count since construction
     */
    public long callbackFailures() {
        return internalFailures.get() + controller.callbackFailures();
    }

    /**
     * Returns the name, state and main figures, for logs.
     *
     * @return a description
     */
    @Override
    public String toString() {
        String s = switch (state) {
            case RUNNING -> "Running";
            case SHUTDOWN -> "Shutting down";
            case STOP -> "Stopping";
            default -> "Terminated";
        };
        return "PowerFlowExecutor[" + name + ", " + s + ", rate = " + controller.rate() + "/s, queued = "
                + controller.depth() + ", running = " + runningNow() + ", completed = " + completed.sum() + "]";
    }

    /** The dispatcher thread, for tests. */
    Thread dispatcherThread() {
        return dispatcher;
    }

    // ---------------------------------------------------------------- recorders

    /**
     * A pool thread's own pair of single-writer histograms (run time and queue wait), claimed for
     * the length of a chain of tasks. A chain on a busy executor runs many short tasks back to
     * back, and with every worker recording each one into the shared histograms (a phaser, a
     * bucket and a sum, each an atomic operation on a cache line all workers write) the workers
     * spent about as long contending on those lines as running trivial tasks. A claimed recorder
     * has one writer, so a record is a few plain stores ({@link PowerHistogram.Builder#singleWriter});
     * the tick and {@link #stats()} move what the recorders hold into the shared histograms
     * (each sample into exactly one window) before they read them. The claim (a CAS) and the
     * release (a volatile write) order one chain's records before the next claimer's, as the
     * single-writer contract asks.
     */
    private static final class Recorder {
        final PowerHistogram run;
        final PowerHistogram wait;
        final AtomicBoolean claimed = new AtomicBoolean();
        /** Counts of the claiming chain not yet added to the shared counters (owner-only, plain). */
        int admitted;
        int completed;
        int recorded;

        Recorder(double relativeAccuracy) {
            this.run = PowerHistogram.builder().relativeAccuracy(relativeAccuracy).singleWriter(true).build();
            this.wait = PowerHistogram.builder().relativeAccuracy(relativeAccuracy).singleWriter(true).build();
        }

        void release() {
            claimed.set(false);
        }
    }

    /** A free recorder, claimed; null if there is none (the chain then records shared). */
    private Recorder claimRecorder() {
        Recorder[] rs = recorders;
        if (rs == null) {
            return null;
        }
        int start = (int) (Thread.currentThread().threadId() % rs.length);
        for (int k = 0; k < rs.length; k++) {
            Recorder r = rs[(start + k) % rs.length];
            if (!r.claimed.get() && r.claimed.compareAndSet(false, true)) {
                return r;
            }
        }
        return null;
    }

    /**
     * Adds a claimed recorder's counts to the shared counters: every {@link #COUNT_FLUSH_EVERY}
     * tasks of a chain and when the chain ends, so a running chain's counts lag by at most that
     * many tasks and an ended one's not at all. Only the claiming thread calls this.
     */
    private void flushCounts(Recorder r) {
        if (r.admitted != 0) {
            LOOP.countAdmitted(controller, r.admitted);
            r.admitted = 0;
        }
        if (r.recorded != 0) {
            LOOP.countRecorded(controller, r.recorded);
            r.recorded = 0;
        }
        if (r.completed != 0) {
            completed.add(r.completed);
            r.completed = 0;
        }
    }

    /** Moves what the recorders hold into the shared histograms the loop and stats() read. */
    private void drainRecorders() {
        Recorder[] rs = recorders;
        if (rs == null) {
            return;
        }
        PowerHistogram latency = controller.latency();
        for (Recorder r : rs) {
            // No emptiness check first: count() takes a whole snapshot itself, and merging an
            // empty one returns at once.
            latency.merge(r.run.snapshotAndReset());
            queueWait.merge(r.wait.snapshotAndReset());
        }
    }

    // ---------------------------------------------------------------- the task wrapper

    /** A queued task: the submitted Runnable, its enqueue time, and its runner while it runs. */
    private final class Job implements Runnable {
        final Runnable task;
        final long enqueuedAt;
        volatile Thread runner;

        Job(Runnable task, long enqueuedAt) {
            this.task = task;
            this.enqueuedAt = enqueuedAt;
        }

        PowerFlowExecutor owner() {
            return PowerFlowExecutor.this;
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
         * Runs this task and then, while the fast path allows, the next queued ones: on a
         * {@code ThreadPoolExecutor} delegate in this same pool thread (as a pool worker takes its
         * next task), on the default delegate each in a new virtual thread that inherits the slot.
         * So in a steady backlog a finishing worker hands its slot straight to the next task, and
         * the dispatcher, which would cost two thread wake-ups per task, stays parked.
         */
        @Override
        public void run() {
            Job j = this;
            Recorder rec = null;
            running.increment(); // once per chain: the thread runs tasks until the chain ends
            long now = ticker.read();
            for (;;) {
                boolean threw = true;
                try {
                    now = j.runTask(rec, now);
                    threw = false;
                } finally {
                    if (threw) { // the task's exception reaches the delegate's thread, as before
                        endChain(rec);
                    }
                }
                Job next = chaining ? nextJobOrEnd(now) : null;
                if (next == null) {
                    break;
                }
                if (pool == null) {
                    LOOP.countAdmitted(controller, 1);
                    running.decrement();
                    handOff(next); // a thread of its own, inheriting the slot and in-flight count
                    return;
                }
                if (state < STOP) {
                    Thread.interrupted(); // as a pool worker between tasks: no stale interrupt
                }
                if (rec == null) {
                    rec = claimRecorder(); // a chain has begun: record and count without contention
                }
                if (rec == null) {
                    LOOP.countAdmitted(controller, 1);
                } else if (++rec.admitted >= COUNT_FLUSH_EVERY) {
                    flushCounts(rec);
                }
                j = next;
            }
            endChain(rec);
        }

        /**
         * Ends a chain on its pool thread: the recorder's counts are added and the recorder is
         * given back (if one was claimed), then the running gauge, the slot and the in-flight count.
         */
        private void endChain(Recorder rec) {
            if (rec != null) {
                flushCounts(rec);
                rec.release();
            }
            running.decrement();
            releaseSlot();
            jobDone();
        }

        /**
         * Runs the task itself, timed and accounted, its times recorded and its completion counted
         * in {@code rec} if non-null or else in the shared histograms and counters; the slot and
         * in-flight count are the caller's. {@code start} is a fresh reading of the ticker (for a
         * chained task, the previous task's end: the time between them, normally a few hundred
         * nanoseconds, more if the poll waited for a descheduled producer or skipped cancelled
         * tasks, counts as this task's run time rather than its wait).
         *
         * @return the ticker reading at the task's end
         */
        private long runTask(Recorder rec, long start) {
            Thread t = Thread.currentThread();
            if (trackRunning) {
                runner = t;
                runningJobs.add(this);
            }
            if (state >= STOP && !t.isInterrupted()) {
                t.interrupt(); // as a ThreadPoolExecutor worker: a stopping pool's tasks see it
            }
            (rec != null ? rec.wait : queueWait).recordNanos(Math.max(0L, start - enqueuedAt));
            boolean threw = true;
            long end = start;
            try {
                task.run();
                threw = false;
            } finally {
                end = ticker.read();
                long ran = Math.max(0L, end - start);
                if (rec != null) {
                    rec.run.recordNanos(ran);
                    rec.recorded++;
                } else {
                    controller.recordNanos(ran);
                }
                if (trackRunning) {
                    runner = null;
                    runningJobs.remove(this);
                }
                if (threw) {
                    failed.increment();
                } else if (classify()) {
                    if (rec != null) {
                        rec.completed++;
                    } else {
                        completed.increment();
                    }
                }
            }
            return end;
        }

        /** Counts a failed or cancelled Future's outcome; true if the task completed normally. */
        private boolean classify() {
            if (task instanceof Future<?> f) {
                Future.State s;
                try {
                    s = f.state();
                } catch (RuntimeException e) {
                    s = Future.State.SUCCESS;
                }
                switch (s) {
                    case FAILED -> failed.increment();
                    case CANCELLED -> cancelled.increment();
                    default -> {
                        return true;
                    }
                }
                return false;
            }
            return true;
        }
    }

    // ---------------------------------------------------------------- stats

    /**
     * A snapshot of a {@link PowerFlowExecutor}: the flow controller's figures (as in
     * {@link PowerFlowController.Stats}) plus the executor's task accounting.
     *
     * @param rate            the rate in force, operations (task starts) per second
     * @param minRate         the floor of the adaptive rate, per second
     * @param maxRate         the ceiling of the adaptive rate, per second
     * @param targetP99       the latency setpoint, milliseconds
     * @param quantile        the quantile of the window that drives the loop
     * @param depth           tasks waiting in the queue
     * @param queueCapacity   the bound on the queue
     * @param submitted       tasks accepted: queued, or handed off at once by the fast path
     * @param admitted        tasks admitted by the rate limiter
     * @param recorded        run times recorded (one per task that ran)
     * @param dropped         offers the queue refused because it was full
     * @param observations    observations that stepped the control law
     * @param p99             the driving quantile of the run times in the current, partial window,
     *                        milliseconds; {@link Double#NaN} when the window is empty
     * @param saturated       whether the loop's output is pinned at {@code minRate} or
     *                        {@code maxRate} (under the PI law, the servo's clamp on its last step)
     * @param rejected        tasks refused at {@code execute}/{@code submit}: queue full (whatever
     *                        the {@link RejectionPolicy} did with them) or shut down
     * @param running         tasks running on the delegate now (a pool thread between two tasks
     *                        of a chain counts as running one)
     * @param completed       tasks that ran and returned normally
     * @param failed          tasks that ran and threw (for {@code submit}, whose {@code Future}
     *                        failed)
     * @param cancelled       tasks whose {@code Future} was cancelled before or while they ran
     * @param poolSize        the delegate's size in force ({@link PowerFlowExecutor#poolSize()}),
     *                        or -1
     * @param queueWaitP99    the p99 of the time tasks waited before they started (queue, rate
     *                        limiter, slot) in the current window, milliseconds; {@code NaN} when
     *                        empty
     * @param lastObservedP99 the quantile the last observation fed the control law (the last completed
     *                        window), milliseconds; {@code NaN} before the first
     * @param pausesExcused   pauses of the process (a dispatcher wake-up or a tick late by at
     *                        least max(half the target, 50 ms)) that excused a window from the
     *                        knee-aware law, which held the rate through it; 0 under the PI law
     */
    public record Stats(double rate, double minRate, double maxRate, double targetP99, double quantile,
            int depth, int queueCapacity, long submitted, long admitted, long recorded, long dropped,
            long observations, double p99, boolean saturated, long rejected, int running, long completed,
            long failed, long cancelled, int poolSize, double queueWaitP99, double lastObservedP99,
            long pausesExcused) {
    }

    // ---------------------------------------------------------------- builder

    /**
     * Builds a {@link PowerFlowExecutor}. The loop's options are inherited from
     * {@link io.github.performancehelpers.loop.FlowOptions}, with the names, defaults and
     * validation of {@link PowerFlowController.Builder} (invalid values are refused when set);
     * their rates are task starts per second, and in {@linkplain #fixedRate(boolean) fixed-rate}
     * mode {@code rate} is the rate and {@code minRate} is optional. The {@code ticker} also
     * times the tasks and the observation interval (the dispatcher still parks in real time: a
     * fake ticker is for driving the loop and the limiter from a test). When a
     * {@code globalLimiter} refuses while the local limiter would admit, the dispatcher retries
     * after 1 ms. The control law defaults to
     * {@link PowerFlowController.ControlLaw#KNEE_AWARE} unless a PI gain is set (see
     * {@link #defaultControlLaw(boolean)}). The executor's own options are validated when set and
     * again in {@link #build()}.
     *
     * <p><b>Thread safety.</b> Not thread-safe: one thread configures a builder.
     */
    public static final class Builder extends io.github.performancehelpers.loop.FlowOptions<Builder> {
        // Read by the executor's constructor; the loop's options among them are copied from
        // FlowOptions in build().
        private double rate = Double.NaN;
        private double targetP99 = 50;
        private double relativeAccuracy = 0.01;
        private Ticker ticker = Ticker.system();
        private RateLimiter globalLimiter;
        private RateChangeListener onRateChange;
        private Duration observeInterval = Duration.ofSeconds(1);
        private ExecutorService delegate;
        private Boolean ownsDelegate;
        private PoolSizer poolSizer;
        private int maxConcurrency;
        private RejectionPolicy rejectionPolicy = RejectionPolicy.ABORT;
        private boolean fixedRate;
        private ScheduledExecutorService scheduler;
        private String name;
        private MetricsCollector collector;
        private boolean jmx;
        private Duration staleAfter;

        private Builder() {
        }

        /**
         * The executor's control law when {@link #controlLaw} was not called:
         * {@link PowerFlowController.ControlLaw#KNEE_AWARE}, unless {@link #kp}, {@link #ki},
         * {@link #kd} or {@link #derivativeFilter} was set, in which case
         * {@link PowerFlowController.ControlLaw#PI} with those gains: whoever sets a gain gets
         * the law that uses it.
         *
         * <p>Why the executor differs from {@link PowerFlowController#builder()}, whose default
         * is the PI law with the default gains: those gains are absolute (tasks per second per
         * millisecond), fitted to a linear plant (about 400/s at a 30 ms target, see
         * {@code benchmarks/flowloop.md}), and a pool in front of a queueing downstream is
         * neither that scale nor linear. Its p99 is flat up to a knee, then steep; there the
         * default gains creep past the knee, spike and fall to the floor, over and over. The
         * knee-aware law's steps are relative to the rate in force and scheduled on the capacity
         * the downstream shows when it saturates, so it needs no gains (see
         * {@code benchmarks/closedloop.md}, section "The knee-aware control law"). The controller
         * keeps the PI default so that its behaviour with the default gains stays as
         * {@code benchmarks/flowloop.md} describes it.
         *
         * @param gainSet whether a PI gain was set
         * @return the law
         */
        @Override
        protected PowerFlowController.ControlLaw defaultControlLaw(boolean gainSet) {
            return gainSet ? PowerFlowController.ControlLaw.PI : PowerFlowController.ControlLaw.KNEE_AWARE;
        }

        /**
         * Publishes the executor's numbers in the shared collector
         * ({@link MetricsCollector#shared()}) when {@code true}; {@code false} (the default)
         * publishes nothing. They are unregistered when the executor terminates.
         *
         * @param observability whether to publish in the shared collector
         * @return this builder
         */
        public Builder observability(boolean observability) {
            this.collector = observability ? MetricsCollector.shared() : null;
            return this;
        }

        /**
         * Publishes the executor's numbers in the caller's collector, tagged {@code name} and
         * {@code type=executor}: gauges {@code power.flow.rate}, {@code .p99} (last observed),
         * {@code .depth}, {@code .pool.size}, {@code .running}, {@code .saturated} and
         * {@code .stale} (0 or 1); counters {@code power.flow.submitted}, {@code .admitted},
         * {@code .dropped}, {@code .rejected}, {@code .observations}, {@code .completed},
         * {@code .failed}, {@code .cancelled}, {@code .stale.episodes}.
         *
         * @param collector the collector
         * @return this builder
         * @throws NullPointerException if {@code collector} is null
         */
        public Builder observability(MetricsCollector collector) {
            this.collector = Objects.requireNonNull(collector, "collector");
            return this;
        }

        /**
         * Registers a {@link PowerFlowExecutorMXBean} in the platform MBean server as
         * {@code io.github.performancehelpers:type=PowerFlowExecutor,name=<name>} when
         * {@code true}, until the executor terminates. Default {@code false}. A name already
         * registered makes {@link #build()} throw; it is never overwritten.
         *
         * @param jmx whether to register the MXBean
         * @return this builder
         */
        public Builder jmx(boolean jmx) {
            this.jmx = jmx;
            return this;
        }

        /**
         * Sets how long the observation tick may go without running before the loop is reported
         * stale ({@link PowerFlowExecutor#isStale()}, the {@code power.flow.stale} gauge, a
         * {@code StaleLoop} JFR event). Default three times the observe interval; it must be
         * longer than the observe interval.
         *
         * @param staleAfter a positive duration
         * @return this builder
         * @throws NullPointerException     if {@code staleAfter} is null
         * @throws IllegalArgumentException if {@code staleAfter} is not positive
         */
        public Builder staleAfter(Duration staleAfter) {
            Objects.requireNonNull(staleAfter, "staleAfter");
            if (staleAfter.isNegative() || staleAfter.isZero()) {
                throw new IllegalArgumentException("staleAfter must be positive: " + staleAfter);
            }
            this.staleAfter = staleAfter;
            return this;
        }

        /**
         * Sets a listener called as {@code onRateChange(rate, previous)} when the loop moves the
         * rate, on the observation thread, after the delegate has been resized. A listener that
         * throws is reported and counted ({@link PowerFlowExecutor#callbackFailures()}) and stops
         * nothing.
         *
         * @param onRateChange the listener, or {@code null} for none
         * @return this builder
         */
        public Builder onRateChange(RateChangeListener onRateChange) {
            this.onRateChange = onRateChange;
            return this;
        }

        /**
         * Sets how often the loop observes. Default 1 s. Each observation passes the control law
         * the elapsed time measured with the ticker since the previous one, in milliseconds.
         *
         * @param observeInterval a positive duration
         * @return this builder
         * @throws NullPointerException     if {@code observeInterval} is null
         * @throws IllegalArgumentException if {@code observeInterval} is not positive
         */
        public Builder observeInterval(Duration observeInterval) {
            Objects.requireNonNull(observeInterval, "observeInterval");
            if (observeInterval.isNegative() || observeInterval.isZero()) {
                throw new IllegalArgumentException("observeInterval must be positive: " + observeInterval);
            }
            this.observeInterval = observeInterval;
            return this;
        }

        /**
         * Sets the executor the tasks run on. Default: one virtual thread per task under a
         * concurrency bound the loop resizes. A {@link ThreadPoolExecutor} is resized and bounded
         * (see the class description); any other executor is used as is. Not owned unless
         * {@link #ownsDelegate(boolean)} says so.
         *
         * @param delegate the delegate
         * @return this builder
         * @throws NullPointerException if {@code delegate} is null
         */
        public Builder delegate(ExecutorService delegate) {
            this.delegate = Objects.requireNonNull(delegate, "delegate");
            return this;
        }

        /**
         * Sets whether this executor owns the delegate: shuts it down when it terminates, and
         * stops it in {@link PowerFlowExecutor#shutdownNow()}. Default {@code true} for the default
         * delegate (which is always owned), {@code false} for a caller's.
         *
         * @param ownsDelegate whether the delegate is owned
         * @return this builder
         */
        public Builder ownsDelegate(boolean ownsDelegate) {
            this.ownsDelegate = ownsDelegate;
            return this;
        }

        /**
         * Sets the rate-to-size mapping for the delegate. Default
         * {@link PoolSizer#littlesLaw(Duration, int, int) littlesLaw(targetP99, 1, maxConcurrency)}:
         * {@code ceil(2 × rate × targetP99)}, within {@code [1, maxConcurrency]}.
         *
         * @param poolSizer the sizer
         * @return this builder
         * @throws NullPointerException if {@code poolSizer} is null
         */
        public Builder poolSizer(PoolSizer poolSizer) {
            this.poolSizer = Objects.requireNonNull(poolSizer, "poolSizer");
            return this;
        }

        /**
         * Sets the ceiling of the default pool sizer. Default 10,000 for the default delegate;
         * for a {@code ThreadPoolExecutor}, its maximum pool size at build time (at most 10,000).
         * Ignored when a {@link #poolSizer(PoolSizer)} is set.
         *
         * @param maxConcurrency tasks, {@code >= 1}
         * @return this builder
         * @throws IllegalArgumentException if {@code maxConcurrency < 1}
         */
        public Builder maxConcurrency(int maxConcurrency) {
            if (maxConcurrency < 1) {
                throw new IllegalArgumentException("maxConcurrency must be >= 1: " + maxConcurrency);
            }
            this.maxConcurrency = maxConcurrency;
            return this;
        }

        /**
         * Sets what happens to a task the full queue refuses. Default {@link RejectionPolicy#ABORT}.
         *
         * @param rejectionPolicy the policy
         * @return this builder
         * @throws NullPointerException if {@code rejectionPolicy} is null
         */
        public Builder rejectionPolicy(RejectionPolicy rejectionPolicy) {
            this.rejectionPolicy = Objects.requireNonNull(rejectionPolicy, "rejectionPolicy");
            return this;
        }

        /**
         * Turns the feedback off: the rate stays at {@code rate}, and the tick only rolls the
         * latency windows over. {@code minRate} is then optional. Default {@code false}.
         *
         * @param fixedRate whether the rate is fixed
         * @return this builder
         */
        public Builder fixedRate(boolean fixedRate) {
            this.fixedRate = fixedRate;
            return this;
        }

        /**
         * Sets the scheduler that runs the observation tick. Not owned: it is not shut down; the
         * executor cancels its tick when it terminates. Default: an owned single daemon thread
         * named {@code name-tick}.
         *
         * @param scheduler the scheduler
         * @return this builder
         * @throws NullPointerException if {@code scheduler} is null
         */
        public Builder scheduler(ScheduledExecutorService scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /**
         * Sets the name used for the executor's threads. Default {@code power-flow-N}.
         *
         * @param name a non-blank name
         * @return this builder
         * @throws NullPointerException     if {@code name} is null
         * @throws IllegalArgumentException if {@code name} is blank
         */
        public Builder name(String name) {
            Objects.requireNonNull(name, "name");
            if (name.isBlank()) {
                throw new IllegalArgumentException("name must not be blank: \"" + name + "\"");
            }
            this.name = name;
            return this;
        }

        /**
         * Builds and starts the executor: its dispatcher thread and its tick.
         *
         * @return a new executor
         * @throws IllegalStateException    if {@code rate} (or, unless fixed-rate, {@code minRate})
         *                                  was not set
         * @throws IllegalArgumentException if the options contradict each other, as for
         *                                  {@link PowerFlowController.Builder#build()}, or
         *                                  {@code staleAfter} is not longer than
         *                                  {@code observeInterval}
         * @throws IllegalStateException    if observability or JMX was asked and the name is
         *                                  already registered there by another live executor
         *                                  (nothing is started and nothing stays registered)
         */
        public PowerFlowExecutor build() {
            if (staleAfter != null && staleAfter.compareTo(observeInterval) <= 0) {
                throw new IllegalArgumentException("staleAfter must be > observeInterval: staleAfter="
                        + staleAfter + ", observeInterval=" + observeInterval);
            }
            PowerFlowController.Builder<Runnable> flow = PowerFlowController.builder();
            copyTo(flow); // the loop's options, with the law resolved by defaultControlLaw
            rate = rate();
            targetP99 = targetP99();
            relativeAccuracy = relativeAccuracy();
            ticker = ticker();
            globalLimiter = globalLimiter();
            if (fixedRate && Double.isNaN(minRate()) && !Double.isNaN(rate)) {
                flow.minRate(rate / 2); // never used: the loop does not run
            }
            // Validate the controller's options before anything is started.
            flow.onRateChange(null).build();
            return new PowerFlowExecutor(this, flow);
        }
    }
}
