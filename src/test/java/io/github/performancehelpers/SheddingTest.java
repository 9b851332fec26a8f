package io.github.performancehelpers;

import static io.github.performancehelpers.PowerFlowExecutorTest.LONG_DELAY_MS;
import static io.github.performancehelpers.PowerFlowExecutorTest.await;
import static io.github.performancehelpers.PowerFlowExecutorTest.terminate;
import static org.junit.jupiter.api.Assertions.*;

import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Tag;

/**
 * The executor's promise on the caller's latency, on a {@link FakeTicker}: no throttling while the
 * run time is under the target, a task that could not start in time refused at the door or shed
 * from the queue with a {@link ShedException}, a wait budget that follows the law's reading, and a
 * healthy first window that keeps the starting rate.
 */
class SheddingTest {

    private final FakeTicker t = new FakeTicker();
    private final ManualScheduler s = new ManualScheduler();

    /** An executor of target 50 ms in front of a pool of one thread, on the fake ticker. */
    private PowerFlowExecutor onePool(RejectionPolicy policy) {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
        return PowerFlowExecutor.builder().targetP99(50).ticker(t).scheduler(s).delegate(pool).ownsDelegate(true)
                .maxConcurrency(1).rejectionPolicy(policy).build();
    }

    /**
     * Occupies the executor's one thread, and waits until it has started: it is free again when
     * the returned latch opens.
     */
    private static CountDownLatch occupy(PowerFlowExecutor e) throws InterruptedException {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        e.execute(() -> {
            started.countDown();
            PowerFlowExecutorTest.awaitQuietly(release);
        });
        assertTrue(started.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        return release;
    }

    /** One window of the fake clock: a task that runs {@code runMillis}, the rest idle, then the tick. */
    private void windowOf(PowerFlowExecutor e, long runMillis) throws Exception {
        PowerFlowExecutorLoopTest.runTaking(e, t, runMillis);
        t.advanceMillis(1000 - runMillis);
        s.runAll();
    }

    /**
     * Two submit() tasks queued behind a busy thread wait 60 ms of fake time, past the 50-ms budget
     * (no window observed yet: the whole target): both are shed, their Futures failing with a
     * ShedException that says how long they waited, and counted; an execute() Runnable queued with
     * them is never dropped once accepted, and runs. Nothing is lost: submitted = completed + shed.
     */
    @Test
    void aQueuedTaskPastTheBudgetIsShedWithANamedException() throws Exception {
        PowerFlowExecutor e = onePool(RejectionPolicy.ABORT);
        assertEquals(50_000_000L, e.waitBudgetNanos());
        CountDownLatch release = occupy(e);
        Future<String> first = e.submit(() -> "first");
        Future<String> second = e.submit(() -> "second");
        AtomicInteger ran = new AtomicInteger();
        e.execute(ran::incrementAndGet);
        t.advanceMillis(60);
        release.countDown();
        ExecutionException x = assertThrows(ExecutionException.class, () -> first.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertInstanceOf(ShedException.class, x.getCause());
        assertTrue(x.getCause().getMessage().startsWith("shed after waiting 60.0 ms in the queue, over the wait budget "
                + "of 50.0 ms (targetP99 50.0 ms)"), x.getCause().getMessage());
        assertInstanceOf(ShedException.class,
                assertThrows(ExecutionException.class, () -> second.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS)).getCause());
        await(() -> ran.get() == 1);
        await(() -> e.stats().completed() == 2);
        PowerFlowExecutor.Stats st = e.stats();
        assertEquals(2, st.shed());
        assertEquals(0, st.rejected());
        assertEquals(st.submitted(), st.completed() + st.shed());
        terminate(e);
    }

    /** A task that starts within the budget is not shed: 40 ms of waiting against 50. */
    @Test
    void aTaskWithinTheBudgetRuns() throws Exception {
        PowerFlowExecutor e = onePool(RejectionPolicy.ABORT);
        CountDownLatch release = occupy(e);
        Future<String> f = e.submit(() -> "ran");
        t.advanceMillis(40);
        release.countDown();
        assertEquals("ran", f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertEquals(0, e.stats().shed());
        terminate(e);
    }

    /**
     * When the queue's oldest task has waited past the budget, a new task is refused at the door:
     * under ABORT with a ShedException (a RejectedExecutionException), counted as rejected and
     * offered to the law; under CALLER_RUNS it runs in the caller.
     */
    @Test
    void theDoorRefusesWhenTheOldestHasWaitedPastTheBudget() throws Exception {
        for (RejectionPolicy policy : new RejectionPolicy[] {RejectionPolicy.ABORT, RejectionPolicy.CALLER_RUNS}) {
            PowerFlowExecutor e = onePool(policy);
            CountDownLatch release = occupy(e);
            e.execute(() -> { }); // queued
            e.execute(() -> { }); // queued: the oldest has waited 0 ms
            t.advanceMillis(51);
            Thread caller = Thread.currentThread();
            AtomicInteger inCaller = new AtomicInteger();
            Runnable late = () -> {
                if (Thread.currentThread() == caller) {
                    inCaller.incrementAndGet();
                }
            };
            if (policy == RejectionPolicy.ABORT) {
                ShedException x = assertThrows(ShedException.class, () -> e.execute(late));
                assertTrue(x.getMessage().startsWith("the queue's oldest task has waited over the wait budget of 50.0 ms"),
                        x.getMessage());
                assertEquals(0, x.getStackTrace().length);
            } else {
                e.execute(late);
                assertEquals(1, inCaller.get());
            }
            assertEquals(1, e.stats().rejected(), policy.toString());
            release.countDown();
            await(() -> e.stats().completed() == 3);
            terminate(e);
        }
    }

    /**
     * A head of the queue that a consumer would shed (a submit()'s task past the budget) does not
     * close the door: the next task to queue sheds it, its Future failing then with the
     * ShedException, and takes its place. Under ABORT and BLOCK alike, the newcomer is accepted
     * at once and runs; an execute() Runnable behind the shed heads is never dropped and, once at
     * the head past the budget, closes the door as before.
     */
    @Test
    void aLateHeadOfSubmitIsShedByTheNextTaskToQueue() throws Exception {
        for (RejectionPolicy policy : new RejectionPolicy[] {RejectionPolicy.ABORT, RejectionPolicy.BLOCK}) {
            PowerFlowExecutor e = onePool(policy);
            CountDownLatch release = occupy(e);
            Future<String> first = e.submit(() -> "first");
            Future<String> second = e.submit(() -> "second");
            t.advanceMillis(51);
            Future<String> third = e.submit(() -> "third"); // the thread still busy: both heads are shed now
            for (Future<String> f : List.of(first, second)) {
                assertTrue(f.isDone(), policy.toString());
                Throwable cause = assertThrows(ExecutionException.class, f::get).getCause();
                assertInstanceOf(ShedException.class, cause);
                assertTrue(cause.getMessage().startsWith("shed after waiting 51.0 ms in the queue, over the wait budget "
                        + "of 50.0 ms"), cause.getMessage());
            }
            assertEquals(1, e.stats().depth(), policy.toString());
            assertEquals(2, e.stats().shed(), policy.toString());
            assertEquals(0, e.stats().rejected(), policy.toString());
            if (policy == RejectionPolicy.BLOCK) {
                release.countDown();
                assertEquals("third", third.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
                terminate(e);
                continue;
            }
            AtomicInteger ran = new AtomicInteger();
            e.execute(ran::incrementAndGet); // behind the third, never shed
            t.advanceMillis(51);
            assertThrows(ShedException.class, () -> e.submit(() -> "fourth")); // the third shed, the Runnable late
            assertInstanceOf(ShedException.class, assertThrows(ExecutionException.class, third::get).getCause());
            assertEquals(1, e.stats().depth()); // the Runnable, now the head
            assertEquals(3, e.stats().shed());
            assertEquals(1, e.stats().rejected());
            release.countDown();
            await(() -> ran.get() == 1);
            terminate(e);
        }
    }

    /**
     * Where tasks arrive faster than the queue starts them, the head's wait understates a
     * newcomer's: the door also refuses a task that would wait past the budget behind those
     * queued, at the pace the last window started them (its mean run time over the tasks run at
     * once). One thread and a window of 20-ms tasks: a start every 20 ms, a budget of 25 ms; one
     * task queues (an empty queue waits only for the thread), the next, behind it, would wait
     * about 40 ms and is refused, though the head has waited nothing. With 6-ms tasks (budget
     * 39 ms) six tasks of {@code submit} queue (the sixth starts about 36 ms on) and the seventh
     * (42) is refused; after such a calm window (callers on time, nothing refused, no cap) so do
     * six {@code Runnable}s. Every task accepted runs.
     */
    @Test
    void theDoorRefusesATaskThatWouldWaitPastTheBudgetBehindTheQueue() throws Exception {
        int[] runMillis = {20, 6, 20, 6};
        boolean[] runnable = {false, false, true, true};
        int[] accepted = {1, 6, 1, 6};
        double[] budgetMillis = {25, 39, 25, 39};
        for (int k = 0; k < runMillis.length; k++) {
            PowerFlowExecutor e = onePool(RejectionPolicy.ABORT);
            windowOf(e, runMillis[k]);
            assertEquals(budgetMillis[k] * 1e6, e.waitBudgetNanos(), budgetMillis[k] * 1e6 * 0.02);
            CountDownLatch release = occupy(e);
            AtomicInteger ran = new AtomicInteger();
            Runnable task = ran::incrementAndGet;
            Runnable offer = runnable[k] ? () -> e.execute(task) : () -> e.submit(task);
            for (int i = 0; i < accepted[k]; i++) {
                offer.run();
            }
            assertEquals(accepted[k], e.stats().depth());
            ShedException x = assertThrows(ShedException.class, offer::run);
            assertTrue(x.getMessage().startsWith("a task queued behind the " + accepted[k] + " waiting would wait over "
                    + "the wait budget of " + String.format(java.util.Locale.ROOT, "%.1f", budgetMillis[k])), x.getMessage());
            assertEquals(1, e.stats().rejected());
            release.countDown();
            int all = accepted[k];
            await(() -> ran.get() == all);
            terminate(e);
        }
    }

    /**
     * A {@code Runnable} of {@code execute}, which cannot be shed once queued, is let in behind
     * half the room a {@code submit}'s task gets after a window that was not calm, for a cut may
     * then slow the starts ahead of it. A calm window of 6-ms tasks (budget 39 ms); in the next,
     * six tasks of 6 ms queue behind the thread and a seventh is refused: that window's mean run
     * time is 36 ms over 7 tasks (the one that held the thread took none), a start every 5.1 ms,
     * room for 6 ahead, so a {@code submit} could queue 7, and {@code Runnable}s queue 4 (room for
     * 3 ahead), the fifth refused. Every task accepted runs.
     */
    @Test
    void afterAWindowThatRefusedARunnableGetsHalfTheRoom() throws Exception {
        PowerFlowExecutor e = onePool(RejectionPolicy.ABORT);
        windowOf(e, 6);
        assertEquals(39e6, e.waitBudgetNanos(), 39e6 * 0.02);
        CountDownLatch release = occupy(e);
        AtomicInteger ran = new AtomicInteger();
        queueTaking(6, 6, e::submit, ran);
        assertThrows(ShedException.class, () -> e.submit(ran::incrementAndGet));
        release.countDown();
        await(() -> ran.get() == 6 && e.stats().recorded() == 8);
        t.advanceMillis(1000 - 36);
        s.runAll();
        runnablesGetHalfTheRoom(e, ran);
        assertEquals(2, e.stats().rejected());
        terminate(e);
    }

    /**
     * Late callers, with nothing refused, also mean a cut may come: the half room. Before any
     * window the door has no pace and lets ten {@code Runnable}s of 6 ms queue behind the busy
     * thread; the tenth ends 60 ms after it was given, past the 50-ms target. That window's mean
     * run time is 60 ms over 11 tasks, a start every 5.5 ms against a 39-ms budget: room for 6
     * ahead, of which a {@code Runnable} gets 3, so 4 queue and the fifth is refused (7 after a
     * calm window of the same pace).
     */
    @Test
    void afterAWindowWhoseCallersWereLateARunnableGetsHalfTheRoom() throws Exception {
        PowerFlowExecutor e = onePool(RejectionPolicy.ABORT);
        CountDownLatch release = occupy(e);
        AtomicInteger ran = new AtomicInteger();
        queueTaking(10, 6, e::execute, ran);
        release.countDown();
        await(() -> ran.get() == 10 && e.stats().recorded() == 11);
        assertEquals(0, e.stats().rejected());
        t.advanceMillis(1000 - 60);
        s.runAll();
        runnablesGetHalfTheRoom(e, ran);
        assertEquals(1, e.stats().rejected());
        terminate(e);
    }

    /** Offers {@code n} tasks that each take {@code millis} of the fake clock and count in {@code ran}. */
    private void queueTaking(int n, long millis, Consumer<Runnable> offer, AtomicInteger ran) {
        for (int i = 0; i < n; i++) {
            offer.accept(() -> {
                t.advanceMillis(millis);
                ran.incrementAndGet();
            });
        }
    }

    /**
     * With a 39-ms budget and a start every 5.1 to 5.5 ms (room for 6 ahead), a window that was
     * not calm leaves {@code Runnable}s half the room: 4 queue behind the busy thread, the fifth is
     * refused, and the 4 run.
     */
    private void runnablesGetHalfTheRoom(PowerFlowExecutor e, AtomicInteger ran) throws Exception {
        assertEquals(39e6, e.waitBudgetNanos(), 39e6 * 0.02);
        int before = ran.get();
        CountDownLatch release = occupy(e);
        for (int i = 0; i < 4; i++) {
            e.execute(ran::incrementAndGet);
        }
        assertEquals(4, e.stats().depth());
        assertThrows(ShedException.class, () -> e.execute(ran::incrementAndGet));
        release.countDown();
        await(() -> ran.get() == before + 4);
    }

    /**
     * The last window's pace is a light load's where a burst then fills the executor: the door
     * also reads the pace the queue shows now, from the head's wait and the tasks that were ahead
     * of it. After a window of 1-ms tasks (budget 44 ms, a start predicted every millisecond:
     * room for 43) the thread is held; three tasks queue, and 10 ms pass with none started.
     * The queue takes at least 10 ms a start now: a fourth waits about 40 ms and goes in, a fifth
     * would wait 50 and is refused, though the head has waited 10 and the last window's pace
     * would let in 43. Under ABORT the tasks are {@code submit}'s (a {@code Runnable} is let in
     * behind half the room after a window that was not calm: above); under BLOCK the same door
     * holds the fifth's submitter instead, for {@code Runnable}s too. Every task accepted runs.
     */
    @Test
    void theDoorReadsThePaceTheQueueShowsNow() throws Exception {
        for (RejectionPolicy policy : new RejectionPolicy[] {RejectionPolicy.ABORT, RejectionPolicy.BLOCK}) {
            PowerFlowExecutor e = onePool(policy);
            windowOf(e, 1);
            assertEquals(44e6, e.waitBudgetNanos(), 44e6 * 0.02);
            CountDownLatch release = occupy(e);
            AtomicInteger ran = new AtomicInteger();
            Runnable task = ran::incrementAndGet;
            Runnable offer = policy == RejectionPolicy.ABORT ? () -> e.submit(task) : () -> e.execute(task);
            for (int i = 0; i < 3; i++) {
                offer.run();
            }
            t.advanceMillis(10);
            offer.run(); // (3 + 1) x 10 ms = 40 ms, within 44
            assertEquals(4, e.stats().depth(), policy.toString());
            if (policy == RejectionPolicy.ABORT) {
                ShedException x = assertThrows(ShedException.class, offer::run);
                assertTrue(x.getMessage().startsWith("a task queued behind the 4 waiting would wait over the wait "
                        + "budget of 44.0"), x.getMessage());
                assertEquals(1, e.stats().rejected());
                release.countDown();
                await(() -> ran.get() == 4);
            } else {
                Thread submitter = Thread.ofPlatform().start(() -> e.execute(ran::incrementAndGet));
                BlockPolicyTest.awaitParked(submitter);
                assertEquals(4, e.stats().depth());
                release.countDown();
                submitter.join(LONG_DELAY_MS);
                assertFalse(submitter.isAlive());
                await(() -> ran.get() == 5);
                assertEquals(0, e.stats().rejected());
            }
            terminate(e);
        }
    }

    /** An executor and the latches that free its threads ({@link #fourThreadsHeld}). */
    private record Held(PowerFlowExecutor executor, List<CountDownLatch> releases) {}

    /**
     * An executor of four threads under ABORT after a window of 10-ms tasks (a 35-ms budget, a
     * start every 2.5 ms), its four threads then held by tasks that started at once.
     */
    private Held fourThreadsHeld() throws Exception {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(4, 4, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
        PowerFlowExecutor e = PowerFlowExecutor.builder().targetP99(50).ticker(t).scheduler(s).delegate(pool)
                .ownsDelegate(true).maxConcurrency(4).rejectionPolicy(RejectionPolicy.ABORT).build();
        windowOf(e, 10);
        assertEquals(35e6, e.waitBudgetNanos(), 35e6 * 0.02);
        List<CountDownLatch> releases = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            releases.add(occupy(e));
        }
        return new Held(e, releases);
    }

    /**
     * Within one run time the wait of a head with none ahead does not show the pace: the tasks in
     * flight when it was queued may have started together (after a burst, or a pause of the
     * process) and then end together. A window of 10-ms tasks in front of four threads (budget
     * 35 ms, a start every 2.5 ms: room for 13 ahead); then four tasks start at once and hold the
     * threads ({@link #fourThreadsHeld}), one task queues, and 8 ms pass with none started. Read as
     * a pace, 8 ms a start would leave room for 3 ahead (the code before refused the fifth), though
     * the four threads end together at about 10 ms and start the queued tasks four at a time: the
     * door lets in six, the last starting about two run times later, within the budget. Once the
     * head has waited longer than the last window's mean run time (12 ms, none started), its wait
     * is the pace again, room for 1 ahead: the next is refused. Every task accepted runs.
     */
    @Test
    void aHeadWithNoneAheadShowsNoPaceWithinARunTime() throws Exception {
        Held held = fourThreadsHeld();
        PowerFlowExecutor e = held.executor();
        List<CountDownLatch> releases = held.releases();
        AtomicInteger ran = new AtomicInteger();
        Runnable task = ran::incrementAndGet;
        e.submit(task);
        t.advanceMillis(8);
        for (int i = 1; i < 6; i++) {
            e.submit(task);
        }
        assertEquals(6, e.stats().depth());
        assertEquals(0, e.stats().rejected());
        t.advanceMillis(4);
        ShedException x = assertThrows(ShedException.class, () -> e.submit(task));
        assertTrue(x.getMessage().startsWith("a task queued behind the 6 waiting would wait"), x.getMessage());
        releases.forEach(CountDownLatch::countDown);
        await(() -> ran.get() == 6);
        assertEquals(1, e.stats().rejected());
        terminate(e);
    }

    /**
     * A head with one or more ahead saw them start, and its wait shows the pace at once, within a
     * run time too. The same window of 10-ms tasks on four threads (budget 35 ms, room for 13
     * ahead at the last window's pace); two tasks queue, a thread frees and takes the first, which
     * holds it, and 8 ms pass: the head waited 8 ms with one ahead, at least 4 ms a start, room
     * for 7 ahead. Seven more are let in, the eighth refused, though 8 ms is within the last
     * window's mean run time. Every task accepted runs.
     */
    @Test
    void aHeadWithOneAheadShowsThePaceWithinARunTime() throws Exception {
        Held held = fourThreadsHeld();
        PowerFlowExecutor e = held.executor();
        List<CountDownLatch> releases = held.releases();
        CountDownLatch holdFirst = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        e.submit(() -> {
            PowerFlowExecutorTest.awaitQuietly(holdFirst);
            ran.incrementAndGet();
        });
        Runnable task = ran::incrementAndGet;
        e.submit(task);
        releases.get(0).countDown(); // its thread takes the first queued, which holds it
        await(() -> e.stats().depth() == 1);
        t.advanceMillis(8);
        for (int i = 0; i < 7; i++) {
            e.submit(task);
        }
        assertEquals(8, e.stats().depth());
        ShedException x = assertThrows(ShedException.class, () -> e.submit(task));
        assertTrue(x.getMessage().startsWith("a task queued behind the 8 waiting would wait"), x.getMessage());
        holdFirst.countDown();
        releases.forEach(CountDownLatch::countDown);
        await(() -> ran.get() == 9);
        assertEquals(1, e.stats().rejected());
        terminate(e);
    }

    /**
     * Under BLOCK a door closed by the queue's length holds the submitter, as a late head does,
     * until the queue is short enough: after a window of 20-ms tasks on one thread (budget 25 ms,
     * a start every 20 ms) one Runnable queues; a second submitter waits though the head has
     * waited nothing, and goes in once the thread is free and has taken the first. Nothing is
     * refused.
     */
    @Test
    void underBlockADoorClosedByTheQueuesLengthHoldsTheSubmitter() throws Exception {
        PowerFlowExecutor e = onePool(RejectionPolicy.BLOCK);
        windowOf(e, 20);
        CountDownLatch release = occupy(e);
        AtomicInteger ran = new AtomicInteger();
        e.execute(ran::incrementAndGet); // queued: an empty queue waits only for the thread
        Thread submitter = Thread.ofPlatform().start(() -> e.execute(ran::incrementAndGet));
        BlockPolicyTest.awaitParked(submitter);
        assertEquals(1, e.stats().depth());
        assertEquals(0, ran.get());
        release.countDown();
        submitter.join(LONG_DELAY_MS);
        assertFalse(submitter.isAlive());
        await(() -> ran.get() == 2);
        assertEquals(0, e.stats().rejected());
        terminate(e);
    }

    /**
     * The budget is nine tenths of the target less the law's run-time reading, at least a tenth of
     * the target: windows of 20 ms leave 25 ms; windows of 48 ms leave the floor, 5 ms. (The loop holds the run
     * time at 45 ms, nine tenths of the target.)
     */
    @Test
    void theBudgetFollowsTheRunTime() throws Exception {
        PowerFlowExecutor e = PowerFlowExecutor.builder().targetP99(50).ticker(t).scheduler(s).build();
        assertEquals(45, e.controller().targetP99(), 1e-9);
        assertEquals(50, e.stats().targetP99(), 1e-9);
        windowOf(e, 20);
        assertEquals(25e6, e.waitBudgetNanos(), 25e6 * 0.02);
        for (int i = 0; i < 3; i++) { // the knee-aware law merges three windows
            windowOf(e, 48);
        }
        assertEquals(5e6, e.waitBudgetNanos(), 1);
        terminate(e);
    }

    /**
     * A run time that rises within a window tightens the budget before the window ends: after a
     * window of 20-ms tasks (budget 45 − 20 = 25 ms), 100 samples of 35 ms in the window so far are
     * too few to act on; 200 are enough, and the next task queued finds the budget at 45 − 35 =
     * 10 ms. It
     * is tightened at most once per tenth of the observe interval, and never below the floor.
     */
    @Test
    void aRunTimeThatRisesWithinTheWindowTightensTheBudget() throws Exception {
        PowerFlowExecutor e = onePool(RejectionPolicy.ABORT);
        windowOf(e, 20);
        assertEquals(25e6, e.waitBudgetNanos(), 25e6 * 0.02);
        CountDownLatch release = occupy(e);
        for (int i = 0; i < 100; i++) {
            e.controller().record(35);
        }
        e.execute(() -> { }); // queued behind the busy thread, never shed: the door looks
        assertEquals(25e6, e.waitBudgetNanos(), 25e6 * 0.02);
        t.advanceMillis(100);
        for (int i = 0; i < 100; i++) {
            e.controller().record(35);
        }
        // The task queued 100 ms ago is past the tightened budget: the door refuses the next.
        assertThrows(ShedException.class, () -> e.submit(() -> { }));
        assertEquals(10e6, e.waitBudgetNanos(), 10e6 * 0.02);
        for (int i = 0; i < 200; i++) {
            e.controller().record(49);
        }
        assertThrows(ShedException.class, () -> e.submit(() -> { })); // not due: a tenth of a second has not passed
        assertEquals(10e6, e.waitBudgetNanos(), 10e6 * 0.02);
        t.advanceMillis(100);
        assertThrows(ShedException.class, () -> e.submit(() -> { }));
        assertEquals(5e6, e.waitBudgetNanos(), 1); // 45 − 49 is under the floor
        release.countDown();
        terminate(e);
    }

    /**
     * No throttling while the run time is under the target: a builder with no rate starts open,
     * and five healthy windows of 10-ms tasks leave it open, nothing refused or shed; the
     * end-to-end p99 of the last window is reported beside the run time.
     */
    @Test
    void noThrottlingUnderTheTarget() throws Exception {
        PowerFlowExecutor e = PowerFlowExecutor.builder().targetP99(50).ticker(t).scheduler(s).build();
        for (int w = 0; w < 5; w++) {
            for (int i = 0; i < 20; i++) {
                PowerFlowExecutorLoopTest.runTaking(e, t, 10);
            }
            t.advanceMillis(800);
            s.runAll();
            assertEquals(PowerFlowExecutor.OPEN_RATE, e.stats().rate(), "window " + w);
        }
        PowerFlowExecutor.Stats st = e.stats();
        assertEquals(0, st.rejected());
        assertEquals(0, st.shed());
        assertEquals(100, st.completed());
        assertEquals(10, st.lastObservedP99(), 10 * 0.011);
        assertEquals(10, st.lastEndToEndP99(), 10 * 0.011);
        assertFalse(st.targetUnreachable());
        terminate(e);
    }

    /**
     * Cold start: the executor's PI law starts at its rate (bumpless), so a healthy first window
     * holds it (PowerFlowController's own PI law keeps the seed's drop to the floor).
     */
    @Test
    void thePiLawsFirstHealthyWindowKeepsTheRate() throws Exception {
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(100).minRate(1).maxRate(1000).kp(0.05).ki(0.01)
                .targetP99(50).ticker(t).scheduler(s).build();
        assertEquals(PowerFlowController.ControlLaw.PI, e.controller().controlLaw());
        windowOf(e, 10);
        assertTrue(e.stats().rate() >= 100, "rate " + e.stats().rate());
        terminate(e);
    }

    /**
     * shutdownNow racing with shedding, on the real clock with a 1-ms target (most queued tasks are
     * shed): every accepted task ends as exactly one of completed, shed, cancelled or returned, and
     * every Future is done or returned.
     */
    @Test
    @Tag("stress")
    void nothingIsLostWhenShutdownNowRacesWithShedding() throws Exception {
        for (int round = 0; round < 20; round++) {
            ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
            PowerFlowExecutor e = PowerFlowExecutor.builder().targetP99(1).delegate(pool).ownsDelegate(true)
                    .maxConcurrency(2).scheduler(new ManualScheduler()).build();
            List<Future<?>> futures = Collections.synchronizedList(new ArrayList<>());
            List<Thread> submitters = new ArrayList<>();
            for (int k = 0; k < 3; k++) {
                submitters.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < 500; i++) {
                        try {
                            futures.add(e.submit(() -> LockSupportSleep.sleepMicros(200)));
                        } catch (java.util.concurrent.RejectedExecutionException refused) {
                            // refused at the door, or shut down: not accepted
                        }
                    }
                }));
            }
            Thread.sleep(round % 5);
            List<Runnable> returned = e.shutdownNow();
            for (Thread th : submitters) {
                th.join();
            }
            assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            PowerFlowExecutor.Stats st = e.stats();
            assertEquals(st.submitted(), st.completed() + st.failed() + st.cancelled() + st.shed() + returned.size(),
                    "round " + round + ": " + st);
            for (Future<?> f : futures) {
                assertTrue(f.isDone() || returned.contains(f), "round " + round + ": a Future neither done nor returned");
            }
        }
    }

    /** A short sleep that ignores interrupts' stack traces: parks for about {@code micros}. */
    static final class LockSupportSleep {
        static void sleepMicros(long micros) {
            java.util.concurrent.locks.LockSupport.parkNanos(micros * 1000);
        }
    }
}
