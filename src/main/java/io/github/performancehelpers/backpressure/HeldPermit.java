package io.github.performancehelpers.backpressure;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The {@link Permit} a {@link PowerBackpressure} hands out: a reference to its controller and a
 * flag set once, by compare-and-set, so that the permit goes back at most once however many
 * threads release it.
 *
 * <p><b>Thread safety.</b> Instances are safe for concurrent use by any number of threads.
 */
final class HeldPermit implements Permit {
    private static final VarHandle RELEASED;

    static {
        try {
            RELEASED = MethodHandles.lookup().findVarHandle(HeldPermit.class, "released", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final PowerBackpressure owner;
    @SuppressWarnings("unused") // accessed through RELEASED
    private volatile boolean released;

    HeldPermit(PowerBackpressure owner) {
        this.owner = owner;
    }

    @Override
    public void release() {
        if (RELEASED.compareAndSet(this, false, true)) {
            owner.returnOne(true);
        }
    }

    @Override
    public void close() {
        release();
    }

    @Override
    public boolean isReleased() {
        return released;
    }

    /**
     * Returns a permit that was handed to a waiter whose future had already been completed by
     * someone else: it goes back without counting as a permit that came back from a consumer.
     */
    void releaseUndelivered() {
        if (RELEASED.compareAndSet(this, false, true)) {
            owner.returnOne(false);
        }
    }

    @Override
    public String toString() {
        return "Permit[" + (released ? "released" : "held") + "]";
    }
}
