package io.github.performancehelpers;

import static io.github.performancehelpers.ObservabilityTest.fillAndDrop;
import static io.github.performancehelpers.ObservabilityTest.unique;
import static io.github.performancehelpers.PowerFlowExecutorLoopTest.loop;
import static io.github.performancehelpers.PowerFlowExecutorLoopTest.pausing;
import static io.github.performancehelpers.PowerFlowExecutorLoopTest.runTaking;
import static io.github.performancehelpers.PowerFlowExecutorTest.await;
import static io.github.performancehelpers.PowerFlowExecutorTest.terminate;
import static org.junit.jupiter.api.Assertions.*;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.openmbean.OpenType;
import javax.management.openmbean.SimpleType;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;
import io.github.performancehelpers.metrics.InMemoryMetricsCollector;
import io.github.performancehelpers.metrics.MetricsCollector;
import io.github.performancehelpers.metrics.PowerFlowExecutorMXBean;

/**
 * The MXBeans, through the platform MBean server, read by attribute name as {@code jconsole}
 * reads them: registered when asked, live, open types only, gone at termination or close, and a
 * duplicate name refused rather than overwritten.
 */
class JmxTest {

    static final MBeanServer SERVER = ManagementFactory.getPlatformMBeanServer();

    static ObjectName executorName(String name) throws Exception {
        return new ObjectName("io.github.performancehelpers:type=PowerFlowExecutor,name=" + name);
    }

    /** jmx(true) registers the executor under type=PowerFlowExecutor,name=<name>; its attributes follow the executor's state. */
    @Test
    void theExecutorMXBeanFollowsTheExecutor() throws Exception {
        String name = unique("jmx");
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = loop(t, s).name(name).jmx(true).build();
        ObjectName on = executorName(name);
        assertTrue(SERVER.isRegistered(on));
        assertEquals(name, SERVER.getAttribute(on, "Name"));
        assertEquals("RUNNING", SERVER.getAttribute(on, "State"));
        assertEquals(100.0, SERVER.getAttribute(on, "Rate"));
        assertEquals(10, SERVER.getAttribute(on, "PoolSize"));
        assertEquals(0L, SERVER.getAttribute(on, "Completed"));
        assertEquals(Boolean.FALSE, SERVER.getAttribute(on, "Saturated"));

        runTaking(e, t, 500);
        await(() -> e.stats().completed() == 1); // counted just after the run time is recorded
        t.advanceMillis(500);
        s.runAll();
        assertEquals(1L, SERVER.getAttribute(on, "Completed"));
        assertEquals(1L, SERVER.getAttribute(on, "Observations"));
        // The executor's PI law starts at its rate: 100 + kp x (45 - 500), the loop's target nine tenths of 50.
        double rate = (double) SERVER.getAttribute(on, "Rate");
        assertEquals(77.25, rate, 0.05 * 500 * 0.011);
        assertEquals((int) Math.ceil(2 * rate * 0.05), SERVER.getAttribute(on, "PoolSize")); // littlesLaw(50 ms)
        assertEquals(Boolean.FALSE, SERVER.getAttribute(on, "Saturated"));
        assertEquals(500.0, (double) SERVER.getAttribute(on, "LastObservedP99"), 500 * 0.011);
        assertEquals(Boolean.FALSE, SERVER.getAttribute(on, "Stale"));
        t.advanceMillis(3001);
        assertEquals(Boolean.TRUE, SERVER.getAttribute(on, "Stale"));
        assertEquals(1L, SERVER.getAttribute(on, "StaleEpisodes"));
        terminate(e);
        assertFalse(SERVER.isRegistered(on), "unregistered at termination");
    }

    /** Dropped, Rejected and Depth move when the queue refuses a task. */
    @Test
    void dropsShowInJmx() throws Exception {
        String name = unique("jmx");
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(100).minRate(10).queueCapacity(1)
                .ticker(new FakeTicker()).scheduler(new ManualScheduler()).name(name).jmx(true).build();
        ObjectName on = executorName(name);
        assertEquals(0L, SERVER.getAttribute(on, "Dropped"));
        fillAndDrop(e);
        assertEquals(1L, SERVER.getAttribute(on, "Dropped"));
        assertEquals(1L, SERVER.getAttribute(on, "Rejected"));
        assertEquals(1, SERVER.getAttribute(on, "Depth"));
        assertEquals(1, SERVER.getAttribute(on, "QueueCapacity"));
        e.shutdown();
        assertEquals("SHUTTING_DOWN", SERVER.getAttribute(on, "State"));
        terminate(e);
        assertFalse(SERVER.isRegistered(on));
    }

    /** Every attribute is a read-only open type (SimpleType), so a generic JMX console can show it. */
    @Test
    void everyAttributeIsAnOpenType() throws Exception {
        String name = unique("jmx");
        PowerFlowExecutor e = loop(new FakeTicker(), new ManualScheduler()).name(name).jmx(true).build();
        MBeanAttributeInfo[] attrs = SERVER.getMBeanInfo(executorName(name)).getAttributes();
        assertEquals(PowerFlowExecutorMXBean.class.getMethods().length, attrs.length);
        for (MBeanAttributeInfo a : attrs) {
            OpenType<?> type = (OpenType<?>) a.getDescriptor().getFieldValue("openType");
            assertInstanceOf(SimpleType.class, type, a.getName());
            assertTrue(a.isReadable() && !a.isWritable(), a.getName());
        }
        terminate(e);
    }

