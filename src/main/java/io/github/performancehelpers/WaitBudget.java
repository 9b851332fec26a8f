package io.github.performancehelpers;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Supplier;
import io.github.performancehelpers.loop.PowerHistogram;

/**
 * A shedding {@link PowerFlowExecutor}'s wait budget: the longest a task may wait before it starts
 * and still finish within the target, that is {@link #AIM} of the target less the run-time p99 the
 * law reads, at least {@link PowerFlowExecutor#MIN_WAIT_SHARE} of the target, and the whole target while the
 * law finds the target unreachable (see the executor's "Shedding"). The window's end sets it
 * ({@link #setFrom}, {@link #whole}); within a window a rising run time tightens it
 * ({@link #tighten}), never loosens it.
 *
 * <p><b>Thread safety.</b> Every method may be called from any thread: the budget is a volatile
 * read; the window's end is the tick's; one caller at a time tightens (a CAS on the time it is
 * next due).
 */
final class WaitBudget {

    private static final VarHandle NEXT_TIGHTEN;

    static {
        try {
            NEXT_TIGHTEN = MethodHandles.lookup().findVarHandle(WaitBudget.class, "nextTighten", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The samples the window so far must hold before its run-time p99 tightens the budget: with
     * fewer, the p99 is the largest sample or next to it, and one slow call would shed for the
     * rest of the window.
     */
    static final long TIGHTEN_SAMPLES = 200;

    /**
     * The share of the target that the wait budget and the run-time p99 add up to. Under a
     * persistent overload the queue is never empty and first in, first out, so nearly every task
     * served has waited about the whole budget: the callers' latencies gather at the budget plus
     * the run time instead of spreading below it. Aimed at the target itself, the window-to-window
     * scatter of the run time put a large share of them just over it (on a fixed-rate server,
     * whose run time scatters least, a tenth to a fifth of what was served in the field trial's
     * {@code quota} scenario); aimed at nine tenths, as the law aims the run time, that scatter
     * stays within the target.
     */
    static final double AIM = 0.9;

    /**
     * The share of the room ({@link #queueRoom}) that a task which cannot be shed once queued is
     * let in behind: a {@code Runnable} given to {@code execute}. The door predicts a task's start
     * at the pace the queue starts tasks when it arrives; a cut of the cap on the tasks in flight
     * (at most by half a window, {@code InFlightCap.MAX_CUT}) or of the rate after that slows the
     * starts ahead of it, and a task of {@code submit} is then shed in time, while a
     * {@code Runnable} waits on and ends late. With the same room as a {@code submit}'s, such
     * tasks missed the target in 2 to 4 of 5 settled blocks after a halving of the downstream's
     * capacity in the field trial ({@code quota}, {@code batch}, and held-out {@code api} and
     * {@code report}, 60-s phases; benchmarks/fieldtrial.md). After a calm window ({@link #calm}),
     * where such cuts are unlikely, the task gets the whole room, as a {@code submit}'s.
     */
    static final double UNSHEDDABLE_ROOM = 0.5;

    private final long targetNanos;
    /** The least budget, ns: {@link PowerFlowExecutor#MIN_WAIT_SHARE} of the target. */
    private final double floorNanos;
    /** How often at most the budget is tightened within a window: a tenth of the observe interval. */
    private final long tightenEveryNanos;
    /** The run-time samples of the window so far, from any thread (the executor drains its recorders first). */
    private final Supplier<PowerHistogram.Snapshot> windowSoFar;
    /** The driving quantile of the run time. */
    private final double quantile;
    /** The budget, ns. */
    private volatile long nanos;
    /**
     * How long the queue took to start one more task in the last window, ns: its mean run time
     * over the tasks that run at once, or the rate's interval if that is longer; 0 when unknown.
     */
    private volatile long drainNanos;
    /**
     * The last window's mean run time, ns; 0 when unknown. Within it the tasks in flight when a
     * head with none ahead was queued need not have ended: they may have started together, after
     * a burst or a pause of the process, and then end together ({@link #paceShownBy}).
     */
    private volatile long roundNanos;
    /** The run-time p99 the budget was last set from, ms; NaN when none (or unreachable). */
    private volatile double runMs = Double.NaN;
    /**
     * Whether the last window was calm: its callers on time, nothing shed or refused, and no cap
     * on the tasks in flight for the next. The cuts the half room ({@link #UNSHEDDABLE_ROOM})
     * allows for come on windows whose callers were late or with the cap binding, and, with the
     * cap open, on a window whose calls queued inside the downstream past the run time's budget;
     * after a calm window the pace the door predicts is the likely one, and the half room
     * refuses, in an underload, tasks that would start in time (behind one busy thread that starts
     * a task every 6 ms, with a 39-ms budget: 3 let in where 6 start within it;
     * {@code SheddingTest}). A window in which no task completed counts as on time. Limits: a
     * task let in under the whole room late in a window whose calls begin to queue inside may
     * still see the open cap's cut at that window's end, and a cut of the rate by the law is not
     * read (at an open rate, the factories' default, there is none to read).
     */
    private volatile boolean calm;
    /** The ticker time from which the budget may next be tightened. */
    @SuppressWarnings("unused") // through NEXT_TIGHTEN
    private volatile long nextTighten;

    /**
     * A budget of the whole target until the first window ends.
     *
     * @param targetNanos       the target, ns
     * @param tightenEveryNanos how often at most it is tightened within a window, ns ({@code > 0})
     * @param windowSoFar       the run-time samples of the window so far
     * @param quantile          the driving quantile
     */
    WaitBudget(long targetNanos, long tightenEveryNanos, Supplier<PowerHistogram.Snapshot> windowSoFar,
            double quantile) {
        this.targetNanos = targetNanos;
        this.floorNanos = PowerFlowExecutor.MIN_WAIT_SHARE * targetNanos;
        this.tightenEveryNanos = tightenEveryNanos;
        this.windowSoFar = windowSoFar;
        this.quantile = quantile;
        this.nanos = targetNanos;
    }

    /** {@return the budget in force, ns} */
    long nanos() {
        return nanos;
    }

    /** Whether a task that has waited {@code waitedNanos} has waited past the budget. */
    boolean exceededBy(long waitedNanos) {
        return waitedNanos > nanos;
    }

    /**
     * The most tasks that may wait ahead of a newcomer with it still starting within the budget,
     * by how long the queue takes to start a task: the longer of the last window's figure
     * ({@link #drainEvery}) and {@code pacedNanos}, the pace the queue shows now. A task behind
     * {@code depth} others waits about {@code (depth + 1)} such times, theirs and its own turn,
     * and the door refuses it when that is over the budget, that is when {@code depth} is over
     * this. At least 0 (an empty queue is never too long: a task there waits only for a slot);
     * {@code Integer.MAX_VALUE} when the pace is unknown. Why the head's wait alone does not do:
     * where tasks arrive faster than the queue starts them, the door lets in, while the head's
     * wait is within the budget, as many as arrive in that time, and each of them waits behind all
     * of the others (three times the budget at three times the capacity: a {@code Runnable} given
     * to {@code execute}, which is never shed once accepted, waited 30 ms against a 6-ms budget in
     * {@code ClosedLoopBench}). Why the last window's figure alone does not do: it is the mean run
     * time over the tasks run at once, and a window of light load reads the run time of a
     * downstream that did not queue; when a burst then fills the cap on the tasks in flight, the
     * calls queue inside the downstream and start several times slower than that figure says (the
     * field trial's {@code bursts}: 0.29 ms predicted, 0.63 ms taken, and {@code execute} tasks
     * ended 100–130 ms against an 80-ms target).
     *
     * @param pacedNanos  how long the queue has taken per task started, ns, as its head shows it;
     *                    0 when the queue shows none
     * @param unsheddable whether the newcomer cannot be shed once queued: it gets
     *                    {@link #UNSHEDDABLE_ROOM} of the room (rounded down) unless the last
     *                    window was calm ({@link #calm(boolean)})
     */
    int queueRoom(long pacedNanos, boolean unsheddable) {
        long d = Math.max(drainNanos, pacedNanos);
        if (d <= 0) {
            return Integer.MAX_VALUE;
        }
        // (depth + 1) × d > nanos  ⇔  depth + 1 > floor(nanos / d), depth being an integer
        int room = (int) Math.min(Integer.MAX_VALUE, Math.max(0L, nanos / d - 1));
        return unsheddable && !calm ? (int) (room * UNSHEDDABLE_ROOM) : room;
    }

    /**
     * Says whether the window that just ended was calm: its end-to-end p99 within the target,
     * nothing shed or refused in it, and the cap on the tasks in flight open for the next. The
     * window's end sets it ({@code PowerFlowExecutor.endWindow}).
     */
    void calm(boolean calm) {
        this.calm = calm;
    }

    /**
     * The pace the queue shows now, ns per start, from its head ({@link #queueRoom}'s
     * {@code pacedNanos}): every task queued ahead of the head has started (or left) within its
     * wait and the head has not, so the queue takes at least {@code waitedNanos / (ahead + 1)} a
     * start, whatever the last window read. A head with one or more ahead is read so at once:
     * that is what catches a burst that makes the calls queue inside the downstream
     * ({@link #queueRoom}). It shows no pace (0) in two cases.
     *
     * <p>A head with none ahead, until it has waited longer than the last window's mean run time.
     * It has seen no start, only that the tasks in flight when it was queued have not ended, and
     * within one run time they need not have: where they started together, after a burst of
     * arrivals or a pause of the process, they end together and start the tasks behind it several
     * at a time. Read sooner, a head that had waited 6.2 ms on 8 threads of 10-ms calls read as a
     * start every 6.2 ms instead of about 1.3, and the door refused tasks that would have started
     * within a few milliseconds: most refusals by the queue's length in the field trial's
     * {@code pool} underload, in three traces (benchmarks/fieldtrial.md; {@code SheddingTest}).
     *
     * <p>A head that waits while a slot on the delegate is free: it is not waiting for the
     * downstream to end a task but for the rate, which the last window's pace holds
     * ({@link #drainEvery}), or for a thread the process has not run. In the same underload heads
     * held 17-20 ms as the pause watch noted a pause of the process, most with 0 or 1 of the 8
     * slots taken, read as a start every 17-20 ms, and the door refused the task behind them.
     *
     * @param waitedNanos how long the head has waited, ns
     * @param ahead       the tasks queued ahead of it when it was queued
     * @param slotFree    whether a slot on the delegate is free now
     */
    long paceShownBy(long waitedNanos, int ahead, boolean slotFree) {
        return slotFree || ahead == 0 && waitedNanos <= roundNanos ? 0L : waitedNanos / (ahead + 1L);
    }

    /**
     * Sets how long the queue takes to start one more task, ns, and the mean run time of the
     * window it was read in, ns; 0 when unknown (no prediction from the window; the head's wait
     * then shows the pace from the first nanosecond). The window's end sets them
     * ({@code PowerFlowExecutor.setDrainFrom}).
     */
    void drainEvery(long nanos, long meanRunNanos) {
        drainNanos = Math.max(0L, nanos);
        roundNanos = Math.max(0L, meanRunNanos);
    }

    /** Sets the budget from a run-time p99, ms: {@link #AIM} of the target less it, at least the floor. */
    void setFrom(double runP99Ms) {
        runMs = runP99Ms;
        nanos = (long) Math.max(AIM * targetNanos - runP99Ms * 1e6, floorNanos);
    }

    /** The target is unreachable: the run time alone is over it, so the wait alone must not be. */
    void whole() {
        nanos = targetNanos;
        runMs = Double.NaN;
    }

    /**
     * Tightens the budget, at most once per tenth of the observe interval, when the run-time p99
     * of the window so far (at least {@link #TIGHTEN_SAMPLES} samples) is above the one the
     * budget was set from: the budget then becomes the target less it (at least the floor). The
     * budget set at the window's end applies to the next window, and a run time that rises
     * within it would otherwise let tasks that waited the old budget end late. Whichever caller
     * finds the time due does it (one, by a CAS).
     *
     * @param now a reading of the executor's ticker, ns
     */
    void tighten(long now) {
        long due = nextTighten;
        if (now - due < 0 || !NEXT_TIGHTEN.compareAndSet(this, due, now + tightenEveryNanos)) {
            return;
        }
        double from = runMs;
        if (Double.isNaN(from)) {
            return; // before the first window, or the target is unreachable: the whole target
        }
        PowerHistogram.Snapshot window = windowSoFar.get();
        if (window.count() < TIGHTEN_SAMPLES) {
            return;
        }
        double run = window.quantile(quantile);
        if (run > from) {
            setFrom(run);
        }
    }
}
