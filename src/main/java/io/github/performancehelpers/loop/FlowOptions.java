package io.github.performancehelpers.loop;

import java.time.Duration;
import java.util.Objects;
import io.github.performancehelpers.Ticker;
import io.github.performancehelpers.internal.Preconditions;
import io.github.performancehelpers.limit.PowerRateLimit;
import io.github.performancehelpers.limit.RateLimiter;

/**
 * The options of a closed flow loop, declared once for every builder that configures a
 * {@link PowerFlowController}: {@link PowerFlowController.Builder} and
 * {@code PowerFlowExecutor.Builder} extend it, so each takes these options with the same names,
 * defaults, validation and messages. Every setter validates its value when called (an invalid
 * value throws and leaves the option unchanged) and returns the builder itself; the builder's
 * {@code build()} checks the options against each other.
 *
 * <p>The rates are operations per second (tasks per second for an executor), the latencies
 * milliseconds. {@code rate} and {@code minRate} are required; every other option has a default.
 *
 * <p><b>The control law.</b> {@link #controlLaw(PowerFlowController.ControlLaw)} selects it
 * explicitly. Without that call the builder's {@link #defaultControlLaw(boolean)} decides, told
 * whether a PI gain ({@link #kp}, {@link #ki}, {@link #kd}, {@link #derivativeFilter}) was set:
 * {@link PowerFlowController.ControlLaw#PI} for a controller's builder;
 * {@link PowerFlowController.ControlLaw#KNEE_AWARE}, or the PI law once a gain is set, for an
 * executor's. The gains configure the controller's {@link PowerServo}, which the PI law steps.
 *
 * <p><b>Thread safety.</b> Not thread-safe: one thread configures a builder.
 *
 * @param <B> the builder's own type, which every setter returns
 * @since 0.1.0
 */
public abstract class FlowOptions<B extends FlowOptions<B>> {

    /**
     * The longest duration any option of these builders (and of {@code PowerFlowExecutor.Builder})
     * takes: 10,000 days (about 27 years), for a target, an interval or a timeout alike. A longer
     * one means nothing for a latency loop, and the bound leaves the nanosecond arithmetic room
     * (a duration past about 292 years has no {@code long} of nanoseconds at all); it is refused
     * by name, with an {@link IllegalArgumentException}.
     */
    public static final Duration MAX_DURATION = Duration.ofDays(10_000);

    /**
     * The largest {@link #queueCapacity(int)}: {@link PowerQueue#MAX_CAPACITY}, 2^20 (1,048,576)
     * tasks. The queue's ring is allocated up front, about 12 bytes a slot (12 MB at this bound).
     */
    public static final int MAX_QUEUE_CAPACITY = PowerQueue.MAX_CAPACITY;

    /** {@link #MAX_DURATION} in milliseconds, the bound on {@code targetP99(double)}. */
    private static final double MAX_MILLIS = Preconditions.millis(MAX_DURATION);

    // Read by PowerFlowController's constructor and copied by copyTo.
    double rate = Double.NaN;
    double burst = 0;
    double minRate = Double.NaN;
    double maxRate = Double.POSITIVE_INFINITY;
    double targetP99 = 50;
    double quantile = 0.99;
    int queueCapacity = 100;
    double kp = 0.05;
    double ki = 0.001;
    double kd = 0;
    double derivativeFilter = 0;
    double relativeAccuracy = 0.01;
    /** Set by {@link #controlLaw(PowerFlowController.ControlLaw)}; null: {@link #defaultControlLaw(boolean)}. */
    PowerFlowController.ControlLaw controlLaw;
    /** Whether a PI gain was set, for {@link #defaultControlLaw(boolean)}. */
    boolean gainSet;
    Ticker ticker = Ticker.system();
    RateLimiter globalLimiter;

