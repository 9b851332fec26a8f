package io.github.performancehelpers;

import static io.github.performancehelpers.ObservabilityTest.unique;
import static io.github.performancehelpers.PowerFlowExecutorLoopTest.loop;
import static io.github.performancehelpers.PowerFlowExecutorLoopTest.runTaking;
import static io.github.performancehelpers.PowerFlowExecutorTest.await;
import static io.github.performancehelpers.PowerFlowExecutorTest.terminate;
import static org.junit.jupiter.api.Assertions.*;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.metrics.FlowMetric;
import io.github.performancehelpers.metrics.MetricsCollector;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;

/**
 * What the library promises a {@link MetricsCollector} bridge: the suppliers stay reachable while
 * the registration lives (a bridge may hold them weakly, as Micrometer does), a null
 * {@link MetricsCollector.Registration} is refused at build, and every name registered is a
 * {@link FlowMetric} of the kind it is registered as.
 */
class MetricsPublicationTest {

    /**
     * A collector that holds each supplier only through a {@link WeakReference}, as Micrometer's
     * gauges and function counters do, and can be told to return null for one registration.
     */
    static final class WeakCollector implements MetricsCollector {
        final Map<String, WeakReference<Object>> held = new HashMap<>();
        final Map<String, FlowMetric.Kind> kinds = new HashMap<>();
        final Set<String> open = new HashSet<>();
        final AtomicInteger closes = new AtomicInteger();
        private final String nullFor;

        WeakCollector(String nullFor) {
            this.nullFor = nullFor;
        }

        @Override
        public Registration registerGauge(String name, Map<String, String> tags, DoubleSupplier value) {
            return add(name, FlowMetric.Kind.GAUGE, value);
        }

        @Override
        public Registration registerCounter(String name, Map<String, String> tags, LongSupplier value) {
            return add(name, FlowMetric.Kind.COUNTER, value);
        }

        private Registration add(String name, FlowMetric.Kind kind, Object value) {
            if (name.equals(nullFor)) {
                return null;
            }
            held.put(name, new WeakReference<>(value));
            kinds.put(name, kind);
            open.add(name);
            return () -> {
                closes.incrementAndGet();
                open.remove(name);
            };
        }

        /** Reads a metric through its weak reference; fails if the supplier was collected. */
        double read(String name) {
            Object s = held.get(name).get();
            assertNotNull(s, name + ": its supplier was garbage-collected while registered");
            return s instanceof DoubleSupplier d ? d.getAsDouble() : ((LongSupplier) s).getAsLong();
        }

        @Override
        public String toString() {
            return "WeakCollector";
        }
    }

    /**
     * Runs garbage collections until a weakly held sentinel is cleared, so that at least one
     * collection that clears weak references has happened (a System.gc() alone is only a hint).
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

    /** Every supplier the executor registers survives a GC while registered, and still reads the executor live. */
    @Test
    void theExecutorsSuppliersSurviveAGarbageCollection() throws Exception {
        WeakCollector c = new WeakCollector(null);
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = loop(t, s).name(unique("weak")).observability(c).build();
        assertEquals(21, c.held.size());
        runTaking(e, t, 20); // 20 ms: past the limiter's 10-ms spacing at 100/s, so the next task is admitted
        forceGc();
        for (String name : c.held.keySet()) {
            c.read(name); // fails if collected
        }
        runTaking(e, t, 20);
        await(() -> e.stats().completed() == 2);
        assertEquals(2.0, c.read("power.flow.completed"));
        assertEquals(100.0, c.read("power.flow.rate"));
        terminate(e);
        assertEquals(Set.of(), c.open, "every registration closed at termination");
    }

    /** Every supplier the controller registers survives a GC while registered. */
    @Test
    void theControllersSuppliersSurviveAGarbageCollection() throws Exception {
        WeakCollector c = new WeakCollector(null);
        PowerFlowController<String> f = PowerFlowController.<String>builder().rate(100).minRate(10).maxRate(200)
                .name(unique("weak-ctl")).observability(c).build();
        assertEquals(10, c.held.size());
        forceGc();
        assertTrue(f.submit("a"));
        for (String name : c.held.keySet()) {
            c.read(name);
        }
        assertEquals(1.0, c.read("power.flow.submitted"));
        f.close();
        assertEquals(Set.of(), c.open);
    }

    /**
     * A collector that returns a null Registration fails the executor's build with an
     * IllegalArgumentException naming the collector and the metric; what was registered before it
     * is closed, and no thread was started.
     */
    @Test
    void aNullRegistrationFailsTheExecutorsBuild() {
        String name = unique("null-reg");
        WeakCollector c = new WeakCollector("power.flow.depth");
        ManualScheduler s = new ManualScheduler();
        IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> loop(new FakeTicker(), s).name(name).observability(c).build());
        assertTrue(ex.getMessage().contains("WeakCollector"), ex.getMessage());
        assertTrue(ex.getMessage().contains("power.flow.depth{name=" + name + ",type=executor}"), ex.getMessage());
        assertEquals(Set.of(), c.open, "the registrations made before the null one are closed");
        assertEquals(2, c.closes.get(), "rate and last.observed.p99 came first");
        assertTrue(s.all().isEmpty(), "the refused executor must not have scheduled its tick");
    }

    /** The same for a controller: a null Registration fails its build, naming the collector and the metric. */
    @Test
    void aNullRegistrationFailsTheControllersBuild() {
        String name = unique("null-reg-ctl");
        WeakCollector c = new WeakCollector("power.flow.recorded");
        IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> PowerFlowController
                .<String>builder().rate(100).minRate(10).maxRate(200).name(name).observability(c).build());
        assertTrue(ex.getMessage().contains("WeakCollector"), ex.getMessage());
        assertTrue(ex.getMessage().contains("power.flow.recorded{name=" + name + ",type=controller}"),
                ex.getMessage());
        assertEquals(Set.of(), c.open);
    }

    /**
     * Every name the executor and the controller register is a FlowMetric of the kind it is
     * registered as, every FlowMetric is registered by the executor (but RECORDED, the controller's),
     * and registeredByController() says which the controller registers.
     */
    @Test
    void everyRegisteredNameIsAFlowMetricOfItsKind() throws Exception {
        WeakCollector ex = new WeakCollector(null);
        PowerFlowExecutor e = loop(new FakeTicker(), new ManualScheduler()).name(unique("cat")).observability(ex)
                .build();
        WeakCollector ctl = new WeakCollector(null);
        PowerFlowController<String> f = PowerFlowController.<String>builder().rate(100).minRate(10).maxRate(200)
                .name(unique("cat-ctl")).observability(ctl).build();
        List<String> missing = new ArrayList<>();
        for (FlowMetric m : FlowMetric.values()) {
            assertEquals(m, FlowMetric.named(m.metricName()).orElseThrow());
            assertEquals(m != FlowMetric.RECORDED, ex.kinds.get(m.metricName()) == m.kind(), m + " by the executor");
            assertEquals(m.registeredByController(), ctl.kinds.get(m.metricName()) == m.kind(), m + " by the controller");
            assertTrue(m.metricName().matches("[a-z0-9]+(\\.[a-z0-9]+)*"), m.metricName());
            assertFalse(m.description().isBlank(), m.toString());
        }
        for (String n : ex.kinds.keySet()) {
            if (FlowMetric.named(n).isEmpty()) {
                missing.add(n);
            }
        }
        assertEquals(List.of(), missing);
        assertTrue(FlowMetric.named("power.flow.p99").isEmpty(), "the ambiguous name is gone");
        f.close();
        terminate(e);
    }
}
