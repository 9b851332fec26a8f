/**
 * The closed loop's parts and the loop itself: {@link io.github.performancehelpers.loop.PowerQueue}
 * (a bounded FIFO that refuses and counts what does not fit),
 * {@link io.github.performancehelpers.loop.PowerHistogram} (a relative-accuracy quantile sketch,
 * recorded concurrently and read per interval), {@link io.github.performancehelpers.loop.PowerServo}
 * (a PI(D) law with a clamp and anti-windup), the control laws, and
 * {@link io.github.performancehelpers.loop.PowerFlowController}, which composes them: items are
 * queued, admitted at the rate a {@code PowerGCRA} enforces, their latencies recorded, and each
 * observation moves the rate so that the p99 holds its target.
 *
 * <p>Use the controller when you run the work yourself; {@link io.github.performancehelpers.PowerFlowExecutor}
 * runs the same loop for you as an {@link java.util.concurrent.ExecutorService}.
 *
 * @since 0.1.0
 */
package io.github.performancehelpers.loop;
