package io.github.performancehelpers;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import io.github.performancehelpers.loop.FlowOptions;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.loop.PowerQueue;

/**
 * Values past what the code can represent, or that would exhaust memory or a core, are refused
 * by name: an {@link IllegalArgumentException} naming the option and the value, when the option
 * is set, never an {@code ArithmeticException} or {@code OutOfMemoryError} at {@code build()}.
 */
class OptionBoundsTest {

    static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE);
    static final Duration JUST_OVER = FlowOptions.MAX_DURATION.plusNanos(1);

    static void assertRefused(String prefix, Object value, Executable call) {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, call);
        assertTrue(x.getMessage().startsWith(prefix), x.getMessage());
        assertTrue(x.getMessage().endsWith(String.valueOf(value)), x.getMessage());
    }

    // ------------------------------------------------------------ durations that overflow

    /** targetP99 past MAX_DURATION is refused by name on the builder (both forms), not with an ArithmeticException. */
    @Test
    void anOverflowingTargetIsRefusedOnTheBuilder() {
        assertRefused("targetP99 must be at most", FOREVER, () -> PowerFlowExecutor.builder().targetP99(FOREVER));
        assertRefused("targetP99 must be at most", JUST_OVER, () -> PowerFlowExecutor.builder().targetP99(JUST_OVER));
        assertRefused("targetP99 must be at most", 1e300, () -> PowerFlowExecutor.builder().targetP99(1e300));
        assertRefused("targetP99 must be at most", FOREVER, () -> PowerFlowController.builder().targetP99(FOREVER));
    }

    /** targetP99 past MAX_DURATION is refused by name by both factories. */
    @Test
    void anOverflowingTargetIsRefusedByTheFactories() {
        assertRefused("targetP99 must be at most", FOREVER, () -> PowerExecutors.newFixedFlowPool(2, FOREVER));
        assertRefused("targetP99 must be at most", FOREVER, () -> PowerExecutors.newVirtualFlowExecutor(FOREVER));
        assertRefused("targetLatency must be at most", FOREVER, () -> PoolSizer.littlesLaw(FOREVER, 1, 10));
    }

    /** Every Duration option of the executor's builder refuses a value past MAX_DURATION by name. */
    @Test
    void everyDurationOptionHasAnUpperBound() {
        PowerFlowExecutor.Builder b = PowerFlowExecutor.builder();
        assertRefused("observeInterval must be at most", FOREVER, () -> b.observeInterval(FOREVER));
        assertRefused("staleAfter must be at most", FOREVER, () -> b.staleAfter(FOREVER));
        assertRefused("blockTimeout must be at most", FOREVER, () -> b.blockTimeout(FOREVER));
    }

    /** MAX_DURATION itself is accepted everywhere, and the executor builds and terminates. */
    @Test
    void theMaximumItselfIsAccepted() throws Exception {
        Duration max = FlowOptions.MAX_DURATION;
        try (PowerFlowExecutor e = PowerFlowExecutor.builder().targetP99(max).observeInterval(max)
                .blockTimeout(max).build()) {
            assertEquals(max.toMillis(), e.stats().targetP99(), 1e-3);
        }
        PowerExecutors.newVirtualFlowExecutor(max).close();
        PowerExecutors.newFixedFlowPool(1, max).close();
        assertEquals(10, PoolSizer.littlesLaw(max, 1, 10).poolSize(1));
    }

    // ------------------------------------------------------------ memory

    /** queueCapacity past MAX_QUEUE_CAPACITY is refused by name when set, before anything is allocated. */
    @Test
    void aQueueCapacityThatWouldExhaustMemoryIsRefused() {
        assertRefused("queueCapacity must be at most", Integer.MAX_VALUE,
                () -> PowerFlowExecutor.builder().queueCapacity(Integer.MAX_VALUE));
        assertRefused("queueCapacity must be at most", 50_000_000,
                () -> PowerFlowExecutor.builder().queueCapacity(50_000_000));
        assertRefused("queueCapacity must be at most", FlowOptions.MAX_QUEUE_CAPACITY + 1,
                () -> PowerFlowController.builder().queueCapacity(FlowOptions.MAX_QUEUE_CAPACITY + 1));
        assertRefused("capacity must be at most", Integer.MAX_VALUE, () -> new PowerQueue<>(Integer.MAX_VALUE));
    }

    /** The largest queue capacity is accepted and works. */
    @Test
    void theLargestQueueCapacityIsAccepted() throws Exception {
        try (PowerFlowExecutor e = PowerFlowExecutor.builder().queueCapacity(FlowOptions.MAX_QUEUE_CAPACITY).build()) {
            assertEquals(FlowOptions.MAX_QUEUE_CAPACITY, e.stats().queueCapacity());
            assertEquals("ok", e.submit(() -> "ok").get());
        }
    }

    // ------------------------------------------------------------ intervals

    /** observeInterval under MIN_OBSERVE_INTERVAL (1 ms) is refused by name; 1 ms is accepted. */
    @Test
    void aNonsenseObserveIntervalIsRefused() throws Exception {
        assertEquals("observeInterval must be >= PT0.001S: PT0.000000001S", assertThrows(IllegalArgumentException.class,
                () -> PowerFlowExecutor.builder().observeInterval(Duration.ofNanos(1))).getMessage());
        assertRefused("observeInterval must be >=", Duration.ofNanos(999_999),
                () -> PowerFlowExecutor.builder().observeInterval(Duration.ofNanos(999_999)));
        try (PowerFlowExecutor e = PowerFlowExecutor.builder().observeInterval(PowerFlowExecutor.MIN_OBSERVE_INTERVAL)
                .build()) {
            assertEquals("ok", e.submit(() -> "ok").get());
        }
    }

    /** staleAfter must be longer than the shortest observe interval, refused by name when set. */
    @Test
    void staleAfterFollowsTheObserveIntervalsBound() {
        assertRefused("staleAfter must be >=", Duration.ofMillis(1),
                () -> PowerFlowExecutor.builder().staleAfter(Duration.ofMillis(1)));
        assertRefused("staleAfter must be >=", Duration.ofNanos(1),
                () -> PowerFlowExecutor.builder().staleAfter(Duration.ofNanos(1)));
        assertDoesNotThrow(() -> PowerFlowExecutor.builder().staleAfter(Duration.ofMillis(1).plusNanos(1)));
    }
}
