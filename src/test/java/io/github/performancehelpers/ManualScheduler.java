package io.github.performancehelpers;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Delayed;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ScheduledExecutorService} that never runs anything by itself: a test runs the
 * periodic tasks by hand with {@link #runPeriodic()}. Only periodic scheduling is supported.
 */
final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {

    final List<Periodic> periodic = new CopyOnWriteArrayList<>();
    private volatile boolean shutdown;

    /** Runs every periodic task that is not cancelled, once, on the calling thread. */
    int runPeriodic() {
        int n = 0;
        for (Periodic p : periodic) {
            if (!p.isCancelled()) {
                p.command.run();
                n++;
            }
        }
        return n;
    }

    static final class Periodic extends FutureTask<Void> implements ScheduledFuture<Void> {
        final Runnable command;

        Periodic(Runnable command) {
            super(command, null);
            this.command = command;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return 0;
        }

        @Override
        public int compareTo(Delayed o) {
            return 0;
        }
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        Periodic p = new Periodic(command);
        periodic.add(p);
        return p;
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return scheduleWithFixedDelay(command, initialDelay, period, unit);
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void shutdown() {
        shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
        shutdown = true;
        return List.of();
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return shutdown;
    }

    @Override
    public void execute(Runnable command) {
        throw new UnsupportedOperationException();
    }
}
