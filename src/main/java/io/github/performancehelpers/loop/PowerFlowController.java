// Over 800 lines (about 1,000) because the public nested types Stats, ControlLaw and Builder live
// here (their names are API, about 290 lines), and close to half the file is Javadoc stating the
// seed's contract. The loop's parts are already split out: FlowAdmission (queue and limiter),
// RateLaw with PiLaw and KneeAwareLaw, ControllerObservability (metrics, MXBean).
package io.github.performancehelpers.loop;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import io.github.performancehelpers.PowerExecutors;
import io.github.performancehelpers.PowerFlowExecutor;
import io.github.performancehelpers.Ticker;
import io.github.performancehelpers.internal.Access;
import io.github.performancehelpers.internal.FlowEvents;
import io.github.performancehelpers.internal.Listeners;
import io.github.performancehelpers.internal.Preconditions;
import io.github.performancehelpers.internal.Publication;
import io.github.performancehelpers.limit.PowerGCRA;
import io.github.performancehelpers.metrics.MetricsCollector;
import io.github.performancehelpers.metrics.PowerFlowControllerMXBean;

/**
 * Admission, queueing and latency feedback in one closed loop.
 *
 * <p>The controller composes four parts, one per concern:
 *
 * <table class="striped">
 * <caption>What each part does here</caption>
 * <thead><tr><th>Concern</th><th>Part</th><th>Where it shows up</th></tr></thead>
 * <tbody>
 * <tr><td>Admission</td><td>{@link PowerGCRA}</td><td>{@link #admit()}, and the rate the loop sets</td></tr>
 * <tr><td>Queueing</td><td>{@link PowerQueue}</td><td>{@link #submit(Object)}, {@link #depth()}, {@link #dropped()}</td></tr>
 * <tr><td>Latency</td><td>{@link PowerHistogram}</td><td>{@link #record(double)}, {@link #p99()}</td></tr>
 * <tr><td>The loop</td><td>{@link RateLaw}</td><td>{@link #observe()}, {@link Stats#saturated()}</td></tr>
 * </tbody>
 * </table>
 *
 * <h2>The measurement sign</h2>
 * {@link #observe()} hands the control law the configured quantile (the p99 by default) of the
 * latencies recorded since the previous observation, in milliseconds, against the setpoint
 * {@link #targetP99()}: {@code error = targetP99 - p99}. A p99 above the target drives the rate
 * down; a p99 below it drives the rate up. Latency, and not queue depth, is the process variable:
 * a deep queue with healthy latency is a backlog to drain, a deep queue with unhealthy latency is
 * overload to shed, and depth alone cannot tell them apart.
 *
 * <h2>The control law</h2>
 * The controller holds one {@link RateLaw}, created by the {@link ControlLaw} the builder selects.
 * By default it is {@link ControlLaw#PI} ({@link PiLaw}: the {@link #servo()} with the builder's
 * gains). {@link ControlLaw#KNEE_AWARE} ({@link KneeAwareLaw}) takes relative steps scheduled on
 * the headroom under the target and on the capacity the downstream showed when it saturated, for
 * a downstream whose p99 is flat up to a knee and then steep; {@link PowerFlowExecutor} and
 * {@link PowerExecutors} use it by default. Another law is one class implementing
 * {@link RateLaw}, selected with {@code controlLaw(MyLaw::new)}.
 *
 * <h2>Why the window resets</h2>
 * Each observation reads the quantile of the samples recorded since the previous one and then
 * clears them ({@link PowerHistogram#snapshotAndReset()}). A cumulative window would keep judging
 * a rate that has already been cut against the traffic that justified the cut, so the rate would
 * never come back up. Consequently {@link #p99()} is the <em>current, partial</em> window, not a
 * lifetime figure.
 *
 * <h2>Reading the quantile</h2>
 * A window of {@code n} samples has no exact p99 when {@code n} is small, and which sample the
 * loop reads matters, because the loop holds that estimate at the target. The loop reads the
 * sample of 1-based rank {@code min(n, ceil(q × (n + 1)))} in ascending order: the order
 * statistic whose expected population quantile is {@code q} (the k-th smallest of {@code n}
 * samples lies, on average, at the population's {@code k / (n + 1)} quantile). For the p99 that
 * is the largest sample up to 198 samples, the second largest from 199 to 298, and so on.
 * {@link PowerHistogram#quantile(double)}'s lower quantile, 0-based rank
 * {@code floor(q × (n - 1))}, is biased low on small windows (of 130 samples it reads the third
 * largest, on average the population's p97.7), and held at the target it leaves the true p99
 * above it (see {@code docs/knee-aware-law.md}, section "Reading the quantile"). On a window
 * whose samples are all equal the two readings coincide. {@link #p99()}, {@link Stats#p99()} and
 * {@link #lastObservedP99()} read the same rank.
 *
 * <h2>What it does not do</h2>
 * It owns no timer: {@code dt} is an argument of {@link #observe(double)} (the same unit as the
 * gains: milliseconds by default), so a scheduled tick, a completion callback or a manual call all
 * drive the same arithmetic. {@link #close()} is therefore a state reset, not a teardown. It cannot
 * represent "admit nothing": the actuator is a GCRA, whose rate must be positive, so
 * {@code minRate} must be {@code > 0}; to stop admitting, stop calling {@link #admit()}.
 *
 * <h2>Numbers to alert on</h2>
 * {@link #dropped()}: a controller that drops has a rate too low for the offered load, and the
 * bounded queue makes a healthy-looking depth exactly what overload looks like.
 * {@link Stats#observations()}: a loop that has stopped being fed has a stale rate, which fails
 * silently in the direction that looks like working code.
 *
 * <h2>Observability</h2>
 * {@link Builder#observability(boolean)} publishes the numbers above in a {@link MetricsCollector}
 * (pulled: nothing is added to submit, admit or record), {@link Builder#jmx(boolean)} as a
 * {@link PowerFlowControllerMXBean}; {@link #close()} unregisters both. Each observation commits
 * the JFR events {@code io.github.performancehelpers.Observation}, {@code RateChange} (when the
 * rate moves) and {@code Drops} (when the interval had drops), subject to the JFR settings.
 *
 * <p><b>Thread safety.</b> All methods are thread-safe. Producers may {@link #submit} while
 * consumers {@link #admit} and {@link #record} and a tick {@link #observe}s, concurrently; no item,
 * sample or count is lost. Observations and resets are serialised by the loop lock; submit and
 * record never take it.
 *
 * @param <T> the type of queued item
 * @since 0.1.0
 */
