package io.github.performancehelpers.loop;

/**
 * A control law of a {@link PowerFlowController}: what turns each observed window of latencies
 * into the next rate. The controller reads the window, hands it to its one law as a
 * {@link Window}, and puts the rate the law returns into its rate limiter; it never asks which
 * law it holds.
 *
 * <p>A law is created per controller by a {@link PowerFlowController.ControlLaw}, from the
 * controller's {@link Setup}. A new law is one class implementing this interface with a
 * constructor taking a {@link Setup}, selected with one builder call:
 * {@code builder.controlLaw(MyLaw::new)}. The two provided are {@link PiLaw}
 * ({@link PowerFlowController.ControlLaw#PI}) and {@link KneeAwareLaw}
 * ({@link PowerFlowController.ControlLaw#KNEE_AWARE}).
 *
 * <p><b>Thread safety.</b> A law need not be thread-safe for {@link #step(Window)} and
 * {@link #reset()}: the controller calls them under its loop lock, one at a time.
 * {@link #saturated(double)}, {@link #stats()} and {@link #excusedLast()} are also called without
 * that lock (by metrics, JMX and {@link PowerFlowController#stats()}), so they must not fail when
 * called concurrently with a step; a slightly stale answer is acceptable.
 *
 * @since 0.1.0
 */
public interface RateLaw {

    /**
     * Takes one non-empty window and returns the next rate.
     *
     * @param window the window and its context
     * @return the next rate, operations per second, within {@code [minRate, maxRate]} of the
     *     {@link Setup}
     */
    double step(Window window);

    /**
     * Whether the law's output is pinned at a bound when {@code rate} is in force.
     *
     * @param rate the rate in force, operations per second
     * @return whether the output is saturated
     */
    boolean saturated(double rate);

    /**
     * Returns the law to its initial state, as {@link PowerFlowController#reset()} does to the
     * controller; monotonic counters (such as {@link Stats#pausesExcused()}) are kept.
     */
    void reset();

    /**
     * Returns the numbers this law owns, for {@link PowerFlowController.Stats}. Default
     * {@link Stats#NONE}: a law that keeps none of them.
     *
     * @return the law's statistics
     */
    default Stats stats() {
        return Stats.NONE;
    }

    /**
     * Whether the window of the last {@link #step(Window)} was excused because of a pause of the
     * process ({@link Window#pauseMs()}), for the {@code Observation} JFR event. Default
     * {@code false}: a law that reads every window.
     *
     * @return whether the last window was excused
     */
    default boolean excusedLast() {
        return false;
    }

    /**
     * Forgets the windows the law has gathered but not yet acted on: they ran under other
     * conditions than the next ones will (a {@link io.github.performancehelpers.PowerFlowExecutor}'s
     * cap on the tasks in flight moved, and they ran with another number in flight). Called
     * instead of {@link #step(Window)} for a window whose rate is held. Default: nothing, for a
     * law that reads each window alone.
     *
     * @since 0.1.0
     */
    default void forgetWindows() {
    }

    /**
     * Reads the quantile {@code q} of a window as the controller reads it
     * ({@link PowerFlowController}, "Reading the quantile"): the order statistic whose expected population quantile is
     * {@code q}, the sample of 1-based rank {@code min(n, ceil(q × (n + 1)))} of the {@code n}
     * sorted samples, within the histogram's relative accuracy (the largest sample is exact). For
     * a law that reads merged windows, as {@link KneeAwareLaw} does.
     *
     * @param samples the samples, milliseconds
     * @param q       the quantile, in {@code (0, 1]}
     * @return milliseconds; {@link Double#NaN} for an empty window
     */
    static double reading(PowerHistogram.Snapshot samples, double q) {
        long n = samples.count();
        if (n == 0) {
            return Double.NaN;
        }
        // 0-based. The epsilon keeps a q × (n + 1) that is an integer in exact arithmetic
        // (0.5 × 4) on that integer when rounding leaves it a hair above.
        long rank = Math.min(n, (long) Math.ceil(q * (n + 1) - 1e-9)) - 1;
        if (rank >= n - 1) {
            return samples.max();
        }
        // The histogram's lower quantile reads 0-based rank floor(p × (n - 1)); this p lands on
        // `rank` exactly.
        return samples.quantile((rank + 0.5) / (n - 1));
    }

