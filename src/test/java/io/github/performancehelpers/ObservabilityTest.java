package io.github.performancehelpers;

import static io.github.performancehelpers.PowerFlowExecutorLoopTest.loop;
import static io.github.performancehelpers.PowerFlowExecutorLoopTest.runTaking;
import static io.github.performancehelpers.PowerFlowExecutorTest.LONG_DELAY_MS;
import static io.github.performancehelpers.PowerFlowExecutorTest.await;
import static io.github.performancehelpers.PowerFlowExecutorTest.terminate;
import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.internal.Access;
import io.github.performancehelpers.metrics.InMemoryMetricsCollector;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;
import io.github.performancehelpers.metrics.MetricsCollector;

/**
 * The {@code observability} option of the executor and the controller: what is published in a
 * {@link MetricsCollector}, that it follows the instance's state, that it is gone at termination
 * or close, and the staleness report. Driven by a fake ticker and a tick run by hand.
 */
class ObservabilityTest {

    private static final AtomicInteger N = new AtomicInteger();

    static String unique(String prefix) {
        return prefix + "-" + N.incrementAndGet() + "-" + System.nanoTime();
    }

    static Map<String, String> executorTags(String name) {
        return Map.of("name", name, "type", "executor");
    }

    static double get(InMemoryMetricsCollector c, String metric, String name) {
        Number n = c.value(metric, executorTags(name));
        assertNotNull(n, metric + " is not registered");
        return n.doubleValue();
    }

    /** Every gauge and counter the issue lists is registered under power.flow.*, tagged name and type=executor. */
    @Test
    void theExecutorRegistersEveryNumber() throws Exception {
        InMemoryMetricsCollector c = MetricsCollector.inMemory();
        String name = unique("obs");
        PowerFlowExecutor e = loop(new FakeTicker(), new ManualScheduler()).name(name).observability(c).build();
        for (String m : new String[] {"rate", "last.observed.p99", "depth", "pool.size", "running", "saturated", "stale",
                "submitted", "admitted", "dropped", "rejected", "observations", "pauses.excused", "completed",
                "failed", "cancelled", "stale.episodes", "shed", "last.end.to.end.p99", "target.unreachable",
                "in.flight.limit"}) {
            assertNotNull(c.value("power.flow." + m, executorTags(name)), m);
        }
        assertEquals(21, c.size());
        terminate(e);
    }

    /** The published values follow the executor: completed, observations, p99, rate and saturated after one slow task and a tick. */
    @Test
    void theValuesFollowTheExecutor() throws Exception {
        InMemoryMetricsCollector c = MetricsCollector.inMemory();
        String name = unique("obs");
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = loop(t, s).name(name).observability(c).build();
        assertEquals(100.0, get(c, "power.flow.rate", name));
        assertEquals(10.0, get(c, "power.flow.pool.size", name)); // littlesLaw(50 ms): ceil(2 x 100 x 0.05)
        assertTrue(Double.isNaN(get(c, "power.flow.last.observed.p99", name)));
        runTaking(e, t, 500);
        await(() -> e.stats().completed() == 1); // counted just after the run time is recorded
        assertEquals(1L, c.value("power.flow.completed", executorTags(name)));
        assertEquals(1L, c.value("power.flow.submitted", executorTags(name)));
        t.advanceMillis(500);
        s.runAll();
        assertEquals(1L, c.value("power.flow.observations", executorTags(name)));
        assertEquals(500.0, get(c, "power.flow.last.observed.p99", name), 500 * 0.011);
        // The executor's PI law starts at its rate: 100 + kp x (45 - 500), the loop's target nine tenths of 50.
        assertEquals(77.25, get(c, "power.flow.rate", name), 0.05 * 500 * 0.011);
        assertEquals(0.0, get(c, "power.flow.saturated", name));
        terminate(e);
    }

    /** A submission the full queue refuses counts in dropped and rejected: the number to alert on moves. */
    @Test
    void dropsArePublished() throws Exception {
        InMemoryMetricsCollector c = MetricsCollector.inMemory();
        String name = unique("obs");
        FakeTicker t = new FakeTicker();
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(100).minRate(10).queueCapacity(1).ticker(t)
                .scheduler(new ManualScheduler()).name(name).observability(c).build();
        fillAndDrop(e);
        assertEquals(1L, c.value("power.flow.dropped", executorTags(name)));
        assertEquals(1L, c.value("power.flow.rejected", executorTags(name)));
        assertEquals(1.0, get(c, "power.flow.depth", name));
        terminate(e);
    }