    /** For the builders that extend this class. */
    protected FlowOptions() {
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * Sets the starting sustained rate. Required.
     *
     * @param rate operations per second, finite and {@code > 0}
     * @return this builder
     * @throws IllegalArgumentException if {@code rate} is not finite or not {@code > 0}
     */
    public B rate(double rate) {
        this.rate = Preconditions.requireFinitePositive("rate", rate);
        return self();
    }

    /**
     * Sets the GCRA burst tolerance: how many operations may run back to back before the
     * sustained rate applies. Default 0; fractional values floor.
     *
     * @param burst operations, finite and {@code >= 0}
     * @return this builder
     * @throws IllegalArgumentException if {@code burst} is negative or not finite
     */
    public B burst(double burst) {
        this.burst = Preconditions.requireFiniteNonNegative("burst", burst);
        return self();
    }

    /**
     * Sets the floor of the adaptive rate. Required, and it must be {@code > 0}: the actuator is
     * a GCRA, whose rate must be positive, so "admit nothing" cannot be represented.
     *
     * @param minRate operations per second, finite and {@code > 0}
     * @return this builder
     * @throws IllegalArgumentException if {@code minRate} is not finite or not {@code > 0}
     */
    public B minRate(double minRate) {
        this.minRate = Preconditions.requireFinitePositive("minRate", minRate);
        return self();
    }

    /**
     * Sets the ceiling of the adaptive rate. Default unbounded, but required in practice: an
     * unbounded controller output is not a limit.
     *
     * @param maxRate operations per second, {@code > 0} (may be
     *     {@link Double#POSITIVE_INFINITY})
     * @return this builder
     * @throws IllegalArgumentException if {@code maxRate} is NaN or not {@code > 0}
     */
    public B maxRate(double maxRate) {
        if (!(maxRate > 0)) {
            throw new IllegalArgumentException("maxRate must be > 0: " + maxRate);
        }
        this.maxRate = maxRate;
        return self();
    }

    /**
     * Sets the latency setpoint the loop drives the quantile toward. Default 50 ms.
     *
     * @param targetP99 milliseconds, finite, {@code > 0} and at most {@link #MAX_DURATION}
     * @return this builder
     * @throws IllegalArgumentException if {@code targetP99} is not finite, not {@code > 0}, or over
     *                                  {@link #MAX_DURATION}
     */
    public B targetP99(double targetP99) {
        Preconditions.requireFinitePositive("targetP99", targetP99);
        if (targetP99 > MAX_MILLIS) {
            throw new IllegalArgumentException("targetP99 must be at most " + MAX_DURATION + " (" + MAX_MILLIS
                    + " ms): " + targetP99);
        }
        this.targetP99 = targetP99;
        return self();
    }

    /**
     * Sets the latency setpoint the loop drives the quantile toward. Default 50 ms.
     *
     * @param targetP99 a positive duration, at most {@link #MAX_DURATION}
     * @return this builder
     * @throws NullPointerException     if {@code targetP99} is null
     * @throws IllegalArgumentException if {@code targetP99} is not positive, or over
     *                                  {@link #MAX_DURATION}
     */
    public B targetP99(Duration targetP99) {
        Objects.requireNonNull(targetP99, "targetP99");
        if (targetP99.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException("targetP99 must be at most " + MAX_DURATION + ": " + targetP99);
        }
        return targetP99(Preconditions.millis(targetP99));
    }

    /**
     * Sets which quantile of the window drives the loop. Default 0.99 (the p99); 0.5 makes it a
     * median controller.
     *
     * @param quantile a value in {@code (0, 1]}
     * @return this builder
     * @throws IllegalArgumentException if {@code quantile} is outside {@code (0, 1]}
     */
    public B quantile(double quantile) {
        if (!(quantile > 0 && quantile <= 1)) {
            throw new IllegalArgumentException("quantile must be in (0, 1]: " + quantile);
        }
        this.quantile = quantile;
        return self();
    }

    /**
     * Sets the bound on the waiting queue. Default 100. The queue's ring is allocated when the
     * controller or executor is built, about 12 bytes a slot, hence the bound
     * {@link #MAX_QUEUE_CAPACITY}.
     *
     * @param queueCapacity items, in {@code [1, MAX_QUEUE_CAPACITY]}
     * @return this builder
     * @throws IllegalArgumentException if {@code queueCapacity < 1} or
     *                                  {@code queueCapacity > MAX_QUEUE_CAPACITY}
     */
    public B queueCapacity(int queueCapacity) {
        if (queueCapacity < 1) {
            throw new IllegalArgumentException("queueCapacity must be >= 1: " + queueCapacity);
        }
        if (queueCapacity > MAX_QUEUE_CAPACITY) {
            throw new IllegalArgumentException("queueCapacity must be at most MAX_QUEUE_CAPACITY ("
                    + MAX_QUEUE_CAPACITY + "): " + queueCapacity);
        }
        this.queueCapacity = queueCapacity;
        return self();
    }

    /**
     * Sets the proportional gain of the PI law. Default 0.05. Counts as a gain set for
     * {@link #defaultControlLaw(boolean)}.
     *
     * @param kp (operations per second) per millisecond of latency error, finite and
     *     {@code >= 0}
     * @return this builder
     * @throws IllegalArgumentException if {@code kp} is negative or not finite
     */
    public B kp(double kp) {
        this.kp = Preconditions.requireFiniteNonNegative("kp", kp);
        gainSet = true;
        return self();
    }

    /**
     * Sets the integral gain of the PI law. Default 0.001, and it has to be non-zero: with
     * {@code ki = 0} a window that meets its target exactly produces a zero error and therefore
     * a zero output, which the floor turns into {@code minRate}. Counts as a gain set for
     * {@link #defaultControlLaw(boolean)}.
     *
     * @param ki the integral gain, finite and {@code >= 0}
     * @return this builder
     * @throws IllegalArgumentException if {@code ki} is negative or not finite
     */
    public B ki(double ki) {
        this.ki = Preconditions.requireFiniteNonNegative("ki", ki);
        gainSet = true;
        return self();
    }

    /**
     * Sets the derivative gain of the PI law, applied to the measurement. Default 0: a p99 over
     * a short window is noisy. Counts as a gain set for {@link #defaultControlLaw(boolean)}.
     *
     * @param kd the derivative gain, finite and {@code >= 0}
     * @return this builder
     * @throws IllegalArgumentException if {@code kd} is negative or not finite
     */
    public B kd(double kd) {
        this.kd = Preconditions.requireFiniteNonNegative("kd", kd);
        gainSet = true;
        return self();
    }

    /**
     * Sets the first-order low-pass coefficient on the PI law's derivative. Default 0; ignored
     * when {@code kd} is 0. Counts as a gain set for {@link #defaultControlLaw(boolean)}.
     *
     * @param derivativeFilter a value in {@code [0, 1)}
     * @return this builder
     * @throws IllegalArgumentException if {@code derivativeFilter} is outside {@code [0, 1)}
     */
    public B derivativeFilter(double derivativeFilter) {
        if (!(derivativeFilter >= 0 && derivativeFilter < 1)) {
            throw new IllegalArgumentException("derivativeFilter must be in [0, 1): " + derivativeFilter);
        }
        this.derivativeFilter = derivativeFilter;
        gainSet = true;
        return self();
    }

    /**
     * Selects the control law, overriding {@link #defaultControlLaw(boolean)}:
     * {@link PowerFlowController.ControlLaw#PI} (the servo, with the gains above),
     * {@link PowerFlowController.ControlLaw#KNEE_AWARE} (which ignores the gains and reads the
     * ticker for each window's length), or any other law's factory, such as
     * {@code MyLaw::new}.
     *
     * @param controlLaw the law
     * @return this builder
     * @throws NullPointerException if {@code controlLaw} is null
     */
    public B controlLaw(PowerFlowController.ControlLaw controlLaw) {
        this.controlLaw = Objects.requireNonNull(controlLaw, "controlLaw");
        return self();
    }

    /**
     * Sets the latency histograms' relative accuracy. Default 0.01; a smaller value means more
     * buckets.
     *
     * @param relativeAccuracy a value in {@code (0, 1)}
     * @return this builder
     * @throws IllegalArgumentException if {@code relativeAccuracy} is outside {@code (0, 1)}
     */
    public B relativeAccuracy(double relativeAccuracy) {
        if (!(relativeAccuracy > 0 && relativeAccuracy < 1)) {
            throw new IllegalArgumentException("relativeAccuracy must be in (0, 1): " + relativeAccuracy);
        }
        this.relativeAccuracy = relativeAccuracy;
        return self();
    }

    /**
     * Sets the clock the limiter and the loop read. Default {@link Ticker#system()}.
     *
     * @param ticker the ticker
     * @return this builder
     * @throws NullPointerException if {@code ticker} is null
     */
    public B ticker(Ticker ticker) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        return self();
    }

