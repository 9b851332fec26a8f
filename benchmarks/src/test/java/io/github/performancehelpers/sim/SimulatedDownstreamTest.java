package io.github.performancehelpers.sim;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import io.github.performancehelpers.testsupport.FakeTicker;

/**
 * The demo's simulated downstream: slots, seeded lognormal service times, capacity changes.
 * Time is a {@link FakeTicker}; a call's "service" is a sleeper that advances it (and, where a
 * test needs a call held in its slot, waits on a latch first), so nothing here sleeps for real.
 */
class SimulatedDownstreamTest {

    private static final long MS = 1_000_000L;

    /** A sleeper that spends service time on the fake clock only. */
    private static SimulatedDownstream.Sleeper advancing(FakeTicker ticker) {
        return ticker::advanceNanos;
    }

    /** Capacity is slots / mean service time, and halves when the slots halve (the demo's step). */
    @Test
    void capacityIsSlotsOverMeanServiceTimeAndHalvesWithTheSlots() {
        SimulatedDownstream d = SimulatedDownstream.builder()
                .slots(8).medianServiceTime(Duration.ofMillis(20)).sigma(0).build();
        assertEquals(400.0, d.capacityPerSecond(), 1e-9);
        d.setSlots(4);
        assertEquals(4, d.slots());
        assertEquals(200.0, d.capacityPerSecond(), 1e-9);
    }

    /** The mean of a lognormal is median * exp(sigma^2 / 2): 20 ms at sigma 0.4 is a 21.7 ms mean, ~369/s on 8 slots. */
    @Test
    void meanServiceTimeIsTheLognormalMean() {
        SimulatedDownstream d = SimulatedDownstream.builder()
                .slots(8).medianServiceTime(Duration.ofMillis(20)).sigma(0.4).build();
        assertEquals(20 * Math.exp(0.08), d.meanServiceMillis(), 1e-9);
        assertEquals(8000 / (20 * Math.exp(0.08)), d.capacityPerSecond(), 1e-9);
    }

    /** Service times follow the stated lognormal: median 20 ms, p99 = 20 * exp(2.326 * 0.4) = 50.7 ms. */
    @Test
    void serviceTimesHaveTheStatedMedianAndTail() {
        SimulatedDownstream d = SimulatedDownstream.builder()
                .medianServiceTime(Duration.ofMillis(20)).sigma(0.4).seed(7).build();
        int n = 20_001;
        long[] samples = new long[n];
        for (int i = 0; i < n; i++) {
            samples[i] = d.serviceTimeNanos(i);
        }
        Arrays.sort(samples);
        double median = samples[n / 2] / 1e6;
        double p99 = samples[(int) Math.ceil(0.99 * n) - 1] / 1e6;
        assertEquals(20.0, median, 20.0 * 0.03, "median");
        assertEquals(20 * Math.exp(2.3263 * 0.4), p99, 50.7 * 0.06, "p99");
    }

    /** The same seed gives the same service time to the same call number, so two instances are identical. */
    @Test
    void theSameSeedGivesTheSameServiceTimes() {
        SimulatedDownstream a = SimulatedDownstream.builder().seed(42).build();
        SimulatedDownstream b = SimulatedDownstream.builder().seed(42).build();
        SimulatedDownstream c = SimulatedDownstream.builder().seed(43).build();
        boolean anyDifferent = false;
        for (long i = 0; i < 100; i++) {
            assertEquals(a.serviceTimeNanos(i), b.serviceTimeNanos(i));
            anyDifferent |= a.serviceTimeNanos(i) != c.serviceTimeNanos(i);
        }
        assertTrue(anyDifferent, "another seed draws another sequence");
    }

    /** A lone call waits for no slot: its latency is its service time, the sampled one for its call number. */
    @Test
    void anUncontendedCallTakesItsServiceTime() throws InterruptedException {
        FakeTicker ticker = new FakeTicker();
        SimulatedDownstream d = SimulatedDownstream.builder()
                .slots(2).medianServiceTime(Duration.ofMillis(20)).sigma(0.4).seed(3)
                .ticker(ticker).sleeper(advancing(ticker)).build();
        SimulatedDownstream.Call call = d.call();
        assertEquals(0, call.slotWaitNanos());
        assertEquals(d.serviceTimeNanos(0), call.serviceNanos());
        assertEquals(call.serviceNanos(), call.latencyNanos());
        assertEquals(1, d.completed());
    }

