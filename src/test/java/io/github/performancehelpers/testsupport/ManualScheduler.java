package io.github.performancehelpers.testsupport;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link ScheduledExecutorService} whose tasks never run on their own: a test runs every live
 * (not cancelled) task once, on the calling thread, with {@link #runAll()}. Thread-safe, so a
 * stress test may run ticks from its own thread while others use the component under test.
 * {@link #execute} runs the command inline; after {@link #shutdown()} scheduling is rejected.
 */
public final class ManualScheduler extends InlineExecutor implements ScheduledExecutorService {

    /** A scheduled task and how it was scheduled. */
    public final class Task implements ScheduledFuture<Object> {
        public final Runnable body;
        public final long initialDelayNanos;
        public final long periodNanos;
        volatile boolean cancelled;
        volatile int runs;

        Task(Runnable body, long initialDelayNanos, long periodNanos) {
            this.body = body;
            this.initialDelayNanos = initialDelayNanos;
            this.periodNanos = periodNanos;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            if (cancelled) {
                return false;
            }
            cancelled = true;
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return cancelled;
        }

        @Override
        public Object get() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(initialDelayNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final List<Task> tasks = new ArrayList<>(); // guarded by lock

    /** Runs every live (not cancelled) task once, in scheduling order; returns how many ran. */
    public int runAll() {
        List<Task> live = live();
        for (Task t : live) {
            t.runs++;
            t.body.run();
        }
        return live.size();
    }

    /** The tasks scheduled so far that are not cancelled. */
    public List<Task> live() {
        lock.lock();
        try {
            List<Task> out = new ArrayList<>();
            for (Task t : tasks) {
                if (!t.cancelled) {
                    out.add(t);
                }
            }
            return out;
        } finally {
            lock.unlock();
        }
    }

    /** Every task ever scheduled, cancelled or not. */
    public List<Task> all() {
        lock.lock();
        try {
            return new ArrayList<>(tasks);
        } finally {
            lock.unlock();
        }
    }

    private Task add(Runnable r, long delay, long period, TimeUnit unit) {
        if (isShutdown()) {
            throw new RejectedExecutionException("shut down");
        }
        Task t = new Task(r, unit.toNanos(delay), unit.toNanos(period));
        lock.lock();
        try {
            tasks.add(t);
        } finally {
            lock.unlock();
        }
        return t;
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return add(command, delay, 0, unit);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return add(command, initialDelay, period, unit);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return add(command, initialDelay, delay, unit);
    }
}
