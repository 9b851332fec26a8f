package io.github.performancehelpers;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@link java.util.concurrent.ExecutorService} contract on every kind of
 * {@link PowerFlowExecutor} a user builds: the behaviours the JDK's own {@code SubmitTest},
 * {@code InvokeTest} and {@code CloseTest} check, written here from the {@code ExecutorService}
 * specification. Every test runs on each configuration: both factories, a builder with a
 * {@code ThreadPoolExecutor} (owned and not), and a builder with the default delegate. The
 * target is long (30 s) so that no task is shed: shedding has its own tests.
 *
 * <p>No sleep is asserted: a thread that must be waiting is found waiting by its state before it
 * is interrupted, and every wait is bounded by {@link #LONG_DELAY_MS}.
 */
class ExecutorServiceContractTest {

    static final long LONG_DELAY_MS = 10_000;
    static final Duration TARGET = Duration.ofSeconds(30);

    /** The caller's pools the configurations made, shut down after each test. */
    static final List<ThreadPoolExecutor> CALLER_POOLS = new java.util.concurrent.CopyOnWriteArrayList<>();

    @org.junit.jupiter.api.AfterEach
    void shutDownCallerPools() {
        for (ThreadPoolExecutor p : CALLER_POOLS) {
            p.shutdownNow();
        }
        CALLER_POOLS.clear();
    }

    static Stream<Arguments> executors() {
        return Stream.of(
                Arguments.of(Named.of("newFixedFlowPool(4)", (Supplier<PowerFlowExecutor>)
                        () -> PowerExecutors.newFixedFlowPool(4, TARGET))),
                Arguments.of(Named.of("newVirtualFlowExecutor", (Supplier<PowerFlowExecutor>)
                        () -> PowerExecutors.newVirtualFlowExecutor(TARGET))),
                Arguments.of(Named.of("builder, owned ThreadPoolExecutor", (Supplier<PowerFlowExecutor>)
                        () -> PowerFlowExecutor.builder().targetP99(TARGET).delegate(pool(4)).ownsDelegate(true)
                                .build())),
                Arguments.of(Named.of("builder, caller's ThreadPoolExecutor", (Supplier<PowerFlowExecutor>)
                        () -> PowerFlowExecutor.builder().targetP99(TARGET).delegate(callerPool(4)).build())),
                Arguments.of(Named.of("builder, default delegate", (Supplier<PowerFlowExecutor>)
                        () -> PowerFlowExecutor.builder().targetP99(TARGET).build())));
    }

    static ThreadPoolExecutor pool(int n) {
        ThreadPoolExecutor p = new ThreadPoolExecutor(n, n, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "contract-pool");
            t.setDaemon(true);
            return t;
        });
        return p;
    }

    static ThreadPoolExecutor callerPool(int n) {
        ThreadPoolExecutor p = pool(n);
        CALLER_POOLS.add(p);
        return p;
    }

    /** Waits until {@code t} blocks (waiting or timed-waiting), then interrupts it. */
    static Thread interruptWhenWaiting(Thread t) {
        Thread.State[] waiting = {Thread.State.WAITING, Thread.State.TIMED_WAITING};
        return Thread.ofPlatform().daemon().start(() -> {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LONG_DELAY_MS);
            while (!Set.of(waiting).contains(t.getState()) && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            t.interrupt();
        });
    }

    /** A task that waits until interrupted (and records it), or fails after LONG_DELAY_MS. */
    static Callable<String> untilInterrupted(CountDownLatch started, AtomicBoolean interrupted) {
        return () -> {
            started.countDown();
            try {
                Thread.sleep(LONG_DELAY_MS);
            } catch (InterruptedException e) {
                interrupted.set(true);
                throw e;
            }
            return "not interrupted";
        };
    }

    static void closeAll(PowerFlowExecutor e) throws InterruptedException {
        e.shutdownNow();
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
    }

    /** A test's body on a fresh executor of the configuration, which is shut down after it whatever happens. */
    interface Body {
        void run(PowerFlowExecutor e) throws Exception;
    }

    static void with(Supplier<PowerFlowExecutor> config, Body body) throws Exception {
        PowerFlowExecutor e = config.get();
        try {
            body.run(e);
        } finally {
            closeAll(e);
        }
    }

    // ------------------------------------------------------------ submit (SubmitTest)

    /** submit(Runnable) returns a Future whose get() is null once the task ran. */
    @ParameterizedTest
    @MethodSource("executors")
    void submitRunnable(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            AtomicBoolean ran = new AtomicBoolean();
            Future<?> f = e.submit(() -> ran.set(true));
            assertNull(f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertTrue(ran.get());
            assertTrue(f.isDone());
            assertFalse(f.isCancelled());
            assertEquals(Future.State.SUCCESS, f.state());
        });
    }

    /** submit(Runnable, result) returns the result. */
    @ParameterizedTest
    @MethodSource("executors")
    void submitRunnableWithResult(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            Future<String> f = e.submit(() -> { }, "foo");
            assertEquals("foo", f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertEquals("foo", f.resultNow());
        });
    }

    /** submit(Callable) returns the callable's value. */
    @ParameterizedTest
    @MethodSource("executors")
    void submitCallable(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            Future<String> f = e.submit(() -> "bar");
            assertEquals("bar", f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        });
    }

    /** A task that throws fails its Future with an ExecutionException caused by what it threw. */
    @ParameterizedTest
    @MethodSource("executors")
    void submitTaskThatThrows(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            IllegalStateException boom = new IllegalStateException("boom");
            Future<String> c = e.submit(() -> {
                throw boom;
            });
            ExecutionException ee = assertThrows(ExecutionException.class,
                    () -> c.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertSame(boom, ee.getCause());
            Future<?> r = e.submit((Runnable) () -> {
                throw boom;
            });
            ee = assertThrows(ExecutionException.class, () -> r.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertSame(boom, ee.getCause());
            assertSame(boom, r.exceptionNow());
        });
    }

    /** execute(Runnable) runs the task. */
    @ParameterizedTest
    @MethodSource("executors")
    void executeRuns(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            CountDownLatch ran = new CountDownLatch(1);
            e.execute(ran::countDown);
            assertTrue(ran.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        });
    }

    /** Every submit form, execute included, throws NullPointerException for a null task. */
    @ParameterizedTest
    @MethodSource("executors")
    void nullTasksAreRefused(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            assertThrows(NullPointerException.class, () -> e.execute(null));
            assertThrows(NullPointerException.class, () -> e.submit((Runnable) null));
            assertThrows(NullPointerException.class, () -> e.submit((Runnable) null, "x"));
            assertThrows(NullPointerException.class, () -> e.submit((Callable<String>) null));
        });
    }

    /** After shutdown every submit form throws RejectedExecutionException. */
    @ParameterizedTest
    @MethodSource("executors")
    void submitAfterShutdownIsRejected(Supplier<PowerFlowExecutor> config) throws Exception {
        PowerFlowExecutor e = config.get();
        e.shutdown();
        try {
            assertThrows(RejectedExecutionException.class, () -> e.execute(() -> { }));
            assertThrows(RejectedExecutionException.class, () -> e.submit(() -> { }));
            assertThrows(RejectedExecutionException.class, () -> e.submit(() -> { }, "x"));
            assertThrows(RejectedExecutionException.class, () -> e.submit(() -> "x"));
            assertThrows(RejectedExecutionException.class, () -> e.invokeAll(List.of(() -> "x")));
            assertThrows(RejectedExecutionException.class, () -> e.invokeAny(List.of(() -> "x")));
        } finally {
            closeAll(e);
        }
    }

    /** cancel(true) on a running task interrupts it; its Future is cancelled. */
    @ParameterizedTest
    @MethodSource("executors")
    void cancelInterruptsARunningTask(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            CountDownLatch started = new CountDownLatch(1);
            AtomicBoolean interrupted = new AtomicBoolean();
            Future<String> f = e.submit(untilInterrupted(started, interrupted));
            assertTrue(started.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertTrue(f.cancel(true));
            assertTrue(f.isCancelled());
            assertTrue(f.isDone());
            assertThrows(CancellationException.class, f::get);
            assertEquals(Future.State.CANCELLED, f.state());
            PowerFlowExecutorTest.await(interrupted::get);
        });
    }

    /** A thread interrupted while it waits in Future.get gets InterruptedException. */
    @ParameterizedTest
    @MethodSource("executors")
    void interruptWhileWaitingForAResult(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            CountDownLatch release = new CountDownLatch(1);
            Future<String> f = e.submit(() -> {
                release.await();
                return "done";
            });
            Thread interrupter = interruptWhenWaiting(Thread.currentThread());
            assertThrows(InterruptedException.class, f::get);
            interrupter.join();
            assertFalse(Thread.interrupted());
            release.countDown();
            assertEquals("done", f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        });
    }

    /** Future.get(timeout) of a task that does not end throws TimeoutException. */
    @ParameterizedTest
    @MethodSource("executors")
    void timedGetTimesOut(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            CountDownLatch release = new CountDownLatch(1);
            Future<?> f = e.submit(() -> {
                release.await();
                return null;
            });
            assertThrows(TimeoutException.class, () -> f.get(10, TimeUnit.MILLISECONDS));
            release.countDown();
            f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        });
    }

    // ------------------------------------------------------------ invokeAny (InvokeTest)

    /** invokeAny of one task returns its result. */
    @ParameterizedTest
    @MethodSource("executors")
    void invokeAnyOfOne(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            assertEquals("foo", e.invokeAny(List.of(() -> "foo")));
            assertEquals("foo", e.invokeAny(List.of(() -> "foo"), LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        });
    }

    /** invokeAny returns the result of one that completed; the others may be cancelled. */
    @ParameterizedTest
    @MethodSource("executors")
    void invokeAnyReturnsOneOfTheResults(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            List<Callable<String>> tasks = List.of(() -> "a", () -> "b", () -> "c");
            assertTrue(Set.of("a", "b", "c").contains(e.invokeAny(tasks)));
            assertTrue(Set.of("a", "b", "c").contains(e.invokeAny(tasks, LONG_DELAY_MS, TimeUnit.MILLISECONDS)));
        });
    }

    /** invokeAny returns the task that succeeds when others throw. */
    @ParameterizedTest
    @MethodSource("executors")
    void invokeAnyIgnoresTasksThatThrow(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            List<Callable<String>> tasks = List.of(() -> {
                throw new IllegalStateException();
            }, () -> "ok", () -> {
                throw new IllegalStateException();
            });
            assertEquals("ok", e.invokeAny(tasks));
        });
    }

    /** invokeAny, timed or not, throws ExecutionException when every task throws. */
    @ParameterizedTest
    @MethodSource("executors")
    void invokeAnyWhenAllThrow(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            IllegalStateException boom = new IllegalStateException("boom");
            List<Callable<String>> tasks = List.of(() -> {
                throw boom;
            }, () -> {
                throw boom;
            });
            ExecutionException ee = assertThrows(ExecutionException.class, () -> e.invokeAny(tasks));
            assertSame(boom, ee.getCause());
            ee = assertThrows(ExecutionException.class,
                    () -> e.invokeAny(tasks, LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertSame(boom, ee.getCause());
        });
    }

    /** A timed invokeAny whose tasks do not complete throws TimeoutException and cancels them. */
    @ParameterizedTest
    @MethodSource("executors")
    void timedInvokeAnyTimesOutAndCancels(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            CountDownLatch started = new CountDownLatch(1);
            AtomicBoolean interrupted = new AtomicBoolean();
            assertThrows(TimeoutException.class,
                    () -> e.invokeAny(List.of(untilInterrupted(started, interrupted)), 50, TimeUnit.MILLISECONDS));
            // The task was cancelled with an interrupt if it had started.
            if (started.getCount() == 0) {
                PowerFlowExecutorTest.await(interrupted::get);
            }
        });
    }

    /** invokeAny called with the interrupt status set throws InterruptedException. */
    @ParameterizedTest
    @MethodSource("executors")
    void invokeAnyInterruptedBefore(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            Thread.currentThread().interrupt();
            assertThrows(InterruptedException.class,
                    () -> e.invokeAny(List.of(untilInterrupted(new CountDownLatch(1), new AtomicBoolean()))));
            assertFalse(Thread.interrupted());
        });
    }

    /** invokeAny interrupted while it waits throws InterruptedException and cancels its tasks. */
    @ParameterizedTest
    @MethodSource("executors")
    void invokeAnyInterruptedWhileWaiting(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            CountDownLatch started = new CountDownLatch(1);
            AtomicBoolean interrupted = new AtomicBoolean();
            Thread interrupter = interruptWhenWaitingAfter(Thread.currentThread(), started);
            assertThrows(InterruptedException.class, () -> e.invokeAny(List.of(untilInterrupted(started, interrupted))));
            interrupter.join();
            PowerFlowExecutorTest.await(interrupted::get);
        });
    }

    /** invokeAny refuses an empty collection, a null one and a null task. */
    @ParameterizedTest
    @MethodSource("executors")
    void invokeAnyArguments(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            assertThrows(IllegalArgumentException.class, () -> e.invokeAny(List.of()));
            assertThrows(IllegalArgumentException.class, () -> e.invokeAny(List.of(), 1, TimeUnit.SECONDS));
            assertThrows(NullPointerException.class, () -> e.invokeAny(null));
            assertThrows(NullPointerException.class, () -> e.invokeAny(null, 1, TimeUnit.SECONDS));
            List<Callable<String>> withNull = new ArrayList<>();
            withNull.add(untilInterrupted(new CountDownLatch(1), new AtomicBoolean())); // not done first
            withNull.add(null);
            assertThrows(NullPointerException.class, () -> e.invokeAny(withNull));
            assertThrows(NullPointerException.class, () -> e.invokeAny(List.of(() -> "x"), 1, null));
        });
    }

    // ------------------------------------------------------------ invokeAll (InvokeTest)

    /** invokeAll, timed or not, returns every task's Future done, in order. */
    @ParameterizedTest
    @MethodSource("executors")
    void invokeAllReturnsDoneFutures(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            IllegalStateException boom = new IllegalStateException();
            List<Callable<String>> tasks = List.of(() -> "a", () -> {
                throw boom;
            }, () -> "c");
            for (List<Future<String>> fs : List.of(e.invokeAll(tasks),
                    e.invokeAll(tasks, LONG_DELAY_MS, TimeUnit.MILLISECONDS))) {
                assertEquals(3, fs.size());
                for (Future<String> f : fs) {
                    assertTrue(f.isDone());
                }
                assertEquals("a", fs.get(0).resultNow());
                assertSame(boom, fs.get(1).exceptionNow());
                assertEquals("c", fs.get(2).resultNow());
            }
        });
    }

    /** A timed invokeAll returns at its timeout with the unfinished tasks cancelled. */
    @ParameterizedTest
    @MethodSource("executors")
    void timedInvokeAllCancelsWhatDidNotFinish(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            CountDownLatch started = new CountDownLatch(1);
            AtomicBoolean interrupted = new AtomicBoolean();
            List<Future<String>> fs = e.invokeAll(List.of(() -> "quick", untilInterrupted(started, interrupted)),
                    100, TimeUnit.MILLISECONDS);
            assertEquals(2, fs.size());
            assertTrue(fs.get(0).isDone());
            assertTrue(fs.get(1).isCancelled());
            if (started.getCount() == 0) {
                PowerFlowExecutorTest.await(interrupted::get);
            }
        });
    }

    /** invokeAll interrupted while it waits throws InterruptedException and cancels its tasks. */
    @ParameterizedTest
    @MethodSource("executors")
    void invokeAllInterruptedWhileWaiting(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            CountDownLatch started = new CountDownLatch(1);
            AtomicBoolean interrupted = new AtomicBoolean();
            Thread interrupter = interruptWhenWaitingAfter(Thread.currentThread(), started);
            assertThrows(InterruptedException.class, () -> e.invokeAll(List.of(untilInterrupted(started, interrupted))));
            interrupter.join();
            PowerFlowExecutorTest.await(interrupted::get);
        });
    }

    /** invokeAll of nothing returns an empty list; a null collection or task is refused. */
    @ParameterizedTest
    @MethodSource("executors")
    void invokeAllArguments(Supplier<PowerFlowExecutor> config) throws Exception {
        with(config, e -> {
            assertTrue(e.invokeAll(List.<Callable<String>>of()).isEmpty());
            assertTrue(e.invokeAll(List.<Callable<String>>of(), 1, TimeUnit.SECONDS).isEmpty());
            assertThrows(NullPointerException.class, () -> e.invokeAll(null));
            List<Callable<String>> withNull = new ArrayList<>();
            withNull.add(() -> "x");
            withNull.add(null);
            assertThrows(NullPointerException.class, () -> e.invokeAll(withNull));
            assertThrows(NullPointerException.class, () -> e.invokeAll(List.of(() -> "x"), 1, null));
        });
    }

    // ------------------------------------------------------------ close and termination (CloseTest)

    /** close() waits for the running and queued tasks, then the executor is terminated. */
    @ParameterizedTest
    @MethodSource("executors")
    void closeWaitsForTasks(Supplier<PowerFlowExecutor> config) throws Exception {
        PowerFlowExecutor e = config.get();
        CountDownLatch release = new CountDownLatch(1);
        List<Future<String>> fs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            fs.add(e.submit(() -> {
                release.await();
                return "done";
            }));
        }
        Thread.ofPlatform().daemon().start(() -> {
            // let close() start waiting, then release the tasks
            while (!e.isShutdown()) {
                Thread.onSpinWait();
            }
            release.countDown();
        });
        e.close();
        assertTrue(e.isShutdown());
        assertTrue(e.isTerminated());
        for (Future<String> f : fs) {
            assertEquals("done", f.resultNow());
        }
        closeAll(e);
    }

    /** close() of an idle executor returns terminated; a second close() does nothing. */
    @ParameterizedTest
    @MethodSource("executors")
    void closeIsIdempotent(Supplier<PowerFlowExecutor> config) throws Exception {
        PowerFlowExecutor e = config.get();
        e.close();
        assertTrue(e.isTerminated());
        e.close();
        assertTrue(e.isShutdown());
        assertTrue(e.isTerminated());
        assertTrue(e.awaitTermination(10, TimeUnit.MILLISECONDS));
        closeAll(e);
    }

    /** close() from another thread waits for the task running here to end. */
    @ParameterizedTest
    @MethodSource("executors")
    void closeFromAnotherThread(Supplier<PowerFlowExecutor> config) throws Exception {
        PowerFlowExecutor e = config.get();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<String> f = e.submit(() -> {
            started.countDown();
            release.await();
            return "done";
        });
        assertTrue(started.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        Thread closer = Thread.ofPlatform().start(e::close);
        PowerFlowExecutorTest.await(e::isShutdown);
        assertFalse(e.isTerminated());
        release.countDown();
        closer.join(LONG_DELAY_MS);
        assertFalse(closer.isAlive());
        assertTrue(e.isTerminated());
        assertEquals("done", f.resultNow());
        closeAll(e);
    }

    /**
     * close() with the interrupt status set stops the executor (shutdownNow), interrupting the
     * running task, waits for termination and returns with the interrupt status still set.
     */
    @ParameterizedTest
    @MethodSource("executors")
    void interruptBeforeClose(Supplier<PowerFlowExecutor> config) throws Exception {
        PowerFlowExecutor e = config.get();
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        Future<String> f = e.submit(untilInterrupted(started, interrupted));
        assertTrue(started.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        Thread.currentThread().interrupt();
        try {
            e.close();
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
        assertTrue(e.isTerminated());
        assertTrue(interrupted.get());
        assertTrue(f.isDone());
        assertThrows(ExecutionException.class, f::get);
        closeAll(e);
    }

    /**
     * A thread interrupted while it waits in close() stops the executor, waits for termination and
     * returns with the interrupt status set.
     */
    @ParameterizedTest
    @MethodSource("executors")
    void interruptDuringClose(Supplier<PowerFlowExecutor> config) throws Exception {
        PowerFlowExecutor e = config.get();
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        Future<String> f = e.submit(untilInterrupted(started, interrupted));
        assertTrue(started.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        AtomicReference<Boolean> statusAfter = new AtomicReference<>();
        Thread closer = Thread.ofPlatform().start(() -> {
            e.close();
            statusAfter.set(Thread.currentThread().isInterrupted());
        });
        Thread interrupter = interruptWhenWaiting(closer);
        closer.join(LONG_DELAY_MS);
        interrupter.join();
        assertFalse(closer.isAlive());
        assertEquals(Boolean.TRUE, statusAfter.get());
        assertTrue(e.isTerminated());
        assertTrue(interrupted.get());
        assertThrows(ExecutionException.class, f::get);
        closeAll(e);
    }

    /** An idle executor terminates inside shutdown(), before close(). */
    @ParameterizedTest
    @MethodSource("executors")
    void terminateBeforeClose(Supplier<PowerFlowExecutor> config) throws Exception {
        for (int i = 0; i < 10; i++) {
            PowerFlowExecutor e = config.get();
            e.shutdown();
            assertTrue(e.isTerminated(), "try " + i);
            e.close();
            assertTrue(e.isShutdown());
            assertTrue(e.isTerminated());
            assertTrue(e.awaitTermination(10, TimeUnit.MILLISECONDS));
            closeAll(e);
        }
    }

    /** An idle executor terminates inside shutdownNow(), which returns no task. */
    @ParameterizedTest
    @MethodSource("executors")
    void idleExecutorTerminatesInsideShutdownNow(Supplier<PowerFlowExecutor> config) throws Exception {
        for (int i = 0; i < 10; i++) {
            PowerFlowExecutor e = config.get();
            assertTrue(e.shutdownNow().isEmpty());
            assertTrue(e.isTerminated(), "try " + i);
            closeAll(e);
        }
    }

    /**
     * shutdownNow() returns with the executor terminated even when the dispatcher, woken by it,
     * ran the termination first: the owned delegate's shutdownNow() (which shutdownNow() calls
     * after waking the dispatcher) returns only once the state reads Terminated, so the call finds
     * the termination done but the dispatcher's thread possibly not yet ended. Before the fix,
     * shutdownNow() returned without waiting for that thread, and isTerminated() could read false
     * (a CI run saw it once in 50 idle executors).
     */
    @Test
    void shutdownNowWaitsForADispatcherThatTerminatedFirst() throws Exception {
        for (int i = 0; i < 200; i++) {
            AtomicReference<PowerFlowExecutor> self = new AtomicReference<>();
            ExecutorService inner = Executors.newSingleThreadExecutor();
            ExecutorService owned = new AbstractExecutorService() {
                @Override public void execute(Runnable r) { inner.execute(r); }
                @Override public void shutdown() { inner.shutdown(); }
                @Override public boolean isShutdown() { return inner.isShutdown(); }
                @Override public boolean isTerminated() { return inner.isTerminated(); }
                @Override public boolean awaitTermination(long t, TimeUnit u) throws InterruptedException {
                    return inner.awaitTermination(t, u);
                }
                @Override public List<Runnable> shutdownNow() {
                    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LONG_DELAY_MS);
                    while (!self.get().toString().contains("Terminated") && System.nanoTime() < deadline) {
                        Thread.onSpinWait();
                    }
                    return inner.shutdownNow();
                }
            };
            PowerFlowExecutor e = PowerFlowExecutor.builder().targetP99(TARGET).delegate(owned).ownsDelegate(true)
                    .build();
            self.set(e);
            assertTrue(e.shutdownNow().isEmpty());
            assertTrue(e.toString().contains("Terminated"), "the dispatcher terminated it, try " + i);
            assertTrue(e.isTerminated(), "try " + i);
            closeAll(e);
        }
    }

    /** awaitTermination before shutdown times out; after close it returns true at once. */
    @ParameterizedTest
    @MethodSource("executors")
    void awaitTerminationBeforeAndAfterClose(Supplier<PowerFlowExecutor> config) throws Exception {
        PowerFlowExecutor e = config.get();
        assertFalse(e.awaitTermination(10, TimeUnit.MILLISECONDS));
        assertFalse(e.isTerminated());
        e.close();
        assertTrue(e.awaitTermination(0, TimeUnit.MILLISECONDS));
        closeAll(e);
    }

    /** Waits until {@code started} has counted down and {@code t} waits, then interrupts it. */
    static Thread interruptWhenWaitingAfter(Thread t, CountDownLatch started) {
        return Thread.ofPlatform().daemon().start(() -> {
            try {
                if (!started.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS)) {
                    return;
                }
            } catch (InterruptedException ie) {
                return;
            }
            interruptWhenWaitingNow(t);
        });
    }

    private static void interruptWhenWaitingNow(Thread t) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LONG_DELAY_MS);
        while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING
                && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        t.interrupt();
    }
}