    /** With every slot taken, a call waits for one, and its latency is that wait plus its own service time. */
    @Test
    void latencyIncludesTheWaitForASlot() throws Exception {
        FakeTicker ticker = new FakeTicker();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch firstInService = new CountDownLatch(1);
        SimulatedDownstream d = SimulatedDownstream.builder()
                .slots(1).medianServiceTime(Duration.ofMillis(20)).sigma(0)
                .ticker(ticker)
                .sleeper(nanos -> {
                    if (firstInService.getCount() > 0) { // the first call holds its slot until released
                        firstInService.countDown();
                        release.await();
                    }
                    ticker.advanceNanos(nanos);
                })
                .build();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<SimulatedDownstream.Call> first = pool.submit(d::call);
            assertTrue(firstInService.await(10, TimeUnit.SECONDS));
            Future<SimulatedDownstream.Call> second = pool.submit(d::call);
            awaitTrue(() -> d.waiting() == 1, "the second call queues for the slot");
            ticker.advanceNanos(30 * MS); // the first call has been in service 30 ms when it finishes
            release.countDown();
            assertEquals(50 * MS, first.get().latencyNanos(), "first: 30 ms held + 20 ms service");
            SimulatedDownstream.Call c2 = second.get();
            assertEquals(50 * MS, c2.slotWaitNanos(), "second waited for the whole first call");
            assertEquals(20 * MS, c2.serviceNanos());
            assertEquals(70 * MS, c2.latencyNanos());
        }
    }

    /** Halving the slots cuts no call short; a new call starts only once fewer than the new count are in service. */
    @Test
    void shrinkingTheSlotsTakesEffectAsCallsFinish() throws Exception {
        Semaphore finish = new Semaphore(0); // each permit lets one call in service finish
        SimulatedDownstream d = SimulatedDownstream.builder()
                .slots(4).sigma(0).ticker(new FakeTicker())
                .sleeper(nanos -> finish.acquire())
                .build();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 4; i++) {
                pool.submit(d::call);
            }
            awaitTrue(() -> d.inService() == 4, "four calls in service");
            d.setSlots(2);
            assertEquals(2, d.slots());
            assertEquals(4, d.inService(), "a shrink cuts no call short");
            pool.submit(d::call);
            awaitTrue(() -> d.waiting() == 1, "a fifth call waits");
            finish.release(2);
            awaitTrue(() -> d.completed() == 2 && d.inService() == 2, "two calls finish");
            assertEquals(1, d.waiting(), "2 in service on 2 slots: the fifth call still waits");
            finish.release(1);
            awaitTrue(() -> d.completed() == 3 && d.waiting() == 0, "a third call finishes");
            awaitTrue(() -> d.inService() == 2, "the fifth call takes the freed slot");
            finish.release(2);
            awaitTrue(() -> d.completed() == 5, "every call completes");
        }
        assertEquals(0, d.inService());
    }

    /** Growing the slots admits waiting calls at once. */
    @Test
    void growingTheSlotsAdmitsWaitersAtOnce() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        SimulatedDownstream d = SimulatedDownstream.builder()
                .slots(1).sigma(0).ticker(new FakeTicker()).sleeper(nanos -> release.await()).build();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            pool.submit(d::call);
            pool.submit(d::call);
            awaitTrue(() -> d.inService() == 1 && d.waiting() == 1, "one in service, one waiting");
            d.setSlots(2);
            awaitTrue(() -> d.inService() == 2, "the waiter gets the new slot");
            assertEquals(0, d.waiting());
            release.countDown();
        }
        assertEquals(2, d.completed());
    }

    /** An interrupted call gives its slot back. */
    @Test
    void anInterruptedCallReleasesItsSlot() throws Exception {
        SimulatedDownstream d = SimulatedDownstream.builder()
                .slots(1).sigma(0).ticker(new FakeTicker())
                .sleeper(nanos -> new CountDownLatch(1).await()) // never returns unless interrupted
                .build();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<SimulatedDownstream.Call> stuck = pool.submit(d::call);
            awaitTrue(() -> d.inService() == 1, "in service");
            stuck.cancel(true);
            awaitTrue(() -> d.inService() == 0, "slot released");
        }
        assertEquals(0, d.completed());
    }

    /** Bad options are refused with the option and the value in the message. */
    @Test
    void badOptionsAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SimulatedDownstream.builder().slots(0).build());
        assertEquals("slots must be > 0: 0", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> SimulatedDownstream.builder().sigma(Double.NaN).build());
        assertEquals("sigma must be finite and >= 0: NaN", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> SimulatedDownstream.builder().medianServiceTime(Duration.ZERO).build());
        assertEquals("medianServiceTime must be > 0: PT0S", e.getMessage());
        SimulatedDownstream d = SimulatedDownstream.builder().build();
        e = assertThrows(IllegalArgumentException.class, () -> d.setSlots(-1));
        assertEquals("slots must be > 0: -1", e.getMessage());
        assertEquals(8, d.slots(), "nothing half-applied");
        assertThrows(NullPointerException.class, () -> SimulatedDownstream.builder().ticker(null));
    }

    /** Polls a condition (not a timing assertion: it only bounds how long a hung test waits). */
    private static void awaitTrue(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until: " + what);
            }
            Thread.sleep(1);
        }
    }
}