public final class PowerFlowController<T> implements AutoCloseable {

    /*
     * Implementation notes. Admission is FlowAdmission's: admit() and the queue's clear in reset()
     * hold its admitLock (see there). Producers (offer) and recorders (histogram) never take a
     * lock. observe() and reset() hold loopLock, which guards the law and the servo (neither is
     * thread-safe). `rate` is volatile so readers see the rate in force without the lock.
     *
     * Length. About 900 lines, a third of them the public nested types whose names are API (Stats
     * with its accessors, ControlLaw, Builder); the admission side is FlowAdmission, the laws are
     * RateLaw's implementations, the shared options are FlowOptions.
     */

    static {
        // The executor's hooks, for the executor in another package (see Access).
        Access.register(new ControllerHooks());
    }

    private static final System.Logger LOG = System.getLogger(PowerFlowController.class.getName());

    private static final AtomicInteger CONTROLLER_NUMBER = new AtomicInteger();

    private final String name;
    /** What observability(...)/jmx(...) registered; null when nothing was asked. */
    private final Publication publication;
    /** queue.dropped() at the last Drops check, for the per-observation Drops JFR event. */
    private final AtomicLong dropsReported = new AtomicLong();

    private final double initialRate;
    private final double minRate;
    private final double maxRate;
    private final double targetP99;
    private final double quantile;
    private final double dt;
    private final Ticker ticker;
    private final RateChangeListener onRateChange;

    /** The queue, the limiters and the admission counters. */
    private final FlowAdmission<T> admission;
    private final PowerGCRA limiter;
    private final PowerQueue<T> queue;
    private final PowerHistogram latency;
    /** The servo the builder's gains configure; the PI law steps it. Guarded by {@code loopLock}. */
    private final PowerServo servo;
    private final ControlLaw controlLaw;
    /** The one control law. Guarded by {@code loopLock} (its read-outs are not). */
    private final RateLaw law;
    /** Ticker reading at the last observation (or construction, or reset). Guarded by {@code loopLock}. */
    private long lastObserveNanos;
    /** Items offered (submitted plus refused) up to the previous observe(). Guarded by {@code loopLock}. */
    private long lastOffered;

    private final ReentrantLock loopLock = new ReentrantLock();

    /**
     * The rate in force, operations per second. Guarded by {@code loopLock} for writes; read
     * without it.
     */
    private volatile double rate;

    /**
     * The quantile the last observation read, ms; NaN before the first. Guarded by
     * {@code loopLock} for writes; read without it.
     */
    private volatile double lastObservedP99 = Double.NaN;

