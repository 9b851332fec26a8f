package io.github.performancehelpers.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;
import io.github.performancehelpers.limit.PowerGCRA;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.loop.PowerHistogram;
import io.github.performancehelpers.loop.PowerServo;
import io.github.performancehelpers.testsupport.FakeTicker;

/**
 * The seed's "premise, measured" experiment as a deterministic simulation: a {@link PowerFlowController}
 * (or, for the control arm, a bare {@link PowerGCRA}) admits work into a closed-form plant on a
 * {@link FakeTicker}, and the loop is observed once per tick.
 *
 * <h2>The plant</h2>
 * {@code latency(rate) = baseMs + (rate / cap) × slopeMs} = {@code 5 ms + (rate / cap) × 90 ms}, noise-free.
 * {@code cap} is 400 for the first half of the run and 150 for the second, so the loop has to
 * reach 111.1/s and then track 41.7/s (the rates at which the plant's latency equals the 30 ms
 * target).
 *
 * <h2>One tick (dt, 1000 ms by default)</h2>
 * <ol>
 * <li>The rate in force is the controller's {@code rate()} (for the control arm, its fixed GCRA
 *     rate). <b>This is the "rate" of the latency formula</b>: every operation admitted during the
 *     tick records {@code latency(rateInForce)}. It is constant within a tick because the rate only
 *     moves at {@code observe}.</li>
 * <li>Admission is event-driven on the fake clock: the clock is advanced to exactly the instant
 *     the limiter's {@code retryAfterNanos(1)} names, {@code admit()} is called, and this repeats
 *     until the next admission would fall at or after the end of the tick. Polling on a fixed grid
 *     would make the GCRA (burst 0, which forgets lateness by design) run slow at rates near the
 *     grid's resolution; jumping to the exact instant admits {@code rate × dt} operations per tick
 *     (± 1).</li>
 * <li>Offered load is above any rate the loop may choose: the queue is kept full (work arrives at
 *     {@code 2 × maxRate}, and arrivals that find it full are shed and counted as
 *     {@code dropped}).</li>
 * <li>At the end of the tick the clock is moved to the tick boundary and {@code observe(dt)} is
 *     called: the p99 of the tick's samples drives the servo.</li>
 * </ol>
 * Because every sample of a tick has the same latency, the histogram's p99 of a window is exact
 * ({@link PowerHistogram} clamps quantiles to the exact min and max), so the relative accuracy of
 * the histogram does not quantise this plant.
 *
 * <p>Not thread-safe; every call builds its own controller and clock.
 */
public final class FlowLoopSimulation {

    private FlowLoopSimulation() {
    }

    // ------------------------------------------------------------------ configuration

    /**
     * One row of the table.
     *
     * @param label the row's label
     * @param kp    proportional gain, (ops/s) per ms of error
     * @param ki    integral gain
     * @param fixed the control arm: a GCRA at {@link Config#initialRate()} and no loop at all
     * @param law   the controller's control law
     */
    public record Arm(String label, double kp, double ki, boolean fixed, PowerFlowController.ControlLaw law) {
        /**
         * An arm on the PI law.
         *
         * @param label the row's label
         * @param kp    proportional gain
         * @param ki    integral gain
         * @param fixed the control arm
         */
        public Arm(String label, double kp, double ki, boolean fixed) {
            this(label, kp, ki, fixed, PowerFlowController.ControlLaw.PI);
        }

        /**
         * The knee-aware law (no gains).
         *
         * @return the arm
         */
        public static Arm kneeAware() {
            return new Arm("knee-aware law", 0, 0, false, PowerFlowController.ControlLaw.KNEE_AWARE);
        }

        /**
         * A closed-loop arm.
         *
         * @param label the row's label
         * @param kp    proportional gain
         * @param ki    integral gain
         * @return the arm
         */
        public static Arm loop(String label, double kp, double ki) {
            return new Arm(label, kp, ki, false);
        }

        /**
         * The control arm: a fixed rate, no feedback.
         *
         * @return the arm
         */
        public static Arm fixedRate() {
            return new Arm("fixed, no feedback", 0, 0, true);
        }
    }

    /** The seed's table, in its order. */
    public static final List<Arm> SEED_ARMS = List.of(
            Arm.fixedRate(),
            Arm.loop("kp 0.05, ki 0.001", 0.05, 0.001),
            Arm.loop("kp 0.1, ki 0.0005", 0.1, 0.0005),
            Arm.loop("kp 0.1, ki 0.002", 0.1, 0.002),
            Arm.loop("kp 0.2, ki 0.004", 0.2, 0.004),
            Arm.loop("kp 0.5, ki 0.05", 0.5, 0.05),
            Arm.loop("kp 0.2, ki 0.01", 0.2, 0.01),
            Arm.loop("ki 0 (P only)", 0.05, 0));

