// Over 800 lines (about 950) because the law is specified here: the class description states
// every rule (about 200 lines) and each constant carries the reason for its value (about 200);
// comments and Javadoc are well over half the file. The step itself is one state machine whose
// rules share the capacity estimate, the trim block and the run of cuts, so splitting it would
// pass that state between files. The trim block (trim, newBlock, trimFactor) is the seam to
// split first if it grows.
package io.github.performancehelpers.loop;

import java.util.ArrayDeque;
import io.github.performancehelpers.internal.PauseExcuse;

/**
 * The knee-aware control law, {@link PowerFlowController.ControlLaw#KNEE_AWARE}: multiplicative
 * steps scheduled on the headroom under the target and on the downstream's measured capacity.
 *
 * <p><b>What a user observes.</b> Under the target the rate climbs by up to 30 % per observation
 * (at once to the ceiling when nothing was measured), and by at most 2 % near a measured knee.
 * Over the target it cuts, by at most half, from the throughput the window carried (so an
 * executor's open rate is no base), to just under the capacity a saturated window measures, or a
 * window that drains a backlog (it completes more than the rate admits) measures. Near
 * the knee it trims once per ten windows instead of cutting on each noisy one. It climbs fast
 * again when, near the knee, a window with work waiting reads far under the knee's reading (the
 * downstream recovered), and after such a climb overshoots it goes to the middle of the two rates.
 * Past its capacity estimate with the reading an eighth under the target and work waiting, it
 * probes: the step doubles each window (2, 4, 8, 16, 30 %), for a downstream whose latency rises
 * only at its knee shows a larger capacity in nothing else.
 * When cutting by a fifth does not lower the reading, the target is unreachable: it goes back to
 * the rate before the cuts and holds ({@link RateLaw.Stats#targetUnreachable()}); an executor's
 * window can show it without a cut, when the calls over the target started at no higher
 * concurrency than the rest.
 *
 * <p>The rules follow. The
 * builder's gains, {@code kd}, {@code derivativeFilter} and {@code dt} are not used; the
 * controller's {@link PowerFlowController#servo() servo} is not stepped. Each step of a non-empty
 * window, with {@code r} the rate in force:
 * <ol>
 * <li><b>Smoothing.</b> {@code m} is the driving quantile (read as {@link PowerFlowController}'s
 *     "Reading the quantile" says) of this window merged with up to the two before it, since the
 *     last observation over the target (a decrease or a hold) or the start of trimming (while
 *     trimming, a window over the target drops none): about three times the samples of one
 *     window, so a window's 2nd-largest sample does not decide alone.
 *     {@link PowerFlowController#lastObservedP99()} is still the one window's reading. The reading
 *     is <em>sparse</em> when three windows at {@code r} hold fewer than {@code 3 / (1 − q)}
 *     samples (300 for the p99: under 100/s with one-second windows; never for {@code q = 1}): it
 *     then keeps up to 30 windows until they hold that many.</li>
 * <li><b>Capacity.</b> A window is <em>loaded</em> when items were offered during it
 *     ({@link PowerFlowController#submit} accepted or refused, or handed off directly) at
 *     {@code 0.9 × r} per second or more: the rate, not the demand, decided what was admitted. A
 *     loaded window is <em>saturated</em> when {@code m > targetP99} and its completions per
 *     second are below {@code 0.9 × r}: the downstream did less than was admitted, so that
 *     completion rate is its capacity {@code C} ({@code +∞} before one). Per second means over the
 *     ticker time since the previous {@link PowerFlowController#observe} call (one second if the
 *     ticker did not move). Three readings correct {@code C} in between (and trimming, below): a
 *     loaded window of half a second or more that completes more than {@code C} per second raises
 *     it to that, for the downstream did that much (a pause of the machine makes a window
 *     saturated and measures the pause; the backlog it left drains above {@code C} in the next
 *     window); a loaded window more than 1.5 × the target over that the downstream kept up with
 *     (not saturated, {@code m} not falling, not sparse with too few samples) bounds it,
 *     {@code C = min(C, max(r, completions per second))}, for the knee is below {@code r} and the
 *     downstream did what it completed (a saturated window that straddled a drop in capacity
 *     measures part of the old one; a backlog draining after one completes at the new capacity;
 *     a window just over the target is as likely noise, and bounding on it would ratchet the rate
 *     down when the target is close to the service time's own p99); and a window at or under the
 *     target at {@code r > C} raises it, {@code C = r}, for the downstream now does more, so the
 *     climb there stays the slow one. A window that is not loaded (demand below the rate)
 *     neither measures nor bounds the capacity, nor raises it by its completions.</li>
 * <li><b>Decrease</b> ({@code m > targetP99}; while trimming, only as its item says), then the
 *     merged windows are dropped (after a hold too, except the sparse one):
 *     <ul>
 *     <li>not saturated, and no evidence that the quantile is over the target: the merged
 *         {@code n} samples hold no more over it than a true quantile at the target would leave,
 *         give or take three standard errors of that count (the reading at
 *         {@code q − 3 × sqrt(q (1 − q) / n)} is at or under the target; never for {@code q = 1}):
 *         hold ({@code r' = r}), no capacity bound, and the windows roll on as under the target.
 *         A window's p99 from a few hundred calls is its 2nd or 3rd slowest, and where the target
 *         is near the service time's own p99 it reads over the target in one window of two at
 *         any rate: cutting on it refused a third of an underload (the field trial's
 *         {@code closedloop});</li>
 *     <li>sparse, not saturated, and fewer than {@code 3 / (1 − q)} samples in fewer than 30
 *         merged windows: hold ({@code r' = r}), no capacity bound, and the windows are kept: such
 *         a reading is the largest sample or next to it, and one slow call (the service time's
 *         tail, a pause of the machine) puts it over the target at any rate (see
 *         {@code docs/knee-aware-law.md}, section "The low-rate trap");</li>
 *     <li>draining, its completions per second over {@code 1.1 × r} (the mirror of saturated: the
 *         calls in flight fell by a tenth of the window's work or more): {@code r' = 0.85 ×}
 *         the completions per second, which a busy window measures; the reading is of calls
 *         admitted before, so it neither bounds {@code C} nor counts toward an unreachable
 *         target (behind a bounded pool a FIFO server's reading stays at the full pool's wait
 *         while the backlog drains, however far the rate is cut);</li>
 *     <li>saturated: {@code r' = max(0.5 × r, min(r × targetP99 / m, 0.85 × C))}: to just under
 *         the measured capacity;</li>
 *     <li>not saturated and {@code m} lower than the previous observation's: hold
 *         ({@code r' = r}), a backlog draining at a rate the downstream keeps up with;</li>
 *     <li>otherwise: {@code r' = r × max(0.5, targetP99 / m)}.</li>
 *     </ul>
 *     At most half per observation, so one spike does not throw the rate to the floor.</li>
 * <li><b>Increase</b> ({@code m ≤ targetP99}; not while trimming): headroom
 *     {@code h = min(1, (targetP99 − m) / (0.25 × targetP99))}, full while the reading is 25 % or
 *     more under the target, shrinking linearly to 0 at the target. Near the knee,
 *     {@code 0.85 × C ≤ r ≤ C / 0.85}, {@code r' = r × (1 + 0.02 × h)}; elsewhere
 *     {@code r' = r × (1 + 0.3 × h)}, but not past {@code 0.85 × C} from below.</li>
 * <li><b>Trimming.</b> When a reading over the target (up to {@code 2 × targetP99}, not
 *     saturated, not sparse) comes right after an increase, with {@code r} near the knee
 *     ({@code 0.85 × C ≤ r ≤ C / 0.85}), the slow climb has reached the target, and the law trims
 *     instead of cutting: {@code r' = r × s(m)}, with the step
 *     {@code s(x) = (0.95 × targetP99 / x)^(1/6)} bounded to {@code [0.85, 1.03]}. From then the
 *     rate moves once per block of 10 windows (more while the block holds fewer than
 *     {@code 10 / (1 − q)} samples, at most 60), by {@code s} of the block's reading; between
 *     block ends it holds. A block at or under the target that takes {@code r'} above {@code C}
 *     raises {@code C} to {@code r'}. When every window of a block, three or more, read more
 *     than {@code 1.25 × targetP99} (a quarter over, the headroom band), trimming ends and the
 *     window, if loaded, neither saturated nor draining, not sparse with too few samples and not
 *     over {@code 2 × targetP99} (those leave trimming as below), goes to just under what it
 *     completed, {@code r' = min(r, 0.85 ×} the completions per second{@code )}, as after a saturated window
 *     ({@code C} bounded as in a cut): that is not the noise of a settled knee but a rate past it,
 *     where a backlog grows (a FIFO server just past its capacity, a service time that keeps
 *     growing) and a step of the trim's elasticity, held for a block, drains it while every
 *     caller is late. Trimming ends, and the steps
 *     above apply to the window, on a reading over the target from a saturated window, or on one
 *     over {@code 2 × targetP99} (unless sparse with too few samples, as in the first decrease
 *     above): the downstream changed. It ends too, after the block's step, on a block reading under
 *     {@code 0.875 × targetP99} (the downstream does more) and on the sixth block in a row that
 *     stepped up (near the floor of the service time's own p99 a block's reading hardly moves with
 *     the rate, and trimming that began far under the knee, the capacity estimate taken low by a
 *     stall or a spike, would climb 3 % a block); the climb resumes until it next reads over the
 *     target. Why: one reading of three windows is noisy near the knee (a slow second of the
 *     downstream or of the machine puts it over), so cutting on each and climbing back keeps a
 *     settled rate moving; a block of ten windows holds a thousand samples or more, and the step
 *     assumes the p99 moves six times as much as the rate there. The aim, 95 % of the target, is
 *     because a longer span's p99 at a steady rate scatters more above its middle than below (see
 *     {@code docs/knee-aware-law.md}, section "Trimming near the knee").</li>
 * <li><b>Pauses.</b> A window in which a pause of the process of at least
 *     {@code max(0.5 × targetP99, 50 ms)} ended, and the window after it, are excused:
 *     {@code r' = r}, and neither is merged into a reading or a trim block, nor measures, bounds
 *     or raises {@code C}. A pause is what a {@code PowerFlowExecutor}'s dispatcher sees when it
 *     wakes that much later than it asked to, with a task waiting for admission, or its tick, or
 *     the JVM's pause watch (a collector's pause, the machine descheduling the process, a CPU
 *     kept busy by other work); a bare controller sees none. Every call in flight then ends that
 *     much later, whatever the rate, so the reading says nothing about the downstream, and
 *     cutting on it (half, with the capacity bounded or measured low) leaves a long climb back
 *     (see {@code docs/knee-aware-law.md}, section "Pauses of the process", which also says what
 *     it does not cover). A pause within 10 windows after an excused one is read like any other
 *     latency: pauses that frequent may be the load's own doing. Each excusing pause counts in
 *     {@link PowerFlowController.Stats#pausesExcused()} (metric {@code power.flow.pauses.excused}, MXBean attribute {@code PausesExcused}); each
 *     window's {@code Observation} JFR event carries the pause noted in it and whether it was
 *     excused ({@link #excusedLast()}).</li>
 * <li><b>The flow.</b> {@code r} in the decrease, in the sparse test and in the capacity rules
 *     above is the flow the window carried, {@code min(rate, max(offered, completed))} per second:
 *     the rate in force when it bound, else the work. Over the target with completions under 0.9 ×
 *     the offered work (a backlog growing), a window that is not loaded is saturated too.</li>
 * <li><b>Recovery.</b> Near the knee, a loaded window whose own reading (not the merged one) is at
 *     most {@code 0.6 ×} the knee's reading (the first reading of the slow climb; while trimming,
 *     the lowest one-window reading of the trim block, once it holds two windows) ends trimming,
 *     forgets the capacity and climbs by {@code 30 % × h} of that window. Trimming's reference is
 *     the block's, not its aim: a trim step down lowers the reading by itself (to the service
 *     time's own p99 where the latency rises only at the knee), and the first window after it
 *     still holds calls admitted before it. A loaded window whose own reading is at most
 *     {@code 0.875 × targetP99} and whose calls did not queue ({@link RateLaw.Window#runLoadZ()}
 *     under {@code 1}) ends trimming too, and the climb that follows probes. A trim block that
 *     ends trimming leaves the knee's reading to the climb's next window. A reading over the
 *     target (up to twice) right after a fast climb goes to the middle of the rate before the
 *     climb and this one, or, when saturated, not below the rate before, at most
 *     {@code 0.85 × C}: the knee lies between them.</li>
 * <li><b>Probing.</b> Near the knee, at or past the capacity estimate ({@code r ≥ 0.97 × C}, after
 *     the raises above: completions scatter by a few percent around the rate, and raise {@code C}
 *     to them), or anywhere near it when the window's calls did not queue (an executor's
 *     {@link RateLaw.Window#runLoadZ()} under {@code 1}: those that started with the most in flight
 *     ran no longer than the rest, so the knee is above this rate), a loaded window whose merged
 *     reading (this window with the ones before it) is at most {@code 0.875 × targetP99}, and whose
 *     calls did not visibly queue ({@code runLoadZ} not {@code 1} or more), climbs by
 *     {@code min(30 %, 2 % × 2^k)}, {@code k} such windows before it, instead of the slow step; a
 *     window under the target that reads higher pauses the run (the slow step, {@code k} kept),
 *     any other window ends it. A larger capacity
 *     shows in nothing but completions where calls do not queue until every slot is busy, and
 *     completions show only what was admitted. Where the estimate is right the probe goes past it
 *     by 2 % and then 4 %, as far as the slow climb's next steps; a reading over the target then
 *     trims (or, saturated, cuts to just under what was completed).</li>
 * <li><b>Unreachable target.</b> From the first reading over the target, two windows in a row at
 *     a flow cut to {@code 0.8 ×} the first one's or less, not saturated, whose reading is at least
 *     {@code 0.9 ×} the first one's: the rate does not set the latency. The rate goes back to the
 *     one before the cuts, and holds while readings stay over the target, until one at or under
 *     it, a saturated window, or one over {@code 2 × max(targetP99, the flat reading)}. Not when
 *     the window's calls over the target started at a concurrency {@code 3} or more standard
 *     errors above the mean ({@link RateLaw.Window#slowLoadZ()}): a backlog draining after a drop
 *     in capacity reads flat too, and it is the load's. Without a
 *     cut: on the first reading over the target of a window that is not loaded and not saturated
 *     (the demand, under the rate, was served), whose calls over the target started at a
 *     concurrency less than {@code 3} standard errors above the mean of all its calls
 *     ({@link RateLaw.Window#slowLoadZ()}, which a {@code PowerFlowExecutor} measures), the rate
 *     holds and the target is unreachable at once, with the same exits. Slow calls that queued
 *     (behind busy slots, a fixed-rate server) started where the concurrency was highest; a tail
 *     the load does not set strikes at any. Finding it by cutting refused up to a fifth of two
 *     windows' work (the field trial's {@code tail}, underload: 1,015 calls).</li>
 * <li>{@code r'} is clamped into {@code [minRate, maxRate]}.</li>
 * </ol>
 *
 * <p>Why: a queueing downstream's p99 stays near the service time's own p99 up to 85-90 %
 * utilisation, then rises steeply; the latency error alone cannot tell "far below the knee" from
 * "just under it". The capacity a saturated window measures can: the law climbs by 30 % per
 * observation to 85 % of it, then by at most 2 %. Every step is relative to the rate in force, so
 * the law needs no gains fitted to the plant's scale, and the climb back from a deep cut takes
 * observations, not minutes (see {@code docs/knee-aware-law.md}, section "Relative steps", for the
 * comparison with the PI law and for what it does not reach).
 *
 * <p>It is saturated when the rate is on {@code minRate} or {@code maxRate}. Its statistics
 * ({@link #stats()}) are the smoothed reading, the capacity estimate, the pauses excused and
 * whether it is trimming. The constants (package-private) are the law's definition, chosen on
 * {@code ClosedLoopSimulation}, not options.
 *
 * <p>Select it with {@link PowerFlowController.ControlLaw#KNEE_AWARE}; the class has no public
 * constructor.
 *
 * <p><b>Thread safety.</b> Not thread-safe: the controller steps and resets it under its loop
 * lock. {@link #stats()}, {@link #saturated(double)} and {@link #excusedLast()} may be read from
 * any thread; the smoothed reading, the capacity and the trimming flag may then be stale.
 *
 * @since 0.1.0
 */