    /**
     * With the fake clock standing still, the first task runs, the second is held by the limiter,
     * the third waits in the one-slot queue, and the fourth is refused.
     */
    static void fillAndDrop(PowerFlowExecutor e) throws Exception {
        e.submit(() -> { }).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        Future<?> held = e.submit(() -> { });
        await(() -> e.stats().depth() == 0 && e.stats().submitted() == 2);
        e.submit(() -> { });
        assertThrows(QueueFullException.class, () -> e.submit(() -> { }));
        assertFalse(held.isDone());
    }

    /** observability(true) registers in the shared collector, and termination removes every metric. */
    @Test
    void theSharedCollectorIsEmptiedAtTermination() throws Exception {
        String name = unique("obs-shared");
        PowerFlowExecutor e = loop(new FakeTicker(), new ManualScheduler()).name(name).observability(true).build();
        assertEquals(100.0, MetricsCollector.shared().value("power.flow.rate", executorTags(name)).doubleValue());
        terminate(e);
        assertTrue(MetricsCollector.shared().snapshot().keySet().stream().noneMatch(k -> k.contains("name=" + name + ",")));
    }

    /** A second live executor with the same name is refused at build, naming the metric; the first is untouched. */
    @Test
    void aDuplicateNameFailsTheBuild() throws Exception {
        InMemoryMetricsCollector c = MetricsCollector.inMemory();
        String name = unique("obs");
        PowerFlowExecutor first = loop(new FakeTicker(), new ManualScheduler()).name(name).observability(c).build();
        int registered = c.size();
        ManualScheduler s2 = new ManualScheduler();
        IllegalStateException ex = assertThrows(IllegalStateException.class,
                () -> loop(new FakeTicker(), s2).name(name).observability(c).build());
        assertTrue(ex.getMessage().contains("name=" + name), ex.getMessage());
        assertEquals(registered, c.size());
        assertTrue(s2.all().isEmpty(), "the refused executor must not have scheduled its tick");
        assertEquals(100.0, get(c, "power.flow.rate", name));
        terminate(first);
        assertEquals(0, c.size());
    }

    /** Without observability nothing is registered anywhere. */
    @Test
    void offByDefault() throws Exception {
        String name = unique("obs-off");
        PowerFlowExecutor e = loop(new FakeTicker(), new ManualScheduler()).name(name).build();
        assertTrue(MetricsCollector.shared().snapshot().keySet().stream().noneMatch(k -> k.contains(name)));
        terminate(e);
    }

    // ------------------------------------------------------------ staleness

    /** No tick for longer than staleAfter (default 3 x observeInterval) is a stale loop; the next tick ends the episode. */
    @Test
    void aStalledTickIsReportedStale() throws Exception {
        InMemoryMetricsCollector c = MetricsCollector.inMemory();
        String name = unique("obs-stale");
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = loop(t, s).name(name).observeInterval(Duration.ofSeconds(1)).observability(c).build();
        t.advanceMillis(3000);
        assertFalse(e.isStale(), "exactly staleAfter is not yet stale");
        assertEquals(0.0, get(c, "power.flow.stale", name));
        t.advanceMillis(1);
        assertEquals(1.0, get(c, "power.flow.stale", name));
        assertTrue(e.isStale());
        assertEquals(1L, c.value("power.flow.stale.episodes", executorTags(name)), "one episode, however often it is read");
        s.runAll(); // the tick runs again
        assertFalse(e.isStale());
        assertEquals(0.0, get(c, "power.flow.stale", name));
        t.advanceMillis(3001);
        assertTrue(e.isStale());
        assertEquals(2L, c.value("power.flow.stale.episodes", executorTags(name)));
        terminate(e);
    }

    /** A submission runs the staleness check too, so a stall is counted even when nobody reads the stale gauge. */
    @Test
    void aSubmissionDetectsStaleness() throws Exception {
        InMemoryMetricsCollector c = MetricsCollector.inMemory();
        String name = unique("obs-stale");
        FakeTicker t = new FakeTicker();
        PowerFlowExecutor e = loop(t, new ManualScheduler()).name(name).staleAfter(Duration.ofSeconds(5))
                .observability(c).build();
        t.advanceMillis(5001);
        assertEquals(0L, c.value("power.flow.stale.episodes", executorTags(name)), "reading a counter does not check");
        e.submit(() -> { }).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        assertEquals(1L, c.value("power.flow.stale.episodes", executorTags(name)));
        terminate(e);
    }

