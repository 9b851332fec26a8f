package io.github.performancehelpers.testsupport;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A test executor that runs each command on the calling thread and whose lifecycle is one flag:
 * shut down (or stopped, or terminated) once {@link #shutdown()} or {@link #shutdownNow()} has
 * been called. Subclasses add what they record or schedule.
 */
public class InlineExecutor extends AbstractExecutorService {

    private volatile boolean shutdown;

    /** Creates a running executor. */
    public InlineExecutor() {
    }

    /** Runs the command at once, on the calling thread. */
    @Override
    public void execute(Runnable command) {
        command.run();
    }

    @Override
    public void shutdown() {
        shutdown = true;
    }

    /** Shuts down; nothing is ever queued, so nothing is returned. */
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
}
