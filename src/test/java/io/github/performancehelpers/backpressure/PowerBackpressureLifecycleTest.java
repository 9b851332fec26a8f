package io.github.performancehelpers.backpressure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The default, library-owned scheduler: daemon, created only when needed, gone after close(). */
class PowerBackpressureLifecycleTest {

    private static List<Thread> refillThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("PowerBackpressure-refill"))
                .toList();
    }

    /** An instance that never comes under pressure starts no thread. */
    @Test
    void noThreadWithoutPressure() {
        int before = refillThreads().size();
        try (PowerBackpressure bp = PowerBackpressure.builder().capacity(8).build()) {
            bp.tryAcquire().orElseThrow().release();
            assertEquals(before, refillThreads().size());
            assertFalse(bp.stats().refillScheduled());
        }
    }

    /** The default scheduler runs the tick on a daemon thread, and close() shuts it down: the thread terminates. */
    @Test
    void defaultSchedulerThreadIsDaemonAndTerminatesOnClose() throws Exception {
        List<Thread> before = refillThreads();
        PowerBackpressure bp = PowerBackpressure.builder().capacity(4).initialTokens(0)
                .refillInterval(Duration.ofMillis(1)).build();
        PowerBackpressureTest.await(() -> bp.available() > 0); // the real tick ran
        List<Thread> mine = refillThreads().stream().filter(t -> !before.contains(t)).toList();
        assertEquals(1, mine.size());
        Thread refill = mine.get(0);
        assertTrue(refill.isDaemon());
        bp.close();
        refill.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(refill.isAlive());
        assertFalse(bp.stats().refillScheduled());
    }
}
