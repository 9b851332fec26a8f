package io.github.performancehelpers;

import io.github.performancehelpers.internal.FlowEvents;
import io.github.performancehelpers.internal.Publication;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import io.github.performancehelpers.internal.Access;
import io.github.performancehelpers.metrics.FlowMetric;
import io.github.performancehelpers.metrics.MetricsCollector;
import io.github.performancehelpers.metrics.PowerFlowExecutorMXBean;

/**
 * A {@link PowerFlowExecutor}'s observability: its metrics and MXBean (when asked), and the
 * staleness check (always).
 *
 * <h2>Staleness</h2>
 * The tick is what stalls (a blocked or starved scheduler thread, a caller's scheduler that was
 * shut down), so the tick cannot report it. Each tick stamps a heartbeat with the ticker; the
 * check compares the ticker with the heartbeat and, when more than {@code staleAfter} has passed,
 * marks the loop stale, counts one episode and commits a {@code StaleLoop} JFR event, once per
 * episode. The next tick ends the episode. The check runs lazily where a reading is at hand or
 * someone is looking: on every accepted {@code execute} (reusing the enqueue time the executor
 * reads anyway: one volatile read and a compare) and whenever the {@code power.flow.stale} gauge
 * or the MXBean's {@code Stale} attribute is read. An executor nobody submits to and nobody
 * watches is not checked, and has nothing to protect.
 *
 * <p><b>Thread safety.</b> Every method may be called from any thread; {@link #publish()} once,
 * from the executor's constructor, and {@link #onTick()} from the tick.
 */
final class ExecutorObservability implements AutoCloseable {

    private static final Access.ControllerAccess LOOP = Access.controller();

    static final String TYPE = "executor";
    static final String MBEAN_TYPE = "PowerFlowExecutor";

    private final PowerFlowExecutor executor;
    private final Ticker ticker;
    private final long staleAfterNanos;
    private final boolean fixedRate;
    private final MetricsCollector collector;
    private final boolean jmx;

    /** The ticker reading at the last tick (construction before the first). */
    private volatile long heartbeat;
    private final AtomicBoolean stale = new AtomicBoolean();
    private final AtomicLong staleEpisodes = new AtomicLong();
    private volatile Publication publication;

    ExecutorObservability(PowerFlowExecutor executor, Ticker ticker, long staleAfterNanos, boolean fixedRate,
            MetricsCollector collector, boolean jmx) {
        this.executor = executor;
        this.ticker = ticker;
        this.staleAfterNanos = staleAfterNanos;
        this.fixedRate = fixedRate;
        this.collector = collector;
        this.jmx = jmx;
        this.heartbeat = ticker.read();
    }

    /**
     * Registers the metrics and the MXBean, as asked; all or nothing.
     *
     * @throws IllegalStateException    if a metric or the MBean name is already registered
     * @throws IllegalArgumentException if the collector returned a null registration
     */
    void publish() {
        if (collector == null && !jmx) {
            return;
        }
        PowerFlowExecutor e = executor;
        Publication p = new Publication(collector, e.name(), TYPE);
        try {
            p.gauge(FlowMetric.RATE, () -> e.controller().rate());
            p.gauge(FlowMetric.LAST_OBSERVED_P99, () -> e.controller().lastObservedP99());
            p.gauge(FlowMetric.DEPTH, () -> e.controller().depth());
            p.gauge(FlowMetric.POOL_SIZE, e::poolSize);
            p.gauge(FlowMetric.IN_FLIGHT_LIMIT, e::inFlightLimit);
            p.gauge(FlowMetric.RUNNING, () -> e.runningNow());
            p.gauge(FlowMetric.SATURATED, () -> LOOP.loopSaturated(e.controller()) ? 1 : 0);
            p.gauge(FlowMetric.STALE, () -> isStale() ? 1 : 0);
            p.gauge(FlowMetric.LAST_END_TO_END_P99, () -> e.lastEndToEndP99());
            p.gauge(FlowMetric.TARGET_UNREACHABLE, () -> LOOP.lawStats(e.controller()).targetUnreachable() ? 1 : 0);
            p.counter(FlowMetric.SUBMITTED, () -> e.submittedCount());
            p.counter(FlowMetric.ADMITTED, () -> LOOP.admittedCount(e.controller()));
            p.counter(FlowMetric.DROPPED, () -> e.controller().dropped());
            p.counter(FlowMetric.REJECTED, () -> e.rejectedCount());
            p.counter(FlowMetric.OBSERVATIONS, () -> LOOP.observationCount(e.controller()));
            p.counter(FlowMetric.PAUSES_EXCUSED, () -> LOOP.pausesExcused(e.controller()));
            p.counter(FlowMetric.COMPLETED, () -> e.completedCount());
            p.counter(FlowMetric.FAILED, () -> e.failedCount());
            p.counter(FlowMetric.CANCELLED, () -> e.cancelledCount());
            p.counter(FlowMetric.SHED, () -> e.shedCount());
            p.counter(FlowMetric.STALE_EPISODES, staleEpisodes::get);
            if (jmx) {
                p.mbean(MBEAN_TYPE, e.name(), new Bean(), PowerFlowExecutorMXBean.class);
            }
        } catch (RuntimeException | Error ex) {
            p.close();
            throw ex;
        }
        publication = p;
    }