public final class KneeAwareLaw implements RateLaw {

    /** The selection of this law, {@link PowerFlowController.ControlLaw#KNEE_AWARE}. */
    static final PowerFlowController.ControlLaw CONTROL_LAW = new PowerFlowController.ControlLaw() {
        @Override
        public RateLaw create(RateLaw.Setup setup) {
            return new KneeAwareLaw(setup.targetP99(), setup.quantile(), setup.minRate(), setup.maxRate());
        }

        @Override
        public String toString() {
            return "KNEE_AWARE";
        }
    };

    /** How many one-observation windows the smoothed reading merges (more while it is sparse). */
    static final int WINDOWS = 3;
    /** Relative increase per observation at full headroom, below the knee. */
    static final double FAST_INCREASE = 0.30;
    /** Relative increase per observation at full headroom, near the knee. */
    static final double SLOW_INCREASE = 0.02;
    /** The headroom is full this far (as a share of the target) under the target. */
    static final double HEADROOM_BAND = 0.25;
    /** The knee, as a share of the measured capacity; the slow zone is [KNEE × C, C / KNEE]. */
    static final double KNEE = 0.85;
    /** A window is saturated when its completions fall below this share of the rate in force. */
    static final double SATURATION = 0.90;
    /**
     * A window is <em>draining</em> when its completions exceed this multiple of the flow it
     * carried: the calls in flight fell by a tenth of a window's work or more, the mirror of
     * {@link #SATURATION}'s growing backlog. Its reading is of calls admitted before.
     */
    static final double DRAINING = 2 - SATURATION;
    /** An unsaturated reading this far over the target bounds the capacity by the rate. */
    static final double BOUND_OVER = 1.50;
    /** The deepest cut of one observation. */
    static final double MAX_CUT = 0.50;
    /**
     * At a rate where three windows hold fewer than this many samples above the quantile on
     * average ({@code 3 / (1 − q)} samples in all: 300 for the p99), a reading over the target
     * decides a cut only once the merged windows hold that many, or {@link #MAX_WINDOWS} of them.
     * With fewer it is the largest sample or next to it, and one slow call puts it over the
     * target. Not applied for {@code q = 1}, whose reading is always the largest sample.
     */
    static final double TAIL_SAMPLES = 3;
    /**
     * A reading over the target cuts only when the merged samples hold more over the target than
     * a true quantile at the target would give, by this many standard errors of the count
     * (binomial): the reading's lower confidence bound is over the target. A window's p99 from a
     * few hundred samples is its 2nd or 3rd largest; where the target is near the service time's
     * own p99 (the field trial's {@code closedloop}: own p99 48 ms, aim 54 ms) it reads over the
     * target in about one window of two at any rate, and cutting on it refused a third of an
     * underload. Three: a false cut once in some 700 readings, while a latency truly past a knee
     * puts several times the quantile's share over the target.
     */
    static final double EVIDENCE = 3;
    /** The most windows a sparse reading merges while it gathers samples. */
    static final int MAX_WINDOWS = 30;
    /**
     * Trimming: the windows of one trim block. Once the slow climb near the knee reads over the
     * target, the rate moves only once per block, on the block's reading.
     */
    static final int TRIM_WINDOWS = 10;
    /**
     * The samples a trim block needs above the quantile on average: {@code 10 / (1 − q)} in all
     * (1,000 for the p99). A block at a lower rate runs on, to {@link #MAX_TRIM_WINDOWS}.
     */
    static final double TRIM_TAIL_SAMPLES = 10;
    /** The most windows of one trim block. */
    static final int MAX_TRIM_WINDOWS = 60;
    /**
     * Trimming aims the block's reading at this share of the target: a longer span's p99 at a
     * steady rate scatters more above its middle than below, near a knee.
     */
    static final double TRIM_AIM = 0.95;
    /**
     * The p99's elasticity to the rate that trimming assumes near the knee: a step is
     * {@code (aim / reading)^(1 / 6)} (see {@code docs/knee-aware-law.md}, section "Trimming
     * near the knee").
     */
    static final double TRIM_ELASTICITY = 6;
    /** The largest trim step up, as a share of the rate. */
    static final double TRIM_UP = 0.03;
    /** The largest trim step down, as a share of the rate. */
    static final double TRIM_DOWN = 0.15;
    /**
     * A loaded window at least this long, seconds, that completed more per second than the
     * capacity estimate raises the estimate to its completions per second. A shorter window's
     * count is mostly the calls in flight at its edges.
     */
    static final double RAISE_SECONDS = 0.5;
    /**
     * After this many trim blocks in a row that stepped up, trimming ends and the climb resumes
     * (it trims again where it next reads over the target). Near the floor of the service time's
     * own p99 a block's reading hardly moves with the rate, and a capacity estimate taken low
     * (after a stall or a spike) can start trimming there, far under the knee, where 3 % a block
     * is a slow climb.
     */
    static final int MAX_TRIM_UPS = 6;
    /**
     * A reading under this share of the target shows room the rate does not use: a trim block
     * reading under it ends trimming (the climb resumes), and a window whose merged reading is at
     * or under it lets the climb probe past the capacity estimate ({@link #PROBE}). Not lower: a
     * downstream's own unloaded p99 may be most of the setpoint (the field trial's database reads
     * 31-47 ms against 54 ms with nothing queued; a target 1.3 times the unloaded p99 leaves it at
     * 0.85 of the setpoint), and there a block never read under three quarters of it, so trimming
     * crept up 2 % a block after the downstream had doubled, and a probe that needed a quarter of
     * headroom never ran.
     */
    static final double ROOM = 0.875;
    /**
     * Trimming ends, and the law's cuts apply, on a reading over the target from a saturated
     * window, or on a reading more than this many times the target (not from too few samples): the
     * downstream changed, not the noise.
     */
    static final double TRIM_LEAVE = 2.0;