    /** A fixed-rate executor's tick is a heartbeat too: it is not stale while the tick runs. */
    @Test
    void aFixedRateTickIsAHeartbeat() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(100).fixedRate(true).ticker(t).scheduler(s).build();
        for (int i = 0; i < 5; i++) {
            t.advanceMillis(1000);
            s.runAll();
            assertFalse(e.isStale());
        }
        t.advanceMillis(3001);
        assertTrue(e.isStale());
        terminate(e);
    }

    /** staleAfter must be positive and longer than observeInterval; the messages name the option and the value. */
    @Test
    void staleAfterIsValidated() {
        assertEquals("staleAfter must be positive: PT0S", assertThrows(IllegalArgumentException.class,
                () -> PowerFlowExecutor.builder().staleAfter(Duration.ZERO)).getMessage());
        assertEquals("staleAfter", assertThrows(NullPointerException.class,
                () -> PowerFlowExecutor.builder().staleAfter(null)).getMessage());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder()
                .rate(10).minRate(1).observeInterval(Duration.ofSeconds(2)).staleAfter(Duration.ofSeconds(2)).build());
        assertEquals("staleAfter must be > observeInterval: staleAfter=PT2S, observeInterval=PT2S", e.getMessage());
        assertEquals("collector", assertThrows(NullPointerException.class,
                () -> PowerFlowExecutor.builder().observability(null)).getMessage());
    }

    // ------------------------------------------------------------ the controller

    static Map<String, String> controllerTags(String name) {
        return Map.of("name", name, "type", "controller");
    }

    /** The controller publishes its numbers (the seed's observability option) and close() unregisters them. */
    @Test
    void theControllerPublishesUntilClosed() {
        InMemoryMetricsCollector c = MetricsCollector.inMemory();
        String name = unique("ctl");
        PowerFlowController<String> f = PowerFlowController.<String>builder().rate(100).minRate(10).maxRate(200)
                .queueCapacity(1).name(name).observability(c).build();
        assertEquals(10, c.size());
        assertTrue(f.submit("a"));
        assertFalse(f.submit("b"));
        assertEquals(1L, c.value("power.flow.dropped", controllerTags(name)));
        assertEquals(1L, c.value("power.flow.submitted", controllerTags(name)));
        assertEquals(1.0, c.value("power.flow.depth", controllerTags(name)));
        f.record(40);
        f.observe();
        assertEquals(1L, c.value("power.flow.observations", controllerTags(name)));
        assertEquals(40.0, c.value("power.flow.last.observed.p99", controllerTags(name)).doubleValue(), 40 * 0.011);
        assertEquals(f.rate(), c.value("power.flow.rate", controllerTags(name)).doubleValue());
        f.close();
        assertEquals(0, c.size());
    }

    /**
     * A pause of the process the knee-aware law excuses counts in power.flow.pauses.excused and
     * the MXBean's PausesExcused: once for the pause (not for its shadow window), not for a
     * window without one.
     */
    @Test
    void anExcusedPauseIsCounted() throws Exception {
        InMemoryMetricsCollector c = MetricsCollector.inMemory();
        String name = unique("pause");
        PowerFlowController<String> f = PowerFlowController.<String>builder().rate(100).minRate(10).maxRate(200)
                .targetP99(60).controlLaw(PowerFlowController.ControlLaw.KNEE_AWARE).name(name).observability(c)
                .jmx(true).build();
        javax.management.ObjectName on = new javax.management.ObjectName(
                "io.github.performancehelpers:type=PowerFlowController,name=" + name);
        f.record(400);
        f.observe();
        assertEquals(0L, c.value("power.flow.pauses.excused", controllerTags(name)));
        Access.controller().noteStall(f, 300_000_000L);
        for (int i = 0; i < 2; i++) { // the pause's window and its shadow
            f.record(400);
            f.observe();
        }
        assertEquals(1L, c.value("power.flow.pauses.excused", controllerTags(name)));
        assertEquals(1L, JmxTest.SERVER.getAttribute(on, "PausesExcused"));
        f.close();
    }

    /** observability(true) on the controller uses the shared collector; a duplicate live name is refused. */
    @Test
    void theControllerUsesTheSharedCollector() {
        String name = unique("ctl-shared");
        PowerFlowController<String> f = PowerFlowController.<String>builder().rate(100).minRate(10).name(name)
                .observability(true).build();
        assertEquals(100.0, MetricsCollector.shared().value("power.flow.rate", controllerTags(name)).doubleValue());
        assertThrows(IllegalStateException.class, () -> PowerFlowController.<String>builder().rate(100).minRate(10)
                .name(name).observability(true).build());
        f.close();
        assertNull(MetricsCollector.shared().value("power.flow.rate", controllerTags(name)));
    }

    /** The controller's name is validated as the executor's is. */
    @Test
    void theControllerNameIsValidated() {
        assertEquals("name", assertThrows(NullPointerException.class,
                () -> PowerFlowController.builder().name(null)).getMessage());
        assertEquals("name must not be blank: \" \"", assertThrows(IllegalArgumentException.class,
                () -> PowerFlowController.builder().name(" ")).getMessage());
        assertTrue(PowerFlowController.builder().rate(1).minRate(1).maxRate(2).build().name()
                .startsWith("power-flow-controller-"));
    }
}