    private final LongAdder recorded = new LongAdder();
    /** Items refused before the queue by an executor's door, offered all the same ({@link #countDeclined()}). */
    private final LongAdder declined = new LongAdder();
    private final AtomicLong observations = new AtomicLong();
    private final AtomicLong callbackFailures = new AtomicLong();
    /** The longest pause of the process noted since the last observation, ns ({@link #noteStall}). */
    private final AtomicLong stallNanos = new AtomicLong();
    /** The start-load statistics noted for the next observation ({@link #noteStartLoad}); NaN when none. */
    private volatile double slowLoadZ = Double.NaN;
    private volatile double runLoadZ = Double.NaN;
    /** The next observation holds the rate without stepping the law (see {@link #holdNextStep(boolean)}). */
    private volatile boolean holdNext;
    /** With {@link #holdNext}: the law forgets the windows it gathered (see {@link #holdNextStep(boolean)}). */
    private volatile boolean forgetNext;

    private PowerFlowController(Builder<T> b) {
        this.initialRate = b.rate;
        this.minRate = b.minRate;
        this.maxRate = b.maxRate;
        this.targetP99 = b.targetP99;
        this.quantile = b.quantile;
        this.dt = b.dt;
        this.ticker = b.ticker;
        this.onRateChange = b.onRateChange;
        PowerGCRA gcra = PowerGCRA.builder().rate(b.rate).burst(b.burst).ticker(b.ticker).build();
        this.admission = new FlowAdmission<>(gcra, b.globalLimiter, b.queueCapacity);
        this.limiter = admission.limiter;
        this.queue = admission.queue;
        this.latency = PowerHistogram.builder().relativeAccuracy(b.relativeAccuracy).build();
        this.servo = PowerServo.builder()
                .kp(b.kp).ki(b.ki).kd(b.kd).derivativeFilter(b.derivativeFilter)
                .setpoint(b.targetP99).min(b.minRate).max(b.maxRate).dt(b.dt)
                .build();
        this.controlLaw = b.resolvedControlLaw();
        this.law = Objects.requireNonNull(
                controlLaw.create(new RateLaw.Setup(b.targetP99, b.quantile, b.minRate, b.maxRate, servo)),
                "the control law created null");
        this.lastObserveNanos = b.ticker.read();
        this.rate = b.rate;
        this.name = b.name != null ? b.name : "power-flow-controller-" + CONTROLLER_NUMBER.incrementAndGet();
        this.publication = b.collector != null || b.jmx ? ControllerObservability.publish(this, b.collector, b.jmx) : null;
    }

    /**
     * Returns a builder. {@code rate} and {@code minRate} are required.
     *
     * @param <T> the type of queued item
     * @return a new builder
     */
    public static <T> Builder<T> builder() {
        return new Builder<>();
    }

    // ---------------------------------------------------------------- producer side

    /**
     * Offers an item to the bounded queue. Does <em>not</em> consult the rate limiter: admission
     * happens at {@link #admit()}.
     *
     * @param item the item
     * @return {@code true} if queued; {@code false} if the queue is full, in which case
     *     {@link #dropped()} has grown by one
     * @throws NullPointerException if {@code item} is null
     */
    public boolean submit(T item) {
        Objects.requireNonNull(item, "item");
        if (queue.offer(item)) {
            return true; // counted by the queue's tail (see submittedCount())
        }
        return false;
    }

    // ---------------------------------------------------------------- consumer side

    /**
     * Takes the next item if the rate limiter admits one now.
     *
     * <p>Admission is consumed only when there is an item to hand out: an empty queue returns
     * empty without touching the limiter.
     *
     * @return the next item, or empty when the queue is empty or the limiter refuses
     */
    public Optional<T> admit() {
        return admission.admit();
    }

    /**
     * Records one operation's latency.
     *
     * @param millis the latency in milliseconds, finite and {@code >= 0}
     * @throws IllegalArgumentException if {@code millis} is negative or not finite (nothing is
     *     recorded)
     */
    public void record(double millis) {
        latency.record(millis);
        recorded.increment();
    }

    /**
     * Records one operation's latency.
     *
     * @param latency the latency, non-negative
     * @throws NullPointerException     if {@code latency} is null
     * @throws IllegalArgumentException if {@code latency} is negative (nothing is recorded)
     */
    public void record(Duration latency) {
        this.latency.record(Objects.requireNonNull(latency, "latency"));
        recorded.increment();
    }

    /**
     * Records one operation's latency.
     *
     * @param nanos the latency in nanoseconds, {@code >= 0}
     * @throws IllegalArgumentException if {@code nanos} is negative (nothing is recorded)
     */
    public void recordNanos(long nanos) {
        latency.recordNanos(nanos);
        recorded.increment();
    }

    // ---------------------------------------------------------------- the loop

    /**
     * Advances the loop by the configured default {@code dt}. See {@link #observe(double)}.
     *
     * @return the rate in force after the observation, operations per second
     */
    public double observe() {
        return observe(dt);
    }

