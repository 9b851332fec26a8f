package io.github.performancehelpers.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The pause excuse shared by the knee-aware law and the cap on the tasks in flight. */
class PauseExcuseTest {

    @Test
    void aLongPauseExcusesItsWindowAndTheNextThenNoneWithinTheGap() {
        PauseExcuse e = new PauseExcuse(60); // half the target, 30 ms, is under the 50-ms floor
        assertEquals(0, e.step(49), "under the shortest pause: read");
        assertEquals(1, e.step(50), "the window the pause ended in");
        assertEquals(2, e.step(0), "the window after it");
        for (int i = 2; i < PauseExcuse.GAP; i++) {
            assertEquals(0, e.step(0));
        }
        assertEquals(0, e.step(99), "10 windows on: within the gap, read");
        assertEquals(1, e.step(99), "11 windows on: excused");
    }

    @Test
    void overTheFloorTheShortestPauseIsHalfTheTarget() {
        PauseExcuse e = new PauseExcuse(200);
        assertEquals(0, e.step(99), "under half the 200-ms target");
        assertEquals(1, e.step(100));
    }

    @Test
    void resetForgetsTheLastPause() {
        PauseExcuse e = new PauseExcuse(60);
        assertEquals(1, e.step(99));
        e.reset();
        assertEquals(1, e.step(99), "no shadow, no gap after a reset");
    }
}
