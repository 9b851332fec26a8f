package io.github.performancehelpers.loop;

import io.github.performancehelpers.internal.Access;

/**
 * {@link PowerFlowController}'s package-private operations, for the executor in another package
 * (see {@link Access}). Each method forwards to the controller's method of the same name, or to
 * its {@link FlowAdmission}'s.
 *
 * <p><b>Thread safety.</b> Stateless; each operation is as thread-safe as the controller method
 * it forwards to.
 */
final class ControllerHooks implements Access.ControllerAccess {

    @Override
    public void awaitWork(PowerFlowController<?> c) throws InterruptedException {
        c.admission().awaitWork();
    }

    @Override
    public <T> T pollAdmitted(PowerFlowController<T> c, long maxCatchUpNanos, long now) {
        return c.admission().pollAdmitted(maxCatchUpNanos, now);
    }

    @Override
    public void countAdmitted(PowerFlowController<?> c, long n) {
        c.admission().countAdmitted(n);
    }

    @Override
    public void refundAdmission(PowerFlowController<?> c) {
        c.admission().refundAdmission();
    }

    @Override
    public void countRecorded(PowerFlowController<?> c, long n) {
        c.countRecorded(n);
    }

    @Override
    public int tryAdmitDirect(PowerFlowController<?> c) {
        return c.admission().tryAdmitDirect();
    }

    @Override
    public void unadmitDirect(PowerFlowController<?> c, int admission) {
        c.admission().unadmitDirect(admission);
    }

    @Override
    public boolean tryAdmitHeld(PowerFlowController<?> c, long maxCatchUpNanos) {
        return c.admission().tryAdmitHeld(maxCatchUpNanos);
    }

    @Override
    public long admitWaitNanos(PowerFlowController<?> c) {
        return c.admission().admitWaitNanos();
    }

    @Override
    public void noteStall(PowerFlowController<?> c, long nanos) {
        c.noteStall(nanos);
    }

    @Override
    public long stallNanos(PowerFlowController<?> c) {
        return c.stallNanos();
    }

    @Override
    public void noteStartLoad(PowerFlowController<?> c, double slowZ, double runZ) {
        c.noteStartLoad(slowZ, runZ);
    }

    @Override
    public void holdNextStep(PowerFlowController<?> c, boolean forgetWindows) {
        c.holdNextStep(forgetWindows);
    }

    @Override
    public void flushDropEvent(PowerFlowController<?> c) {
        c.flushDropEvent();
    }

    @Override
    public boolean loopSaturated(PowerFlowController<?> c) {
        return c.loopSaturated();
    }

    @Override
    public long submittedCount(PowerFlowController<?> c) {
        return c.submittedCount();
    }

    @Override
    public long directCount(PowerFlowController<?> c) {
        return c.admission().directCount();
    }

    @Override
    public long directTakenBackCount(PowerFlowController<?> c) {
        return c.admission().directTakenBackCount();
    }

    @Override
    public long admittedCount(PowerFlowController<?> c) {
        return c.admittedCount();
    }

    @Override
    public long observationCount(PowerFlowController<?> c) {
        return c.observationCount();
    }

    @Override
    public long pausesExcused(PowerFlowController<?> c) {
        return c.pausesExcused();
    }

    @Override
    public void countDeclined(PowerFlowController<?> c) {
        c.countDeclined();
    }

    @Override
    public void startAtRate(PowerFlowController<?> c) {
        c.startAtRate();
    }

    @Override
    public RateLaw.Stats lawStats(PowerFlowController<?> c) {
        return c.lawStats();
    }
}