    /**
     * The experiment's parameters.
     *
     * @param targetMs         the latency setpoint (30 ms)
     * @param baseMs           the plant's latency at zero rate (5 ms)
     * @param slopeMs          the plant's extra latency at {@code rate = cap} (90 ms)
     * @param capBefore        the plant's capacity for the first half (400)
     * @param capAfter         the plant's capacity for the second half (150)
     * @param ticksPerHalf     ticks before the capacity drop, and after it (30 each)
     * @param dtMs             the tick and the {@code dt} passed to {@code observe} (1000 ms)
     * @param initialRate      the starting rate of every arm, and the control arm's fixed rate
     *                         (111.1/s, the cap-400 equilibrium)
     * @param minRate          the clamp's floor (5/s)
     * @param maxRate          the clamp's ceiling (800/s)
     * @param relativeAccuracy the controller's histogram accuracy (0.01, the default)
     * @param settleBand       relative band around the new equilibrium that counts as settled (0.05)
     * @param reversalWindow   how many final observations the reversal count looks at (20)
     */
    public record Config(double targetMs, double baseMs, double slopeMs, double capBefore, double capAfter,
            int ticksPerHalf, double dtMs, double initialRate, double minRate, double maxRate,
            double relativeAccuracy, double settleBand, int reversalWindow) {

        /** The seed's experiment. */
        public static final Config SEED = new Config(30, 5, 90, 400, 150, 30, 1000, 400.0 * 25 / 90,
                5, 800, 0.01, 0.05, 20);

        /**
         * Validates the parameters.
         *
         * @throws IllegalArgumentException if any is out of range
         */
        public Config {
            if (!(targetMs > baseMs) || !(slopeMs > 0) || !(capBefore > 0) || !(capAfter > 0)
                    || ticksPerHalf < 1 || !(dtMs > 0) || !(minRate > 0) || !(minRate < maxRate)
                    || !(initialRate >= minRate && initialRate <= maxRate) || !(settleBand > 0)
                    || reversalWindow < 2) {
                throw new IllegalArgumentException("invalid flowloop config: " + new StringBuilder()
                        .append("targetMs=").append(targetMs).append(", ticksPerHalf=").append(ticksPerHalf)
                        .append(", dtMs=").append(dtMs).append(", minRate=").append(minRate)
                        .append(", maxRate=").append(maxRate).append(", initialRate=").append(initialRate));
            }
        }

        /**
         * Returns this configuration with another tick length.
         *
         * @param dtMs the tick, ms
         * @return the new configuration
         */
        public Config withDt(double dtMs) {
            return new Config(targetMs, baseMs, slopeMs, capBefore, capAfter, ticksPerHalf, dtMs, initialRate,
                    minRate, maxRate, relativeAccuracy, settleBand, reversalWindow);
        }

        /**
         * Returns this configuration with other plant capacities and half length.
         *
         * @param before       capacity for the first half
         * @param after        capacity for the second half
         * @param ticksPerHalf ticks per half
         * @return the new configuration
         */
        public Config withPlant(double before, double after, int ticksPerHalf) {
            return new Config(targetMs, baseMs, slopeMs, before, after, ticksPerHalf, dtMs, initialRate,
                    minRate, maxRate, relativeAccuracy, settleBand, reversalWindow);
        }

        /**
         * The plant's latency at a rate.
         *
         * @param rate ops/s
         * @param cap  the plant's capacity
         * @return ms
         */
        public double latency(double rate, double cap) {
            return baseMs + rate / cap * slopeMs;
        }

        /**
         * The rate at which the plant meets the target.
         *
         * @param cap the plant's capacity
         * @return ops/s
         */
        public double equilibrium(double cap) {
            return cap * (targetMs - baseMs) / slopeMs;
        }
    }

    // ------------------------------------------------------------------ results

    /**
     * One tick of one arm.
     *
     * @param index      0-based tick number in the run
     * @param cap        the plant's capacity during the tick
     * @param rateBefore the rate in force during the tick, ops/s
     * @param admitted   operations admitted (and recorded) during the tick
     * @param p99        the p99 the tick's window fed the loop, ms (NaN if nothing was admitted)
     * @param rateAfter  the rate after the tick's observation
     * @param saturated  the controller's {@code stats().saturated()} after the observation
     *                   (false for the control arm)
     */
    public record Tick(int index, double cap, double rateBefore, long admitted, double p99, double rateAfter,
            boolean saturated) {
    }

