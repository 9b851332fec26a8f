package io.github.performancehelpers;

import io.github.performancehelpers.internal.PauseExcuse;

/**
 * The most tasks a {@link PowerFlowExecutor} keeps in flight on its delegate, set once per window
 * from the run time: the executor's answer to a downstream that queues inside (a FIFO server, a
 * database with fewer slots than the pool in front of it). There a call started with more in flight
 * than the downstream serves at once waits inside it, where nothing can shed it and every call
 * behind it waits too; the rate cannot prevent that, for a rate a few percent over such a
 * downstream's capacity fills it to the pool's size. Held in the executor's queue instead, the
 * call counts against its wait budget and is shed in time ({@code WaitBudget}), and the run time
 * stays at the share of the target this class gives it.
 *
 * <p><b>The rules</b>, once per window ({@link #step}), with {@code n} the window's mean
 * concurrency at a task's start, {@code x} its completions per second, {@code r} its run-time p99
 * and {@code B} the run time's budget, {@link #RUN_SHARE} of the target (more after a cut that
 * cost throughput, and at least {@link #RAISE_MARGIN} times the downstream's own p99 once that is
 * known, both below, and at most {@link #MAX_RUN_SHARE} of the target):
 * <ol>
 * <li>Open ({@code Integer.MAX_VALUE}) while the law finds the target unreachable: cutting
 *     what is in flight cannot lower a latency the load does not set.</li>
 * <li><b>A cut that cost throughput is undone.</b> The window after a cut, if the cap bound
 *     ({@code n} at least {@link #BINDS} of it), {@code x} fell under {@link #HURT} of the window
 *     before, and the mean run time fell less than half as much as the calls in flight (a cut to a
 *     share {@code k} of them leaves it over {@code (1 + k) / 2} of the window before's; the mean,
 *     because a window's p99 scatters more than such a cut moves it): the
 *     calls in flight were not waiting inside the downstream, they were being served, so the run
 *     time that window read is the downstream's own, not queueing. (Where they queued, the run
 *     time falls with them and the throughput stays; a throughput that fell for another reason, a
 *     pause of the machine, a lull in the arrivals, then leaves the cut in place. Nor after a cut
 *     on a window whose run-time p99 was over {@link #VOID} times the one before it, nor when the
 *     mean run time after it is over {@link #VOID} times the one it was made on, which no cut
 *     causes: the downstream slowed as the cut was made, and the throughput fell with its
 *     capacity. Nor when the window after it queued against the reference (below): 8 slots
 *     halved as a cut took 11 in flight to 8 read just so, and undone, the cap held 11 on the 4
 *     slots for six windows of late callers.) The cap goes back to where it was; {@code B}
 *     becomes at least {@link #RAISE_MARGIN} times that reading (at most
 *     {@link #MAX_RUN_SHARE} of the target), and no cut goes below that level for
 *     {@link #HOLD} windows, twice as many after each such cut in a row (at most
 *     {@link #MAX_HOLD}). This is what keeps a slow service (a run time over the budget at any
 *     concurrency) from being starved: it loses at most one window in a hold. A run-time p99
 *     over {@link #VOID} times the one that set them voids the hold and the raised budget, when
 *     the calls in flight were no more than {@link #ROOM_STEP} over the level the hold was set at
 *     or the p99 jumped that much within the window: the downstream changed (a cut that
 *     coincided with a fall in its capacity reads like one that cost throughput). With more in
 *     flight, the rise may be the cap's own queueing, which the cut takes back under the raised
 *     budget. Under a raised budget the cap does not grow while the window's mean run time is
 *     over {@link #ROOM} times the reference's (below) with more in flight than it had: that
 *     budget is over the downstream's own p99, and growing up to it would fill the downstream's
 *     queue (a database of 8 slots held 13 in flight, a mean run time 1.6 times its own).</li>
 * <li><b>Cut</b> when callers were late (the window's end-to-end p99 over the target, or tasks
 *     refused or shed), {@code r > B}, and the calls queued inside. With the cap open, also before
 *     the callers are late, and whatever the start-load statistics below read, when the window's
 *     mean run time is over {@code B} and over {@link #ROOM} times the reference's (below) with at
 *     least {@link #ROOM_STEP} more in flight (or a fifth more: {@link #moreInFlight}, as wherever
 *     the reference is read): the calls are queueing inside, and the next
 *     window's callers will be late (at the onset of the field trial's batch overload, 4 slots
 *     behind a pool of 32, the callers read late a merged window after the mean passed the
 *     budget, and the statistics of 75 calls that all queued stopped the cut one more: the first
 *     cut came 5 s in, with up to 29 calls in flight). With the cap open, unless
 *     something shows that they did not: that those over the target started at no higher
 *     concurrency than the rest ({@link #QUEUED_Z}), or that those that started at the highest
 *     concurrency ran no longer ({@link #QUEUED_RUN_Z}). With the cap binding, where every call
 *     starts with the same number in flight and those statistics read nothing, only when the run
 *     time shows it: the run-time p99 rose over {@link #VOID} times the window before's and the
 *     mean run time over {@link #ROOM} times its (the downstream's capacity fell within the window;
 *     a p99 that jumps with a flat mean is a few calls' event, a pause of the machine that ended
 *     every call in flight late), or the window queued against the reference (below: its mean run
 *     time over {@link #ROOM} times the reference's and over half the rise a FIFO's would show,
 *     with at least {@link #ROOM_STEP} more in flight), or the cut before it shortened the mean
 *     run time at least half as much as it cut the calls in flight (a FIFO's falls in proportion,
 *     a service's that did not queue not at all) and the window still ran over {@link #ROOM}
 *     times the downstream's own mean (below). A p99 over the budget alone is no reason at a
 *     binding cap: a window's p99 from a few hundred calls scatters by a tenth and more, and
 *     cutting on it took the field trial's {@code closedloop} (8 slots, their own p99 near the
 *     target) to 1 or 2 in flight. The cut goes to
 *     {@code max(n / 2, floor(n × B / r))}, at least 1. By Little's law a downstream that queues
 *     inside serves calls in flight at its capacity, and their run time is in proportion to how
 *     many: {@code n × B / r} is what brings the run time to the budget, and at most half a window
 *     so that one spike does not throw the cap to the floor. A floor keeps a cut from idling
 *     the downstream where its own p99 is near the budget, so that only queueing is cut: not
 *     below the calls it serves at once, {@code round(n × m₀ / m)} for a window of mean run time
 *     {@code m} and the downstream's own mean {@code m₀} (the reference's mean when a window
 *     showed room, read for {@link #OWN_SPAN} windows as its own p99 is, and lowered to a
 *     window that ran {@code ROOM} faster). Without it, the slots of
 *     {@code closedloop} halved to 4 were cut to 3 (a window at three quarters of their capacity,
 *     then an undo) every few windows.</li>
 * <li><b>Grow</b> when the cap bound and {@code r ≤ B}: under {@link #NEAR} of {@code B}, by
 *     {@code B / r}, at least {@link #GROW_MIN} and at most {@link #GROW_MAX} times (a downstream
 *     whose capacity grew runs the same calls in less time, and a database given more slots runs
 *     them in the same time: the only way to find those is to offer more); nearer {@code B}, by
 *     one, or, where the calls queued inside (below), to {@code floor(c × B / r)} if that is more
 *     (which keeps a cap under nine where it is: a cap of 2 on one slot of slow calls grew to 3 at
 *     a run-time p99 of 194 ms against a 203-ms budget, its calls already twice the slot's own mean
 *     run time). Under {@code NEAR} of {@code B}, where the window's mean run time is over {@link #ROOM}
 *     times the reference's (below) with at least {@link #ROOM_STEP} more in flight, the
 *     downstream queues inside and its run time is in proportion to the calls in flight: the cap
 *     grows to {@code floor(c × B / r)} (at most {@code GROW_MAX} times), at least by one, the
 *     level at which the run time reaches the budget (as the cut's), for {@code GROW_MIN} would
 *     carry it past (a fixed-rate server's cap grew from 9 to 12 at a run-time p99 of 44.8 ms
 *     against a 50-ms budget, and the callers of every fourth window were late).</li>
 * <li><b>Probe</b> when the cap bound, callers were late, {@code r > B}, nothing above cut it, and
 *     the window's mean run time is no more over the reference's (below) than half the rise a
 *     FIFO server's would show with its extra calls in flight (half of {@link #ROOM}'s tenth at
 *     the reference's level), and not over {@link #ROOM} times it: by one, or back to the calls in
 *     flight before the cuts that no drained run time confirmed (below), by at most
 *     {@link #GROW_MAX}. A cap that waits for the run time to show
 *     queueing before it moves stays for good under a downstream whose own p99 is over the budget
 *     (an executor's pool of 8 whose calls doubled to 20 ms, p99 40 against a 25-ms share, held 3
 *     in flight, 150/s of the 400 it serves); one more in flight shows room, which grows it on,
 *     or a run time that rises with it, which stops it.</li>
 * <li><b>Grow into room</b> (checked before the cut and the budget's growth) when the cap bound,
 *     callers were late, and the window's mean run time is within {@link #ROOM} of the
 *     reference's, and within half the rise a FIFO server's would show, though at least
 *     {@link #ROOM_STEP} more were in flight: by {@link #GROW_MIN}, or by the budget's ratio as
 *     above if that is more, and no cut. The reference is the window with the fewest in flight of
 *     the last {@link #REFERENCE_SPAN} to twice as many windows stepped on, or a window of the
 *     newer span that ran more than {@link #ROOM} faster than the older's (the downstream's
 *     speed now; one that ran slower with more in flight may have queued, and the older stays
 *     until its span is dropped); a surge (above) whose mean run time rose {@link #VOID} times
 *     (not {@code ROOM}'s tenth, by which the mean of 50 slow calls scatters) with no more in
 *     flight than the window before ({@link #moreInFlight}) forgets them all, for a downstream
 *     that slowed for good would otherwise read as queueing against its old speed for up to
 *     {@code 2 × REFERENCE_SPAN} windows, and the window of the surge is of neither speed.
 *     Queueing only adds to a call's run time, so the run time of the fewest in flight is the
 *     downstream's own; more calls in flight that ran as fast did not queue inside it, and it has
 *     room for them (a database given back its slots whose own p99 is over the budget, which the
 *     rule above never grows). A cut there would only cost throughput, for the run time it would
 *     shorten is not queueing. Where the reference itself queued (a FIFO server at any
 *     concurrency over one), more in flight run longer in proportion and this fires only on a
 *     mean that scatters by more than half that rise. Limits: after a
 *     cut, the reference is the cut's level, so a cap that binds steadily shows no room until it
 *     has grown by another rule; a downstream that queues a little (a tenth) still reads as
 *     room, so the cap overshoots its slots by up to a quarter before the cut takes it back; and
 *     when the older span is dropped a cap that held steady makes its own level the reference,
 *     queued or not, so under a raised budget it can creep up by one step every
 *     {@link #REFERENCE_SPAN} windows until the cut stops it. A window that shows room,
 *     the cap binding or not, also shows the reference's run-time p99 to be the downstream's own: {@link #RAISE_MARGIN}
 *     times it is the budget's floor until {@link #OWN_SPAN} windows pass without another. Slots
 *     whose own p99 is over {@link #RUN_SHARE} of the target (8 slots, 48 ms against 60) never meet
 *     the share, so without it the rule above never grows their cap after a cut. Room also
 *     shows that the cuts since the last that shortened the run time with the calls in flight
 *     (above) took no queueing away: the cap grows to at least the calls in flight when the
 *     first of them was made, by at most {@link #GROW_MAX} (an executor's own pool whose calls
 *     doubled in time was cut from 8 to 3, and then grew back a quarter a window).</li>
 * <li><b>Forget</b> a cap that bound nothing for {@link #FORGET} windows in a row with callers on
 *     time: it opens, so that no stale cap throttles a load that has changed.</li>
 * </ol>
 * Windows with fewer than {@link #MIN_SAMPLES} timed tasks change nothing (their p99 is the
 * largest sample or next to it; the executor merges such windows into the next before they come
 * here, {@code CapWindows}, so at a low rate one window here spans several of the tick's), nor
 * does a window in which a pause of the process of at least half the target (and 50 ms) ended,
 * or the window after it, unless another was excused in the 10 windows before, as the
 * knee-aware law excuses them ({@link PauseExcuse}): every call in flight during a pause ends that
 * much later, whatever was in flight, and the calls submitted during it arrive at once after it (a
 * cut on such a window refused 537 calls in a database's underload, at half its capacity). The
 * pauses are those the executor's threads and the JVM's pause watch noted ({@code PauseWatch}).
 *
 * <p><b>A doubling judged early.</b> While the executor gathers such a sparse window, a cap that
 * the last window doubled (or more; at a cap of 1 every growth is one), other than by undoing a
 * cut, is judged on the calls gathered since, once there are {@link #EARLY_SAMPLES}
 * ({@link #judgeGrowth}): where they queued against the reference (above) by enough to carry the
 * run-time p99 past the budget, it goes back to where it was. A doubling is how the cap finds a
 * downstream given back its capacity, and where the capacity did not come back it lets twice the
 * calls into what serves half of them: on one slot of slow calls (40 ms, σ 0.7, 19 a second, a
 * target of 400 ms) a doubled cap is a window of 50 calls, 2.6 s, that each wait inside for
 * another, run-time p99 over 300 ms. Judged on the calls of the tick's first second, the doubling
 * costs one second of them.
 *
 * <p>The cap steps before the rate law, on the same window, and a window that cuts it, or in
 * which it bound, is not given to the law (the law holds its rate): one actuator a window, and a
 * window the cap limited reads to the law as saturated at the cap's throughput, which it took for
 * the downstream's capacity (105/s once, on 8 slots that serve 530/s). Otherwise a fall in the
 * downstream's capacity, read by both, cut the rate too, to under the new capacity, where the law
 * climbs back slowly while the cap alone had already brought the run time down. The law reads
 * the run time, which the cap keeps under the target where the downstream queues, and still
 * limits the rate where the latency rises without queueing (a service slower under load at any
 * concurrency) and where the delegate is not sized.
 *
 * <p><b>Thread safety.</b> Not thread-safe: the tick calls {@link #step} one window at a time;
 * {@link #cap()} may be read from any thread (a volatile read).
 */
