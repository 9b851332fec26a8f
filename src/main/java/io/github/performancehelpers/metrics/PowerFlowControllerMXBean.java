package io.github.performancehelpers.metrics;

import io.github.performancehelpers.loop.PowerFlowController;

/**
 * The JMX view of a {@link PowerFlowController}, registered as
 * {@code io.github.performancehelpers:type=PowerFlowController,name=<name>} when the controller is
 * built with {@link PowerFlowController.Builder#jmx(boolean) jmx(true)}, and unregistered by
 * {@link PowerFlowController#close()}. Every attribute is an open type, so {@code jconsole} and any
 * JMX client show it without the library on their class path. Attributes are read live.
 *
 * <p><b>Thread safety.</b> Every getter is safe to call from any number of threads at once and
 * never blocks.
 *
 * @since 0.1.0
 */
@Description("A PowerFlowController (performance-helpers): the closed loop that paces admissions from a bounded"
        + " queue and moves the rate to hold the p99 latency at targetP99. Read-only, read live.")
public interface PowerFlowControllerMXBean extends FlowLoopAttributes {

    /**
     * Latency samples recorded, since construction.
     *
     * @return the count
     */
    @Description("Latency samples recorded, since construction")
    long getRecorded();

    /**
     * How many {@code onRateChange} calls threw, since construction.
     *
     * @return the count
     */
    @Description("Calls of onRateChange that threw, since construction")
    long getCallbackFailures();
}
