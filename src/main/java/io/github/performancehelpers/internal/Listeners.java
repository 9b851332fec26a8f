package io.github.performancehelpers.internal;

import io.github.performancehelpers.loop.RateChangeListener;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Calls a user's {@link RateChangeListener} the way every loop does: a listener that throws is
 * counted and logged and undoes nothing, and only a {@link VirtualMachineError} gets through.
 * The controller calls it for its own listener, the executor's tick for the executor's.
 *
 * <p><b>Thread safety.</b> Stateless; every method is safe to call from any thread.
 */
public final class Listeners {

    private Listeners() {
    }

    /**
     * Calls {@code listener.onRateChange(rate, previous)} if there is a listener.
     *
     * @param listener the user's listener, or null for none
     * @param rate     the new rate, operations per second
     * @param previous the rate before, operations per second
     * @param failures counts a listener that threw
     * @param log      where a listener that threw is logged, at WARNING
     * @param owner    what the log record names as the listener's owner, or the empty string
     * @throws VirtualMachineError if the listener threw one
     */
    public static void rateChanged(RateChangeListener listener, double rate, double previous, AtomicLong failures,
            System.Logger log, String owner) {
        if (listener == null) {
            return;
        }
        try {
            listener.onRateChange(rate, previous);
        } catch (RuntimeException | Error e) {
            if (e instanceof VirtualMachineError vme) {
                throw vme;
            }
            failures.incrementAndGet();
            log.log(Level.WARNING, owner + "onRateChange(" + rate + ", " + previous + ") threw; the rate stays changed",
                    e);
        }
    }
}