    /**
     * An unreachable target: a cut to this share or less of the flow the cutting started from
     * that lowers the reading by less than {@code 1 − FLAT_READING}. For a downstream that queues
     * (slots, a FIFO server) a fifth less load at or past the knee lowers the waiting time, and so
     * the p99, by far more than a tenth; only a latency the load does not set (a fixed tail, a
     * timeout, a target under the service time's own p99) stays flat.
     */
    static final double FLAT_CUT = 0.80;
    /** See {@link #FLAT_CUT}: the share of the reading the cutting started from that is "not lower". */
    static final double FLAT_READING = 0.90;
    /**
     * An unreachable target found without a cut: on the first reading over the target of a window
     * that is not loaded and kept up, the calls over the target started at a mean concurrency
     * less than this many standard errors above the mean of all ({@link RateLaw.Window#slowLoadZ()}).
     * Three: a tail the load does not set reads over it in about one window of 700, while calls
     * that queued behind busy slots or a fixed-rate server start where the concurrency is highest,
     * many standard errors above the mean.
     */
    static final double LOAD_Z = 3;
    /**
     * Room at the knee: the calls that started at the highest concurrency ran less than this many
     * standard errors longer than the mean ({@link RateLaw.Window#runLoadZ()}): evidence that they
     * did not wait, not only the absence of evidence that they did. Where the downstream does not
     * queue the statistic is about standard normal, and reads under 1 in five windows of six; at a
     * knee, where the calls that found every slot busy waited, it reads several.
     */
    static final double UNQUEUED_Z = 1;
    /**
     * The windows in a row after such a cut that must read flat: the first window after a cut still
     * holds calls admitted before it (a backlog draining reads like a flat tail).
     */
    static final int FLAT_WINDOWS = 2;
    /**
     * Near the knee, a loaded window reading at most this share of the knee's reading (the first
     * reading of the slow climb, or the trimming's aim) shows a downstream that now does more:
     * the same rate meets a far shorter queue. For a queueing downstream whose capacity doubled,
     * the p99 at the old knee falls to the service time's own or near it (from 85 % to about 43 %
     * utilisation); the merged reading of three windows moves by far less than this between
     * seconds of a steady downstream.
     */
    static final double RECOVERED = 0.6;
    /**
     * The probing climb past the capacity estimate multiplies its step by this each window (from
     * {@link #SLOW_INCREASE} to {@link #FAST_INCREASE}: 2, 4, 8, 16, 30 %) while the reading stays a
     * quarter or more under the target with work waiting. Where the latency rises only at the knee
     * (slots whose calls do not queue until all are busy) a larger capacity shows in nothing but
     * completions, and the rate must climb to see it: a doubling reaches twice the estimate in six
     * windows, and where the estimate is right it goes past it by 2 % and then 4 %, as far as the
     * slow climb's next steps would.
     */
    static final double PROBE = 2;
    /**
     * The probing climb starts at this share of the capacity estimate: a loaded window's
     * completions scatter by a few percent around the rate, and one above the estimate raises it
     * to them, so a rate that reached the estimate reads a little under it as often as not.
     */
    static final double PROBE_FROM = 0.97;

