package io.github.performancehelpers.metrics;

import java.util.Map;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import io.github.performancehelpers.PowerFlowExecutor;
import io.github.performancehelpers.loop.PowerFlowController;

/**
 * Where a {@link PowerFlowExecutor} or a {@link PowerFlowController} publishes its numbers, with no
 * metrics library on the class path.
 *
 * <p>The collector is <em>pulled</em>: an instance registers each number once, as a supplier,
 * when it is built with {@code observability(...)}, and the collector reads the suppliers whenever
 * it wants (a scrape, a {@link InMemoryMetricsCollector#snapshot()}). Nothing is pushed per task,
 * so publishing costs the hot path nothing. The registrations are closed when the executor
 * terminates or the controller is {@linkplain PowerFlowController#close() closed}. This is the
 * shape of Micrometer's {@code Gauge} and {@code FunctionCounter}; the tested Micrometer binding
 * is the artifact {@code io.github.performancehelpers:performance-helpers-micrometer}
 * ({@code MicrometerMetricsCollector}), and a bridge to another library is as short.
 *
 * <p><b>Who holds the suppliers.</b> The library holds every supplier it registers strongly for
 * as long as the registration lives, so a collector may hold them weakly, as Micrometer does
 * (it holds a gauge's and a function counter's object through a {@code WeakReference}): the
 * numbers keep being reported after a garbage collection, until the registration is closed.
 *
 * <p><b>Names, units, meaning.</b> Every name the library registers is a {@link FlowMetric}, which
 * gives its kind, its {@linkplain FlowMetric#unit() unit} and its description; look a name up
 * with {@link FlowMetric#named(String)}. Names are dotted and lower case
 * ({@code power.flow.rate}); every number carries the tags {@code name} (the executor's or
 * controller's name) and {@code type} ({@code executor} or {@code controller}). Gauges are
 * instantaneous values; counters are monotonic totals since construction. Latencies are in
 * milliseconds, as in {@code stats()} and JMX; a bridge whose convention is seconds converts.
 *
 * <p><b>A null {@link Registration}</b> is refused: the build that registered it fails with an
 * {@link IllegalArgumentException} naming the collector and the metric, and what was registered
 * before it is closed.
 *
 * <p><b>Thread safety.</b> Implementations must be safe for concurrent use by any number of
 * threads, and a supplier may be called from any thread at any time until its registration is
 * closed (and, racing with the close, once after). The suppliers this library registers are safe
 * for concurrent use, never block, and never throw.
 *
 * @since 0.1.0
 */
public interface MetricsCollector {

    /**
     * Registers an instantaneous value.
     *
     * @param name  the metric name, such as {@code power.flow.rate}
     * @param tags  the tags (an unmodifiable map)
     * @param value reads the current value; may be called from any thread
     * @return the handle that removes the gauge; never null (a null fails the build that asked)
     * @throws NullPointerException  if any argument is null
     * @throws IllegalStateException if the collector refuses a duplicate name and tags (the
     *                               in-memory collector does)
     */
    Registration registerGauge(String name, Map<String, String> tags, DoubleSupplier value);

    /**
     * Registers a monotonic counter whose total the library keeps.
     *
     * @param name  the metric name, such as {@code power.flow.dropped}
     * @param tags  the tags (an unmodifiable map)
     * @param value reads the current total; never decreases
     * @return the handle that removes the counter; never null (a null fails the build that asked)
     * @throws NullPointerException  if any argument is null
     * @throws IllegalStateException if the collector refuses a duplicate name and tags (the
     *                               in-memory collector does)
     */
    Registration registerCounter(String name, Map<String, String> tags, LongSupplier value);

    /**
     * Returns the process-wide in-memory collector that {@code observability(true)} registers in.
     *
     * @return the shared collector
     */
    static InMemoryMetricsCollector shared() {
        return InMemoryMetricsCollector.SHARED;
    }

    /**
     * Returns a new, empty in-memory collector.
     *
     * @return a new collector
     */
    static InMemoryMetricsCollector inMemory() {
        return new InMemoryMetricsCollector();
    }

    /**
     * Removes one registered metric. Closing is idempotent and never throws a checked exception.
     *
     * <p><b>Thread safety.</b> Implementations must be safe for concurrent use by any number of
     * threads: {@code close()} may be called more than once, from any thread.
     */
    @FunctionalInterface
    interface Registration extends AutoCloseable {
        /** Removes the metric from its collector; a second call does nothing. */
        @Override
        void close();
    }
}