    /**
     * Advances the loop: reads the configured quantile of the latencies recorded since the
     * previous observation (as the class description's "Reading the quantile" says), clears that
     * window, steps the control law with it ({@link RateLaw#step(RateLaw.Window)}), and puts the
     * new rate into the rate limiter.
     *
     * <p>A window with no samples has no quantile: the law is not stepped, the rate is
     * unchanged, and {@link Stats#observations()} does not grow (nothing was observed).
     * {@code onRateChange} is called only when the rate actually moves; a listener that throws is
     * reported and counted and does not undo the change.
     *
     * @param dt the time since the previous observation, in the gains' unit (milliseconds with
     *     the default gains), finite and {@code > 0}; a law may ignore it (the knee-aware law
     *     reads the window's length from the ticker)
     * @return the rate in force after the observation, operations per second
     * @throws IllegalArgumentException if {@code dt} is not finite or not {@code > 0}
     */
    public double observe(double dt) {
        Preconditions.requireFinitePositive("dt", dt);
        loopLock.lock();
        try {
            flushDropEvent();
            PowerHistogram.Snapshot window = latency.snapshotAndReset();
            long offered = submittedCount() + queue.dropped() + declined.sum();
            long demand = offered - lastOffered;
            lastOffered = offered;
            long stall = stallNanos.getAndSet(0);
            double slowZ = slowLoadZ;
            double runZ = runLoadZ;
            slowLoadZ = Double.NaN;
            runLoadZ = Double.NaN;
            boolean hold = holdNext;
            boolean forget = forgetNext;
            holdNext = false;
            forgetNext = false;
            if (window.count() == 0) {
                lastObserveNanos = ticker.read();
                return rate;
            }
            double measured = RateLaw.reading(window, quantile);
            lastObservedP99 = measured;
            double seconds = windowSeconds();
            if (hold) {
                if (forget) {
                    law.forgetWindows();
                }
                return rate;
            }
            double previous = rate;
            double next = law.step(new RateLaw.Window(window, measured, previous, dt, seconds, demand, stall / 1e6,
                    slowZ, runZ));
            observations.incrementAndGet();
            FlowEvents.observation(name, measured, targetP99 - measured, next, previous, law.saturated(next), dt,
                    stall / 1e6, law.excusedLast());
            if (next != previous) {
                applyRate(next, previous);
            }
            return next;
        } finally {
            loopLock.unlock();
        }
    }

    /** The window's ticker time, seconds; one when the clock did not move. Called under {@code loopLock}. */
    private double windowSeconds() {
        long now = ticker.read();
        long elapsed = now - lastObserveNanos;
        lastObserveNanos = now;
        // A clock that did not move (a test's fake ticker) counts as one second.
        return elapsed > 0 ? elapsed / 1e9 : 1.0;
    }

    /** Puts a new rate in force: limiter, field, JFR event, listener. Called under {@code loopLock}. */
    private void applyRate(double next, double previous) {
        limiter.setRate(next);
        rate = next;
        FlowEvents.rateChange(name, next, previous);
        notifyRateChange(next, previous);
    }

    private void notifyRateChange(double next, double previous) {
        Listeners.rateChanged(onRateChange, next, previous, callbackFailures, LOG, "");
    }

    /**
     * Discards the queue, the latency window and the learned rate: the queue is emptied, the
     * servo, law ({@link RateLaw#reset()}) and limiter state cleared, and the rate returns to the
     * configured starting rate ({@code onRateChange} is called if that moves it). The monotonic
     * counters in {@link Stats} (submitted, admitted, recorded, dropped, observations,
     * pausesExcused) are kept, as metrics counters are.
     */
    public void reset() {
        loopLock.lock();
        try {
            admission.clear();
            latency.reset();
            stallNanos.set(0);
            slowLoadZ = Double.NaN;
            runLoadZ = Double.NaN;
            holdNext = false;
            forgetNext = false;
            lastObservedP99 = Double.NaN;
            servo.reset();
            law.reset();
            lastObserveNanos = ticker.read();
            limiter.reset();
            double previous = rate;
            if (previous != initialRate) {
                limiter.setRate(initialRate);
                rate = initialRate;
                notifyRateChange(initialRate, previous);
            }
        } finally {
            loopLock.unlock();
        }
    }

    /** Same as {@link #reset()}. */
    public void clear() {
        reset();
    }

    /**
     * A state reset, as {@link #reset()}: the controller owns no timer or thread, so there is
     * nothing to tear down, and it remains usable afterwards. It also unregisters what
     * {@link Builder#observability(boolean)} and {@link Builder#jmx(boolean)} registered (once;
     * the controller is not published again).
     */
    @Override
    public void close() {
        reset();
        if (publication != null) {
            publication.close();
        }
    }