    /** A second live executor with the same name is refused at build with the ObjectName in the message; the first stays registered and live. */
    @Test
    void aDuplicateNameIsRefusedNotOverwritten() throws Exception {
        String name = unique("jmx");
        PowerFlowExecutor first = loop(new FakeTicker(), new ManualScheduler()).name(name).jmx(true).build();
        ManualScheduler s2 = new ManualScheduler();
        IllegalStateException ex = assertThrows(IllegalStateException.class, () -> PowerFlowExecutor.builder()
                .rate(50).minRate(10).ticker(new FakeTicker()).scheduler(s2).name(name).jmx(true).build());
        assertTrue(ex.getMessage().contains(executorName(name).toString()), ex.getMessage());
        assertTrue(s2.all().isEmpty(), "the refused executor must not have started");
        assertEquals(100.0, SERVER.getAttribute(executorName(name), "Rate"), "still the first executor");
        terminate(first);
        assertFalse(SERVER.isRegistered(executorName(name)));
        // the name is free again
        PowerFlowExecutor again = loop(new FakeTicker(), new ManualScheduler()).name(name).jmx(true).build();
        assertTrue(SERVER.isRegistered(executorName(name)));
        terminate(again);
    }

    /** A failure after the metrics were registered (the JMX name is taken) leaves no metric behind. */
    @Test
    void aRefusedBuildLeavesNoMetric() throws Exception {
        String name = unique("jmx");
        PowerFlowExecutor first = loop(new FakeTicker(), new ManualScheduler()).name(name).jmx(true).build();
        InMemoryMetricsCollector c = MetricsCollector.inMemory();
        assertThrows(IllegalStateException.class, () -> loop(new FakeTicker(), new ManualScheduler()).name(name)
                .observability(c).jmx(true).build());
        assertEquals(0, c.size());
        terminate(first);
    }

    /** A name with characters an ObjectName reserves is quoted, not refused. */
    @Test
    void aNameWithReservedCharactersIsQuoted() throws Exception {
        String name = unique("a,b=c:d");
        PowerFlowExecutor e = loop(new FakeTicker(), new ManualScheduler()).name(name).jmx(true)
                .observeInterval(Duration.ofSeconds(1)).build();
        ObjectName on = new ObjectName("io.github.performancehelpers:type=PowerFlowExecutor,name=" + ObjectName.quote(name));
        assertEquals(name, SERVER.getAttribute(on, "Name"));
        terminate(e);
        assertFalse(SERVER.isRegistered(on));
    }

    /**
     * The executor's PausesExcused: a tick 300 ms after its 1-s interval (a pause of the process)
     * excuses the window under the knee-aware law, and the attribute reads 1.
     */
    @Test
    void theExecutorCountsAnExcusedPause() throws Exception {
        String name = unique("jmx-pause");
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = pausing(t, s).name(name).jmx(true).build();
        ObjectName on = new ObjectName("io.github.performancehelpers:type=PowerFlowExecutor,name=" + name);
        e.submit(() -> { }).get(PowerFlowExecutorTest.LONG_DELAY_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
        await(() -> e.stats().recorded() == 1);
        assertEquals(0L, SERVER.getAttribute(on, "PausesExcused"));
        t.advanceMillis(1300);
        s.runAll();
        assertEquals(1L, SERVER.getAttribute(on, "PausesExcused"));
        terminate(e);
    }

    /** The controller's MXBean: type=PowerFlowController, live attributes, unregistered by close(). */
    @Test
    void theControllerMXBeanLivesUntilClose() throws Exception {
        String name = unique("jmx-ctl");
        PowerFlowController<String> f = PowerFlowController.<String>builder().rate(100).minRate(10).maxRate(200)
                .queueCapacity(2).name(name).jmx(true).build();
        ObjectName on = new ObjectName("io.github.performancehelpers:type=PowerFlowController,name=" + name);
        assertEquals(0L, SERVER.getAttribute(on, "Submitted"));
        f.submit("a");
        f.submit("b");
        f.submit("c");
        assertEquals(2L, SERVER.getAttribute(on, "Submitted"));
        assertEquals(1L, SERVER.getAttribute(on, "Dropped"));
        assertEquals(2, SERVER.getAttribute(on, "Depth"));
        f.record(500);
        assertEquals(500.0, (double) SERVER.getAttribute(on, "P99"), 500 * 0.011);
        f.observe();
        assertEquals(1L, SERVER.getAttribute(on, "Observations"));
        assertEquals(10.0, SERVER.getAttribute(on, "Rate"));
        assertEquals(Boolean.TRUE, SERVER.getAttribute(on, "Saturated"));
        assertThrows(IllegalStateException.class, () -> PowerFlowController.<String>builder().rate(1).minRate(1)
                .maxRate(2).name(name).jmx(true).build());
        f.close();
        assertFalse(SERVER.isRegistered(on));
    }
}