final class InFlightCap {

    /** No cap: what {@link #cap()} returns while nothing is capped. */
    static final int OPEN = Integer.MAX_VALUE;
    /**
     * The run time's share of the target: the other half is the queue's wait budget. A downstream
     * that queues inside holds its calls where they cannot be shed, the executor's queue where
     * they can; half and half lets each absorb a burst of the same length.
     */
    static final double RUN_SHARE = 0.5;
    /** The cap binds in a window whose tasks started, on average, with this share of it in flight or more. */
    static final double BINDS = 0.8;
    /**
     * After a cut, a throughput under this share of the window before's means the cut cost
     * throughput (a tenth: more than the scatter of one window's completions at a steady load).
     */
    static final double HURT = 0.9;
    /** A binding cap under its budget grows by at least this factor a window. */
    static final double GROW_MIN = 1.25;
    /** The most a cap grows in a window (a downstream whose capacity doubled). */
    static final double GROW_MAX = 2.0;
    /** A cut takes the cap to no less than this share of the tasks in flight. */
    static final double MAX_CUT = 0.5;
    /** Windows in a row that a cap binds nothing, with callers on time, before it opens. */
    static final int FORGET = 10;
    /**
     * No cut when the calls over the target started at a mean concurrency less than this many
     * standard errors above all calls' ({@code StartLoad}, as the knee-aware law's
     * unreachable-target test reads it): calls that queued inside started where the most were in
     * flight, and a tail the load does not set strikes at any concurrency. Not measured (too few
     * slow calls, every call slow, a concurrency that never varied, as behind a full pool) does
     * not stop a cut.
     */
    static final double QUEUED_Z = 3;
    /**
     * No cut either when the calls that started at the highest concurrency ran less than this many
     * standard errors longer than the mean ({@code StartLoad}): where the calls queue inside, those
     * are the ones that waited, many standard errors longer; where they do not (a database with
     * slots to spare, whose own p99 is over the run time's share), the statistic is about standard
     * normal. Not measured (a concurrency that never varied, as behind a full pool or a binding
     * cap) does not stop a cut.
     */
    static final double QUEUED_RUN_Z = 3;
    /** A window with fewer timed tasks than this changes nothing. */
    static final long MIN_SAMPLES = 50;
    /**
     * The calls a doubled cap is judged on before its window is gathered ({@link #judgeGrowth}):
     * at a doubling a FIFO's calls run about twice as long, and the reading needs half that rise.
     * Against a reference of 50 calls, the ratio of the means of a lognormal service scatters at
     * 16 calls by 15 % (σ 0.5) to 27 % (σ 0.8, the widest of the field trial's): drawn so, a
     * downstream with room reads as queued in 1 % to 7 % of doublings (the cap then grows again at
     * the next window), and a FIFO's doubling is missed in 1 % to 11 %, which then costs what it
     * did before, the rest of the gathered window. At 16 calls a second and more, they are the
     * tick's first second.
     */
    static final long EARLY_SAMPLES = 16;
    /**
     * The budget a cut that cost throughput raises is this much over the run time the window
     * before it read: that run time was the downstream's own, its p99 scatters by several percent
     * from window to window, and the grow rule needs room under the budget to probe upward.
     */
    static final double RAISE_MARGIN = 1.2;
    /** Under this share of the budget the cap grows by the budget's ratio; between it and the budget, by one. */
    static final double NEAR = 0.9;
    /** A cap whose cut cost throughput is not cut below where it was for this many windows, then twice as many. */
    static final int HOLD = 10;
    /** The longest such hold, windows. */
    static final int MAX_HOLD = 160;
    /**
     * A run-time p99 this many times the one a hold and a raised budget were set from voids both:
     * the downstream changed (its capacity fell), and its run time is no longer its own. The same
     * factor marks a cut made as the run time jumped (not undone, and, with the mean run time up
     * {@link #ROOM}, not stopped by the start-load statistics at a binding cap) and a mean run time
     * after a cut that no cut explains.
     */
    static final double VOID = 1.25;
    /** The raised budget is at most this share of the target: the queue keeps a tenth. */
    static final double MAX_RUN_SHARE = 0.9;
    /**
     * A mean run time within this factor of the reference's is the downstream's own (a window's
     * mean over at least {@link #MIN_SAMPLES} calls of a lognormal service scatters by a few
     * percent; a tenth more in flight than a FIFO server's slots adds a tenth).
     */
    static final double ROOM = 1.1;
    /**
     * More in flight than the reference, to read a window against it (room, queueing, a surge at
     * the same load), is at least this many more, or, under five, a fifth more
     * ({@link #moreInFlight}).
     */
    static final double ROOM_STEP = 1;
    /**
     * The reference is the window with the fewest in flight of the last this many to twice as many
     * windows: long enough to span a phase of steady overload, short enough that a downstream that
     * became slower for good stops being read against its old speed.
     */
    static final int REFERENCE_SPAN = 30;
    /**
     * The downstream's own p99, learned where more calls in flight ran as fast as the reference,
     * sets the budget's floor for this many windows after the last such window: the reference's
     * longest reach, after which it may be a window of another downstream.
     */
    static final int OWN_SPAN = 2 * REFERENCE_SPAN;

