package io.github.performancehelpers.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The pause excuse shared by the knee-aware law and the cap on the tasks in flight. */
class PauseExcuseTest {

    @Test
    void aLongPauseExcusesItsWindowAndTheNextThenNoneWithinTheGap() {
        PauseExcuse e = new PauseExcuse(10);
        assertEquals(0, e.step(49, 50), "under the shortest pause: read");
        assertEquals(1, e.step(50, 50), "the window the pause ended in");
        assertEquals(2, e.step(0, 50), "the window after it");
        for (int i = 2; i < 10; i++) {
            assertEquals(0, e.step(0, 50));
        }
        assertEquals(0, e.step(99, 50), "10 windows on: within the gap, read");
        assertEquals(1, e.step(99, 50), "11 windows on: excused");
    }

    @Test
    void resetForgetsTheLastPause() {
        PauseExcuse e = new PauseExcuse(10);
        assertEquals(1, e.step(99, 50));
        e.reset();
        assertEquals(1, e.step(99, 50), "no shadow, no gap after a reset");
    }
}