    /** Commits a Drops JFR event if there were drops since the last check (called per observation). */
    void flushDropEvent() {
        long total = queue.dropped();
        long prev = dropsReported.get();
        if (total > prev && dropsReported.compareAndSet(prev, total)) {
            FlowEvents.drops(name, total - prev, total);
        }
    }

    /**
     * Returns the name used for this controller's metrics tags, its JMX ObjectName and its JFR
     * events.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    // ---------------------------------------------------------------- read-outs

    /** {@return the rate in force, operations per second} */
    public double rate() {
        return rate;
    }

    /** {@return the floor of the adaptive rate, operations per second, {@code > 0}} */
    public double minRate() {
        return minRate;
    }

    /**
     * {@return the ceiling of the adaptive rate, operations per second}
     * {@link Double#POSITIVE_INFINITY} when unbounded.
     */
    public double maxRate() {
        return maxRate;
    }

    /** {@return the latency setpoint, milliseconds} */
    public double targetP99() {
        return targetP99;
    }

    /** {@return the quantile of the window that drives the loop, in {@code (0, 1]}} {@code 0.99} is the p99. */
    public double quantile() {
        return quantile;
    }

    /** {@return the number of queued items} */
    public int depth() {
        return queue.size();
    }

    /** {@return the bound on the queue} */
    public int queueCapacity() {
        return queue.capacity();
    }

    /**
     * {@return how many submissions were refused because the queue was full, since construction}
     * The number to alert on.
     */
    public long dropped() {
        return queue.dropped();
    }

    /**
     * Returns the configured quantile (the p99 by default) of the <em>current, partial</em>
     * window: the samples recorded since the last {@link #observe}.
     *
     * @return the quantile in milliseconds, or empty when nothing has been recorded in the window
     */
    public OptionalDouble p99() {
        double q = RateLaw.reading(latency.snapshot(), quantile);
        return Double.isNaN(q) ? OptionalDouble.empty() : OptionalDouble.of(q);
    }

    /**
     * Returns the quantile that the most recent observation handed the control law: the p99 of
     * the last <em>completed</em> window, where {@link #p99()} is the current partial one.
     *
     * @return milliseconds, or {@link Double#NaN} before the first observation (and after
     *     {@link #reset()})
     */
    public double lastObservedP99() {
        return lastObservedP99;
    }

    /**
     * {@return the composed rate limiter (admission)} Its rate is set by the loop; setting it by
     * hand is overwritten at the next observation that moves the rate.
     */
    public PowerGCRA limiter() {
        return limiter;
    }

    /** {@return the control law's selection ({@link Builder#controlLaw(ControlLaw)})} */
    public ControlLaw controlLaw() {
        return controlLaw;
    }

    /**
     * {@return the composed servo, configured with the builder's gains} The {@link ControlLaw#PI}
     * law steps it; other laws leave it alone (under {@link ControlLaw#KNEE_AWARE} it is never
     * stepped). It is stepped under the controller's lock; do not step it directly while the
     * controller is in use.
     */
    public PowerServo servo() {
        return servo;
    }

    /**
     * {@return the composed latency histogram (the current window)} For anyone who wants
     * {@link PowerHistogram#snapshot()} or {@link PowerHistogram#toJson()}.
     */
    public PowerHistogram latency() {
        return latency;
    }

    /** {@return the composed queue} Removing items from it directly bypasses admission. */
    public PowerQueue<T> queue() {
        return queue;
    }

    /** {@return the ticker the controller and its limiter read} */
    public Ticker ticker() {
        return ticker;
    }

    /** {@return how many {@code onRateChange} calls threw, since construction} */
    public long callbackFailures() {
        return callbackFailures.get();
    }

    /**
     * Returns a consistent-enough snapshot of the loop's numbers (the set is not one atomic cut;
     * the counters are striped, as {@link java.util.concurrent.atomic.LongAdder} is, so each is
     * exact whenever no update to it is in progress).
     *
     * @return the statistics
     */
    public Stats stats() {
        double r = rate;
        return new Stats(new Stats.Settings(minRate, maxRate, targetP99, quantile, queue.capacity()),
                new Stats.Counts(submittedCount(), admittedCount(), recordedCount(), queue.dropped(),
                        observationCount()),
                r, queue.size(), RateLaw.reading(latency.snapshot(), quantile), loopSaturated(r), controlLaw,
                law.stats());
    }

    // ---------------------------------------------------------------- executor hooks (see ControllerHooks)

    /** The admission side, for the executor's fast paths. */
    FlowAdmission<T> admission() {
        return admission;
    }

    /** Whether the loop's output is pinned with {@code r} in force ({@link RateLaw#saturated(double)}). */
    boolean loopSaturated(double r) {
        return law.saturated(r);
    }