    /**
     * Adds a limiter that every admission must also pass, such as a fleet-wide ceiling shared by
     * several instances. The loop still sets only the local rate. Admission consumes from both or
     * from neither ({@link PowerRateLimit}).
     *
     * @param globalLimiter the extra limiter, or {@code null} for none
     * @return this builder
     */
    public B globalLimiter(RateLimiter globalLimiter) {
        this.globalLimiter = globalLimiter;
        return self();
    }

    /**
     * The control law used when {@link #controlLaw(PowerFlowController.ControlLaw)} was not
     * called. This implementation returns {@link PowerFlowController.ControlLaw#PI}, the
     * controller's default, whether or not a gain was set.
     *
     * @param gainSet whether {@link #kp}, {@link #ki}, {@link #kd} or {@link #derivativeFilter}
     *     was called
     * @return the law, not null
     */
    protected PowerFlowController.ControlLaw defaultControlLaw(boolean gainSet) {
        return PowerFlowController.ControlLaw.PI;
    }

    /** The law the controller is built with: the one selected, else this builder's default. */
    final PowerFlowController.ControlLaw resolvedControlLaw() {
        if (controlLaw != null) {
            return controlLaw;
        }
        return Objects.requireNonNull(defaultControlLaw(gainSet), "defaultControlLaw");
    }