    private final double target;
    private final double quantile;
    private final double min;
    private final double max;
    /** The samples a reading over the target needs to decide: {@code TAIL_SAMPLES / (1 − q)}. */
    private final long enough;
    /** The samples a trim block needs: {@code TRIM_TAIL_SAMPLES / (1 − q)}. */
    private final long trimEnough;

    // Guarded by PowerFlowController.loopLock (step and reset run under it), except as noted.

    private final ArrayDeque<PowerHistogram.Snapshot> recent = new ArrayDeque<>();
    /** Whether the last window stepped on was sparse: {@link #recent} gathers past {@link #WINDOWS}. */
    private boolean gathering;
    private double smoothed = Double.NaN;
    private double capacity = Double.POSITIVE_INFINITY;
    /** The last step was an increase: the next reading over the target is the climb's. */
    private boolean climbing;
    /** Trimming: the rate moves once per block (see {@link #TRIM_WINDOWS}). */
    private boolean trimming;
    /** The windows of the trim block so far; null at its start. */
    private PowerHistogram.Snapshot block;
    private int blockWindows;
    /** The lowest one-window reading of the trim block so far, ms; NaN at its start. */
    private double blockFloor = Double.NaN;
    /** Windows in a row of the probing climb above the capacity estimate (see {@link #PROBE}). */
    private int probes;
    /** Trim blocks in a row that stepped up. */
    private int ups;
    /** Which windows a pause excuses ({@link PauseExcuse}: half the target, 50 ms at least, every 10 windows at most). */
    private final PauseExcuse stalls;
    /**
     * Pauses that excused a window, since construction ({@link #reset} keeps it, as the
     * controller's other counters). Volatile: {@link #stats()} reads it without the loop lock.
     */
    private volatile long pausesExcused;
    /** The last step's window was excused (by a pause or as the window after one). */
    private boolean lastExcused;
    /**
     * The target is unreachable: cutting did not lower the reading (see {@link #FLAT_CUT}). The
     * law holds the rate it cut from until a reading at or under the target, a saturated window,
     * or a reading over {@link #TRIM_LEAVE} times the larger of the target and
     * {@link #flatReading}. Volatile: {@link #stats()} reads it without the loop lock.
     */
    private volatile boolean unreachable;
    /** The reading that showed the target unreachable, ms. */
    private double flatReading;
    /** The rate in force before the current run of cuts, per second; NaN when not cutting. */
    private double cutFromRate = Double.NaN;
    /** The flow of the window the current run of cuts started on, per second. */
    private double cutFromFlow;
    /** The reading the current run of cuts started on, ms. */
    private double cutFromReading;
    /** Windows in a row that read flat after a deep enough cut. */
    private int flatWindows;
    /** The reading the slow climb near the knee started on (or trimming's aim), ms; NaN before one. */
    private double kneeReading = Double.NaN;
    /** The rate the last fast climb started from (it read under the target), per second; NaN after any other step. */
    private double climbedFrom = Double.NaN;