    /**
     * One arm's run and the table's columns.
     *
     * @param arm        the arm
     * @param config     the configuration
     * @param ticks      every tick, in order
     * @param dropped    arrivals shed because the queue was full (offered load above capacity)
     * @param finalRate  the rate in force at the end of the run
     * @param eqError    {@code |finalRate − equilibrium(capAfter)|}
     * @param settles    ticks after the drop until the rate in force is first within the settle
     *                   band; empty for "never"
     * @param transientPeak peak p99 above target from the drop to the settle tick (the whole second
     *                   half if it never settles), ms, {@code >= 0}
     * @param overshoot  peak p99 above target after the settle tick, ms, {@code >= 0} (0 if it
     *                   never settles; for the control arm, the peak over the whole second half)
     * @param meanP99    the mean of the per-tick p99 over the second half, ms
     * @param reversals  direction changes of the rate over the last {@code reversalWindow}
     *                   observations
     */
    public record Result(Arm arm, Config config, List<Tick> ticks, long dropped, double finalRate, double eqError,
            OptionalInt settles, double transientPeak, double overshoot, double meanP99, int reversals) {

        /**
         * The ticks after the capacity drop.
         *
         * @return the second half
         */
        public List<Tick> afterDrop() {
            return ticks.subList(config.ticksPerHalf(), ticks.size());
        }
    }

    // ------------------------------------------------------------------ the run

