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
 * shape of Micrometer's {@code Gauge} and {@code FunctionCounter}, so a bridge is a few lines:
 *
 * <pre>{@code
 * MetricsCollector micrometer = new MetricsCollector() {
 *     public Registration registerGauge(String name, Map<String, String> tags, DoubleSupplier value) {
 *         Gauge g = Gauge.builder(name, value, DoubleSupplier::getAsDouble)
 *                 .tags(tags.entrySet().stream().map(e -> Tag.of(e.getKey(), e.getValue())).toList())
 *                 .register(registry);
 *         return () -> registry.remove(g);
 *     }
 *     public Registration registerCounter(String name, Map<String, String> tags, LongSupplier value) {
 *         FunctionCounter c = FunctionCounter.builder(name, value, LongSupplier::getAsLong)
 *                 .tags(tags.entrySet().stream().map(e -> Tag.of(e.getKey(), e.getValue())).toList())
 *                 .register(registry);
 *         return () -> registry.remove(c);
 *     }
 * };
 * }</pre>
 *
 * <p>Names are dotted and lower case ({@code power.flow.rate}); every number carries the tags
 * {@code name} (the executor's or controller's name) and {@code type} ({@code executor} or
 * {@code controller}). Gauges are instantaneous values; counters are monotonic totals since
 * construction.
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
     * @return the handle that removes the gauge
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
     * @return the handle that removes the counter
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