    /**
     * A law for a setpoint, a driving quantile and bounds, as {@link #CONTROL_LAW} creates it.
     *
     * @param target   the latency setpoint, ms
     * @param quantile the driving quantile, in {@code (0, 1]}
     * @param min      the floor of the rate, per second
     * @param max      the ceiling of the rate, per second
     */
    KneeAwareLaw(double target, double quantile, double min, double max) {
        this.target = target;
        this.stalls = new PauseExcuse(target);
        this.quantile = quantile;
        this.min = min;
        this.max = max;
        this.enough = samplesFor(TAIL_SAMPLES, quantile);
        this.trimEnough = samplesFor(TRIM_TAIL_SAMPLES, quantile);
    }

    /**
     * The samples that hold {@code tail} above the quantile on average, {@code tail / (1 − q)};
     * 0 for {@code q = 1}, whose reading is the largest sample however many there are.
     */
    private static long samplesFor(double tail, double quantile) {
        return quantile < 1 ? (long) Math.ceil(tail / (1 - quantile) - 1e-9) : 0;
    }

    /**
     * Takes one non-empty window and returns the new rate, as the class description says; the
     * window's {@code reading} and {@code dt} are not used (the law reads its merged windows).
     *
     * @param window the window and its context
     * @return the new rate, in {@code [minRate, maxRate]}
     */
    @Override
    public double step(RateLaw.Window window) {
        return step(window.samples(), window.rate(), window.seconds(), window.demand(), window.pauseMs(),
                window.slowLoadZ(), window.runLoadZ());
    }

    /**
     * {@link #step(PowerHistogram.Snapshot, double, double, long, double, double, double)} without
     * the start-load statistics.
     */
    double step(PowerHistogram.Snapshot window, double rate, double seconds, long demand, double stallMs) {
        return step(window, rate, seconds, demand, stallMs, Double.NaN, Double.NaN);
    }