    /** Same as {@link #loopSaturated(double)} for the rate in force. */
    boolean loopSaturated() {
        return loopSaturated(rate);
    }

    /** Whether the law is trimming ({@link RateLaw.Stats#trimming()}). Read without the loop lock: for tests. */
    boolean kneeTrimming() {
        return law.stats().trimming();
    }

    // Single counters, for the metrics and MXBean read-outs: stats() takes a histogram snapshot
    // for its p99, which a counter read has no use for.

    long submittedCount() {
        return admission.submittedCount();
    }

    long admittedCount() {
        return admission.admittedCount();
    }

    long recordedCount() {
        return recorded.sum();
    }

    /** Pauses of the process that excused a window ({@link RateLaw.Stats#pausesExcused()}). */
    long pausesExcused() {
        return law.stats().pausesExcused();
    }

    /** The numbers the law owns ({@link RateLaw#stats()}), for the executor's read-outs. */
    RateLaw.Stats lawStats() {
        return law.stats();
    }

    long observationCount() {
        return observations.get();
    }

    /**
     * Starts the servo at the rate in force (bumpless), so that the PI law's first step from a
     * healthy window does not fall to the floor; for an executor (the controller's own cold start
     * is the seed's).
     */
    void startAtRate() {
        loopLock.lock();
        try {
            servo.presetOutput(rate);
        } finally {
            loopLock.unlock();
        }
    }

    /** Counts an item an executor refused before the queue (too late for the target): it was offered. */
    void countDeclined() {
        declined.increment();
    }

    /** Counts {@code n} latencies recorded in a histogram the executor merges into {@link #latency()}. */
    void countRecorded(long n) {
        recorded.add(n);
    }

    /**
     * Notes a pause of the process: a thread that paces admissions, the executor's tick or the
     * JVM's pause watch woke {@code nanos} later than it asked to. The law sees the longest pause of
     * each window ({@link RateLaw.Window#pauseMs()}).
     */
    void noteStall(long nanos) {
        stallNanos.accumulateAndGet(nanos, Math::max);
    }

    /** {@return the longest pause noted since the last observation, ns} Not cleared. */
    long stallNanos() {
        return stallNanos.get();
    }

    /**
     * Notes the start-load statistics of the window about to be observed (an executor's tick,
     * just before {@link #observe}); the law sees them as {@link RateLaw.Window#slowLoadZ()} and
     * {@link RateLaw.Window#runLoadZ()}.
     */
    void noteStartLoad(double slowZ, double runZ) {
        slowLoadZ = slowZ;
        runLoadZ = runZ;
    }

    /**
     * The next {@link #observe} reads and clears its window, as {@link #lastObservedP99()} says,
     * but holds the rate: the law is not stepped with it, nor does it count in
     * {@link Stats#observations()}. An executor's tick calls it when its cap on the tasks in flight
     * acts on the window or bound it (one actuator a window: the cut brings the run time down by
     * itself, and a rate cut on the same reading would stay below the downstream's capacity for
     * the law's climb; a window the cap limited reads as saturated at the cap's throughput).
     *
     * @param forgetWindows whether the cap moved: the law then forgets the windows it gathered
     *                      ({@link RateLaw#forgetWindows()}; the knee-aware law's sparse windows
     *                      merged so far), which ran with other calls in flight (a second of
     *                      calls queued inside a downstream before a cut, merged with the windows
     *                      after it, read over the target and cut the rate under the capacity)
     */
    void holdNextStep(boolean forgetWindows) {
        forgetNext = forgetWindows;
        holdNext = true;
    }

