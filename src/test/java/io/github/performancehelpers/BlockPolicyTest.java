package io.github.performancehelpers;

import static io.github.performancehelpers.PowerFlowExecutorTest.LONG_DELAY_MS;
import static io.github.performancehelpers.PowerFlowExecutorTest.await;
import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;

/**
 * {@link RejectionPolicy#BLOCK}: a full queue (or a closed door) makes the submitter wait for
 * room, interruptibly, up to {@code blockTimeout}; a task accepted after waiting keeps its submit
 * time. One slot and a queue of one make "full" exact; a task blocked on a latch holds the slot.
 */
class BlockPolicyTest {

    /** One slot, a queue of {@code capacity}, BLOCK, no ticks. */
    static PowerFlowExecutor.Builder oneSlot(int capacity) {
        return PowerFlowExecutor.builder().maxConcurrency(1).poolSizer(rate -> 1).queueCapacity(capacity)
                .rejectionPolicy(RejectionPolicy.BLOCK).scheduler(new ManualScheduler());
    }

    /** Waits until {@code t} is parked (waiting or timed-waiting). */
    static void awaitParked(Thread t) {
        await(() -> t.getState() == Thread.State.WAITING || t.getState() == Thread.State.TIMED_WAITING);
    }

    /** A full queue makes the submitter wait; it returns, accepted, once a task is taken, and every task runs. */
    @Test
    void fullQueueMakesTheSubmitterWaitForRoom() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (PowerFlowExecutor e = oneSlot(1).shedding(false).build()) {
            Future<?> holder = e.submit(() -> {
                release.await();
                return null;
            });
            Future<String> queued = e.submit(() -> "queued");
            AtomicReference<Future<String>> third = new AtomicReference<>();
            Thread submitter = Thread.ofPlatform().start(() -> third.set(e.submit(() -> "third")));
            awaitParked(submitter);
            assertNull(third.get());
            assertEquals(1, e.stats().depth());
            release.countDown();
            submitter.join(LONG_DELAY_MS);
            assertFalse(submitter.isAlive());
            assertEquals("third", third.get().get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertEquals("queued", queued.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            holder.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
            assertEquals(0, e.stats().rejected());
        }
    }

    /** At blockTimeout a submitter still facing a full queue gets QueueFullException, counted as rejected. */
    @Test
    void waitEndsInQueueFullExceptionAtTheTimeout() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (PowerFlowExecutor e = oneSlot(1).shedding(false).blockTimeout(Duration.ofMillis(30)).build()) {
            e.execute(() -> awaitOrKeepInterrupt(release));
            e.execute(() -> { });
            long dropped = e.stats().dropped();
            QueueFullException x = assertThrows(QueueFullException.class, () -> e.execute(() -> { }));
            assertTrue(x.getMessage().contains("blockTimeout"), x.getMessage());
            assertEquals(1, e.stats().rejected());
            assertTrue(e.stats().dropped() > dropped, "the final refused offer counts as a drop");
            release.countDown();
        }
    }

