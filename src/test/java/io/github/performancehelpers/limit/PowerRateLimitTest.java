package io.github.performancehelpers.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.testsupport.FakeTicker;

/** PowerRateLimit: all components or none, and available() is the minimum. */
class PowerRateLimitTest {

    private final FakeTicker clock = new FakeTicker(5_000L);

    private PowerGCRA gcra(double rate, double burst) {
        return PowerGCRA.builder().rate(rate).burst(burst).ticker(clock).build();
    }

    /** The seed's example: a global 200/s burst 50 ceiling plus a stricter 10/s per-tenant limiter. */
    @Test
    void globalPlusPerTenantExample() {
        PowerGCRA global = gcra(200, 50);
        PowerGCRA tenant = gcra(10, 9);
        PowerRateLimit limiter = PowerRateLimit.of(global, tenant);
        int admitted = 0;
        for (int i = 0; i < 30; i++) {
            if (limiter.tryConsume()) {
                admitted++;
            }
        }
        assertEquals(10, admitted);
        assertEquals(51 - 10, global.available());
        assertEquals(0, tenant.available());
        clock.advance(Duration.ofMillis(100));
        assertTrue(limiter.tryConsume());
        assertFalse(limiter.tryConsume());
    }

    /** A composed idle GCRA does not refuse: its available() is burst + 1, not 0. */
    @Test
    void idleGcraComposesWithoutRefusing() {
        PowerRateLimit limiter = PowerRateLimit.of(gcra(3, 7));
        assertEquals(8, limiter.available());
        assertTrue(limiter.tryConsume(8));
    }

    /** available() is the minimum of the components'. */
    @Test
    void availableIsMinimum() {
        PowerGCRA a = gcra(100, 20);
        PowerGCRA b = gcra(100, 4);
        PowerRateLimit limiter = PowerRateLimit.of(List.of(a, b));
        assertEquals(5, limiter.available());
        assertTrue(b.tryConsume(3));
        assertEquals(2, limiter.available());
        assertTrue(limiter.hasCapacity());
    }

    /** A batch refused by one component charges no other. */
    @Test
    void refusedBatchChargesNoComponent() {
        PowerGCRA a = gcra(100, 20);
        PowerGCRA b = gcra(100, 4);
        PowerRateLimit limiter = PowerRateLimit.of(a, b);
        assertFalse(limiter.tryConsume(6));
        assertEquals(21, a.available());
        assertEquals(5, b.available());
        assertTrue(limiter.tryConsume(5));
        assertEquals(16, a.available());
    }

    /** A component that refuses after the pre-check (shared elsewhere) gets the charged ones refunded. */
    @Test
    void lateRefusalIsRolledBack() {
        PowerGCRA a = gcra(100, 20);
        assertTrue(a.tryConsume(4));
        double tatBefore = a.stats().tatNanos();
        RateLimiter liar = new RateLimiter() { // reports room but refuses, like a limiter drained meanwhile
            @Override
            public boolean tryConsume(long n) {
                return false;
            }

            @Override
            public long available() {
                return 100;
            }
        };
        PowerRateLimit limiter = PowerRateLimit.of(liar, a); // the foreign component is charged last anyway
        assertFalse(limiter.tryConsume(3));
        assertEquals(tatBefore, a.stats().tatNanos());
        assertEquals(17, a.available());
    }

    /** A nested composite is refunded too. */
    @Test
    void nestedCompositeIsRolledBack() {
        PowerGCRA a = gcra(100, 20);
        PowerGCRA b = gcra(100, 20);
        RateLimiter refusing = new RateLimiter() {
            @Override
            public boolean tryConsume(long n) {
                return false;
            }

            @Override
            public long available() {
                return 1_000;
            }
        };
        PowerRateLimit outer = PowerRateLimit.of(PowerRateLimit.of(a, b), refusing);
        assertFalse(outer.tryConsume(2));
        assertEquals(21, a.available());
        assertEquals(21, b.available());
    }

    /** Counts of zero or below are a no-op that succeeds. */
    @Test
    void nonPositiveCountsAreNoOps() {
        PowerGCRA a = gcra(1, 0);
        PowerRateLimit limiter = PowerRateLimit.of(a);
        assertTrue(limiter.tryConsume(0));
        assertTrue(limiter.tryConsume(-3));
        assertEquals(1, a.available());
    }

    /** components() lists them in order and cannot be modified; the input list is copied. */
    @Test
    void componentsInOrderUnmodifiable() {
        PowerGCRA a = gcra(1, 0);
        PowerGCRA b = gcra(2, 0);
        List<RateLimiter> input = new ArrayList<>(List.of(a, b));
        PowerRateLimit limiter = PowerRateLimit.of(input);
        input.clear();
        assertEquals(List.of(a, b), limiter.components());
        assertThrows(UnsupportedOperationException.class, () -> limiter.components().add(a));
    }

    /** Null and empty inputs are rejected, naming the parameter. */
    @Test
    void validation() {
        assertEquals("components", assertThrows(NullPointerException.class,
                () -> PowerRateLimit.of((RateLimiter[]) null)).getMessage());
        assertEquals("components", assertThrows(NullPointerException.class,
                () -> PowerRateLimit.of((List<RateLimiter>) null)).getMessage());
        assertEquals("components[1]", assertThrows(NullPointerException.class,
                () -> PowerRateLimit.of(Arrays.asList(gcra(1, 0), null))).getMessage());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, PowerRateLimit::of);
        assertTrue(e.getMessage().contains("components"), e.getMessage());
    }

    /** 8 threads, random batches, frozen clock: every component is charged exactly what the composite admitted. */
    @Test
    void allOrNoneUnderConcurrency() throws InterruptedException {
        PowerGCRA global = gcra(200, 50);
        PowerGCRA tenant = gcra(10, 9);
        PowerRateLimit limiter = PowerRateLimit.of(global, tenant);
        AtomicLong admitted = new AtomicLong();
        PowerGCRAConcurrencyTest.runThreads(8, () -> {
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            for (int i = 0; i < 5_000; i++) {
                long n = 1 + rnd.nextInt(3);
                if (limiter.tryConsume(n)) {
                    admitted.addAndGet(n);
                }
            }
        });
        assertTrue(admitted.get() >= 8 && admitted.get() <= 10, "admitted " + admitted);
        assertEquals(51 - admitted.get(), global.available());
        assertEquals(10 - admitted.get(), tenant.available());
    }

    /** With the tenant limiter also drained directly by other threads, the global one is still charged only for admitted batches. */
    @Test
    void allOrNoneWithSharedComponentUnderConcurrency() throws InterruptedException {
        PowerGCRA global = gcra(200, 50);
        PowerGCRA tenant = gcra(10, 29);
        PowerRateLimit limiter = PowerRateLimit.of(global, tenant);
        AtomicLong viaComposite = new AtomicLong();
        AtomicLong direct = new AtomicLong();
        PowerGCRAConcurrencyTest.runThreads(8, () -> {
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            boolean directUser = Thread.currentThread().getId() % 2 == 0;
            for (int i = 0; i < 5_000; i++) {
                long n = 1 + rnd.nextInt(3);
                if (directUser) {
                    if (tenant.tryConsume(n)) {
                        direct.addAndGet(n);
                    }
                } else if (limiter.tryConsume(n)) {
                    viaComposite.addAndGet(n);
                }
            }
        });
        assertEquals(51 - viaComposite.get(), global.available());
        assertEquals(Math.max(0, 30 - viaComposite.get() - direct.get()), tenant.available());
        assertTrue(viaComposite.get() + direct.get() <= 30);
    }
}
