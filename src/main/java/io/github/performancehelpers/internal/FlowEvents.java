package io.github.performancehelpers.internal;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * The library's JDK Flight Recorder events, and the one place that commits them.
 *
 * <p>Every event is enabled, disabled and thresholded through the normal JFR settings (a
 * {@code .jfc} file, {@code jcmd JFR.start}, {@link jdk.jfr.Recording#enable(String)}). The
 * idiom is JFR's own: the event object is created and {@code isEnabled()} asked before any field
 * is computed; when no recording has the event enabled the object never escapes, so the JIT
 * removes the allocation, and nothing else is done. Events are committed on the observation
 * path (at most a few per observe interval), on the slow path of a stale loop (once per episode),
 * never per task.
 *
 * <p><b>Thread safety.</b> Stateless; every method is safe to call from any thread.
 */
public final class FlowEvents {

    /** The JFR category of every event. */
    public static final String CATEGORY = "performance-helpers";

    private FlowEvents() {
    }

    /** One observation that stepped the servo. */
    @Name("io.github.performancehelpers.Observation")
    @Label("Flow Observation")
    @Description("One step of the flow control loop: the measured quantile, the error and the rate it produced")
    @Category(CATEGORY)
    @StackTrace(false)
    static final class Observation extends Event {
        @Label("Name")
        @Description("The executor's or controller's name")
        String name;

        @Label("p99 (ms)")
        @Description("The driving quantile (p99 by default) of the window just closed, in milliseconds")
        double p99;

        @Label("Error (ms)")
        @Description("targetP99 - p99: negative drives the rate down")
        double error;

        @Label("Rate (ops/s)")
        @Description("The rate in force after the observation")
        double rate;

        @Label("Previous Rate (ops/s)")
        double previous;

        @Label("Saturated")
        @Description("Whether the servo's output is pinned at minRate or maxRate")
        boolean saturated;

        @Label("dt")
        @Description("The time since the previous observation, in the gains' unit (milliseconds by default)")
        double dt;

        @Label("Pause (ms)")
        @Description("The longest pause of the process the executor noted during the window, in milliseconds; 0 when none")
        double pause;

        @Label("Excused")
        @Description("Whether the knee-aware law left this window out (an excusing pause in it, or the window after one): the rate held")
        boolean excused;
    }

    /** The loop moved the rate. */
    @Name("io.github.performancehelpers.RateChange")
    @Label("Flow Rate Change")
    @Description("The flow control loop moved the rate")
    @Category(CATEGORY)
    @StackTrace(false)
    static final class RateChange extends Event {
        @Label("Name")
        String name;

        @Label("Rate (ops/s)")
        double rate;

        @Label("Previous Rate (ops/s)")
        double previous;
    }

    /**
     * The drops of one observe interval: committed at the observation (the tick), only when the
     * interval had drops, so at most one per interval however many drops there were (a throttle
     * on the observation clock; JFR's own {@code @Throttle} is not available on JDK 21).
     */
    @Name("io.github.performancehelpers.Drops")
    @Label("Flow Drops")
    @Description("Offers the full queue refused during the observe interval just ended; at most one event per interval")
    @Category(CATEGORY)
    @StackTrace(false)
    static final class Drops extends Event {
        @Label("Name")
        String name;

        @Label("Count")
        @Description("Drops since the previous observation (or the previous drop check)")
        long count;

        @Label("Total")
        @Description("Drops since construction")
        long total;
    }

    /** The observation tick has not run for longer than staleAfter. */
    @Name("io.github.performancehelpers.StaleLoop")
    @Label("Flow Stale Loop")
    @Description("The observation tick has not run for longer than staleAfter: the rate in force is stale")
    @Category(CATEGORY)
    @StackTrace(false)
    static final class StaleLoop extends Event {
        @Label("Name")
        String name;

        @Label("Since Last Tick")
        @Timespan(Timespan.NANOSECONDS)
        long sinceLastTick;

        @Label("Stale After")
        @Timespan(Timespan.NANOSECONDS)
        long staleAfter;
    }

    /** An executor's observation window ended: the caller's latency beside the run time. */
    @Name("io.github.performancehelpers.ExecutorWindow")
    @Label("Flow Executor Window")
    @Description("An executor's observation window: the end-to-end p99 (submit to completion) beside the run-time "
            + "p99, the wait budget set for the next window, the tasks shed, whether the target is unreachable, and the cap on "
            + "the tasks in flight")
    @Category(CATEGORY)
    @StackTrace(false)
    static final class ExecutorWindow extends Event {
        @Label("Name")
        String name;

        @Label("Run-time p99 (ms)")
        double runP99;

        @Label("End-to-end p99 (ms)")
        double endToEndP99;

        @Label("Wait Budget")
        @Timespan(Timespan.NANOSECONDS)
        long waitBudget;

        @Label("Shed")
        @Description("Tasks shed from the queue since construction")
        long shed;

        @Label("Target Unreachable")
        boolean targetUnreachable;

        @Label("In-flight Limit")
        @Description("The cap on the tasks in flight from the run time that was in force during the window; -1 when none")
        int inFlightLimit;
    }

    public static void executorWindow(String name, double runP99, double endToEndP99, long waitBudgetNanos,
            long shed, boolean targetUnreachable, int inFlightLimit) {
        ExecutorWindow e = new ExecutorWindow();
        if (!e.isEnabled()) {
            return;
        }
        e.name = name;
        e.runP99 = runP99;
        e.endToEndP99 = endToEndP99;
        e.waitBudget = waitBudgetNanos;
        e.shed = shed;
        e.targetUnreachable = targetUnreachable;
        e.inFlightLimit = inFlightLimit;
        e.commit();
    }

    public static void observation(String name, double p99, double error, double rate, double previous,
            boolean saturated, double dt, double pauseMs, boolean excused) {
        Observation e = new Observation();
        if (!e.isEnabled()) {
            return;
        }
        e.name = name;
        e.p99 = p99;
        e.error = error;
        e.rate = rate;
        e.previous = previous;
        e.saturated = saturated;
        e.dt = dt;
        e.pause = pauseMs;
        e.excused = excused;
        e.commit();
    }

    public static void rateChange(String name, double rate, double previous) {
        RateChange e = new RateChange();
        if (!e.isEnabled()) {
            return;
        }
        e.name = name;
        e.rate = rate;
        e.previous = previous;
        e.commit();
    }

    public static void drops(String name, long count, long total) {
        Drops e = new Drops();
        if (!e.isEnabled()) {
            return;
        }
        e.name = name;
        e.count = count;
        e.total = total;
        e.commit();
    }

    public static void staleLoop(String name, long sinceLastTick, long staleAfter) {
        StaleLoop e = new StaleLoop();
        if (!e.isEnabled()) {
            return;
        }
        e.name = name;
        e.sinceLastTick = sinceLastTick;
        e.staleAfter = staleAfter;
        e.commit();
    }
}
