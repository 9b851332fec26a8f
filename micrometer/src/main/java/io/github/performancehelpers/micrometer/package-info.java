/**
 * The Micrometer binding of performance-helpers:
 * {@link io.github.performancehelpers.micrometer.MicrometerMetricsCollector}, a
 * {@link io.github.performancehelpers.metrics.MetricsCollector} that registers the library's
 * gauges and counters in a {@code MeterRegistry}, with Micrometer's names, tags and base units.
 *
 * @since 0.1.0
 */
package io.github.performancehelpers.micrometer;