    /**
     * Takes one non-empty window and returns the new rate.
     *
     * @param window  the window's samples
     * @param rate    the rate in force during the window, per second
     * @param seconds the window's length, seconds, {@code > 0}
     * @param demand  the items offered during the window (accepted into the queue, handed off
     *                directly, or refused because the queue was full)
     * @param stallMs the longest pause of the process that ended during the window, ms (0 when
     *                none was seen)
     * @param slowLoadZ the start-load statistic of the slow calls ({@link RateLaw.Window#slowLoadZ()});
     *                NaN when not measured
     * @param runLoadZ the start-load statistic of all calls ({@link RateLaw.Window#runLoadZ()}); NaN
     *                when not measured
     * @return the new rate, in [min, max]
     */
    double step(PowerHistogram.Snapshot window, double rate, double seconds, long demand, double stallMs,
            double slowLoadZ, double runLoadZ) {
        lastExcused = excused(stallMs);
        if (lastExcused) {
            // A pause of the process: the calls in flight ended late whatever the rate. Hold, and
            // keep the window out of every reading, the capacity and the trim block.
            return clamp(rate);
        }
        double throughput = window.count() / seconds;
        double offered = demand / seconds;
        // The flow the window carried: the rate when it bound, else what was offered or done. A
        // rate far above the flow (an executor's open rate) is no base for a cut.
        double flow = Math.min(rate, Math.max(offered, throughput));
        // Sparse: three windows at this flow hold too few samples for the quantile. The reading
        // then keeps windows until they do.
        boolean sparse = flow * seconds * WINDOWS < enough;
        gathering = sparse;
        long held = keep(window, sparse);
        double previous = smoothed;
        PowerHistogram.Snapshot all = merged();
        double m = RateLaw.reading(all, quantile);
        smoothed = m;
        // Loaded: work was offered at the rate or above, so the rate, not the demand, set how much
        // was admitted. Only a loaded window says anything about the downstream's capacity.
        boolean loaded = offered >= SATURATION * rate;
        // Saturated: the downstream completed less than it was given, the rate's worth when the
        // rate bound, else (over the target) the work offered: a backlog grew.
        boolean saturated = throughput < SATURATION * flow && (loaded || m > target);
        if (loaded && seconds >= RAISE_SECONDS && throughput > capacity) {
            // The downstream completed more than the estimate: it can. A saturated window during a
            // pause of the machine measured the pause, not the downstream; the backlog it left
            // drains in the next window, above the estimate.
            capacity = throughput;
        }
        // Too few samples for the quantile to decide a cut (see the hold below).
        boolean tooFew = sparse && held < enough && recent.size() < MAX_WINDOWS;
        boolean wasClimbing = climbing;
        climbing = false;
        int probed = probes;
        probes = 0;
        double fastFrom = climbedFrom;
        climbedFrom = Double.NaN;
        // The window alone, not the merged reading: two windows before a recovery hold the merge up.
        double own = RateLaw.reading(window, quantile);
        // Work waits, and calls that started with more in flight did not wait longer: the
        // downstream does not queue at this rate, so the knee is above it (see "Recovery").
        boolean unqueued = loaded && runLoadZ < UNQUEUED_Z;
        // They did wait longer (NaN, not measured, is neither).
        boolean queued = runLoadZ >= UNQUEUED_Z;
        if (trimming && ((loaded && blockWindows >= 2 && own <= RECOVERED * blockFloor)
                || (unqueued && own <= ROOM * target))) {
            // Work waits and the window read far under every window of the block at this rate:
            // the downstream does more. Not against the aim, nor before two windows at the rate: a
            // trim step down lowers the reading by itself (to the service time's own p99 where
            // latency rises only at the knee), and the first window after it still drains calls
            // admitted before it.
            trimming = false;
            newBlock();
        }
        if (trimming && loaded && !saturated && throughput <= DRAINING * flow && m <= TRIM_LEAVE * target
                && !tooFew && blockWindows + 1 >= WINDOWS // so blockFloor holds the block's other windows
                && Math.min(blockFloor, own) > (1 + HEADROOM_BAND) * target) {
            // Every window of the block so far, three or more, read a quarter or more over the
            // target: no noise of a settled knee but a rate past it (a FIFO server just past its
            // capacity, a service time that keeps growing), where a backlog grows and a step of
            // the trim's elasticity drains it slowly. The busy window completed what the
            // downstream can: go to just under it, as after a saturated window.
            trimming = false;
            newBlock();
            kneeReading = Double.NaN; // as after a saturated cut: the climb's next reading is the knee's
            if (Double.isNaN(cutFromRate)) {
                startCuts(rate, flow, m);
            }
            if (m > BOUND_OVER * target) {
                boundCapacity(flow, throughput);
            }
            recent.clear();
            return clamp(Math.min(rate, KNEE * throughput));
        }
        if (trimming) {
            if (m <= target || !(saturated || (m > TRIM_LEAVE * target && !tooFew))) {
                return trim(window, own, rate);
            }
            trimming = false; // the downstream changed: the law's cut below
        } else if (wasClimbing && m > target && m <= TRIM_LEAVE * target && !saturated && !sparse
                && nearKnee(rate)) {
            // The slow climb near a measured knee reached the target: from here, trim. One
            // reading of three seconds is too noisy to cut on (a slow second of the downstream or
            // of the machine puts it over); see the class description, "Trimming".
            trimming = true;
            kneeReading = TRIM_AIM * target;
            newBlock();
            recent.clear();
            ups = 0;
            return clamp(rate * trimFactor(m));
        }
        if (m > target && !saturated && !evident(all)) {
            // Over the target by no more than the reading's own scatter (see EVIDENCE): hold, and
            // read again with the next window merged in.
            return clamp(rate);
        }
        if (m > target && tooFew && !saturated) {
            // Too few samples for the quantile: one slow call (the service time's tail, a pause of
            // the machine) reads over the target, at a rate far under any knee, and cutting and
            // bounding the capacity on it traps the rate low (see the class description). Hold,
            // and keep the windows to gather more; a saturated window acts.
            return clamp(rate);
        }
        if (m <= target) {
            endCuts();
            unreachable = false;
            return clamp(increase(m, Math.min(m, own), rate, loaded, probed, unqueued, queued));
        }
        if (unreachable) {
            if (!saturated && m <= TRIM_LEAVE * Math.max(target, flatReading)) {
                recent.clear();
                return clamp(rate); // a latency the rate does not set: serve the load
            }
            unreachable = false; // the downstream changed: cut as usual
        }
        if (throughput > DRAINING * flow) {
            // Over the target while the downstream completes more than the flow it was given: its
            // backlog drains, and the reading is of calls admitted before. A cut, a bound on the
            // capacity or a flat reading would all be about work the last cut already stopped
            // (behind a bounded pool a FIFO's reading stays at the full pool's wait until the
            // backlog is gone, and read as flat it called the target unreachable). The window
            // was busy, so what it completed is the capacity: go to just under it, as after a
            // saturated window, where the backlog still drains.
            recent.clear();
            return clamp(KNEE * throughput);
        }
        if (Double.isNaN(cutFromRate) && !loaded && !saturated && slowLoadZ < LOAD_Z) {
            // The first reading over the target, with the demand under the rate and the
            // downstream keeping up with it, and the calls over the target started at no higher
            // concurrency than the rest: the load does not set the latency, and a cut would only
            // refuse work to find that out. Serve the load.
            unreachable = true;
            flatReading = m;
            recent.clear();
            return clamp(rate);
        }
        if (Double.isNaN(cutFromRate)) {
            startCuts(rate, flow, m);
        } else if (!saturated && flow <= FLAT_CUT * cutFromFlow && m >= FLAT_READING * cutFromReading
                && !(slowLoadZ >= LOAD_Z)) {
            // (Not when the slow calls are the ones that started with the most in flight: a
            // backlog draining after a capacity drop reads flat too, and it is the load's.)
            if (++flatWindows >= FLAT_WINDOWS) {
                // Cut by a fifth or more and the reading did not fall: the target is below what
                // the rate can reach. Go back to the rate before the cuts and serve the load.
                unreachable = true;
                flatReading = m;
                double back = cutFromRate;
                endCuts();
                recent.clear();
                return clamp(back);
            }
        } else {
            flatWindows = 0;
        }
        double next = decrease(m, previous, flow, throughput, loaded, saturated);
        if (!Double.isNaN(fastFrom) && !Double.isNaN(next) && m <= TRIM_LEAVE * target) {
            // A fast climb went over (up to twice the target): the rate before it read under the
            // target, this one over, so the knee lies between them. Take the middle if the
            // downstream kept up, else the lower end (at most 0.85 of what it completed).
            next = Math.max(next, saturated ? Math.min(fastFrom, KNEE * throughput) : (fastFrom + flow) / 2);
        }
        return clamp(Double.isNaN(next) ? rate : next);
    }