    /**
     * One window as the tick saw it.
     *
     * @param seconds         the window's length, seconds ({@code > 0})
     * @param completed       the tasks that completed in it (weighted where sampled)
     * @param timed           the tasks whose start concurrency and run time were measured
     * @param meanConcurrency their mean concurrency at start (the tasks in flight, themselves included)
     * @param meanRunMs       their mean run time, milliseconds
     * @param runP99Ms        the window's run-time p99, milliseconds (NaN if none)
     * @param late            whether callers were late: the end-to-end p99 over the target, or tasks shed
     * @param unreachable     whether the law finds the target unreachable
     * @param slowLoadZ       how many standard errors the mean concurrency at which the calls over
     *                        the target started lies above all calls' ({@code StartLoad}); NaN when
     *                        not measured
     * @param runLoadZ        how many standard errors the mean run time of the calls that started at
     *                        the highest concurrency lies above all calls' ({@code StartLoad}); NaN
     *                        when not measured
     * @param pauseMs         the longest pause of the process noted in the window, milliseconds (0 when none)
     */
    record Window(double seconds, long completed, long timed, double meanConcurrency, double meanRunMs, double runP99Ms,
            boolean late, boolean unreachable, double slowLoadZ, double runLoadZ, double pauseMs) {

        /** A window without a pause. */
        Window(double seconds, long completed, long timed, double meanConcurrency, double meanRunMs, double runP99Ms,
                boolean late, boolean unreachable, double slowLoadZ, double runLoadZ) {
            this(seconds, completed, timed, meanConcurrency, meanRunMs, runP99Ms, late, unreachable, slowLoadZ,
                    runLoadZ, 0);
        }
    }