    /**
     * Copies these options into {@code target}, with the control law resolved here: the law
     * selected, else this builder's {@link #defaultControlLaw(boolean)}.
     *
     * @param target the builder to configure
     * @throws NullPointerException if {@code target} is null
     */
    protected final void copyTo(FlowOptions<?> target) {
        Objects.requireNonNull(target, "target");
        target.rate = rate;
        target.burst = burst;
        target.minRate = minRate;
        target.maxRate = maxRate;
        target.targetP99 = targetP99;
        target.quantile = quantile;
        target.queueCapacity = queueCapacity;
        target.kp = kp;
        target.ki = ki;
        target.kd = kd;
        target.derivativeFilter = derivativeFilter;
        target.relativeAccuracy = relativeAccuracy;
        target.controlLaw = resolvedControlLaw();
        target.gainSet = gainSet;
        target.ticker = ticker;
        target.globalLimiter = globalLimiter;
    }

    /**
     * Returns the starting rate set, for a subclass's own use.
     *
     * @return operations per second; {@link Double#NaN} when not set
     */
    protected final double rate() {
        return rate;
    }

    /**
     * Returns the ceiling of the rate set, for a subclass's own use.
     *
     * @return operations per second; {@link Double#POSITIVE_INFINITY} when not set
     */
    protected final double maxRate() {
        return maxRate;
    }

    /**
     * Returns the floor of the rate set, for a subclass's own use.
     *
     * @return operations per second; {@link Double#NaN} when not set
     */
    protected final double minRate() {
        return minRate;
    }

    /**
     * Returns the latency setpoint, for a subclass's own use.
     *
     * @return milliseconds
     */
    protected final double targetP99() {
        return targetP99;
    }

    /**
     * Returns the histograms' relative accuracy, for a subclass's own use.
     *
     * @return a value in {@code (0, 1)}
     */
    protected final double relativeAccuracy() {
        return relativeAccuracy;
    }

    /**
     * Returns the ticker, for a subclass's own use.
     *
     * @return the ticker
     */
    protected final Ticker ticker() {
        return ticker;
    }

    /**
     * Returns the extra limiter, for a subclass's own use.
     *
     * @return the limiter, or {@code null} for none
     */
    protected final RateLimiter globalLimiter() {
        return globalLimiter;
    }
}
