package io.github.performancehelpers;

import java.lang.System.Logger.Level;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * Notes the pauses of the process that no thread of an executor would see: one daemon thread for
 * the whole JVM ({@value #THREAD_NAME}), alive while at least one executor subscribes, sleeps
 * {@link #PERIOD_NANOS} at a time and reports every wake-up later than
 * {@link PowerFlowExecutor#STALL_NOTE_NANOS} to each subscriber, as a pause of that length (after
 * jHiccup's method). A collector's pause, the machine's, or a thread kept off the CPUs that long
 * ends every call in flight late, whatever the load, and the loop must not read it as the
 * downstream's latency.
 *
 * <p>Why a thread of its own: the executor's threads see a pause only when they were waiting on
 * a clock when it struck, the dispatcher while it paces admissions, the tick when the pause
 * straddles the window's end. At an open rate the dispatcher waits for work, not for the clock,
 * and a pause inside a window went unseen. Cost: about a hundred wake-ups a second for the whole
 * JVM, each a few microseconds; none while no executor runs.
 *
 * <p><b>Thread safety.</b> Thread-safe. A subscriber is called on the watch's thread and must not
 * block.
 */
final class PauseWatch {

    private static final System.Logger LOG = System.getLogger(PauseWatch.class.getName());

    /** The watch thread's name. */
    static final String THREAD_NAME = "performance-helpers-pause-watch";

    /**
     * How long the watch sleeps at a time, ns: a hundredth of a one-second window, so that the
     * wake-ups cost nothing measurable and a pause of tens of milliseconds is not lost in a sleep.
     */
    static final long PERIOD_NANOS = 10_000_000L;

    /** The JVM's watch: real time, real sleeps. */
    private static final PauseWatch SHARED =
            new PauseWatch(System::nanoTime, LockSupport::parkNanos, THREAD_NAME);

    private final LongSupplier clock;
    private final LongConsumer sleeper;
    private final String threadName;
    private final CopyOnWriteArrayList<Subscription> subscribers = new CopyOnWriteArrayList<>();
    private final Object lock = new Object();
    /** The watch's thread, null while none runs. Guarded by {@link #lock}. */
    private Thread thread;

    /**
     * A watch on its own clock and sleep, for tests.
     *
     * @param clock      nanoseconds, monotonic
     * @param sleeper    sleeps about the nanoseconds given (may return early)
     * @param threadName the name of the thread it starts
     */
    PauseWatch(LongSupplier clock, LongConsumer sleeper, String threadName) {
        this.clock = clock;
        this.sleeper = sleeper;
        this.threadName = threadName;
    }

    /**
     * Subscribes to the JVM's watch.
     *
     * @param onPause called with each pause's length, ns
     * @return the subscription; closing it unsubscribes
     */
    static Subscription shared(LongConsumer onPause) {
        return SHARED.subscribe(onPause);
    }

    /**
     * Subscribes, starting the watch's thread if none runs.
     *
     * @param onPause called with each pause's length, ns, on the watch's thread
     * @return the subscription; closing it unsubscribes, and the last one out stops the thread
     */
    Subscription subscribe(LongConsumer onPause) {
        Subscription s = new Subscription(onPause);
        synchronized (lock) {
            subscribers.add(s);
            if (thread == null) {
                Thread t = new Thread(this::watch, threadName);
                t.setDaemon(true);
                try {
                    t.start();
                } catch (RuntimeException | Error e) { // no thread to be had: nothing half-applied
                    subscribers.remove(s);
                    throw e;
                }
                thread = t;
            }
        }
        return s;
    }

    /** {@return whether the watch's thread is running} For tests. */
    boolean running() {
        synchronized (lock) {
            return thread != null;
        }
    }

    private void unsubscribe(Subscription s) {
        synchronized (lock) {
            if (subscribers.remove(s) && subscribers.isEmpty() && thread != null) {
                LockSupport.unpark(thread); // out of its sleep, to see that no one is left
            }
        }
    }

    private void watch() {
        for (;;) {
            synchronized (lock) {
                if (subscribers.isEmpty()) {
                    thread = null;
                    return;
                }
            }
            long before = clock.getAsLong();
            sleeper.accept(PERIOD_NANOS);
            Thread.interrupted(); // nobody's to interrupt: an interrupt would end every later sleep at once
            long late = clock.getAsLong() - before - PERIOD_NANOS;
            if (late > PowerFlowExecutor.STALL_NOTE_NANOS) {
                for (Subscription s : subscribers) {
                    try {
                        s.onPause.accept(late);
                    } catch (RuntimeException e) { // one subscriber's failure must not blind the others
                        LOG.log(Level.WARNING, "a pause subscriber failed; the watch continues", e);
                    }
                }
            }
        }
    }

    /** One subscriber's place on the watch; {@link #close()} leaves it (idempotent). */
    final class Subscription implements AutoCloseable {
        private final LongConsumer onPause;

        private Subscription(LongConsumer onPause) {
            this.onPause = onPause;
        }

        @Override
        public void close() {
            unsubscribe(this);
        }
    }
}