    /**
     * A cut, as the window after it judges it.
     *
     * @param before      the cap before it
     * @param throughput  the completions per second of the window it was made on
     * @param runP99Ms    that window's run-time p99
     * @param meanRunMs   that window's mean run time
     * @param kept        the share of the calls in flight it kept: the new cap over that window's mean concurrency
     * @param slowedAsCut whether that window's run-time p99 was over {@link #VOID} times the one before it
     */
    private record Cut(int before, double throughput, double runP99Ms, double meanRunMs, double kept,
            boolean slowedAsCut) {
    }

    private final double targetMs;
    private volatile int cap = OPEN;
    /** The last cut, to be judged in the next window; null when none is pending. */
    private Cut pending;
    /** The last window's run-time p99, ms; NaN before one. */
    private double lastRun = Double.NaN;
    /** The last window's mean run time, ms; NaN before one. */
    private double lastMeanRun = Double.NaN;
    /** The last window's mean concurrency at a task's start; NaN before one. */
    private double lastN = Double.NaN;
    /** The budget raised by a cut that cost throughput, ms; 0 when not raised. */
    private double raisedBudgetMs;
    /** The run-time p99 that raised the budget and set the hold, ms. */
    private double heldRunMs;
    /** While {@link #holdLeft} windows remain, no cut goes below this. */
    private int holdAt;
    private int holdLeft;
    /** The next hold's length: {@link #HOLD}, doubled by each cut in a row that cost throughput. */
    private int holdSpan = HOLD;
    private int unbound;
    /**
     * The calls in flight when the cuts since the last that showed queueing began; 0 when none.
     * Room at a binding cap shows those cuts took no queueing away: the cap goes back to it.
     */
    private int restoreTo;
    /** The cap before the last window doubled it, to be judged early ({@link #judgeGrowth}); 0 when none. */
    private int grewFrom;
    /** Whether the window being stepped on undid a cut. */
    private boolean undone;
    /** Whether the last window stepped on bound ({@link #bound()}). */
    private boolean bound;
    /**
     * The downstream's own run-time p99, ms, learned from a reference that more calls in flight
     * ran as fast as (it did not queue); 0 when none. Read for {@link #OWN_SPAN} windows.
     */
    private double ownRunMs;
    private int ownLeft;
    /**
     * The same reference's mean run time, ms: the downstream's own; 0 when none. Read as long
     * as {@link #ownRunMs}. Not kept alive by windows that run as fast: calls that run at this
     * speed with {@code n} in flight look the same whether the downstream serves {@code n} at
     * once or, having sped up, fewer, with the rest queued.
     */
    private double ownMeanMs;
    /** The reference the grow-into-room rule reads ({@link Reference}). */
    private final Reference reference = new Reference();
    /** Which windows a pause excuses: the one it ended in and the next ({@link PauseExcuse}). */
    private final PauseExcuse pauses;

