package io.github.performancehelpers;

import static io.github.performancehelpers.PowerFlowExecutorTest.LONG_DELAY_MS;
import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.loop.PowerFlowController;

/** The one-line factories and the Little's-law pool sizer. */
class PowerExecutorsTest {

    /** littlesLaw sizes at ceil(2 × rate × target), clamped to [min, max]. */
    @Test
    void littlesLawSizesWithTwiceTheHeadroom() {
        PoolSizer s = PoolSizer.littlesLaw(Duration.ofMillis(50), 2, 40);
        assertEquals(10, s.poolSize(100));   // 2 × 100/s × 0.05 s
        assertEquals(11, s.poolSize(101));   // ceil(10.1)
        assertEquals(2, s.poolSize(1));      // floor
        assertEquals(40, s.poolSize(1e6));   // ceiling
        assertEquals(40, s.poolSize(Double.MAX_VALUE));
        assertEquals(2, s.poolSize(Double.NaN));
    }

    /** littlesLaw validates its arguments, naming them. */
    @Test
    void littlesLawValidates() {
        assertThrows(NullPointerException.class, () -> PoolSizer.littlesLaw(null, 1, 2));
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                () -> PoolSizer.littlesLaw(Duration.ZERO, 1, 2));
        assertEquals("targetLatency must be positive: PT0S", x.getMessage());
        x = assertThrows(IllegalArgumentException.class, () -> PoolSizer.littlesLaw(Duration.ofMillis(1), 0, 2));
        assertEquals("min must be >= 1: 0", x.getMessage());
        x = assertThrows(IllegalArgumentException.class, () -> PoolSizer.littlesLaw(Duration.ofMillis(1), 3, 2));
        assertEquals("max must be >= min: max=2, min=3", x.getMessage());
    }

    /**
     * newFixedFlowPool(n, W): no rate limit of its own (maxRate = rate = the open rate, minRate
     * 1/s, nothing derived from n / W), a queue of 10,000, an owned pool of at most n threads.
     */
    @Test
    void newFixedFlowPoolDerivesItsSettings() throws Exception {
        PowerFlowExecutor e;
        try (PowerFlowExecutor executor = PowerExecutors.newFixedFlowPool(8, Duration.ofMillis(50))) {
            e = executor;
            PowerFlowExecutor.Stats st = executor.stats();
            assertEquals(PowerFlowExecutor.OPEN_RATE, st.maxRate(), 1e-9);
            assertEquals(PowerFlowExecutor.OPEN_RATE, st.rate(), 1e-9);
            assertEquals(1.0, st.minRate(), 1e-9);
            assertEquals(50, st.targetP99(), 1e-9);
            assertEquals(10_000, st.queueCapacity());
            assertEquals(8, st.poolSize()); // the pool stays at n: the rate is the one actuator
            Future<String> f = executor.submit(() -> Thread.currentThread().getName());
            String worker = f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
            assertTrue(worker.startsWith(executor.name() + "-worker-"), worker);
        }
        assertTrue(e.isTerminated());
        assertEquals(0, PowerFlowExecutorTest.awaitNoLiveThreadsNamed(e.name() + "-"));
    }

    /** newVirtualFlowExecutor(W) runs each task on a virtual thread, under the default 10,000 ceiling. */
    @Test
    void newVirtualFlowExecutorRunsOnVirtualThreads() throws Exception {
        try (ExecutorService executor = PowerExecutors.newVirtualFlowExecutor(Duration.ofMillis(20))) {
            assertTrue(executor.submit(() -> Thread.currentThread().isVirtual()).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            PowerFlowExecutor.Stats st = ((PowerFlowExecutor) executor).stats();
            assertEquals(PowerFlowExecutor.OPEN_RATE, st.maxRate(), 1e-6);
            assertEquals(10_000, st.poolSize());
            assertEquals(10_000, st.queueCapacity());
        }
    }

    /** Both factories run the knee-aware law: it needs no gains rescaled to the pool's scale. */
    @Test
    void factoriesUseTheKneeAwareLaw() throws Exception {
        try (PowerFlowExecutor executor = PowerExecutors.newFixedFlowPool(64, Duration.ofMillis(60))) {
            assertEquals(PowerFlowController.ControlLaw.KNEE_AWARE, executor.controller().controlLaw());
        }
        try (PowerFlowExecutor executor = PowerExecutors.newVirtualFlowExecutor(Duration.ofMillis(60))) {
            assertEquals(PowerFlowController.ControlLaw.KNEE_AWARE, executor.controller().controlLaw());
        }
    }

    /**
     * A loose target does not slow the pool: newFixedFlowPool(1, 10 s) once ran 0.1 task a second
     * (its ceiling was n / W); now a burst of quick tasks runs at once, none refused.
     */
    @Test
    void aLooseTargetDoesNotThrottle() throws Exception {
        try (PowerFlowExecutor executor = PowerExecutors.newFixedFlowPool(1, Duration.ofSeconds(10))) {
            java.util.List<Future<?>> fs = new java.util.ArrayList<>();
            for (int i = 0; i < 200; i++) {
                fs.add(executor.submit(() -> { }));
            }
            for (Future<?> f : fs) {
                f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
            }
            // A task's Future completes before its worker counts it: wait for the count, not the futures.
            PowerFlowExecutorTest.await(() -> executor.stats().completed() >= 200);
            assertEquals(0, executor.stats().rejected());
            assertEquals(200, executor.stats().completed());
        }
    }

    /** A batch larger than the factory's queue is refused at the door with QueueFullException, not queued without bound. */
    @Test
    void newFixedFlowPoolRefusesBeyondItsQueue() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        PowerFlowExecutor executor = PowerExecutors.newFixedFlowPool(1, Duration.ofSeconds(1000));
        try {
            assertEquals(10_000, executor.stats().queueCapacity());
            int accepted = 0;
            QueueFullException refused = null;
            for (int i = 0; i < 10_010 && refused == null; i++) {
                try {
                    executor.execute(() -> {
                        try {
                            release.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
                    accepted++;
                } catch (QueueFullException e) {
                    refused = e;
                }
            }
            assertNotNull(refused, "a full queue must refuse");
            // The queue's 10,000, plus at most one the dispatcher has taken and one running.
            assertTrue(accepted >= 10_000 && accepted <= 10_002, "accepted " + accepted);
        } finally {
            release.countDown();
            executor.shutdownNow();
            assertTrue(executor.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        }
    }

    /** The factories validate their arguments. */
    @Test
    void factoriesValidate() {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                () -> PowerExecutors.newFixedFlowPool(0, Duration.ofMillis(1)));
        assertEquals("nThreads must be >= 1: 0", x.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PowerExecutors.newFixedFlowPool(1, Duration.ZERO));
        assertThrows(NullPointerException.class, () -> PowerExecutors.newFixedFlowPool(1, null));
        assertThrows(NullPointerException.class, () -> PowerExecutors.newVirtualFlowExecutor(null));
        assertThrows(IllegalArgumentException.class, () -> PowerExecutors.newVirtualFlowExecutor(Duration.ofMillis(-1)));
    }
}
