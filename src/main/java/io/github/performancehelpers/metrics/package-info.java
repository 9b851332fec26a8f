/**
 * What the loop publishes, with no dependency: {@link io.github.performancehelpers.metrics.MetricsCollector}
 * (the interface a user bridges to a metrics library in a few lines; the Micrometer binding is the
 * artifact {@code performance-helpers-micrometer}) and its in-memory implementation,
 * {@link io.github.performancehelpers.metrics.FlowMetric} (every metric's name, kind, unit and
 * description), and the MXBean interfaces the executor and the controller register when asked
 * ({@link io.github.performancehelpers.metrics.PowerFlowExecutorMXBean},
 * {@link io.github.performancehelpers.metrics.PowerFlowControllerMXBean}), whose attributes carry
 * a {@link io.github.performancehelpers.metrics.Description} and their
 * {@link io.github.performancehelpers.metrics.Units}. The JFR events are
 * committed by the loop itself; their names and fields are listed in {@code docs/observability.md}.
 *
 * @since 0.1.0
 */
package io.github.performancehelpers.metrics;