    /** @param targetMs the executor's target, milliseconds ({@code > 0}) */
    InFlightCap(double targetMs) {
        this.targetMs = targetMs;
        this.pauses = new PauseExcuse(targetMs);
    }

    /** {@return the cap in force: the most tasks in flight, {@link #OPEN} when none} */
    int cap() {
        return cap;
    }

    /** {@return the run time's budget in force, milliseconds} */
    double budgetMs() {
        double raised = Math.max(raisedBudgetMs, ownRunMs > 0 ? RAISE_MARGIN * ownRunMs : 0);
        return Math.max(RUN_SHARE * targetMs, Math.min(raised, MAX_RUN_SHARE * targetMs));
    }

    /**
     * {@return whether the cap in force binds a window whose tasks started at
     * {@code meanConcurrency} in flight on average} (at least {@link #BINDS} of it)
     */
    boolean bindsAt(double meanConcurrency) {
        return cap != OPEN && meanConcurrency >= BINDS * cap;
    }

    /** {@return whether the cap bound in the last window stepped on: it, not the rate, limited that window} */
    boolean bound() {
        return bound;
    }

    /**
     * Takes one window and returns the cap for the next.
     *
     * @param w the window
     * @return the most tasks in flight, {@link #OPEN} when none
     */
    int step(Window w) {
        int c = cap;
        undone = false;
        int next = stepRules(w);
        // An undo restores a level whose calls were served, not queued: it is not judged again.
        grewFrom = !undone && c != OPEN && next != OPEN && next >= GROW_MAX * c ? c : 0;
        return next;
    }

