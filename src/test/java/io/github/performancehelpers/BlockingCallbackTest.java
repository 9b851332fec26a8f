package io.github.performancehelpers;

import static io.github.performancehelpers.PowerFlowExecutorLoopTest.loop;
import static io.github.performancehelpers.PowerFlowExecutorLoopTest.runTaking;
import static io.github.performancehelpers.PowerFlowExecutorTest.LONG_DELAY_MS;
import static io.github.performancehelpers.PowerFlowExecutorTest.await;
import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;

/**
 * A user's callback that blocks (an {@code onRateChange} listener, a {@link PoolSizer}) stalls
 * neither the observations nor {@code close()}: the callbacks run on a thread of their own, the
 * changes that come meanwhile are coalesced, and termination waits for a callback at most
 * {@link PowerFlowExecutor#MAX_CALLBACK_WAIT}. Time is a fake ticker; the callbacks block on
 * latches, never on a sleep; each wait is bounded by LONG_DELAY_MS.
 */
class BlockingCallbackTest {

    /** Waits on the latch, ignoring interrupts (a callback that will not be stopped). */
    static void block(CountDownLatch release) {
        boolean interrupted = false;
        for (;;) {
            try {
                release.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Runs three observation windows (the rate moves in each) on another thread; returns it, started. */
    static Thread threeWindows(PowerFlowExecutor e, FakeTicker t, ManualScheduler s) {
        return Thread.ofPlatform().daemon().start(() -> {
            try {
                for (int i = 0; i < 3; i++) {
                    runTaking(e, t, 500 - 200 * i);
                    t.advanceMillis(500);
                    s.runAll();
                }
            } catch (Exception x) {
                throw new AssertionError(x);
            }
        });
    }

    /**
     * A listener that blocks stops no observation: the windows go on, the rate follows the law,
     * and the changes that come meanwhile reach the listener once, coalesced, when it returns.
     */
    @Test
    void aBlockedListenerStopsNoObservation() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        CountDownLatch release = new CountDownLatch(1);
        List<double[]> calls = new CopyOnWriteArrayList<>();
        PowerFlowExecutor e = loop(t, s).onRateChange((rate, previous) -> {
            calls.add(new double[] {rate, previous});
            if (calls.size() == 1) {
                block(release);
            }
        }).build();
        try {
            Thread ticks = threeWindows(e, t, s);
            ticks.join(LONG_DELAY_MS);
            assertFalse(ticks.isAlive(), "the observations waited for the blocked listener");
            assertEquals(3, e.stats().observations());
            assertEquals(1, calls.size());
            double first = calls.get(0)[0];
            double now = e.stats().rate();
            assertNotEquals(first, now);
            release.countDown();
            await(() -> calls.size() == 2); // the two later changes, coalesced
            assertArrayEquals(new double[] {now, first}, calls.get(1), 1e-9);
        } finally {
            release.countDown();
            PowerFlowExecutorTest.terminate(e);
        }
    }

    /** close() waits for tasks, not for a listener that blocks: it returns, terminated, while the listener still blocks. */
    @Test
    void closeDoesNotWaitForABlockedListener() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean returned = new AtomicBoolean();
        PowerFlowExecutor e = loop(t, s).onRateChange((rate, previous) -> {
            block(release);
            returned.set(true);
        }).build();
        try {
            Thread ticks = threeWindows(e, t, s);
            ticks.join(LONG_DELAY_MS);
            assertFalse(ticks.isAlive());
            Thread closer = Thread.ofPlatform().daemon().start(e::close);
            closer.join(LONG_DELAY_MS);
            assertFalse(closer.isAlive(), "close() waited for the blocked listener");
            assertTrue(e.isTerminated());
            assertFalse(returned.get());
        } finally {
            release.countDown();
        }
    }

    /** A pool sizer that blocks stops no observation, and close() does not wait for it. */
    @Test
    void aBlockedPoolSizerStallsNothing() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean built = new AtomicBoolean();
        PowerFlowExecutor e = loop(t, s).poolSizer(rate -> {
            if (built.get()) {
                block(release);
            }
            return 4;
        }).build();
        built.set(true);
        try {
            Thread ticks = threeWindows(e, t, s);
            ticks.join(LONG_DELAY_MS);
            assertFalse(ticks.isAlive(), "the observations waited for the blocked sizer");
            assertEquals(3, e.stats().observations());
            Thread closer = Thread.ofPlatform().daemon().start(e::close);
            closer.join(LONG_DELAY_MS);
            assertFalse(closer.isAlive(), "close() waited for the blocked sizer");
            assertTrue(e.isTerminated());
        } finally {
            release.countDown();
        }
    }

    /** A listener that calls shutdown() on its executor does not deadlock: the executor terminates. */
    @Test
    void aListenerMayShutTheExecutorDown() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        java.util.concurrent.atomic.AtomicReference<PowerFlowExecutor> self = new java.util.concurrent.atomic.AtomicReference<>();
        PowerFlowExecutor e = loop(t, s).onRateChange((rate, previous) -> self.get().shutdown()).build();
        self.set(e);
        runTaking(e, t, 500);
        t.advanceMillis(500);
        s.runAll();
        assertTrue(e.awaitTermination(LONG_DELAY_MS, java.util.concurrent.TimeUnit.MILLISECONDS));
    }
}
