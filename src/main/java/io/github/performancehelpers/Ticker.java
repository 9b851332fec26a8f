package io.github.performancehelpers;

/**
 * A source of monotonic time, in nanoseconds.
 *
 * <p>Every type in this library that reads time takes a {@code Ticker}, so tests can drive time by
 * hand instead of sleeping. {@link #system()} reads {@link System#nanoTime()}: a monotonic
 * reading with an arbitrary origin, meaningful only as the difference between two readings. It is
 * never the wall clock, so NTP adjustments do not reach it.
 *
 * <p>Implementations must be thread-safe: several threads may call {@link #read()} at once.
 * A ticker whose readings go backwards is tolerated by the types that read it, each of which
 * documents what it does in that case.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface Ticker {

    /**
     * Returns the current reading, in nanoseconds since an arbitrary fixed origin.
     *
     * @return the reading in nanoseconds
     */
    long read();

    /**
     * Returns the ticker backed by {@link System#nanoTime()}.
     *
     * @return the system's monotonic ticker; the same instance on every call
     */
    static Ticker system() {
        return SystemTicker.INSTANCE;
    }
}

/** The {@link System#nanoTime()} ticker; an enum so it is a serialization-safe singleton. */
enum SystemTicker implements Ticker {
    INSTANCE;

    @Override
    public long read() {
        return System.nanoTime();
    }
}