    /**
     * Judges the last window's doubling of the cap ({@code GROW_MAX} times or more) on the calls
     * gathered since it, before the next window is stepped on: where at least
     * {@link #EARLY_SAMPLES} of them ran, they queued against the reference (more in flight,
     * {@link #moreInFlight}, and a mean run time over {@link #ROOM} times the reference's and over
     * half the rise a FIFO's would show), and the window that doubled it, its p99 raised as their
     * mean run time rose over its mean, would be over the budget, the cap goes back to where it
     * was. Calls that queue inside within the budget are what the cap allows (a FIFO server whose
     * calls run a fifth of the budget doubles them). Once a doubling: the next window's step reads
     * what follows.
     *
     * @param timed           the calls gathered since, whose start concurrency and run time were measured
     * @param meanConcurrency their mean concurrency at start
     * @param meanRunMs       their mean run time, milliseconds
     * @return the cap in force
     */
    int judgeGrowth(long timed, double meanConcurrency, double meanRunMs) {
        if (grewFrom > 0 && timed >= EARLY_SAMPLES) {
            int back = grewFrom;
            grewFrom = 0;
            // The p99 the doubled window will read, if it rises as its mean does (as a FIFO's does).
            double p99 = lastRun * meanRunMs / lastMeanRun;
            if (reference.queuedAt(meanConcurrency, meanRunMs, true) && p99 > budgetMs()) {
                cap = back;
            }
        }
        return cap;
    }