    /** An interrupted waiting submitter gets RejectedExecutionException caused by InterruptedException, status kept. */
    @Test
    void waitIsInterruptible() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (PowerFlowExecutor e = oneSlot(1).shedding(false).build()) {
            e.execute(() -> awaitOrKeepInterrupt(release));
            e.execute(() -> { });
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicReference<Boolean> status = new AtomicReference<>();
            Thread submitter = Thread.ofPlatform().start(() -> {
                try {
                    e.execute(() -> { });
                } catch (Throwable t) {
                    thrown.set(t);
                }
                status.set(Thread.currentThread().isInterrupted());
            });
            awaitParked(submitter);
            submitter.interrupt();
            submitter.join(LONG_DELAY_MS);
            assertInstanceOf(RejectedExecutionException.class, thrown.get());
            assertInstanceOf(InterruptedException.class, thrown.get().getCause());
            assertEquals(Boolean.TRUE, status.get());
            assertEquals(1, e.stats().rejected());
            release.countDown();
        }
    }

    /** A shutdown refuses a waiting submitter with RejectedExecutionException; the queued tasks still run. */
    @Test
    void shutdownRefusesAWaitingSubmitter() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        PowerFlowExecutor e = oneSlot(1).shedding(false).build();
        e.execute(() -> {
            try {
                release.await();
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
        });
        Future<String> queued = e.submit(() -> "queued");
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread submitter = Thread.ofPlatform().start(() -> {
            try {
                e.execute(() -> { });
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        awaitParked(submitter);
        e.shutdown();
        submitter.join(LONG_DELAY_MS);
        assertInstanceOf(RejectedExecutionException.class, thrown.get());
        assertFalse(thrown.get() instanceof QueueFullException);
        release.countDown();
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertEquals("queued", queued.resultNow());
    }

    /**
     * invokeAll of ten times more tasks than the queue holds completes with every task run, and
     * the executor serves the next invokeAll and invokeAny (under ABORT the first invokeAll fails
     * whole with QueueFullException).
     */
    @Test
    void invokeAllOfMoreTasksThanTheQueueHoldsCompletes() throws Exception {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(8, 8, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
        try (PowerFlowExecutor e = PowerFlowExecutor.builder().delegate(pool).ownsDelegate(true)
                .targetP99(Duration.ofSeconds(30)).queueCapacity(50).rejectionPolicy(RejectionPolicy.BLOCK).build()) {
            List<Callable<Integer>> tasks = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                int k = i;
                tasks.add(() -> {
                    Thread.sleep(1);
                    return k;
                });
            }
            List<Future<Integer>> fs = e.invokeAll(tasks);
            for (int i = 0; i < fs.size(); i++) {
                assertEquals(i, fs.get(i).resultNow());
            }
            List<Callable<Integer>> one = List.of(() -> 1);
            assertEquals(Integer.valueOf(1), e.invokeAll(one).get(0).resultNow());
            assertEquals(Integer.valueOf(1), e.invokeAny(one));
        }
    }

    /** A producer written for newFixedThreadPool (submit everything, then get every result) works unchanged. */
    @Test
    void aFixedThreadPoolProducerWorksUnchanged() throws Exception {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(4, 4, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
        AtomicInteger ran = new AtomicInteger();
        try (PowerFlowExecutor e = PowerFlowExecutor.builder().delegate(pool).ownsDelegate(true)
                .targetP99(Duration.ofSeconds(30)).queueCapacity(10).rejectionPolicy(RejectionPolicy.BLOCK).build()) {
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                fs.add(e.submit(ran::incrementAndGet));
            }
            for (Future<?> f : fs) {
                f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
            }
        }
        assertEquals(300, ran.get());
    }

    /**
     * With shedding, a door closed by a late head blocks the submitter instead of refusing it
     * (ABORT would throw ShedException); once the head is taken, the task is accepted and runs.
     * The head is a Runnable of execute(), never shed: a late submit() head is shed by the next
     * task to queue instead (SheddingTest.aLateHeadOfSubmitIsShedByTheNextTaskToQueue).
     */
    @Test
    void aClosedDoorBlocksUntilItOpens() throws Exception {
        FakeTicker t = new FakeTicker();
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        try (PowerFlowExecutor e = oneSlot(10).ticker(t).targetP99(Duration.ofMillis(100)).build()) {
            try {
                e.execute(() -> awaitOrKeepInterrupt(release));
                e.execute(ran::incrementAndGet);
                t.advance(Duration.ofMillis(500)); // the head has waited past the wait budget (100 ms)
                AtomicReference<Future<String>> late = new AtomicReference<>();
                Thread submitter = Thread.ofPlatform().start(() -> late.set(e.submit(() -> "late")));
                awaitParked(submitter);
                assertNull(late.get());
                release.countDown();
                submitter.join(LONG_DELAY_MS);
                assertFalse(submitter.isAlive());
                assertEquals("late", late.get().get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
                assertEquals(1, ran.get());
                assertEquals(0, e.stats().shed());
            } finally {
                release.countDown(); // close() waits for the occupying task
            }
        }
    }

    /**
     * A submit task accepted after waiting keeps its submit time: having waited for room past the
     * wait budget, it is shed when it is taken.
     */
    @Test
    void aTaskAcceptedAfterWaitingKeepsItsSubmitTime() throws Exception {
        FakeTicker t = new FakeTicker();
        CountDownLatch release = new CountDownLatch(1);
        try (PowerFlowExecutor e = oneSlot(1).ticker(t).targetP99(Duration.ofMillis(100)).build()) {
            e.execute(() -> awaitOrKeepInterrupt(release));
            e.execute(() -> { }); // queued, never shed (a Runnable of execute)
            AtomicReference<Future<String>> waited = new AtomicReference<>();
            Thread submitter = Thread.ofPlatform().start(() -> waited.set(e.submit(() -> "waited")));
            awaitParked(submitter);
            t.advance(Duration.ofMillis(500)); // the submitter waits past the budget
            // The door is closed now too (the head waited 500 ms); the head is an execute() task,
            // which is never shed, so the door opens when it is taken.
            release.countDown();
            submitter.join(LONG_DELAY_MS);
            assertFalse(submitter.isAlive());
            ExecutionException x = assertThrows(ExecutionException.class,
                    () -> waited.get().get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertInstanceOf(ShedException.class, x.getCause());
        }
    }

    /**
     * Under ABORT, the cancelled tasks an invokeAll leaves in the queue when it fails do not close
     * the door to the next submit: a cancelled head waits for no one (before, the next submit got
     * a ShedException for the cancelled head's wait).
     */
    @Test
    void cancelledTasksOfAFailedInvokeAllDoNotCloseTheDoor() throws Exception {
        FakeTicker t = new FakeTicker();
        CountDownLatch release = new CountDownLatch(1);
        try (PowerFlowExecutor e = oneSlot(10).rejectionPolicy(RejectionPolicy.ABORT).ticker(t)
                .targetP99(Duration.ofMillis(100)).build()) {
            e.execute(() -> awaitOrKeepInterrupt(release));
            List<Callable<String>> tasks = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                tasks.add(() -> "x");
            }
            assertThrows(QueueFullException.class, () -> e.invokeAll(tasks)); // its 10 queued tasks are cancelled
            t.advance(Duration.ofMillis(500)); // the cancelled head has "waited" past the wait budget
            Future<String> next = e.submit(() -> "next");
            release.countDown();
            assertEquals("next", next.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        }
    }

    /** blockTimeout is validated by name. */
    @Test
    void blockTimeoutIsValidated() {
        PowerFlowExecutor.Builder b = PowerFlowExecutor.builder();
        assertEquals("blockTimeout must be positive: PT0S",
                assertThrows(IllegalArgumentException.class, () -> b.blockTimeout(Duration.ZERO)).getMessage());
        assertThrows(NullPointerException.class, () -> b.blockTimeout(null));
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                () -> b.blockTimeout(Duration.ofSeconds(Long.MAX_VALUE)));
        assertTrue(x.getMessage().startsWith("blockTimeout must be at most"), x.getMessage());
    }

    /** Occupies a thread until {@code release} opens; an interrupt ends the wait, the status kept. */
    private static void awaitOrKeepInterrupt(CountDownLatch release) {
        try {
            release.await();
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        }
    }
}
