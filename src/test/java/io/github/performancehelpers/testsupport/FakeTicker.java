package io.github.performancehelpers.testsupport;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import io.github.performancehelpers.Ticker;

/** A hand-driven {@link Ticker} for tests. Thread-safe. */
public final class FakeTicker implements Ticker {
    private final AtomicLong nanos;

    public FakeTicker() {
        this(0L);
    }

    public FakeTicker(long startNanos) {
        this.nanos = new AtomicLong(startNanos);
    }

    @Override
    public long read() {
        return nanos.get();
    }

    /** Moves time forward (or backward, if negative) by {@code delta}. */
    public FakeTicker advance(Duration delta) {
        nanos.addAndGet(delta.toNanos());
        return this;
    }

    public FakeTicker advanceNanos(long delta) {
        nanos.addAndGet(delta);
        return this;
    }

    public FakeTicker advanceMillis(long millis) {
        nanos.addAndGet(millis * 1_000_000L);
        return this;
    }

    public FakeTicker set(long value) {
        nanos.set(value);
        return this;
    }
}
