package io.github.performancehelpers;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class TickerTest {

    /** The system ticker is one instance and never reads backwards. */
    @Test
    void systemTickerIsMonotonicSingleton() {
        Ticker t = Ticker.system();
        assertSame(t, Ticker.system());
        long a = t.read();
        long b = t.read();
        assertTrue(b >= a, "nanoTime went backwards: " + a + " then " + b);
    }
}
