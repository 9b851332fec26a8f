package io.github.performancehelpers.limit;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import io.github.performancehelpers.Ticker;

/**
 * How one {@link RedisGCRA} reports its failures and recoveries through {@link System.Logger}
 * (by default the logger named {@code io.github.performancehelpers.limit.RedisGCRA}): off the calling thread and
 * rate-limited, so that a failing call answers within its timeout however slow the logging
 * backend is, and a flapping Redis cannot flood the log.
 *
 * <p>The rules, per limiter: at most one failure report per {@link #INTERVAL}, measured on the
 * limiter's {@link Ticker}; a failure that finds the interval not yet over is counted, and the
 * next report says how many went unreported. A failure report is a {@code WARNING} when no
 * {@code WARNING} has been logged since the limiter last recovered (so a degraded state is never
 * left unannounced for longer than one interval and a probe), a {@code DEBUG} otherwise. A
 * recovery is an {@code INFO}, logged when the degraded state it ends was announced by a
 * {@code WARNING}. So a limiter logs at most two records per interval.
 *
 * <p>The records are written by one daemon platform thread shared by all limiters, started by the
 * first report and gone after {@link #IDLE_SECONDS} seconds without one; it never keeps the JVM
 * alive, and records still queued at exit are lost. At most {@link #QUEUE_CAPACITY} records wait
 * for it; more are dropped, counted, and the count is logged with the next record written.
 *
 * <p><b>Thread safety.</b> Safe for concurrent use by any number of threads; lock-free on the
 * caller's side. Concurrent failures and recoveries may pick their levels from each other's
 * state (a benign race: the counters in {@link RedisGCRA.Stats} are the exact record).
 */
final class RedisGcraReporter {

    /*
     * Implementation notes. Everything the caller does here is a ticker read, a few atomics and an
     * offer to a queue: no string is built and no logger is touched on the caller's thread, since
     * a JDK logger's first record initialises its backend (handlers, formatter, time zones), which
     * took tens to hundreds of milliseconds, and the record's stack trace is formatted as it is
     * written. The messages are built by the reporter thread in Report.run().
     */

    /** The shortest time between two failure reports of one limiter. */
    static final Duration INTERVAL = Duration.ofSeconds(10);

    /** Seconds the reporter thread waits for a record before it stops. */
    static final long IDLE_SECONDS = 30;

    /** Records waiting for the reporter thread beyond which new ones are dropped. */
    static final int QUEUE_CAPACITY = 1024;

    private static final long INTERVAL_NANOS = INTERVAL.toNanos();

    /**
     * The limiters' logger, obtained when this class initialises, which building a limiter
     * causes: never on a call's way.
     */
    static final Logger LOGGER = System.getLogger(RedisGCRA.class.getName());

    private static final AtomicLong DROPPED = new AtomicLong();

    private static final ThreadPoolExecutor REPORTS = reporterThread();

    private final String key;
    private final RedisGCRA.FailureMode failureMode;
    private final Duration probeInterval;
    private final Ticker ticker;
    private final Logger logger;

    /** The ticker reading from which the next failure report may be logged. */
    private final AtomicLong nextReportAt;
    /** Failures not reported since the last failure report. */
    private final AtomicLong unreported = new AtomicLong();
    /** Whether a WARNING has been logged since the limiter last recovered. */
    private final AtomicBoolean warned = new AtomicBoolean();

    RedisGcraReporter(String key, RedisGCRA.FailureMode failureMode, Duration probeInterval,
                      Ticker ticker, Logger logger) {
        this.key = key;
        this.logger = logger;
        this.failureMode = failureMode;
        this.probeInterval = probeInterval;
        this.ticker = ticker;
        // The first failure is reported whatever the ticker's origin.
        this.nextReportAt = new AtomicLong(ticker.read());
    }

    /** Reports a failed call (the failure is already counted), unless one was reported lately. */
    void failure(Throwable error) {
        long now = ticker.read();
        long at = nextReportAt.get();
        if (now - at < 0 || !nextReportAt.compareAndSet(at, now + INTERVAL_NANOS)) {
            unreported.incrementAndGet();
            return;
        }
        long skipped = unreported.getAndSet(0);
        boolean announce = !warned.getAndSet(true);
        submit(new Report(this, announce ? Level.WARNING : Level.DEBUG, skipped, error));
    }

    /** Reports that Redis answers again, if the degraded state was announced. */
    void recovery() {
        if (warned.compareAndSet(true, false)) {
            submit(new Report(this, Level.INFO, 0, null));
        }
    }

    /** Failures not reported since the last failure report (test access). */
    long unreported() {
        return unreported.get();
    }

    private static void submit(Report report) {
        REPORTS.execute(report);
    }

    private static ThreadPoolExecutor reporterThread() {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, IDLE_SECONDS, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(QUEUE_CAPACITY),
                Thread.ofPlatform().name("RedisGCRA-reporter").daemon(true)
                        .inheritInheritableThreadLocals(false).factory(),
                (task, executor) -> DROPPED.incrementAndGet());
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /** One record, built into a message and written on the reporter thread. */
    private record Report(RedisGcraReporter from, Level level, long skipped, Throwable error)
            implements Runnable {

        @Override
        public void run() {
            if (!from.logger.isLoggable(level)) {
                return;
            }
            long dropped = DROPPED.getAndSet(0);
            String message = "RedisGCRA " + from.key + ": " + switch (level) {
                case WARNING -> "Redis call failed; answering " + from.failureMode
                        + " and retrying Redis every " + from.probeInterval;
                case INFO -> "Redis answers again; no longer " + from.failureMode;
                default -> "Redis call failed again";
            };
            if (skipped > 0) {
                message += " (" + skipped + " more failures since the last report; at most one"
                        + " failure report per " + INTERVAL + ")";
            }
            if (dropped > 0) {
                message += " (" + dropped + " RedisGCRA log records dropped: the reporter was behind)";
            }
            from.logger.log(level, message, error);
        }
    }
}