    /** Starts a run of cuts at {@code rate}, which carried {@code flow} and read {@code m}. */
    private void startCuts(double rate, double flow, double m) {
        cutFromRate = rate;
        cutFromFlow = flow;
        cutFromReading = m;
        flatWindows = 0;
    }

    /**
     * Bounds the capacity estimate by a loaded window far over the target that the downstream kept
     * up with: the knee is below its flow, and not below what it completed.
     */
    private void boundCapacity(double flow, double throughput) {
        capacity = Math.min(capacity, Math.max(flow, throughput));
    }

    /** Forgets the current run of cuts (a reading at or under the target, or an unreachable target). */
    private void endCuts() {
        cutFromRate = Double.NaN;
        flatWindows = 0;
    }

    /**
     * Adds {@code window} to the merged windows and drops the oldest beyond {@link #WINDOWS} (while
     * sparse, only once the rest hold {@code enough} samples, or beyond {@link #MAX_WINDOWS}).
     *
     * @return the samples the merged windows hold
     */
    private long keep(PowerHistogram.Snapshot window, boolean sparse) {
        recent.addLast(window);
        long held = 0;
        for (PowerHistogram.Snapshot s : recent) {
            held += s.count();
        }
        while (recent.size() > WINDOWS
                && (!sparse || recent.size() > MAX_WINDOWS || held - recent.peekFirst().count() >= enough)) {
            held -= recent.removeFirst().count();
        }
        return held;
    }

    /**
     * Forgets the sparse windows merged so far: the executor's cap on the tasks in flight moved,
     * and they ran with another number in flight (see {@code PowerFlowController.holdNextStep}).
     * Not while the windows are not sparse: the {@link #WINDOWS} merged then are a few seconds
     * old at most, and one window's p99 alone, from a few hundred calls, scatters more than the
     * merged reading over a target near the service time's own p99.
     */
    @Override
    public void forgetWindows() {
        if (gathering) {
            recent.clear();
        }
    }

    /** The merged windows as one snapshot. */
    private PowerHistogram.Snapshot merged() {
        PowerHistogram.Snapshot merged = null;
        for (PowerHistogram.Snapshot s : recent) {
            merged = merged == null ? s : merged.merge(s);
        }
        return merged;
    }

    /**
     * The step for a reading {@code m} over the target (class description, "Decrease"), unclamped,
     * from {@code rate}, the flow the window carried (the rate in force when it bound); NaN to
     * hold the rate in force.
     */
    private double decrease(double m, double previous, double rate, double throughput, boolean loaded,
            boolean saturated) {
        double next;
        if (saturated) {
            // Saturated: the downstream completed less than was admitted. That is its capacity.
            capacity = throughput;
            kneeReading = Double.NaN;
            next = Math.max(MAX_CUT * rate, Math.min(rate * target / m, KNEE * throughput));
        } else if (m < previous) {
            // Over the target but falling, at a rate the downstream keeps up with: a backlog
            // draining. Cutting again would cut for work admitted before the last cut.
            next = Double.NaN;
        } else {
            next = rate * Math.max(MAX_CUT, target / m);
            // The downstream kept up, yet the reading went far over the target: the knee is
            // below this rate, whatever a saturated window measured before (one that
            // straddled a drop in capacity measures part of the old one). Not on a reading
            // just over: that is as likely noise, and with a target close to the service
            // time's own p99 bounding on it ratchets the rate down. Not below what it completed:
            // a backlog draining after a drop in capacity completes at the new capacity.
            if (loaded && m > BOUND_OVER * target) {
                boundCapacity(rate, throughput);
            }
        }
        // The windows read so far describe a rate no longer in force.
        recent.clear();
        return next;
    }

