package io.github.performancehelpers.metrics;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The in-memory {@link MetricsCollector}: keys, live reads, refusal of duplicates, unregistering. */
class InMemoryMetricsCollectorTest {

    /** The key is the name followed by the tags sorted by tag name. */
    @Test
    void theKeyIsTheNameAndTheSortedTags() {
        assertEquals("power.flow.rate{name=orders,type=executor}",
                InMemoryMetricsCollector.key("power.flow.rate", Map.of("type", "executor", "name", "orders")));
        assertEquals("x{}", InMemoryMetricsCollector.key("x", Map.of()));
    }

    /** Suppliers are read at snapshot time: the snapshot shows the current value, gauges as Double and counters as Long. */
    @Test
    void aSnapshotReadsTheSuppliersNow() {
        InMemoryMetricsCollector c = MetricsCollector.inMemory();
        AtomicLong n = new AtomicLong(3);
        c.registerCounter("c", Map.of("name", "a"), n::get);
        c.registerGauge("g", Map.of("name", "a"), () -> 1.5);
        assertEquals(Map.of("c{name=a}", 3L, "g{name=a}", 1.5), c.snapshot());
        n.set(7);
        assertEquals(7L, c.snapshot().get("c{name=a}"));
        assertEquals(7L, c.value("c", Map.of("name", "a")));
        assertNull(c.value("c", Map.of("name", "b")));
    }

    /** A second registration under a live key is refused, naming the key; the first stays in place. */
    @Test
    void aDuplicateKeyIsRefusedNotOverwritten() {
        InMemoryMetricsCollector c = MetricsCollector.inMemory();
        c.registerGauge("g", Map.of("name", "a"), () -> 1);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> c.registerGauge("g", Map.of("name", "a"), () -> 2));
        assertTrue(e.getMessage().contains("g{name=a}"), e.getMessage());
        assertEquals(1.0, c.value("g", Map.of("name", "a")));
    }

    /** Closing a registration removes the metric and frees its key; closing twice does nothing more. */
    @Test
    void closingFreesTheKey() {
        InMemoryMetricsCollector c = MetricsCollector.inMemory();
        MetricsCollector.Registration r = c.registerGauge("g", Map.of(), () -> 1);
        r.close();
        assertEquals(0, c.size());
        MetricsCollector.Registration again = c.registerGauge("g", Map.of(), () -> 2);
        r.close(); // the old handle must not remove the new registration
        assertEquals(2.0, c.value("g", Map.of()));
        again.close();
        assertEquals(0, c.size());
    }

    /** Nulls are refused, naming the parameter. */
    @Test
    void nullsAreRefused() {
        InMemoryMetricsCollector c = MetricsCollector.inMemory();
        assertEquals("name", assertThrows(NullPointerException.class, () -> c.registerGauge(null, Map.of(), () -> 1)).getMessage());
        assertEquals("tags", assertThrows(NullPointerException.class, () -> c.registerGauge("g", null, () -> 1)).getMessage());
        assertEquals("value", assertThrows(NullPointerException.class, () -> c.registerCounter("g", Map.of(), null)).getMessage());
    }

    /** shared() is one process-wide instance. */
    @Test
    void sharedIsOneInstance() {
        assertSame(MetricsCollector.shared(), MetricsCollector.shared());
        assertNotSame(MetricsCollector.inMemory(), MetricsCollector.inMemory());
    }
}
