package io.github.performancehelpers.loop;

import io.github.performancehelpers.internal.Publication;
import io.github.performancehelpers.metrics.FlowMetric;
import io.github.performancehelpers.metrics.MetricsCollector;
import io.github.performancehelpers.metrics.PowerFlowControllerMXBean;

/**
 * Publishes a {@link PowerFlowController}: its metrics in a {@link MetricsCollector} and its
 * {@link PowerFlowControllerMXBean}. Everything is pulled: the suppliers read the controller's
 * counters when the collector or a JMX client asks, so the controller's hot path is untouched.
 */
final class ControllerObservability {

    static final String TYPE = "controller";
    static final String MBEAN_TYPE = "PowerFlowController";

    private ControllerObservability() {
    }

    /**
     * Registers the controller's metrics (if {@code collector} is not null) and MXBean (if
     * {@code jmx}); all or nothing.
     *
     * @throws IllegalStateException    if a metric or the MBean name is already registered
     * @throws IllegalArgumentException if the collector returned a null registration
     */
    static Publication publish(PowerFlowController<?> c, MetricsCollector collector, boolean jmx) {
        Publication p = new Publication(collector, c.name(), TYPE);
        try {
            p.gauge(FlowMetric.RATE, c::rate);
            p.gauge(FlowMetric.LAST_OBSERVED_P99, c::lastObservedP99);
            p.gauge(FlowMetric.DEPTH, c::depth);
            p.gauge(FlowMetric.SATURATED, () -> c.loopSaturated() ? 1 : 0);
            p.counter(FlowMetric.SUBMITTED, () -> c.submittedCount());
            p.counter(FlowMetric.ADMITTED, () -> c.admittedCount());
            p.counter(FlowMetric.DROPPED, c::dropped);
            p.counter(FlowMetric.RECORDED, () -> c.recordedCount());
            p.counter(FlowMetric.OBSERVATIONS, () -> c.observationCount());
            p.counter(FlowMetric.PAUSES_EXCUSED, () -> c.pausesExcused());
            if (jmx) {
                p.mbean(MBEAN_TYPE, c.name(), new Bean(c), PowerFlowControllerMXBean.class);
            }
            return p;
        } catch (RuntimeException | Error e) {
            p.close();
            throw e;
        }
    }

    /** The MXBean: every getter reads the controller live. */
    private record Bean(PowerFlowController<?> c) implements PowerFlowControllerMXBean {
        @Override
        public String getName() {
            return c.name();
        }

        @Override
        public double getRate() {
            return c.rate();
        }

        @Override
        public double getMinRate() {
            return c.minRate();
        }

        @Override
        public double getMaxRate() {
            return c.maxRate();
        }

        @Override
        public double getTargetP99() {
            return c.targetP99();
        }

        @Override
        public double getP99() {
            return c.p99().orElse(Double.NaN);
        }

        @Override
        public double getLastObservedP99() {
            return c.lastObservedP99();
        }

        @Override
        public int getDepth() {
            return c.depth();
        }

        @Override
        public int getQueueCapacity() {
            return c.queueCapacity();
        }

        @Override
        public boolean isSaturated() {
            return c.loopSaturated();
        }

        @Override
        public long getSubmitted() {
            return c.submittedCount();
        }

        @Override
        public long getAdmitted() {
            return c.admittedCount();
        }

        @Override
        public long getDropped() {
            return c.dropped();
        }

        @Override
        public long getObservations() {
            return c.observationCount();
        }

        @Override
        public long getPausesExcused() {
            return c.pausesExcused();
        }

        @Override
        public long getRecorded() {
            return c.recordedCount();
        }

        @Override
        public long getCallbackFailures() {
            return c.callbackFailures();
        }
    }
}