    /** The tick ran: a new heartbeat, and the end of any stale episode. Called by the tick. */
    void onTick() {
        heartbeat = ticker.read();
        stale.set(false);
        if (fixedRate) {
            LOOP.flushDropEvent(executor.controller()); // no observe() runs to do it
        }
    }

    /** An accepted submission at ticker reading {@code now}: the cheap staleness check. */
    void onSubmit(long now) {
        if (now - heartbeat > staleAfterNanos) {
            markStale(now);
        }
    }

    /** Whether the loop is stale now; runs the check. */
    boolean isStale() {
        onSubmit(ticker.read());
        return stale.get();
    }

    long staleEpisodes() {
        return staleEpisodes.get();
    }

    private void markStale(long now) {
        long hb = heartbeat;
        if (now - hb <= staleAfterNanos || stale.get() || !stale.compareAndSet(false, true)) {
            return;
        }
        if (heartbeat != hb) { // a tick ran meanwhile: not stale after all
            stale.set(false);
            return;
        }
        staleEpisodes.incrementAndGet();
        FlowEvents.staleLoop(executor.name(), now - hb, staleAfterNanos);
    }

    /** Unregisters everything published; idempotent. Called at termination. */
    @Override
    public void close() {
        Publication p = publication;
        if (p != null) {
            p.close();
        }
    }

    /** The MXBean: every getter reads the executor live. */
    private final class Bean implements PowerFlowExecutorMXBean {
        @Override
        public String getName() {
            return executor.name();
        }

        @Override
        public String getState() {
            return executor.isTerminated() ? "TERMINATED" : executor.isShutdown() ? "SHUTTING_DOWN" : "RUNNING";
        }

        @Override
        public double getRate() {
            return executor.controller().rate();
        }

        @Override
        public double getMinRate() {
            return executor.controller().minRate();
        }

        @Override
        public double getMaxRate() {
            return executor.controller().maxRate();
        }

        @Override
        public double getTargetP99() {
            return executor.targetP99();
        }

        @Override
        public double getP99() {
            return executor.controller().p99().orElse(Double.NaN);
        }

        @Override
        public double getLastObservedP99() {
            return executor.controller().lastObservedP99();
        }

        @Override
        public double getQueueWaitP99() {
            return executor.stats().queueWaitP99();
        }

        @Override
        public int getDepth() {
            return executor.controller().depth();
        }

        @Override
        public int getQueueCapacity() {
            return executor.controller().queueCapacity();
        }

        @Override
        public int getPoolSize() {
            return executor.poolSize();
        }

        @Override
        public int getInFlightLimit() {
            return executor.inFlightLimit();
        }

        @Override
        public int getRunning() {
            return executor.runningNow();
        }

        @Override
        public boolean isSaturated() {
            return LOOP.loopSaturated(executor.controller());
        }

        @Override
        public boolean isStale() {
            return ExecutorObservability.this.isStale();
        }

        @Override
        public long getStaleEpisodes() {
            return staleEpisodes.get();
        }

        @Override
        public long getSubmitted() {
            return executor.submittedCount();
        }

        @Override
        public long getAdmitted() {
            return LOOP.admittedCount(executor.controller());
        }

        @Override
        public long getDropped() {
            return executor.controller().dropped();
        }

        @Override
        public long getRejected() {
            return executor.rejectedCount();
        }

        @Override
        public long getObservations() {
            return LOOP.observationCount(executor.controller());
        }

        @Override
        public long getPausesExcused() {
            return LOOP.pausesExcused(executor.controller());
        }

        @Override
        public long getCompleted() {
            return executor.completedCount();
        }

        @Override
        public long getFailed() {
            return executor.failedCount();
        }

        @Override
        public long getCancelled() {
            return executor.cancelledCount();
        }

        @Override
        public long getShed() {
            return executor.shedCount();
        }

        @Override
        public double getLastEndToEndP99() {
            return executor.lastEndToEndP99();
        }

        @Override
        public boolean isTargetUnreachable() {
            return LOOP.lawStats(executor.controller()).targetUnreachable();
        }

        @Override
        public long getCallbackFailures() {
            return executor.callbackFailures();
        }
    }
}
