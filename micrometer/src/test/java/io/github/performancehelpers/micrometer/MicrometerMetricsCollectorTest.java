package io.github.performancehelpers.micrometer;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.PowerFlowExecutor;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.metrics.FlowMetric;
import io.github.performancehelpers.metrics.MetricsCollector;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;

/**
 * {@link MicrometerMetricsCollector} against a real {@link SimpleMeterRegistry}: the meters keep
 * reporting after a garbage collection (Micrometer holds their objects weakly), follow
 * {@code stats()}, carry Micrometer's names, tags, descriptions and base units, are refused when
 * duplicated and removed at termination. The loop's time and tick are driven by hand where a
 * figure is asserted.
 */
class MicrometerMetricsCollectorTest {

    private static final long LONG_DELAY_MS = 10_000;
    private static final AtomicInteger N = new AtomicInteger();

    static String unique(String prefix) {
        return prefix + "-" + N.incrementAndGet();
    }

    /**
     * Runs garbage collections until a weakly held sentinel is cleared, so that a collection that
     * clears weak references has certainly happened (System.gc() alone is a hint).
     */
    static void forceGc() throws InterruptedException {
        WeakReference<Object> sentinel = new WeakReference<>(new Object());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (sentinel.get() != null) {
            assertTrue(System.nanoTime() < deadline, "no garbage collection within 60 s");
            System.gc();
            Thread.sleep(10);
        }
    }

    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LONG_DELAY_MS);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what + " not reached in " + LONG_DELAY_MS + " ms");
            Thread.sleep(1);
        }
    }

    /** The meters of one instance, by name. */
    static Map<String, Meter> meters(MeterRegistry registry, String instance) {
        return registry.getMeters().stream().filter(m -> instance.equals(m.getId().getTag("name")))
                .collect(Collectors.toMap(m -> m.getId().getName(), m -> m));
    }

    static double gauge(MeterRegistry registry, String name, String instance) {
        Gauge g = registry.find(name).tag("name", instance).gauge();
        assertNotNull(g, name + " is not registered");
        return g.value();
    }

    static double counter(MeterRegistry registry, String name, String instance) {
        FunctionCounter c = registry.find(name).tag("name", instance).functionCounter();
        assertNotNull(c, name + " is not registered");
        return c.count();
    }

    /**
     * Runs {@code n} tasks one after another, each taking 20 ms of the fake clock (past the
     * limiter's 10-ms spacing at 100/s, so the next one is admitted), then runs the tick, which
     * closes the window.
     */
    static void runBatch(PowerFlowExecutor e, FakeTicker t, ManualScheduler s, int n) throws Exception {
        long completed = e.stats().completed();
        for (int i = 0; i < n; i++) {
            long recorded = e.stats().recorded();
            e.submit(() -> t.advanceMillis(20)).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
            // The run time is stamped just after the Future completes: wait for it, so that the next
            // task's 20 ms are not counted in this one's.
            await(() -> e.stats().recorded() == recorded + 1, "recorded " + (recorded + 1));
        }
        await(() -> e.stats().completed() == completed + n, "completed " + (completed + n));
        s.runAll();
    }

    static PowerFlowExecutor.Builder driven(FakeTicker t, ManualScheduler s) {
        return PowerFlowExecutor.builder().rate(100).minRate(10).maxRate(200).targetP99(Duration.ofMillis(50))
                .ticker(t).scheduler(s);
    }

    /**
     * The README's binding, verbatim, on a real executor: after a forced GC and 50 more tasks,
     * the counters read what stats() says (100) and the gauges are numbers, not NaN.
     */
    @Test
    void theBindingKeepsReportingAfterAGarbageCollection() throws Exception {
        // @start region="binding"
        MeterRegistry registry = new SimpleMeterRegistry(); // or your application's registry
        PowerFlowExecutor executor = PowerFlowExecutor.builder()
                .name("orders")
                .observability(new MicrometerMetricsCollector(registry))
                .build();
        // @end
        try {
            for (int i = 0; i < 50; i++) {
                executor.submit(() -> { }).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
            }
            await(() -> executor.stats().completed() == 50, "50 completed");
            assertEquals(50.0, counter(registry, "power.flow.submitted", "orders"));
            forceGc();
            for (int i = 0; i < 50; i++) {
                executor.submit(() -> { }).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
            }
            await(() -> executor.stats().completed() == 100, "100 completed");
            PowerFlowExecutor.Stats st = executor.stats();
            assertEquals(100, st.submitted());
            assertEquals((double) st.submitted(), counter(registry, "power.flow.submitted", "orders"));
            assertEquals((double) st.completed(), counter(registry, "power.flow.completed", "orders"));
            assertEquals((double) st.admitted(), counter(registry, "power.flow.admitted", "orders"));
            assertEquals(0.0, counter(registry, "power.flow.dropped", "orders"));
            for (String g : List.of("power.flow.rate", "power.flow.depth", "power.flow.running",
                    "power.flow.pool.size", "power.flow.in.flight.limit", "power.flow.saturated", "power.flow.stale")) {
                assertFalse(Double.isNaN(gauge(registry, g, "orders")), g + " reads NaN after a GC");
            }
        } finally {
            executor.shutdownNow();
            assertTrue(executor.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        }
        assertEquals(Map.of(), meters(registry, "orders"), "every meter removed at termination");
    }

    /**
     * With the loop driven by hand: after a forced GC between two batches of 50 tasks, every
     * gauge is a number (the p99s too: each batch closed a window), every counter reads what
     * stats() says, and the p99 gauges are stats()'s milliseconds in seconds.
     */
    @Test
    void everyMeterFollowsStatsAcrossAGarbageCollection() throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        String name = unique("gc");
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = driven(t, s).name(name).observability(new MicrometerMetricsCollector(registry)).build();
        runBatch(e, t, s, 50);
        assertEquals(50.0, counter(registry, "power.flow.completed", name));
        double rateBefore = gauge(registry, "power.flow.rate", name);
        assertFalse(Double.isNaN(rateBefore));
        forceGc();
        runBatch(e, t, s, 50);

        PowerFlowExecutor.Stats st = e.stats();
        Map<String, Meter> meters = meters(registry, name);
        assertEquals(21, meters.size(), meters.keySet().toString());
        for (Meter m : meters.values()) {
            if (m instanceof Gauge g) {
                assertFalse(Double.isNaN(g.value()), m.getId().getName() + " reads NaN after a GC");
            }
        }
        assertEquals(100.0, counter(registry, "power.flow.submitted", name));
        assertEquals((double) st.submitted(), counter(registry, "power.flow.submitted", name));
        assertEquals((double) st.completed(), counter(registry, "power.flow.completed", name));
        assertEquals((double) st.admitted(), counter(registry, "power.flow.admitted", name));
        assertEquals((double) st.observations(), counter(registry, "power.flow.observations", name));
        assertEquals(2.0, counter(registry, "power.flow.observations", name));
        assertEquals(st.rate(), gauge(registry, "power.flow.rate", name));
        assertEquals(20.0, st.lastObservedP99(), 20 * 0.011);
        assertEquals(st.lastObservedP99() / 1000, gauge(registry, "power.flow.last.observed.p99", name));
        assertEquals(st.lastEndToEndP99() / 1000, gauge(registry, "power.flow.last.end.to.end.p99", name));
        shutdown(e);
        assertEquals(Map.of(), meters(registry, name), "every meter removed at termination");
    }

    /**
     * Every meter has a dotted lower-case name, the tags name and type only, a description, and
     * base unit seconds exactly where the library's unit is milliseconds; the controller's ten
     * meters likewise, removed by close().
     */
    @Test
    void namesTagsDescriptionsAndBaseUnitsFollowMicrometersConventions() throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        String name = unique("conv");
        PowerFlowExecutor e = driven(new FakeTicker(), new ManualScheduler()).name(name)
                .observability(new MicrometerMetricsCollector(registry)).build();
        String ctl = unique("conv-ctl");
        PowerFlowController<String> f = PowerFlowController.<String>builder().rate(100).minRate(10).maxRate(200)
                .name(ctl).observability(new MicrometerMetricsCollector(registry)).build();
        assertEquals(10, meters(registry, ctl).size());
        List<Meter> all = new ArrayList<>(meters(registry, name).values());
        all.addAll(meters(registry, ctl).values());
        for (Meter m : all) {
            Meter.Id id = m.getId();
            FlowMetric metric = FlowMetric.named(id.getName()).orElseThrow();
            assertTrue(id.getName().matches("[a-z0-9]+(\\.[a-z0-9]+)*"), id.getName());
            assertEquals(Set.of("name", "type"), id.getTags().stream().map(tag -> tag.getKey()).collect(Collectors.toSet()));
            assertEquals(metric.kind() == FlowMetric.Kind.GAUGE ? Meter.Type.GAUGE : Meter.Type.COUNTER, id.getType(),
                    id.getName());
            assertNotNull(id.getDescription(), id.getName());
            assertTrue(id.getDescription().startsWith(metric.description()), id.getName());
            assertEquals(metric.unit() == FlowMetric.Unit.MILLISECONDS ? "seconds" : null, id.getBaseUnit(),
                    id.getName());
        }
        assertEquals("executor", registry.get("power.flow.rate").tag("name", name).gauge().getId().getTag("type"));
        assertEquals("controller", registry.get("power.flow.rate").tag("name", ctl).gauge().getId().getTag("type"));
        assertTrue(registry.get("power.flow.rate").tag("name", name).gauge().getId().getDescription()
                .endsWith("in operations per second"));
        assertEquals("seconds", registry.get("power.flow.last.observed.p99").tag("name", ctl).gauge().getId()
                .getBaseUnit());
        f.close();
        assertEquals(Map.of(), meters(registry, ctl), "close() removes the controller's meters");
        shutdown(e);
    }

    /**
     * A second live executor with the same name in the same registry is refused at build, naming
     * the meter; the first keeps its meters and reads its own numbers.
     */
    @Test
    void aDuplicateNameIsRefusedNotBoundToTheFirstsMeter() throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        String name = unique("dup");
        PowerFlowExecutor first = driven(new FakeTicker(), new ManualScheduler()).name(name)
                .observability(new MicrometerMetricsCollector(registry)).build();
        IllegalStateException ex = assertThrows(IllegalStateException.class, () -> driven(new FakeTicker(),
                new ManualScheduler()).rate(150).name(name).observability(new MicrometerMetricsCollector(registry))
                .build());
        assertTrue(ex.getMessage().contains("power.flow.rate") && ex.getMessage().contains(name), ex.getMessage());
        assertEquals(21, meters(registry, name).size());
        assertEquals(100.0, gauge(registry, "power.flow.rate", name), "still the first executor's");
        shutdown(first);
        assertEquals(Map.of(), meters(registry, name));
    }

    /** Closing a registration twice removes its meter once: a meter registered meanwhile under the same id stays. */
    @Test
    void aSecondCloseDoesNotRemoveALaterMeter() {
        MeterRegistry registry = new SimpleMeterRegistry();
        MicrometerMetricsCollector c = new MicrometerMetricsCollector(registry);
        Map<String, String> tags = Map.of("name", "x", "type", "executor");
        MetricsCollector.Registration r = c.registerGauge("power.flow.rate", tags, () -> 1);
        r.close();
        assertNull(registry.find("power.flow.rate").gauge());
        MetricsCollector.Registration again = c.registerGauge("power.flow.rate", tags, () -> 2);
        r.close();
        assertEquals(2.0, registry.get("power.flow.rate").tags(Tags.of("name", "x", "type", "executor")).gauge().value());
        again.close();
        assertNull(registry.find("power.flow.rate").gauge());
    }

    /** A name the library does not define is registered as given, with no description and no unit. */
    @Test
    void anUnknownNameIsRegisteredPlain() {
        MeterRegistry registry = new SimpleMeterRegistry();
        MicrometerMetricsCollector c = new MicrometerMetricsCollector(registry);
        c.registerCounter("some.other", Map.of("name", "x"), () -> 7);
        FunctionCounter fc = registry.get("some.other").functionCounter();
        assertEquals(7.0, fc.count());
        assertNull(fc.getId().getBaseUnit());
        assertNull(fc.getId().getDescription());
    }

    /** Nulls are refused, naming the parameter. */
    @Test
    void nullsAreRefusedByName() {
        assertEquals("registry", assertThrows(NullPointerException.class,
                () -> new MicrometerMetricsCollector(null)).getMessage());
        MicrometerMetricsCollector c = new MicrometerMetricsCollector(new SimpleMeterRegistry());
        assertEquals("name", assertThrows(NullPointerException.class,
                () -> c.registerGauge(null, Map.of(), () -> 1)).getMessage());
        assertEquals("tags", assertThrows(NullPointerException.class,
                () -> c.registerGauge("g", null, () -> 1)).getMessage());
        assertEquals("value", assertThrows(NullPointerException.class,
                () -> c.registerCounter("c", Map.of(), null)).getMessage());
    }

    static void shutdown(PowerFlowExecutor e) throws InterruptedException {
        e.shutdownNow();
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
    }
}
