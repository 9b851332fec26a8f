package io.github.performancehelpers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The door's arithmetic, without an executor: the pace a queue's head shows and the room it
 * leaves. A 50-ms target and a run-time p99 of 10 ms leave a 35-ms budget; the last window's
 * mean run time is 10 ms over 4 tasks at once, a start every 2.5 ms. (The executor's door is
 * tested end to end in {@code SheddingTest}.)
 */
class WaitBudgetTest {

    private static final long MS = 1_000_000L;

    private WaitBudget budget;

    @BeforeEach
    void setUp() {
        budget = new WaitBudget(50 * MS, 100 * MS, () -> {
            throw new AssertionError("not tightened here");
        }, 0.99);
        budget.setFrom(10.0);
        budget.drainEvery(2_500_000L, 10 * MS);
        assertEquals(35 * MS, budget.nanos());
    }

    /** A head with none ahead shows no pace within the last window's mean run time, and its wait after. */
    @Test
    void aHeadWithNoneAheadShowsItsWaitOnlyPastTheMeanRunTime() {
        assertEquals(0L, budget.paceShownBy(8 * MS, 0, false));
        assertEquals(0L, budget.paceShownBy(10 * MS, 0, false));
        assertEquals(12 * MS, budget.paceShownBy(12 * MS, 0, false));
        assertEquals(13, budget.queueRoom(budget.paceShownBy(8 * MS, 0, false), false)); // 35 / 2.5 - 1
        assertEquals(1, budget.queueRoom(budget.paceShownBy(12 * MS, 0, false), false)); // floor(35 / 12) - 1
    }

    /** A head with tasks ahead shows its wait over the starts it saw, within a run time too. */
    @Test
    void aHeadWithTasksAheadShowsThePaceAtOnce() {
        assertEquals(4 * MS, budget.paceShownBy(8 * MS, 1, false));
        assertEquals(2 * MS, budget.paceShownBy(8 * MS, 3, false));
        assertEquals(7, budget.queueRoom(4 * MS, false)); // floor(35 / 4) - 1
        assertEquals(13, budget.queueRoom(2 * MS, false)); // slower of it and the window's 2.5 ms
    }

    /** While a slot is free the head waits for the rate or the process, and shows no pace however long. */
    @Test
    void aHeadWaitingWithASlotFreeShowsNoPace() {
        assertEquals(0L, budget.paceShownBy(20 * MS, 0, true));
        assertEquals(0L, budget.paceShownBy(30 * MS, 3, true));
    }

    /** Without a window's figures the head's wait is the pace from the first nanosecond. */
    @Test
    void beforeAWindowTheHeadsWaitIsThePace() {
        budget.drainEvery(0L, 0L);
        assertEquals(Integer.MAX_VALUE, budget.queueRoom(0L, false));
        assertEquals(MS, budget.paceShownBy(MS, 0, false));
        assertEquals(34, budget.queueRoom(MS, false));
    }

    /** A task that cannot be shed once queued gets half the room unless the last window was calm. */
    @Test
    void anUnsheddableTaskGetsHalfTheRoomAfterAWindowThatWasNotCalm() {
        assertEquals(3, budget.queueRoom(4 * MS, true)); // half of 7, rounded down
        budget.calm(true);
        assertEquals(7, budget.queueRoom(4 * MS, true));
    }
}
