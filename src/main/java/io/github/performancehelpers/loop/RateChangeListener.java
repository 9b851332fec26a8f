package io.github.performancehelpers.loop;

/**
 * Told when a flow controller's rate moves: the hook for pushing the rate into a pool.
 *
 * <p>Called on the thread that ran the observation, after the new rate is in force. A listener
 * that throws does not break the loop: the failure is reported through {@link System.Logger} and
 * counted, and the rate stays changed.
 *
 * <p><b>Thread safety.</b> A controller calls its listener under its loop lock, one call at a
 * time; a listener shared by several controllers is called concurrently and must be thread-safe.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface RateChangeListener {

    /**
     * Called when the rate has changed.
     *
     * @param rate     the new rate, operations per second
     * @param previous the rate before the change, operations per second
     */
    void onRateChange(double rate, double previous);
}
