package io.github.performancehelpers.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.github.performancehelpers.bench.FieldTrial.PhaseResult;
import io.github.performancehelpers.bench.FieldTrial.Scenario;
import org.junit.jupiter.api.Test;

/** The field trial's summary: which phases can meet the target at all, and how a settled cell reads. */
class FieldTrialSummaryTest {

    private static Scenario scenario(String name) {
        return FieldTrial.SCENARIOS.stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow();
    }

    /**
     * {@code tail}'s 3 % of 60-ms calls (120 ms once the calls double) put its own p99 over the
     * 40-ms target in every phase; {@code pool}'s doubled 10-ms calls (p99 about 40 ms) stay under
     * its 50, and {@code report}'s slow calls (p99 about 200 ms) under its 400.
     */
    @Test
    void aPhaseIsUnreachableWhereTheDownstreamsOwnP99IsOverTheTarget() {
        FieldTrial.Schedule tail = FieldTrial.schedule(scenario("tail"), 20, 42);
        assertEquals(60, tail.ownP99Ms(1), 1);
        assertEquals(120, tail.ownP99Ms(2), 2);
        FieldTrial.Schedule pool = FieldTrial.schedule(scenario("pool"), 20, 42);
        double doubled = pool.ownP99Ms(2);
        assertTrue(doubled > 35 && doubled < 50, "pool capacity/2: " + doubled);
        FieldTrial.Schedule report = FieldTrial.schedule(scenario("report"), 20, 42);
        double slow = report.ownP99Ms(1);
        assertTrue(slow > 150 && slow < 400, "report overload: " + slow);
    }

    /** A settled cell: within, over (bold), or unreachable whatever the blocks read. */
    @Test
    void aSettledCellSaysWithinOverOrUnreachable() {
        PhaseResult within = new PhaseResult(100, 90, 90, 10, 30, 40, 1, 1, 0, 41.25);
        PhaseResult over = new PhaseResult(100, 90, 80, 10, 30, 60, 0, 1, 0, 60.2);
        assertEquals("41.3 yes", FieldTrial.settled(within, true));
        assertEquals("60.2 **no**", FieldTrial.settled(over, true));
        assertEquals("60.2 (unreachable)", FieldTrial.settled(over, false));
    }
}
