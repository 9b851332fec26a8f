package io.github.performancehelpers.internal;

import io.github.performancehelpers.limit.PowerGCRA;
import io.github.performancehelpers.loop.PowerFlowController;
import java.util.Objects;

/**
 * Operations that one exported package offers another but not the user: the executor paces and
 * counts through its controller, and the controller paces through its limiter, with methods that
 * are not part of either type's contract. <b>Not API.</b>
 *
 * <p>The pattern is the JDK's own {@code SharedSecrets}: each owning class registers an
 * implementation of its interface here from its static initializer, and a caller reads it once
 * into a {@code static final} field, where the JIT treats it as a constant (one implementation,
 * so the interface call inlines). Reading an accessor initializes its owner first, so the field is
 * never read before the owner registered.
 *
 * <p><b>Thread safety.</b> Registration happens once, during class initialization; reads are safe from
 * any thread.
 */
public final class Access {

    private static volatile GcraAccess gcra;
    private static volatile ControllerAccess controller;

    private Access() {
    }

    /** The package-private pacing operations of {@link PowerGCRA}. */
    public interface GcraAccess {

        /**
         * Consumes {@code n}, letting the limiter catch up by at most {@code maxCatchUpNanos} of
         * the caller's lateness; see {@code PowerGCRA.tryConsumeCatchingUp}.
         *
         * @param limiter         the limiter
         * @param n               operations to consume
         * @param maxCatchUpNanos the most lateness forgiven, ns
         * @return whether the batch was admitted
         */
        boolean tryConsumeCatchingUp(PowerGCRA limiter, long n, long maxCatchUpNanos);

        /**
         * As {@link #tryConsumeCatchingUp(PowerGCRA, long, long)} at a clock reading the caller
         * already took.
         *
         * @param limiter         the limiter
         * @param n               operations to consume
         * @param maxCatchUpNanos the most lateness forgiven, ns
         * @param reading         the caller's clock reading, ns
         * @return whether the batch was admitted
         */
        boolean tryConsumeCatchingUpAt(PowerGCRA limiter, long n, long maxCatchUpNanos, long reading);

        /**
         * Gives back {@code n} operations admitted and not used.
         *
         * @param limiter the limiter
         * @param n       operations to give back
         */
        void refund(PowerGCRA limiter, long n);

        /**
         * Whether the limiter admits one operation a nanosecond or faster, a pace no caller can
         * reach (a clock read alone takes longer), so that a path may admit without it.
         *
         * @param limiter the limiter
         * @return whether its interval is at most one nanosecond
         */
        boolean isOpen(PowerGCRA limiter);
    }

    /**
     * The executor's hooks into its {@link PowerFlowController}: pacing its own dispatcher and
     * fast paths, and counting what happened outside the controller's own methods.
     */
    public interface ControllerAccess {

        /**
         * Blocks until the queue holds an item, without removing it.
         *
         * @param c the controller
         * @throws InterruptedException if interrupted while waiting
         */
        void awaitWork(PowerFlowController<?> c) throws InterruptedException;

        /**
         * Admits and removes the head item if the local limiter admits one at {@code now}; null
         * when the queue is empty or the limiter refuses. Not counted as admitted.
         *
         * @param <T>             the item type
         * @param c               the controller
         * @param maxCatchUpNanos the most lateness forgiven, ns
         * @param now             the caller's clock reading, ns
         * @return the item, or null
         */
        <T> T pollAdmitted(PowerFlowController<T> c, long maxCatchUpNanos, long now);

        /**
         * Counts {@code n} admissions made with {@link #pollAdmitted}.
         *
         * @param c the controller
         * @param n the admissions
         */
        void countAdmitted(PowerFlowController<?> c, long n);

        /**
         * Refunds one admission made with {@link #pollAdmitted} and not used.
         *
         * @param c the controller
         */
        void refundAdmission(PowerFlowController<?> c);

        /**
         * Counts {@code n} latencies recorded in a histogram merged into the controller's.
         *
         * @param c the controller
         * @param n the latencies
         */
        void countRecorded(PowerFlowController<?> c, long n);

        /**
         * Counts one item refused before it reached the queue (an executor's door refused it as
         * too late to finish within the target), as offered in the law's window demand.
         *
         * @param c the controller
         */
        void countDeclined(PowerFlowController<?> c);

        /**
         * Starts the controller's servo at its rate in force (bumpless), for an executor: the PI
         * law's first healthy window then holds the rate instead of dropping to the floor.
         *
         * @param c the controller
         */
        void startAtRate(PowerFlowController<?> c);

        /**
         * The numbers the controller's law owns ({@link io.github.performancehelpers.loop.RateLaw#stats()}),
         * without the histogram snapshot {@link PowerFlowController#stats()} takes.
         *
         * @param c the controller
         * @return the law's statistics
         */
        io.github.performancehelpers.loop.RateLaw.Stats lawStats(PowerFlowController<?> c);