    /** The rules of {@link #step}. */
    private int stepRules(Window w) {
        int c = cap;
        bound = false;
        if (w.unreachable()) {
            reset();
            return OPEN;
        }
        if (holdLeft > 0) {
            holdLeft--;
        }
        if (ownLeft > 0 && --ownLeft == 0) {
            ownRunMs = 0;
            ownMeanMs = 0;
        }
        double r = w.runP99Ms();
        boolean paused = pauses.step(w.pauseMs()) != 0;
        // A cut pending is not judged on a paused window either: the pause, not the cut, cost its throughput.
        if (paused || w.timed() < MIN_SAMPLES || Double.isNaN(r)) {
            pending = null;
            lastRun = Double.NaN;
            lastMeanRun = Double.NaN;
            lastN = Double.NaN;
            return c;
        }
        double previousRun = lastRun;
        double previousMeanRun = lastMeanRun;
        double previousN = lastN;
        lastRun = r;
        lastMeanRun = w.meanRunMs();
        lastN = w.meanConcurrency();
        boolean jumped = r > VOID * previousRun;
        // The mean rose with it: the calls queued behind a fall in capacity, not a few calls' event
        // (a pause of the machine ends every call in flight late, which moves the p99, not the mean).
        boolean surged = jumped && w.meanRunMs() > ROOM * previousMeanRun;
        double n = w.meanConcurrency();
        // With more in flight than the level the hold was set at, the rise may be the cap's own
        // queueing, which the cut below takes back; a jump within a window is the downstream's.
        if (raisedBudgetMs > 0 && r > VOID * heldRunMs && (n <= holdAt + ROOM_STEP || jumped)) {
            unhold();
        }
        double x = w.completed() / w.seconds();
        boolean binds = bindsAt(n);
        bound = binds;
        boolean room = reference.roomAt(n, w.meanRunMs());
        boolean queued = reference.queuedAt(n, w.meanRunMs(), true);
        boolean slower = reference.queuedAt(n, w.meanRunMs(), false);
        if (room) {
            // More in flight ran as fast: the reference did not queue, and its p99 is the downstream's own.
            ownRunMs = reference.runP99Ms();
            ownLeft = OWN_SPAN;
            ownMeanMs = reference.runMs();
        }
        if (surged && w.meanRunMs() > VOID * previousMeanRun && !moreInFlight(n, previousN)) {
            // The downstream changed at the same load: its old speed is no reference, and the
            // window of the change is of neither speed. A mean up a quarter, not ROOM's tenth: a
            // window of 50 slow calls scatters by that much (batch's underload cleared it).
            reference.clear();
        } else {
            reference.add(n, w.meanRunMs(), r);
        }
        double budget = budgetMs();
        // The last cut shortened the mean run time as much as the calls in flight: they had queued inside.
        boolean drained = false;
        if (pending != null) {
            Cut last = pending;
            pending = null;
            drained = w.meanRunMs() < last.meanRunMs() * (1 + last.kept()) / 2;
            if (binds && !last.slowedAsCut() && x < HURT * last.throughput() && !drained && !queued
                    && w.meanRunMs() <= VOID * last.meanRunMs()) {
                // The calls were being served, not queued: undo, and leave this level alone a while.
                raisedBudgetMs = Math.max(raisedBudgetMs, RAISE_MARGIN * last.runP99Ms());
                heldRunMs = last.runP99Ms();
                holdAt = last.before();
                holdLeft = holdSpan;
                holdSpan = Math.min(MAX_HOLD, 2 * holdSpan);
                unbound = 0;
                undone = true;
                return cap = last.before();
            }
            holdSpan = HOLD;
        }
        if (drained) {
            restoreTo = 0; // the cuts took queueing away: they stand
        }
        // The last cut drained queueing, but calls that run as fast as the downstream's own have
        // none left to drain: a further cut would only idle what serves them.
        boolean asFastAsOwn = ownMeanMs > 0 && w.meanRunMs() <= ROOM * ownMeanMs;
        if (asFastAsOwn && w.meanRunMs() < ownMeanMs / ROOM) {
            ownMeanMs = w.meanRunMs(); // clearly faster: the downstream sped up
        }
        boolean drainMore = drained && !asFastAsOwn;
        if (binds && w.late() && room) {
            unbound = 0;
            double by = r <= NEAR * budget ? budgetRatio(budget, r) : GROW_MIN;
            return capAt(Math.max((long) Math.ceil(c * by), takeRestore(c)));
        }
        // Callers not late yet, but with the cap open the calls queue inside so long that their mean
        // run time is over the budget, more than the reference's with more in flight: the next
        // window's will be, and every call started meanwhile waits inside, where it cannot be shed.
        boolean queuing = c == OPEN && w.meanRunMs() > budget && slower;
        // At a binding cap every call starts with the same number in flight, and the start-load
        // statistics read nothing: a cut there needs the run time itself to show the queueing.
        if ((w.late() || queuing) && r > budget
                && (binds ? surged || queued || drainMore
                        : c == OPEN && (queuing || !(w.slowLoadZ() < QUEUED_Z) && !(w.runLoadZ() < QUEUED_RUN_Z)))) {
            unbound = 0;
            long to = Math.max((long) Math.ceil(MAX_CUT * n), (long) Math.floor(n * budget / r));
            if (holdLeft > 0) {
                to = Math.max(to, holdAt);
            }
            if (ownMeanMs > 0) {
                // Not below the calls the downstream serves at once (Little's law at its own
                // speed): fewer would idle it.
                to = Math.max(to, Math.round(n * ownMeanMs / w.meanRunMs()));
            }
            int cut = (int) Math.max(1, Math.min(to, c));
            if (cut < c && cut < n) {
                pending = new Cut(c, x, r, w.meanRunMs(), cut / n, jumped);
                if (restoreTo == 0) {
                    restoreTo = (int) Math.min(c, Math.ceil(n));
                }
                return cap = cut;
            }
            return c;
        }
        // Over the budget with nothing to show that the calls queued: one more in flight finds out
        // (room grows the cap on, a run time that rises with it stops it), where a cap that waited
        // for evidence stayed for good under a downstream whose own p99 is over the budget.
        if (binds && w.late() && r > budget && !slower && reference.underHalfFifoAt(n, w.meanRunMs())) {
            unbound = 0;
            return capAt(Math.max(c + 1L, takeRestore(c)));
        }
        if (binds && r <= budget) {
            unbound = 0;
            if (slower && budget > RUN_SHARE * targetMs) {
                return c;
            }
            long grown;
            if (r > NEAR * budget) {
                // Where the calls queued inside, one more in flight lengthens every call by a c-th,
                // past the budget at a small cap (at 1 or 2, by a half or more): Little's law again.
                grown = slower ? Math.max(c, (long) Math.floor(c * budget / r)) : c + 1L;
            } else if (slower) {
                // The run time rose with the calls in flight: Little's law, not a quarter, finds the budget.
                grown = Math.max(c + 1L, (long) Math.floor(c * Math.min(GROW_MAX, budget / r)));
            } else {
                grown = (long) Math.ceil(c * budgetRatio(budget, r));
            }
            return capAt(grown);
        }
        if (c != OPEN && !binds && !w.late() && ++unbound >= FORGET) {
            reset();
            return OPEN;
        }
        return c;
    }

    /**
     * {@return whether {@code n} in flight are enough more than {@code refN} to read a window
     * against one at {@code refN}: at least {@link #ROOM_STEP} more, or a fifth more} A fifth more in
     * flight lengthens a FIFO's calls by a fifth, and half that rise is {@link #ROOM}'s tenth; with
     * fewer than five in flight a fifth is under one call, and a small cap could not show one more
     * (a cap of 2 binds at 1.6 to 2 in flight on average, never 2 over a reference at 1, so two
     * calls queued in one slot, twice its run time, read as neither queueing nor a load that rose).
     * False when either is NaN.
     */
    static boolean moreInFlight(double n, double refN) {
        return n >= refN + ROOM_STEP || n >= refN * (1 + 2 * (ROOM - 1));
    }

    /** Sets the cap to {@code n}, at most {@code OPEN - 1}, and returns it. */
    private int capAt(long n) {
        return cap = (int) Math.min(OPEN - 1L, n);
    }