    /**
     * What a law is created with: the controller's setpoint, bounds and servo.
     *
     * <p><b>Thread safety.</b> Immutable (the servo is not: see {@link PowerServo}).
     *
     * @param targetP99 the latency setpoint, milliseconds
     * @param quantile  the quantile of the window that drives the loop, in {@code (0, 1]}
     * @param minRate   the floor of the rate, operations per second
     * @param maxRate   the ceiling of the rate, operations per second (may be infinite)
     * @param servo     the controller's servo, configured with the builder's gains
     *                  ({@code kp}, {@code ki}, {@code kd}, {@code derivativeFilter}), {@code dt},
     *                  the setpoint and the bounds; a law that does not step it leaves it alone
     *                  ({@link PowerFlowController#servo()} returns it)
     */
    record Setup(double targetP99, double quantile, double minRate, double maxRate, PowerServo servo) {
    }

    /**
     * One observed window, as the controller hands it to {@link #step(Window)}.
     *
     * <p><b>Thread safety.</b> Immutable (a {@link PowerHistogram.Snapshot} is too).
     *
     * @param samples the window's latencies, milliseconds; not empty
     * @param reading the window's driving quantile, milliseconds, as
     *                {@link RateLaw#reading(PowerHistogram.Snapshot, double)} reads it
     * @param rate    the rate in force during the window, operations per second
     * @param dt      the {@code dt} passed to {@link PowerFlowController#observe(double)}, in the
     *                gains' unit
     * @param seconds the window's length on the controller's ticker, seconds, {@code > 0} (one
     *                second when the ticker did not move)
     * @param demand  the items offered during the window: accepted into the queue, handed off
     *                directly, or refused because the queue was full
     * @param pauseMs the longest pause of the process noted during the window, milliseconds (0
     *                when none was noted; only a {@code PowerFlowExecutor} notes them)
     * @param slowLoadZ whether the load set the latency, measured without moving the rate: how
     *                many standard errors the mean concurrency at which the window's calls over
     *                the target started lies above the mean of all its calls (about 0 when slow
     *                calls strike at any concurrency, large when they are the ones that queued);
     *                NaN when not measured (only a {@code PowerFlowExecutor} measures it, and only
     *                with 10 or more calls over the target)
     * @param runLoadZ whether the calls queued, measured without moving the rate: how many
     *                standard errors the mean run time of the calls that started at the highest
     *                concurrency (the previous window's mean plus a standard deviation or more)
     *                lies above the mean of all (about 0 when the run time does not depend on how
     *                many calls are in flight, large when those that started with the most in
     *                flight waited); NaN when not measured (only a {@code PowerFlowExecutor}
     *                measures it, with 10 or more such calls)
     */
    record Window(PowerHistogram.Snapshot samples, double reading, double rate, double dt, double seconds,
            long demand, double pauseMs, double slowLoadZ, double runLoadZ) {

        /**
         * A window without the start-load statistics ({@code slowLoadZ} and {@code runLoadZ} NaN).
         *
         * @param samples the window's latencies, milliseconds; not empty
         * @param reading the window's driving quantile, milliseconds
         * @param rate    the rate in force during the window, operations per second
         * @param dt      the {@code dt} passed to {@link PowerFlowController#observe(double)}
         * @param seconds the window's length on the controller's ticker, seconds, {@code > 0}
         * @param demand  the items offered during the window
         * @param pauseMs the longest pause of the process noted during the window, milliseconds
         */
        public Window(PowerHistogram.Snapshot samples, double reading, double rate, double dt, double seconds,
                long demand, double pauseMs) {
            this(samples, reading, rate, dt, seconds, demand, pauseMs, Double.NaN, Double.NaN);
        }
    }

    /**
     * The numbers a law owns, as {@link PowerFlowController.Stats} reports them.
     *
     * <p><b>Thread safety.</b> Immutable.
     *
     * @param smoothedP99      the smoothed reading the last step acted on, milliseconds;
     *                         {@link Double#NaN} before the first step or for a law without one
     * @param capacityEstimate the downstream's capacity as the law estimates it, per second;
     *                         {@link Double#NaN} for a law without one
     * @param pausesExcused    the pauses of the process that excused a window, since
     *                         construction; 0 for a law that excuses none
     * @param trimming         whether the law is trimming (moving the rate once per block of
     *                         windows); {@code false} for a law that does not trim
     * @param targetUnreachable whether the law found that cutting the rate does not lower the
     *                         reading (a latency the load does not set), and so serves the load
     *                         instead of cutting; {@code false} for a law that does not detect it
     */
    record Stats(double smoothedP99, double capacityEstimate, long pausesExcused, boolean trimming,
            boolean targetUnreachable) {

        /** The statistics of a law that keeps none: NaN, NaN, 0, {@code false}, {@code false}. */
        public static final Stats NONE = new Stats(Double.NaN, Double.NaN, 0, false, false);
    }
}