        /**
         * Consumes admission for an item that bypasses the queue, counting it as submitted and
         * admitted.
         *
         * @param c the controller
         * @return {@link #DIRECT_REFUSED}, {@link #DIRECT_CHARGED} (the limiter was charged), or
         *     {@link #DIRECT_OPEN} (admitted without the limiter, which was open)
         */
        int tryAdmitDirect(PowerFlowController<?> c);

        /** {@link #tryAdmitDirect}: not admitted. */
        int DIRECT_REFUSED = 0;
        /** {@link #tryAdmitDirect}: admitted, the limiter charged. */
        int DIRECT_CHARGED = 1;
        /** {@link #tryAdmitDirect}: admitted without charging the limiter, which was open. */
        int DIRECT_OPEN = 2;

        /**
         * Takes back a {@link #tryAdmitDirect} admission the caller could not use.
         *
         * @param c         the controller
         * @param admission what {@link #tryAdmitDirect} returned: the limiter is refunded only if
         *                  it was charged
         */
        void unadmitDirect(PowerFlowController<?> c, int admission);

        /**
         * Consumes admission for one item the caller already holds, counting it on success.
         *
         * @param c               the controller
         * @param maxCatchUpNanos the most lateness forgiven, ns
         * @return whether it was admitted
         */
        boolean tryAdmitHeld(PowerFlowController<?> c, long maxCatchUpNanos);

        /**
         * Nanoseconds until the limiter next admits one item.
         *
         * @param c the controller
         * @return the wait, ns
         */
        long admitWaitNanos(PowerFlowController<?> c);

        /**
         * Notes a pause of the process of {@code nanos}.
         *
         * @param c     the controller
         * @param nanos how late the pacing thread woke, ns
         */
        void noteStall(PowerFlowController<?> c, long nanos);

        /**
         * {@return the longest pause noted since the last observation, ns} Read, not cleared: the
         * next observation takes it.
         *
         * @param c the controller
         */
        long stallNanos(PowerFlowController<?> c);

        /**
         * Notes the window's start-load statistics, for the next observation only.
         *
         * @param c     the controller
         * @param slowZ see {@code RateLaw.Window#slowLoadZ()}; NaN when not measured
         * @param runZ  see {@code RateLaw.Window#runLoadZ()}; NaN when not measured
         */
        void noteStartLoad(PowerFlowController<?> c, double slowZ, double runZ);

        /**
         * Holds the rate at the next observation: its window is read and cleared, the law is not
         * stepped (an executor whose cap on the tasks in flight acts on that window).
         *
         * @param c             the controller
         * @param forgetWindows whether the cap moved: the law forgets the windows it merged
         */
        void holdNextStep(PowerFlowController<?> c, boolean forgetWindows);

        /**
         * Commits the pending drop event, if any.
         *
         * @param c the controller
         */
        void flushDropEvent(PowerFlowController<?> c);

        /**
         * Whether the loop's output is pinned at a bound.
         *
         * @param c the controller
         * @return whether it is saturated
         */
        boolean loopSaturated(PowerFlowController<?> c);

        /**
         * Items submitted, queued or direct.
         *
         * @param c the controller
         * @return the count
         */
        long submittedCount(PowerFlowController<?> c);

        /**
         * Direct admissions made ({@link #tryAdmitDirect}), those taken back included: never falls.
         *
         * @param c the controller
         * @return the count
         */
        long directCount(PowerFlowController<?> c);

        /**
         * Direct admissions taken back ({@link #unadmitDirect}).
         *
         * @param c the controller
         * @return the count
         */
        long directTakenBackCount(PowerFlowController<?> c);

        /**
         * Items admitted.
         *
         * @param c the controller
         * @return the count
         */
        long admittedCount(PowerFlowController<?> c);

        /**
         * Observations made.
         *
         * @param c the controller
         * @return the count
         */
        long observationCount(PowerFlowController<?> c);

        /**
         * Pauses that excused a window.
         *
         * @param c the controller
         * @return the count
         */
        long pausesExcused(PowerFlowController<?> c);
    }

    /**
     * Registers {@link PowerGCRA}'s operations; called once, from its static initializer.
     *
     * @param access the implementation
     */
    public static void register(GcraAccess access) {
        gcra = Objects.requireNonNull(access, "access");
    }

    /**
     * Registers {@link PowerFlowController}'s operations; called once, from its static initializer.
     *
     * @param access the implementation
     */
    public static void register(ControllerAccess access) {
        controller = Objects.requireNonNull(access, "access");
    }

    /**
     * Returns {@link PowerGCRA}'s operations, initializing the class first if it was not.
     *
     * @return the operations
     */
    public static GcraAccess gcra() {
        GcraAccess a = gcra;
        if (a == null) {
            initialize(PowerGCRA.class);
            a = gcra;
        }
        return a;
    }

    /**
     * Returns {@link PowerFlowController}'s operations, initializing the class first if it was not.
     *
     * @return the operations
     */
    public static ControllerAccess controller() {
        ControllerAccess a = controller;
        if (a == null) {
            initialize(PowerFlowController.class);
            a = controller;
        }
        return a;
    }

    private static void initialize(Class<?> owner) {
        try {
            Class.forName(owner.getName(), true, owner.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new AssertionError(owner.getName(), e);
        }
    }
}
