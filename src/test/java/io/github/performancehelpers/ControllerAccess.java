package io.github.performancehelpers;

/** Package-private hooks of {@link PowerFlowController} for the simulations in other test packages. */
public final class ControllerAccess {

    private ControllerAccess() {
    }

    /**
     * Notes a pause of the process, as the executor's dispatcher does when it wakes late.
     *
     * @param flow  the controller
     * @param nanos how late, ns
     */
    public static void noteStall(PowerFlowController<?> flow, long nanos) {
        flow.noteStall(nanos);
    }
}
