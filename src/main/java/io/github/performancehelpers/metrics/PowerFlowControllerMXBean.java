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
public interface PowerFlowControllerMXBean extends FlowLoopAttributes {

    /**
     * Latency samples recorded, since construction.
     *
     * @return the count
     */
    long getRecorded();

    /**
     * How many {@code onRateChange} calls threw, since construction.
     *
     * @return the count
     */
    long getCallbackFailures();
}