    /** The step for a reading {@code m} at or under the target (class description, "Increase"), unclamped. */
    private double increase(double m, double own, double rate, boolean loaded, int probed, boolean unqueued,
            boolean queued) {
        double headroom = Math.min(1.0, (target - m) / (HEADROOM_BAND * target));
        if (rate > capacity) {
            // At or under the target above the capacity estimate: the downstream does more
            // now. Move the estimate up with the rate, so that the climb stays slow there.
            capacity = rate;
        }
        climbing = true;
        if (nearKnee(rate)) {
            if (!(loaded && own <= RECOVERED * kneeReading)) {
                if (Double.isNaN(kneeReading)) {
                    kneeReading = m;
                }
                if (loaded && (rate >= PROBE_FROM * capacity || unqueued)) {
                    // Not where the calls that started with the most in flight waited: the
                    // downstream queues at this rate, and the estimate holds.
                    if (m <= ROOM * target && !queued) { // the merged reading holds this window
                        // At or past the capacity estimate, work waiting, and the reading an
                        // eighth or more under the target: the estimate is stale (the downstream
                        // recovered without the latency showing it, as where it rises only at the
                        // knee). Probe: the step doubles each such window, from the slow one to
                        // the fast one; the first reading over the target trims, or, after a fast
                        // step, bisects.
                        double step = Math.min(FAST_INCREASE, SLOW_INCREASE * Math.pow(PROBE, probed));
                        probes = probed + 1;
                        climbedFrom = step > SLOW_INCREASE ? rate : Double.NaN;
                        return rate * (1 + step);
                    }
                    probes = probed; // a noisy window under the target pauses the probe, and the slow step
                }
                return rate * (1 + SLOW_INCREASE * headroom);
            }
            // Work waits near the knee and the window read far under the knee's reading: the
            // downstream does more than the knee measured (it recovered). Climb fast on this
            // window's own headroom (the windows merged before it describe the old downstream);
            // a saturated window measures the new knee.
            capacity = Double.POSITIVE_INFINITY;
            kneeReading = Double.NaN;
            climbedFrom = rate;
            PowerHistogram.Snapshot last = recent.peekLast();
            recent.clear();
            recent.addLast(last);
            return rate * (1 + FAST_INCREASE * Math.min(1.0, (target - own) / (HEADROOM_BAND * target)));
        }
        double next = rate * (1 + FAST_INCREASE * headroom);
        if (rate < KNEE * capacity) {
            next = Math.min(next, KNEE * capacity);
        }
        climbedFrom = next > rate * (1 + SLOW_INCREASE) ? rate : Double.NaN;
        return next;
    }

    /**
     * Whether a pause excuses this window ({@link PauseExcuse}): one of at least half the target
     * (and 50 ms) ended in it, more than 10 windows after the last excused one, or it is the
     * window after such a pause.
     */
    private boolean excused(double stallMs) {
        int excuse = stalls.step(stallMs);
        if (excuse == 1) {
            pausesExcused = pausesExcused + 1; // one writer: the loop lock
        }
        return excuse != 0;
    }

    /** One window of trimming: the rate holds until the block is whole, then moves once. */
    private double trim(PowerHistogram.Snapshot window, double own, double rate) {
        block = block == null ? window : block.merge(window);
        blockWindows++;
        blockFloor = Double.isNaN(blockFloor) ? own : Math.min(blockFloor, own);
        boolean whole = blockWindows >= MAX_TRIM_WINDOWS
                || (blockWindows >= TRIM_WINDOWS && block.count() >= trimEnough);
        if (!whole) {
            return clamp(rate);
        }
        double reading = RateLaw.reading(block, quantile);
        double f = trimFactor(reading);
        double next = clamp(rate * f);
        ups = f > 1 ? ups + 1 : 0;
        newBlock();
        if (reading < ROOM * target || ups >= MAX_TRIM_UPS) {
            // Far under the target (the downstream does more now), or climbing block by block
            // for a minute (trimming began far under the knee): the climb resumes, and trims
            // again where it next reads over the target.
            trimming = false;
            climbing = true;
            kneeReading = Double.NaN; // the climb's first reading is the knee's again, not the aim
        }
        if (reading <= target && next > capacity) {
            capacity = next; // under the target above the estimate: the downstream does more
        }
        return next;
    }

    /**
     * Whether the merged samples show the quantile over the target beyond their scatter: more of
     * them over it than a true quantile at the target would give by {@link #EVIDENCE} standard
     * errors, read as the quantile's lower confidence bound,
     * {@code q − EVIDENCE × sqrt(q (1 − q) / n)}, over the target. Always for {@code q = 1}.
     */
    private boolean evident(PowerHistogram.Snapshot samples) {
        if (quantile >= 1) {
            return true;
        }
        long n = samples.count();
        double lower = quantile - EVIDENCE * Math.sqrt(quantile * (1 - quantile) / n);
        return lower > 0 && RateLaw.reading(samples, lower) > target;
    }

    /** Whether {@code rate} is near the knee: within {@code [KNEE × C, C / KNEE]}. */
    private boolean nearKnee(double rate) {
        return rate >= KNEE * capacity && rate <= capacity / KNEE;
    }

    /** Starts a trim block with no windows. */
    private void newBlock() {
        block = null;
        blockWindows = 0;
        blockFloor = Double.NaN;
    }

    /** The trim step for a reading: {@code (aim / reading)^(1 / elasticity)}, bounded. */
    private double trimFactor(double reading) {
        double f = Math.pow(TRIM_AIM * target / reading, 1 / TRIM_ELASTICITY);
        return Math.max(1 - TRIM_DOWN, Math.min(1 + TRIM_UP, f));
    }

    private double clamp(double rate) {
        return Math.min(max, Math.max(min, rate));
    }

    /**
     * Whether the rate is pinned: on the floor or the ceiling.
     *
     * @param rate the rate in force, per second
     * @return {@code rate <= minRate || rate >= maxRate}
     */
    @Override
    public boolean saturated(double rate) {
        return rate <= min || rate >= max;
    }

    /**
     * Returns the law's numbers: the smoothed reading of the last step, ms (NaN before the
     * first); the capacity estimate, per second (measured by the last saturated window, bounded
     * by the rate of a window more than 1.5 × the target over that the downstream kept up with,
     * raised to a rate at or under the target above it, to a trim block's rate, and to the
     * completions per second of a window that completed more; {@code +∞} before any of these);
     * the pauses excused since construction; and whether the law is trimming.
     *
     * @return the law's statistics
     */
    @Override
    public RateLaw.Stats stats() {
        return new RateLaw.Stats(smoothed, capacity, pausesExcused, trimming, unreachable);
    }

    /**
     * Whether the last step's window was excused: by a pause, or as the window after one.
     *
     * @return whether it was excused
     */
    @Override
    public boolean excusedLast() {
        return lastExcused;
    }

    /** Forgets everything but {@link RateLaw.Stats#pausesExcused()}, a counter. */
    @Override
    public void reset() {
        stalls.reset();
        lastExcused = false;
        climbing = false;
        trimming = false;
        newBlock();
        ups = 0;
        probes = 0;
        recent.clear();
        gathering = false;
        smoothed = Double.NaN;
        capacity = Double.POSITIVE_INFINITY;
        unreachable = false;
        kneeReading = Double.NaN;
        endCuts();
    }
}