    /**
     * The loop's statistics, built from parts: the configuration ({@link Settings}), the
     * monotonic counters ({@link Counts}), the state of the moment, and the numbers the control
     * law owns ({@link RateLaw.Stats}). Every number also has an accessor here.
     *
     * <p><b>Thread safety.</b> Immutable.
     *
     * @param settings   the bounds, setpoint, quantile and queue bound
     * @param counts     the monotonic counters since construction
     * @param rate       the rate in force, operations per second
     * @param depth      queued items
     * @param p99        the driving quantile of the current partial window, milliseconds;
     *                   {@link Double#NaN} when the window is empty
     * @param saturated  whether the loop's output is pinned at {@code minRate} or {@code maxRate}
     *                   ({@link RateLaw#saturated(double)})
     * @param controlLaw the control law ({@link Builder#controlLaw(ControlLaw)})
     * @param law        the numbers the control law owns ({@link RateLaw#stats()})
     */
    public record Stats(Settings settings, Counts counts, double rate, int depth, double p99, boolean saturated,
            ControlLaw controlLaw, RateLaw.Stats law) {

        /**
         * The loop's configuration.
         *
         * <p><b>Thread safety.</b> Immutable.
         *
         * @param minRate       the floor of the adaptive rate, operations per second
         * @param maxRate       the ceiling of the adaptive rate, operations per second
         * @param targetP99     the latency setpoint, milliseconds
         * @param quantile      the quantile that drives the loop
         * @param queueCapacity the bound on the queue
         */
        public record Settings(double minRate, double maxRate, double targetP99, double quantile, int queueCapacity) {
        }

        /**
         * The loop's monotonic counters, since construction ({@link #reset()} keeps them).
         *
         * <p><b>Thread safety.</b> Immutable.
         *
         * @param submitted    items accepted into the queue (by {@link #submit}, or offered to
         *                     {@link #queue()} directly, or handed off directly by an executor)
         * @param admitted     items handed out by admission
         * @param recorded     latency samples recorded
         * @param dropped      submissions refused because the queue was full
         * @param observations observations that stepped the control law
         */
        public record Counts(long submitted, long admitted, long recorded, long dropped, long observations) {
        }

        /** {@return the floor of the adaptive rate, operations per second} */
        public double minRate() {
            return settings.minRate();
        }

        /** {@return the ceiling of the adaptive rate, operations per second} */
        public double maxRate() {
            return settings.maxRate();
        }

        /** {@return the latency setpoint, milliseconds} */
        public double targetP99() {
            return settings.targetP99();
        }

        /** {@return the quantile that drives the loop} */
        public double quantile() {
            return settings.quantile();
        }

        /** {@return the bound on the queue} */
        public int queueCapacity() {
            return settings.queueCapacity();
        }

        /** {@return the items accepted into the queue or handed off directly} */
        public long submitted() {
            return counts.submitted();
        }

        /** {@return the items handed out by admission} */
        public long admitted() {
            return counts.admitted();
        }

        /** {@return the latency samples recorded} */
        public long recorded() {
            return counts.recorded();
        }

        /** {@return the submissions refused because the queue was full} */
        public long dropped() {
            return counts.dropped();
        }

        /** {@return the observations that stepped the control law} */
        public long observations() {
            return counts.observations();
        }

        /**
         * {@return the law's smoothed reading of the last observation, milliseconds}
         * {@link Double#NaN} before the first observation and for a law without one (the PI law);
         * see {@link KneeAwareLaw#stats()}.
         */
        public double smoothedP99() {
            return law.smoothedP99();
        }

        /**
         * {@return the downstream's capacity as the law estimates it, per second}
         * {@link Double#POSITIVE_INFINITY} before any estimate under the knee-aware law;
         * {@link Double#NaN} for a law without one (the PI law); see {@link KneeAwareLaw#stats()}.
         */
        public double capacityEstimate() {
            return law.capacityEstimate();
        }

        /**
         * {@return the pauses of the process that excused a window, since construction}
         * Pauses are noted by a {@code PowerFlowExecutor}, and excused by the knee-aware law (see
         * {@link KneeAwareLaw}, "Pauses"); 0 under the PI law and for a controller no executor
         * drives.
         */
        public long pausesExcused() {
            return law.pausesExcused();
        }

        /**
         * {@return whether the law found the target unreachable} Cutting the rate did not lower
         * the reading (a latency the load does not set), so the law serves the load instead of
         * cutting; see {@link KneeAwareLaw}, "Unreachable target". Always {@code false} under the
         * PI law.
         */
        public boolean targetUnreachable() {
            return law.targetUnreachable();
        }
    }

    /**
     * Selects the control law of a controller: creates its {@link RateLaw} from the controller's
     * {@link RateLaw.Setup}, once per controller. {@link #PI} is the default of
     * {@link PowerFlowController#builder()}; {@code PowerFlowExecutor.builder()} and
     * {@code PowerExecutors} default to {@link #KNEE_AWARE}. A new law is selected with its
     * constructor, {@code controlLaw(MyLaw::new)}.
     *
     * <p><b>Thread safety.</b> {@link #create(RateLaw.Setup)} may be called from any thread; the
     * two constants are immutable.
     *
     * @since 0.1.0
     */
    @FunctionalInterface
    public interface ControlLaw {

        /** The PI(D) law on the controller's servo, the builder's gains: {@link PiLaw}. */
        ControlLaw PI = PiLaw.CONTROL_LAW;

        /**
         * The knee-aware law: relative steps scheduled on the headroom and the measured capacity,
         * specified item by item ("Smoothing", "Capacity", ..., "Pauses") by {@link KneeAwareLaw}.
         */
        ControlLaw KNEE_AWARE = KneeAwareLaw.CONTROL_LAW;

        /**
         * Creates the law for one controller.
         *
         * @param setup the controller's setpoint, bounds and servo
         * @return a new law, not null
         */
        RateLaw create(RateLaw.Setup setup);
    }

