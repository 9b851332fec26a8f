package io.github.performancehelpers.metrics;

import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Every metric the library registers in a {@link MetricsCollector}: its name, its kind, its unit
 * and what it means. A bridge to a metrics library looks a registered name up here
 * ({@link #named(String)}) to give the meter its description and base unit; the values a
 * supplier returns are in {@link #unit()}, as in {@code stats()} and JMX (latencies in
 * milliseconds, the seed's unit), so a bridge whose convention is seconds converts them (the
 * Micrometer binding, {@code performance-helpers-micrometer}, does).
 *
 * <p>Names follow the library's Java names, so that one name means one thing everywhere: a name
 * that starts with {@code last} (as {@code power.flow.last.observed.p99}) is the last
 * <em>completed</em> observation window, as {@code stats().lastObservedP99()} and the JMX
 * attribute {@code LastObservedP99}; {@code stats().p99()} and the JMX attribute {@code P99} are
 * the current, partial window, which no metric publishes (a scrape at a random point of a window
 * would read a partial, noisy figure). Every metric carries the tags {@code name} and
 * {@code type} ({@code executor} or {@code controller}).
 *
 * <p><b>Thread safety.</b> Immutable.
 *
 * @since 0.1.0
 */
public enum FlowMetric {

    /** The rate in force. */
    RATE("power.flow.rate", Kind.GAUGE, Unit.PER_SECOND, true,
            "The rate in force: operations (task starts) per second the limiter admits"),
    /** The driving quantile of the last completed window. */
    LAST_OBSERVED_P99("power.flow.last.observed.p99", Kind.GAUGE, Unit.MILLISECONDS, true,
            "The driving quantile (p99 by default) of the run times in the last completed observation window,"
                    + " the one the control law acted on; NaN before the first observation"),
    /** The caller's p99, submit to completion, of the last completed window (executor only). */
    LAST_END_TO_END_P99("power.flow.last.end.to.end.p99", Kind.GAUGE, Unit.MILLISECONDS, false,
            "The p99 of the tasks' time from submit to completion (the caller's latency) in the last completed"
                    + " observation window; NaN before the first window with a completion"),
    /** Items waiting in the queue. */
    DEPTH("power.flow.depth", Kind.GAUGE, Unit.NONE, true, "Items (tasks) waiting in the bounded queue"),
    /** The delegate's size in force (executor only). */
    POOL_SIZE("power.flow.pool.size", Kind.GAUGE, Unit.NONE, false,
            "The delegate's size in force (its concurrency bound); -1 for a delegate that is not sized"),
    /** The cap on the tasks in flight from the run time (executor only). */
    IN_FLIGHT_LIMIT("power.flow.in.flight.limit", Kind.GAUGE, Unit.NONE, false,
            "The most tasks the executor keeps in flight on its delegate, set each window from the run time where the"
                    + " downstream queues inside; -1 while nothing is capped"),
    /** Tasks running now (executor only). */
    RUNNING("power.flow.running", Kind.GAUGE, Unit.NONE, false, "Tasks running on the delegate now"),
    /** 1 while the loop's output is pinned at a bound. */
    SATURATED("power.flow.saturated", Kind.GAUGE, Unit.NONE, true,
            "1 while the loop's output is pinned at minRate or maxRate, else 0"),
    /** 1 while the tick has not run for longer than staleAfter (executor only). */
    STALE("power.flow.stale", Kind.GAUGE, Unit.NONE, false,
            "1 while the observation tick has not run for longer than staleAfter (the rate in force is stale),"
                    + " else 0"),
    /** 1 while the law finds the target unreachable (executor only). */
    TARGET_UNREACHABLE("power.flow.target.unreachable", Kind.GAUGE, Unit.NONE, false,
            "1 while the control law finds that cutting the rate does not lower the run-time p99, so it serves"
                    + " the load instead of cutting, else 0"),
    /** Items accepted into the queue. */
    SUBMITTED("power.flow.submitted", Kind.COUNTER, Unit.NONE, true,
            "Items (tasks) accepted: queued, or handed off at once, since construction"),
    /** Items admitted by the rate limiter. */
    ADMITTED("power.flow.admitted", Kind.COUNTER, Unit.NONE, true,
            "Items (tasks) admitted by the rate limiter, since construction"),
    /** Offers the full queue refused. */
    DROPPED("power.flow.dropped", Kind.COUNTER, Unit.NONE, true,
            "Offers the full queue refused, since construction: the number to alert on"),
    /** Tasks refused at submit (executor only). */
    REJECTED("power.flow.rejected", Kind.COUNTER, Unit.NONE, false,
            "Tasks refused at execute/submit (queue full, too late for the target, or shut down), since"
                    + " construction"),
    /** Observations that stepped the control law. */
    OBSERVATIONS("power.flow.observations", Kind.COUNTER, Unit.NONE, true,
            "Observations that stepped the control law, since construction: alert when it stops growing"),
    /** Pauses of the process the knee-aware law excused. */
    PAUSES_EXCUSED("power.flow.pauses.excused", Kind.COUNTER, Unit.NONE, true,
            "Pauses of the process that excused a window from the knee-aware law (which held the rate),"
                    + " since construction; 0 under the PI law"),
    /** Latency samples recorded (controller only). */
    RECORDED("power.flow.recorded", Kind.COUNTER, Unit.NONE, true, "Latency samples recorded, since construction"),
    /** Tasks that returned normally (executor only). */
    COMPLETED("power.flow.completed", Kind.COUNTER, Unit.NONE, false,
            "Tasks that ran and returned normally, since construction"),
    /** Tasks that threw (executor only). */
    FAILED("power.flow.failed", Kind.COUNTER, Unit.NONE, false, "Tasks that ran and threw, since construction"),
    /** Tasks whose Future was cancelled (executor only). */
    CANCELLED("power.flow.cancelled", Kind.COUNTER, Unit.NONE, false,
            "Tasks whose Future was cancelled, since construction"),
    /** Tasks shed from the queue past their wait budget (executor only). */
    SHED("power.flow.shed", Kind.COUNTER, Unit.NONE, false,
            "Tasks shed from the queue because they had waited past the wait budget (their Future failed with"
                    + " ShedException), since construction"),
    /** Times the loop was found stale (executor only). */
    STALE_EPISODES("power.flow.stale.episodes", Kind.COUNTER, Unit.NONE, false,
            "Times the loop was found stale, since construction");

    private static final Map<String, FlowMetric> BY_NAME = Arrays.stream(values())
            .collect(Collectors.toUnmodifiableMap(FlowMetric::metricName, Function.identity()));

    private final String metricName;
    private final Kind kind;
    private final Unit unit;
    private final boolean controller;
    private final String description;

    FlowMetric(String metricName, Kind kind, Unit unit, boolean controller, String description) {
        this.metricName = metricName;
        this.kind = kind;
        this.unit = unit;
        this.controller = controller;
        this.description = description;
    }

    /**
     * The metric name, dotted and lower case, as registered.
     *
     * @return the name, such as {@code power.flow.rate}
     */
    public String metricName() {
        return metricName;
    }

    /**
     * Whether it is registered as a gauge or a counter.
     *
     * @return the kind
     */
    public Kind kind() {
        return kind;
    }

    /**
     * The unit of the values the supplier returns.
     *
     * @return the unit
     */
    public Unit unit() {
        return unit;
    }

    /**
     * Whether a {@code PowerFlowController} registers it too (every metric is registered by a
     * {@code PowerFlowExecutor}, except {@link #RECORDED}).
     *
     * @return {@code true} if a controller registers it
     */
    public boolean registeredByController() {
        return controller;
    }

    /**
     * What the number means, in one sentence, without its unit.
     *
     * @return the description
     */
    public String description() {
        return description;
    }

    /**
     * Looks a metric up by its registered name.
     *
     * @param metricName the name, such as {@code power.flow.rate}
     * @return the metric, or empty if the library registers no metric of that name
     * @throws NullPointerException if {@code metricName} is null
     */
    public static Optional<FlowMetric> named(String metricName) {
        return Optional.ofNullable(BY_NAME.get(Objects.requireNonNull(metricName, "metricName")));
    }

    /** How a metric is registered. */
    public enum Kind {
        /** An instantaneous value ({@link MetricsCollector#registerGauge}). */
        GAUGE,
        /** A monotonic total since construction ({@link MetricsCollector#registerCounter}). */
        COUNTER
    }

    /** The unit of a metric's values, as the supplier returns them. */
    public enum Unit {
        /** A duration in milliseconds (the seed's unit for latency). */
        MILLISECONDS(Units.MILLISECONDS),
        /** A rate: operations per second. */
        PER_SECOND(Units.PER_SECOND),
        /** A count, or a 0/1 flag: no unit. */
        NONE("");

        private final String text;

        Unit(String text) {
            this.text = text;
        }

        /**
         * The unit in words, as the JMX attributes' {@code units} descriptor field spells it.
         *
         * @return the unit, such as {@code milliseconds}; empty for {@link #NONE}
         */
        public String text() {
            return text;
        }
    }
}
