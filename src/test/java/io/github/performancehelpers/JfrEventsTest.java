package io.github.performancehelpers;

import static io.github.performancehelpers.ObservabilityTest.fillAndDrop;
import static io.github.performancehelpers.ObservabilityTest.unique;
import static io.github.performancehelpers.PowerFlowExecutorLoopTest.loop;
import static io.github.performancehelpers.PowerFlowExecutorLoopTest.runTaking;
import static io.github.performancehelpers.PowerFlowExecutorTest.terminate;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import io.github.performancehelpers.internal.Access;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;

/**
 * The JFR events, recorded with a real {@link Recording}, dumped to a file and read back with
 * {@link RecordingFile}, as {@code jfr print} would read them.
 */
class JfrEventsTest {

    static final String OBSERVATION = "io.github.performancehelpers.Observation";
    static final String RATE_CHANGE = "io.github.performancehelpers.RateChange";
    static final String DROPS = "io.github.performancehelpers.Drops";
    static final String STALE = "io.github.performancehelpers.StaleLoop";

    @TempDir
    Path dir;

    interface Body {
        void run() throws Exception;
    }

    /** Runs body under a recording with the given events enabled; returns the library's events, with the given name. */
    List<RecordedEvent> record(String name, List<String> enabled, Body body) throws Exception {
        Path file = dir.resolve("rec.jfr");
        try (Recording r = new Recording()) {
            for (String e : List.of(OBSERVATION, RATE_CHANGE, DROPS, STALE)) {
                if (enabled.contains(e)) {
                    r.enable(e);
                } else {
                    r.disable(e);
                }
            }
            r.start();
            body.run();
            r.stop();
            r.dump(file);
        }
        assertTrue(Files.size(file) > 0);
        return RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().startsWith("io.github.performancehelpers."))
                .filter(e -> name.equals(e.getString("name")))
                .toList();
    }

    static List<RecordedEvent> ofType(List<RecordedEvent> events, String type) {
        return events.stream().filter(e -> e.getEventType().getName().equals(type)).toList();
    }

    /** An observation commits Observation (p99, error, rate, previous, saturated, dt) and, as the rate moved, RateChange (rate, previous). */
    @Test
    void anObservationAndARateChangeAreRecorded() throws Exception {
        String name = unique("jfr");
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = loop(t, s).name(name).build();
        List<RecordedEvent> events = record(name, List.of(OBSERVATION, RATE_CHANGE, DROPS, STALE), () -> {
            runTaking(e, t, 500);
            t.advanceMillis(500);
            s.runAll();
        });
        terminate(e);
        List<RecordedEvent> obs = ofType(events, OBSERVATION);
        assertEquals(1, obs.size(), events::toString);
        RecordedEvent o = obs.get(0);
        assertEquals(500.0, o.getDouble("p99"), 500 * 0.011);
        assertEquals(45.0 - o.getDouble("p99"), o.getDouble("error"), 1e-9); // the loop's target: 0.9 x 50
        double rate = 100 + 0.05 * (45 - o.getDouble("p99")); // the executor's PI law starts at its rate
        assertEquals(rate, o.getDouble("rate"), 1e-9);
        assertEquals(100.0, o.getDouble("previous"));
        assertFalse(o.getBoolean("saturated"));
        assertEquals(1000.0, o.getDouble("dt"), 1e-9);
        assertEquals(0.0, o.getDouble("pause"));
        List<RecordedEvent> rc = ofType(events, RATE_CHANGE);
        assertEquals(1, rc.size());
        assertEquals(rate, rc.get(0).getDouble("rate"), 1e-9);
        assertEquals(100.0, rc.get(0).getDouble("previous"));
        assertTrue(o.getEventType().getCategoryNames().contains("performance-helpers"));
        assertNull(o.getStackTrace(), "@StackTrace(false)");
    }

    /**
     * A noted pause of 300 ms: the Observation of its window carries it (pause 300 ms, excused),
     * the next window is excused as its shadow (pause 0), the third is read (not excused).
     */
    @Test
    void anExcusedPauseIsRecorded() throws Exception {
        String name = unique("jfr-pause");
        PowerFlowController<String> f = PowerFlowController.<String>builder().rate(100).minRate(10).maxRate(200)
                .targetP99(60).controlLaw(PowerFlowController.ControlLaw.KNEE_AWARE).name(name).build();
        List<RecordedEvent> events = record(name, List.of(OBSERVATION), () -> {
            Access.controller().noteStall(f, 300_000_000L);
            for (int i = 0; i < 3; i++) {
                f.record(400);
                f.observe();
            }
        });
        List<RecordedEvent> obs = ofType(events, OBSERVATION);
        assertEquals(3, obs.size(), events::toString);
        assertEquals(300.0, obs.get(0).getDouble("pause"), 1e-9);
        assertTrue(obs.get(0).getBoolean("excused"));
        assertEquals(0.0, obs.get(1).getDouble("pause"));
        assertTrue(obs.get(1).getBoolean("excused"));
        assertFalse(obs.get(2).getBoolean("excused"));
    }

    /** Drops are throttled: however many drops an interval has, one Drops event per observation carries their count. */
    @Test
    void dropsAreOneEventPerInterval() throws Exception {
        String name = unique("jfr");
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(100).minRate(10).queueCapacity(1).ticker(t)
                .scheduler(s).name(name).shedding(false).build(); // the full queue refuses, not the budget
        List<RecordedEvent> events = record(name, List.of(DROPS), () -> {
            fillAndDrop(e);
            for (int i = 0; i < 4; i++) {
                assertThrows(QueueFullException.class, () -> e.execute(() -> { }));
            }
            assertEquals(5, e.stats().dropped());
            t.advanceMillis(1000);
            s.runAll();           // one event: 5 drops
            s.runAll();           // no drops since: no event
            dropOnce(e);               // the tick let time pass: fill the queue again
            t.advanceMillis(1000);
            s.runAll();           // one event: 1 drop
        });
        terminate(e);
        List<RecordedEvent> drops = ofType(events, DROPS);
        assertEquals(2, drops.size(), events::toString);
        assertEquals(5, drops.get(0).getLong("count"));
        assertEquals(5, drops.get(0).getLong("total"));
        assertEquals(1, drops.get(1).getLong("count"));
        assertEquals(6, drops.get(1).getLong("total"));
    }

    /** Submits until the queue refuses one task (the fake clock stands still, so the queue fills). */
    static void dropOnce(PowerFlowExecutor e) {
        long dropped = e.stats().dropped();
        for (int i = 0; i < 100 && e.stats().dropped() == dropped; i++) {
            try {
                e.execute(() -> { });
            } catch (QueueFullException expected) {
                return;
            }
            Thread.yield();
        }
        assertEquals(dropped + 1, e.stats().dropped());
    }

    /** A stalled tick commits one StaleLoop event per episode, with how long since the last tick and the threshold. */
    @Test
    void aStaleLoopIsRecordedOncePerEpisode() throws Exception {
        String name = unique("jfr");
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = loop(t, s).name(name).build();
        List<RecordedEvent> events = record(name, List.of(STALE), () -> {
            t.advanceMillis(4000);
            assertTrue(e.isStale());
            assertTrue(e.isStale());
            s.runAll();
            assertFalse(e.isStale());
        });
        terminate(e);
        List<RecordedEvent> stale = ofType(events, STALE);
        assertEquals(1, stale.size(), events::toString);
        assertEquals(4_000_000_000L, stale.get(0).getDuration("sinceLastTick").toNanos());
        assertEquals(3_000_000_000L, stale.get(0).getDuration("staleAfter").toNanos());
    }

    /** An event the recording disables is not recorded, while the enabled ones are: the normal JFR settings decide. */
    @Test
    void aDisabledEventIsNotRecorded() throws Exception {
        String name = unique("jfr");
        PowerFlowController<String> f = PowerFlowController.<String>builder().rate(100).minRate(10).maxRate(200)
                .name(name).build();
        List<RecordedEvent> events = record(name, List.of(RATE_CHANGE), () -> {
            f.record(500);
            f.observe(1000);
        });
        assertTrue(ofType(events, OBSERVATION).isEmpty());
        assertEquals(1, ofType(events, RATE_CHANGE).size());
        assertEquals(10.0, ofType(events, RATE_CHANGE).get(0).getDouble("rate"));
    }
}
