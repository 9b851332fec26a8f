package io.github.performancehelpers;

import static io.github.performancehelpers.JmxTest.SERVER;
import static io.github.performancehelpers.JmxTest.executorName;
import static io.github.performancehelpers.ObservabilityTest.executorTags;
import static io.github.performancehelpers.ObservabilityTest.unique;
import static io.github.performancehelpers.PowerFlowExecutorLoopTest.loop;
import static io.github.performancehelpers.PowerFlowExecutorLoopTest.runTaking;
import static io.github.performancehelpers.PowerFlowExecutorTest.terminate;
import static org.junit.jupiter.api.Assertions.*;

import java.util.Map;
import java.util.Set;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.metrics.InMemoryMetricsCollector;
import io.github.performancehelpers.metrics.MetricsCollector;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;

/**
 * One meaning per name across {@code stats()}, JMX and the metrics, and JMX that describes
 * itself: every attribute and each MBean has a description (not its name) with its unit.
 */
class OneMeaningPerNameTest {

    /** The attributes that have a unit, and that unit; every other attribute is a count, a flag or a string. */
    private static final Map<String, String> UNITS = Map.ofEntries(
            Map.entry("Rate", "operations per second"),
            Map.entry("MinRate", "operations per second"),
            Map.entry("MaxRate", "operations per second"),
            Map.entry("TargetP99", "milliseconds"),
            Map.entry("P99", "milliseconds"),
            Map.entry("LastObservedP99", "milliseconds"),
            Map.entry("QueueWaitP99", "milliseconds"),
            Map.entry("LastEndToEndP99", "milliseconds"));

    /**
     * With a completed window of 500 ms and a partial one of 7 ms, JMX P99 is stats().p99() (the
     * partial window, the seed's p99), JMX LastObservedP99 and the metric
     * power.flow.last.observed.p99 are stats().lastObservedP99() (the completed one).
     */
    @Test
    void theExecutorsP99NamesMeanWhatStatsMeans() throws Exception {
        String name = unique("names");
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        InMemoryMetricsCollector c = MetricsCollector.inMemory();
        PowerFlowExecutor e = loop(t, s).name(name).jmx(true).observability(c).build();
        runTaking(e, t, 500);
        t.advanceMillis(500);
        s.runAll(); // closes the 500-ms window
        runTaking(e, t, 7); // the partial window
        PowerFlowExecutor.Stats st = e.stats();
        assertEquals(7.0, st.p99(), 7 * 0.011);
        assertEquals(500.0, st.lastObservedP99(), 500 * 0.011);
        ObjectName on = executorName(name);
        assertEquals(st.p99(), (double) SERVER.getAttribute(on, "P99"));
        assertEquals(st.lastObservedP99(), (double) SERVER.getAttribute(on, "LastObservedP99"));
        assertEquals(st.lastObservedP99(), c.value("power.flow.last.observed.p99", executorTags(name)).doubleValue());
        assertEquals(st.lastEndToEndP99(), (double) SERVER.getAttribute(on, "LastEndToEndP99"));
        assertEquals(st.lastEndToEndP99(),
                c.value("power.flow.last.end.to.end.p99", executorTags(name)).doubleValue());
        terminate(e);
    }

    /** The same for a controller: JMX P99 is the partial window, LastObservedP99 the completed one. */
    @Test
    void theControllersP99NamesMeanWhatStatsMeans() throws Exception {
        String name = unique("names-ctl");
        PowerFlowController<String> f = PowerFlowController.<String>builder().rate(100).minRate(10).maxRate(200)
                .name(name).jmx(true).build();
        f.record(500);
        f.observe();
        f.record(7);
        ObjectName on = new ObjectName("io.github.performancehelpers:type=PowerFlowController,name=" + name);
        assertEquals(f.stats().p99(), (double) SERVER.getAttribute(on, "P99"));
        assertEquals(7.0, (double) SERVER.getAttribute(on, "P99"), 7 * 0.011);
        assertEquals(f.lastObservedP99(), (double) SERVER.getAttribute(on, "LastObservedP99"));
        assertEquals(500.0, (double) SERVER.getAttribute(on, "LastObservedP99"), 500 * 0.011);
        f.close();
    }

    /**
     * Every attribute of the executor's MBean, read from MBeanInfo through the platform MBean
     * server, has a description that is not its name and contains its unit where it has one (and
     * the unit in the standard "units" descriptor field); the MBean's own description says what it is.
     */
    @Test
    void everyExecutorAttributeIsDescribedWithItsUnit() throws Exception {
        String name = unique("desc");
        PowerFlowExecutor e = loop(new FakeTicker(), new ManualScheduler()).name(name).jmx(true).build();
        MBeanInfo info = SERVER.getMBeanInfo(executorName(name));
        assertDescribed(info, "PowerFlowExecutor");
        assertTrue(info.getDescription().contains("ExecutorService"), info.getDescription());
        terminate(e);
    }

    /** The same for the controller's MBean. */
    @Test
    void everyControllerAttributeIsDescribedWithItsUnit() throws Exception {
        String name = unique("desc-ctl");
        PowerFlowController<String> f = PowerFlowController.<String>builder().rate(100).minRate(10).maxRate(200)
                .name(name).jmx(true).build();
        MBeanInfo info = SERVER.getMBeanInfo(
                new ObjectName("io.github.performancehelpers:type=PowerFlowController,name=" + name));
        assertDescribed(info, "PowerFlowController");
        f.close();
    }

    private static void assertDescribed(MBeanInfo info, String type) {
        assertTrue(info.getDescription().startsWith("A " + type + " "), info.getDescription());
        assertTrue(info.getDescription().length() > 60, info.getDescription());
        Set<String> units = new java.util.HashSet<>();
        for (MBeanAttributeInfo a : info.getAttributes()) {
            String d = a.getDescription();
            assertNotNull(d, a.getName());
            assertNotEquals(a.getName(), d, "described by its own name");
            assertTrue(d.length() > 20 && d.contains(" "), a.getName() + ": " + d);
            String unit = UNITS.get(a.getName());
            Object field = a.getDescriptor().getFieldValue("units");
            if (unit != null) {
                assertTrue(d.endsWith(", in " + unit), a.getName() + ": " + d);
                assertEquals(unit, field, a.getName() + " units descriptor field");
                units.add(a.getName());
            } else {
                assertNull(field, a.getName() + " has no unit");
            }
        }
        assertTrue(units.containsAll(Set.of("Rate", "MinRate", "MaxRate", "TargetP99", "P99", "LastObservedP99")),
                units.toString());
    }
}
