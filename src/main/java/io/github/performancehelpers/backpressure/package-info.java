/**
 * Backpressure by permits: {@link io.github.performancehelpers.backpressure.PowerBackpressure}
 * hands out {@link io.github.performancehelpers.backpressure.Permit}s that a producer holds while
 * its work is in flight downstream, from a pool that refills on a timer and optionally adapts
 * its size (AIMD).
 *
 * @since 0.1.0
 */
package io.github.performancehelpers.backpressure;