    /**
     * Runs one arm for {@code 2 × ticksPerHalf} ticks (capacity drop at the half).
     *
     * @param config the experiment
     * @param arm    the arm
     * @return the ticks and the table's columns
     */
    public static Result run(Config config, Arm arm) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(arm, "arm");
        return summarize(config, arm, runTicks(config, arm, 2 * config.ticksPerHalf(), true));
    }

    /** A plant driver: either the controller or the bare limiter. */
    private interface Loop {
        double rate();

        boolean admitOne();

        long waitNanos();

        void record(double ms);

        /** Ends the tick: returns the window's p99 (NaN when empty). */
        double endTick(double dtMs);

        boolean saturated();

        long dropped();

        void offer(long n);
    }

    private static final class ControllerLoop implements Loop {
        final PowerFlowController<Integer> flow;
        long dropped;

        ControllerLoop(Config c, Arm arm, FakeTicker t) {
            flow = PowerFlowController.<Integer>builder()
                    .rate(c.initialRate()).minRate(c.minRate()).maxRate(c.maxRate())
                    .targetP99(c.targetMs()).kp(arm.kp()).ki(arm.ki()).controlLaw(arm.law())
                    .relativeAccuracy(c.relativeAccuracy()).queueCapacity(100).ticker(t)
                    .build();
        }

        @Override
        public double rate() {
            return flow.rate();
        }

        @Override
        public boolean admitOne() {
            return flow.admit().isPresent();
        }

        @Override
        public long waitNanos() {
            return flow.limiter().retryAfterNanos(1);
        }

        @Override
        public void record(double ms) {
            flow.record(ms);
        }

        @Override
        public double endTick(double dtMs) {
            long before = flow.stats().observations();
            flow.observe(dtMs);
            return flow.stats().observations() > before ? flow.lastObservedP99() : Double.NaN;
        }

        @Override
        public boolean saturated() {
            return flow.stats().saturated();
        }

        @Override
        public long dropped() {
            return flow.dropped();
        }

        @Override
        public void offer(long n) {
            for (long i = 0; i < n; i++) {
                // When the queue is full the arrival is shed, and the controller counts it.
                flow.submit(1);
            }
        }
    }

    private static final class FixedLoop implements Loop {
        final PowerGCRA limiter;
        final PowerHistogram window;

        FixedLoop(Config c, FakeTicker t) {
            limiter = PowerGCRA.builder().rate(c.initialRate()).burst(0).ticker(t).build();
            window = PowerHistogram.builder().relativeAccuracy(c.relativeAccuracy()).build();
        }

        @Override
        public double rate() {
            return limiter.rate();
        }

        @Override
        public boolean admitOne() {
            return limiter.tryConsume(1);
        }

        @Override
        public long waitNanos() {
            return limiter.retryAfterNanos(1);
        }

        @Override
        public void record(double ms) {
            window.record(ms);
        }

        @Override
        public double endTick(double dtMs) {
            PowerHistogram.Snapshot s = window.snapshotAndReset();
            return s.count() == 0 ? Double.NaN : s.quantile(0.99);
        }

        @Override
        public boolean saturated() {
            return false;
        }

        @Override
        public long dropped() {
            return 0; // no queue: the control arm only paces
        }

        @Override
        public void offer(long n) {
            // The control arm has no queue: there is always work waiting.
        }
    }

    private static Run runTicks(Config c, Arm arm, int tickCount, boolean dropHalfway) {
        FakeTicker clock = new FakeTicker();
        Loop loop = arm.fixed() ? new FixedLoop(c, clock) : new ControllerLoop(c, arm, clock);
        long dtNanos = Math.round(c.dtMs() * 1e6);
        double offeredPerNano = 2 * c.maxRate() / 1e9;
        loop.offer(100); // start with a full queue
        long lastArrival = 0;
        double arrivalCarry = 0;
        List<Tick> ticks = new ArrayList<>(tickCount);
        for (int k = 0; k < tickCount; k++) {
            double cap = dropHalfway && k >= c.ticksPerHalf() ? c.capAfter() : c.capBefore();
            long tickEnd = (k + 1L) * dtNanos;
            double rate = loop.rate();
            double latency = c.latency(rate, cap);
            long admitted = 0;
            while (true) {
                long wait = loop.waitNanos();
                long at = clock.read() + wait;
                if (at >= tickEnd) {
                    break;
                }
                clock.set(at);
                // Work that arrived since the previous event joins the queue first.
                double arrivals = (at - lastArrival) * offeredPerNano + arrivalCarry;
                long whole = (long) arrivals;
                arrivalCarry = arrivals - whole;
                lastArrival = at;
                loop.offer(whole);
                if (!loop.admitOne()) {
                    throw new IllegalStateException("the limiter named " + at + " ns as an admission instant and then"
                            + " refused (or the queue was empty) for arm " + arm.label());
                }
                loop.record(latency);
                admitted++;
            }
            clock.set(tickEnd);
            double p99 = loop.endTick(c.dtMs());
            ticks.add(new Tick(k, cap, rate, admitted, p99, loop.rate(), loop.saturated()));
        }
        return new Run(ticks, loop.dropped());
    }

    private record Run(List<Tick> ticks, long dropped) {
    }

    private static Result summarize(Config c, Arm arm, Run run) {
        List<Tick> ticks = run.ticks();
        int h = c.ticksPerHalf();
        List<Tick> after = ticks.subList(h, ticks.size());
        double eq = c.equilibrium(c.capAfter());
        double finalRate = ticks.get(ticks.size() - 1).rateAfter();
        double eqError = Math.abs(finalRate - eq);

        OptionalInt settles = OptionalInt.empty();
        if (!arm.fixed()) {
            for (int i = 0; i < after.size(); i++) {
                if (Math.abs(after.get(i).rateBefore() - eq) <= c.settleBand() * eq) {
                    settles = OptionalInt.of(i);
                    break;
                }
            }
        }
        double transientPeak;
        double overshoot;
        if (arm.fixed()) {
            transientPeak = Double.NaN;
            overshoot = peakAbove(after, 0, after.size(), c.targetMs());
        } else if (settles.isPresent()) {
            int s = settles.getAsInt();
            transientPeak = peakAbove(after, 0, s + 1, c.targetMs());
            overshoot = peakAbove(after, s + 1, after.size(), c.targetMs());
        } else {
            transientPeak = peakAbove(after, 0, after.size(), c.targetMs());
            overshoot = 0;
        }
        double sum = 0;
        int n = 0;
        for (Tick t : after) {
            if (!Double.isNaN(t.p99())) {
                sum += t.p99();
                n++;
            }
        }
        double meanP99 = n == 0 ? Double.NaN : sum / n;
        int window = Math.min(c.reversalWindow(), ticks.size());
        List<Tick> tail = ticks.subList(ticks.size() - window, ticks.size());
        double[] rates = new double[tail.size()];
        for (int i = 0; i < rates.length; i++) {
            rates[i] = tail.get(i).rateAfter();
        }
        return new Result(arm, c, List.copyOf(ticks), run.dropped(), finalRate, eqError, settles,
                transientPeak, overshoot, meanP99, reversals(rates));
    }

    /**
     * The same experiment with the library replaced by a closed-form model of the <em>seed's</em>
     * servo, to check the column definitions against the seed's published table independently of
     * the Java primitives. The model: p99 = {@code latency(rateInForce)} exactly; output
     * {@code u = kp·e + ki·I} (the integral before this step), clamped to [minRate, maxRate]; then
     * {@code I += e·dt} and, as the original library's anti-windup, the integral's
     * <em>contribution</em> {@code ki·I} is clamped to {@code [min − kp·e, max − kp·e]}. The Java
     * {@code PowerServo} may use another anti-windup rule; where it does, the unstable rows differ
     * (see benchmarks/flowloop.md).
     *
     * @param config the experiment
     * @param arm    the arm
     * @return the ticks and the table's columns, as {@link #run}
     */
    public static Result referenceModel(Config config, Arm arm) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(arm, "arm");
        int n = 2 * config.ticksPerHalf();
        List<Tick> ticks = new ArrayList<>(n);
        double rate = config.initialRate();
        double integral = 0;
        double min = config.minRate();
        double max = config.maxRate();
        for (int k = 0; k < n; k++) {
            double cap = k >= config.ticksPerHalf() ? config.capAfter() : config.capBefore();
            double p99 = config.latency(rate, cap);
            double next = rate;
            boolean saturated = false;
            if (!arm.fixed()) {
                double e = config.targetMs() - p99;
                double u = arm.kp() * e + arm.ki() * integral;
                next = Math.min(max, Math.max(min, u));
                if (arm.ki() != 0) {
                    integral += e * config.dtMs();
                    double contribution = arm.ki() * integral;
                    double lo = min - arm.kp() * e;
                    double hi = max - arm.kp() * e;
                    if (contribution < lo) {
                        integral = lo / arm.ki();
                    } else if (contribution > hi) {
                        integral = hi / arm.ki();
                    }
                }
                saturated = next == min || next == max;
            }
            ticks.add(new Tick(k, cap, rate, Math.round(rate * config.dtMs() / 1000), p99, next, saturated));
            rate = next;
        }
        return summarize(config, arm, new Run(ticks, 0));
    }

    private static double peakAbove(List<Tick> ticks, int from, int to, double target) {
        double peak = 0;
        for (int i = from; i < to; i++) {
            double p = ticks.get(i).p99();
            if (!Double.isNaN(p)) {
                peak = Math.max(peak, p - target);
            }
        }
        return peak;
    }

    /**
     * Counts direction changes in a series: the number of times the sign of the step-to-step
     * change flips, steps of exactly zero skipped.
     *
     * @param series the values, in order
     * @return the reversal count
     */
    public static int reversals(double[] series) {
        int count = 0;
        int last = 0;
        for (int i = 1; i < series.length; i++) {
            double d = series[i] - series[i - 1];
            if (d == 0) {
                continue;
            }
            int sign = d > 0 ? 1 : -1;
            if (last != 0 && sign != last) {
                count++;
            }
            last = sign;
        }
        return count;
    }

    // ------------------------------------------------------------------ dt sweep and cold start

    /**
     * The sample-interval sweep: the default arm on the cap-400 plant alone (no drop) for
     * {@code seconds} of simulated time at tick {@code dtMs}, returning the mean rate in force over
     * the final {@code tailSeconds}.
     *
     * @param config      the experiment (gains default to the seed's default arm)
     * @param dtMs        the tick and observation interval, ms
     * @param seconds     simulated run length, s
     * @param tailSeconds the averaging window at the end, s
     * @return the equilibrium rate, ops/s
     */
    public static double equilibriumAtDt(Config config, double dtMs, double seconds, double tailSeconds) {
        Config c = config.withDt(dtMs);
        int ticks = (int) Math.round(seconds * 1000 / dtMs);
        int tail = Math.max(1, (int) Math.round(tailSeconds * 1000 / dtMs));
        List<Tick> run = runTicks(c, SEED_ARMS.get(1), ticks, false).ticks();
        double sum = 0;
        for (Tick t : run.subList(ticks - tail, ticks)) {
            sum += t.rateBefore();
        }
        return sum / tail;
    }

    /**
     * The seed's cold start: default gains, {@code minRate} 5, {@code maxRate} 210, one observation
     * per second of a constant 1 ms measurement against a 30 ms target.
     *
     * @param observations how many observations
     * @return the rate after each observation
     */
    public static double[] coldStart(int observations) {
        FakeTicker clock = new FakeTicker();
        PowerFlowController<Integer> flow = PowerFlowController.<Integer>builder()
                .rate(5).minRate(5).maxRate(210).targetP99(30).ticker(clock).build();
        double[] climb = new double[observations];
        for (int i = 0; i < observations; i++) {
            clock.advanceMillis(1000);
            flow.record(1.0);
            climb[i] = flow.observe(1000);
        }
        return climb;
    }
}