    /**
     * Builds a {@link PowerFlowController}: the loop's options ({@link FlowOptions}), with the
     * control law {@link ControlLaw#PI} unless {@link #controlLaw(ControlLaw)} selects another,
     * and the controller's own (its name, publication, {@code dt} and rate-change listener).
     * Values are validated when set and again, across fields, in {@link #build()}.
     *
     * <p><b>Thread safety.</b> Not thread-safe: one thread configures a builder.
     *
     * @param <T> the type of queued item
     */
    public static final class Builder<T> extends FlowOptions<Builder<T>> {
        private double dt = 1;
        private RateChangeListener onRateChange;
        private String name;
        private MetricsCollector collector;
        private boolean jmx;

        private Builder() {
        }

        /**
         * Sets the name used for the metrics tags, the JMX ObjectName and the JFR events. Default
         * {@code power-flow-controller-N}.
         *
         * @param name a non-blank name
         * @return this builder
         * @throws NullPointerException     if {@code name} is null
         * @throws IllegalArgumentException if {@code name} is blank
         */
        public Builder<T> name(String name) {
            Objects.requireNonNull(name, "name");
            if (name.isBlank()) {
                throw new IllegalArgumentException("name must not be blank: \"" + name + "\"");
            }
            this.name = name;
            return this;
        }

        /**
         * Publishes the controller's numbers in the shared collector
         * ({@link MetricsCollector#shared()}) when {@code true}; {@code false} (the default)
         * publishes nothing. {@link PowerFlowController#close()} unregisters them.
         *
         * @param observability whether to publish in the shared collector
         * @return this builder
         */
        public Builder<T> observability(boolean observability) {
            this.collector = observability ? MetricsCollector.shared() : null;
            return this;
        }

        /**
         * Publishes the controller's numbers in the caller's collector: gauges
         * {@code power.flow.rate}, {@code .p99}, {@code .depth}, {@code .saturated}; counters
         * {@code power.flow.submitted}, {@code .admitted}, {@code .dropped}, {@code .recorded},
         * {@code .observations}; tags {@code name} and {@code type=controller}.
         *
         * @param collector the collector
         * @return this builder
         * @throws NullPointerException if {@code collector} is null
         */
        public Builder<T> observability(MetricsCollector collector) {
            this.collector = Objects.requireNonNull(collector, "collector");
            return this;
        }

        /**
         * Registers a {@link PowerFlowControllerMXBean} in the platform MBean server as
         * {@code io.github.performancehelpers:type=PowerFlowController,name=<name>} when
         * {@code true}. Default {@code false}. A name already registered makes {@link #build()}
         * throw; it is never overwritten.
         *
         * @param jmx whether to register the MXBean
         * @return this builder
         */
        public Builder<T> jmx(boolean jmx) {
            this.jmx = jmx;
            return this;
        }

        /**
         * Sets the default sample interval used by {@link #observe()}, in the gains' unit. Default
         * 1.
         *
         * @param dt finite and {@code > 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code dt} is not finite or not {@code > 0}
         */
        public Builder<T> dt(double dt) {
            this.dt = Preconditions.requireFinitePositive("dt", dt);
            return this;
        }

        /**
         * Sets the listener called as {@code onRateChange(rate, previous)} when the rate moves.
         *
         * @param onRateChange the listener, or {@code null} for none
         * @return this builder
         */
        public Builder<T> onRateChange(RateChangeListener onRateChange) {
            this.onRateChange = onRateChange;
            return this;
        }

        /**
         * Builds the controller.
         *
         * @return a new controller
         * @throws IllegalStateException    if {@code rate} or {@code minRate} was not set
         * @throws IllegalArgumentException if the options contradict each other:
         *     {@code minRate < maxRate} and {@code minRate <= rate <= maxRate} are required
         * @throws IllegalStateException    if observability or JMX was asked and the name is
         *     already registered there by another live instance (nothing stays registered)
         */
        public PowerFlowController<T> build() {
            if (Double.isNaN(rate)) {
                throw new IllegalStateException("rate is required");
            }
            if (Double.isNaN(minRate)) {
                throw new IllegalStateException("minRate is required (and must be > 0)");
            }
            if (!(minRate < maxRate)) {
                throw new IllegalArgumentException(
                        "minRate must be < maxRate: minRate=" + minRate + ", maxRate=" + maxRate);
            }
            if (rate < minRate || rate > maxRate) {
                throw new IllegalArgumentException("rate must be within [minRate, maxRate]: rate="
                        + rate + ", minRate=" + minRate + ", maxRate=" + maxRate);
            }
            return new PowerFlowController<>(this);
        }
    }
}