    /**
     * {@return the level the unconfirmed cuts began at, at most {@link #GROW_MAX} times {@code c}
     * (0 when none)} and forgets it: room or a probe spends it once.
     */
    private long takeRestore(int c) {
        long level = (long) Math.min(restoreTo, GROW_MAX * c);
        restoreTo = 0;
        return level;
    }

    /** The budget's growth factor: {@code budget / r}, between {@link #GROW_MIN} and {@link #GROW_MAX}. */
    private static double budgetRatio(double budget, double r) {
        return Math.min(GROW_MAX, Math.max(GROW_MIN, budget / r));
    }

    /** Back to open, nothing pending, the budget at its share. */
    void reset() {
        cap = OPEN;
        grewFrom = 0;
        pending = null;
        restoreTo = 0;
        unbound = 0;
        unhold();
    }

    /**
     * The window with the fewest in flight over the last {@link #REFERENCE_SPAN} to twice as many
     * windows stepped on (two spans, the older dropped when the newer is full), and its mean run
     * time. Within a span a window that ran more than {@link #ROOM} faster replaces it whatever its
     * concurrency; across the two, the newer span's is read when it ran that much faster.
     */
    private static final class Reference {
        private double inFlight = Double.NaN;
        private double runMs;
        private double p99Ms;
        private double olderInFlight = Double.NaN;
        private double olderRunMs;
        private double olderP99Ms;
        private int age;

        /**
         * {@return whether the older span's window is the reference: it had fewer in flight, and the
         * newer's did not run more than {@link #ROOM} faster} A newer window that ran slower with more
         * in flight may have queued; with no more in flight, it is the newer anyway.
         */
        private boolean older() {
            return Double.isNaN(inFlight) || (olderInFlight < inFlight && !(olderRunMs > ROOM * runMs));
        }

        /** {@return the reference's calls in flight, NaN before one} */
        double inFlight() {
            return older() ? olderInFlight : inFlight;
        }

        /** {@return the reference's mean run time, ms} */
        double runMs() {
            return older() ? olderRunMs : runMs;
        }

        /** {@return the reference's run-time p99, ms} */
        double runP99Ms() {
            return older() ? olderP99Ms : p99Ms;
        }

        /** Whether {@code n} in flight that ran {@code meanRunMs} on average show room over the reference. */
        boolean roomAt(double n, double meanRunMs) {
            double refN = inFlight();
            // Half the rise a FIFO's calls would show at this many more in flight, and at most ROOM.
            double rise = Math.min(ROOM, halfFifoRise(n));
            return moreInFlight(n, refN) && meanRunMs <= rise * runMs(); // false while refN is NaN (no reference)
        }

        /**
         * Whether {@code n} in flight ran {@code meanRunMs} on average, no longer than the reference's
         * mean plus half the rise a FIFO's would show with that many more in flight, or, with not
         * {@linkplain #moreInFlight more} in flight, half of {@link #ROOM}'s (a window's mean scatters by a few
         * percent); false before a reference.
         */
        boolean underHalfFifoAt(double n, double meanRunMs) {
            double refN = inFlight();
            if (Double.isNaN(refN)) {
                return false;
            }
            double rise = moreInFlight(n, refN) ? halfFifoRise(n) : 1 + (ROOM - 1) / 2;
            return meanRunMs <= rise * runMs();
        }

        /** {@return half the rise a FIFO server's mean run time shows at {@code n} in flight over the reference's} */
        private double halfFifoRise(double n) {
            return 1 + (n / inFlight() - 1) / 2;
        }

        /** Forgets every window: the downstream changed, and its old speed is no reference. */
        void clear() {
            inFlight = Double.NaN;
            olderInFlight = Double.NaN;
            age = 0;
        }

        /**
         * Whether {@code n} in flight that ran {@code meanRunMs} on average queued inside:
         * {@linkplain #moreInFlight more} in flight than the reference, and a mean run time over {@code ROOM}
         * times its, and, with {@code halfFifo}, over half the rise a FIFO's would show as well.
         */
        boolean queuedAt(double n, double meanRunMs, boolean halfFifo) {
            double refN = inFlight();
            double rise = halfFifo ? Math.max(ROOM, halfFifoRise(n)) : ROOM;
            return moreInFlight(n, refN) && meanRunMs > rise * runMs(); // false while refN is NaN
        }

        /** Takes a window: it becomes the reference with no more in flight, or clearly faster (a faster downstream). */
        void add(double n, double meanRunMs, double runP99Ms) {
            if (Double.isNaN(inFlight) || n <= inFlight || meanRunMs < runMs / ROOM) {
                inFlight = n;
                runMs = meanRunMs;
                p99Ms = runP99Ms;
            }
            if (++age >= REFERENCE_SPAN) {
                olderInFlight = inFlight;
                olderRunMs = runMs;
                olderP99Ms = p99Ms;
                inFlight = Double.NaN;
                age = 0;
            }
        }
    }

    /** No hold, the budget at its share. */
    private void unhold() {
        raisedBudgetMs = 0;
        holdLeft = 0;
        holdSpan = HOLD;
    }
}
