package io.github.performancehelpers.loop;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;
import io.github.performancehelpers.testsupport.FakeTicker;

/**
 * The package-private hooks the executor's fast paths use: admission is consumed only for an item
 * actually handed out, and a taken-back admission is refunded and uncounted.
 */
class PowerFlowControllerHooksTest {

    /** 100/s, no burst, on a frozen clock: exactly one admission until the clock moves 10 ms. */
    private static PowerFlowController<String> frozen(FakeTicker t) {
        return PowerFlowController.<String>builder().rate(100).minRate(1).targetP99(30).ticker(t).build();
    }

    /** A frozen controller with "a" and "b" submitted and "a" handed out by pollAdmitted. */
    private static PowerFlowController<String> aHandedOutBQueued(FakeTicker t) {
        PowerFlowController<String> flow = frozen(t);
        flow.submit("a");
        flow.submit("b");
        assertEquals("a", flow.admission().pollAdmitted(0, t.read()));
        return flow;
    }

    /** On an empty queue pollAdmitted returns null and leaves the limiter's capacity alone. */
    @Test
    void pollAdmittedOnAnEmptyQueueConsumesNothing() {
        PowerFlowController<String> flow = frozen(new FakeTicker());
        assertNull(flow.admission().pollAdmitted(0, 0L));
        assertEquals(1, flow.limiter().available());
        assertEquals(0, flow.stats().admitted());
    }

    /**
     * pollAdmitted hands out the head once admitted at the caller's reading, and leaves the next
     * queued when refused; the admissions count only once the caller counts them.
     */
    @Test
    void pollAdmittedTakesTheHeadOnlyWhenTheLimiterAdmits() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = aHandedOutBQueued(t);
        assertNull(flow.admission().pollAdmitted(0, t.read())); // no admission due
        assertEquals(1, flow.depth());
        t.advanceMillis(10);
        assertNull(flow.admission().pollAdmitted(0, t.read() - 1)); // a reading 1 ns too early: not yet due
        assertEquals("b", flow.admission().pollAdmitted(0, t.read()));
        assertEquals(0, flow.stats().admitted());
        flow.admission().countAdmitted(2);
        assertEquals(2, flow.stats().admitted());
    }

    /** A cancelled item's admission is given back with refundAdmission. */
    @Test
    void anUnusedPolledAdmissionIsRefunded() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = aHandedOutBQueued(t);
        assertEquals(0, flow.limiter().available());
        flow.admission().refundAdmission();
        assertEquals("b", flow.admission().pollAdmitted(0, t.read())); // the refund gave the admission back
    }

    /** tryAdmitDirect counts one submitted and admitted item; unadmitDirect refunds and uncounts it. */
    @Test
    void aDirectAdmissionCanBeTakenBack() {
        PowerFlowController<String> flow = frozen(new FakeTicker());
        assertTrue(flow.admission().tryAdmitDirect());
        assertFalse(flow.admission().tryAdmitDirect()); // the one admission is spent
        assertEquals(1, flow.stats().submitted());
        assertEquals(1, flow.stats().admitted());
        flow.admission().unadmitDirect();
        assertEquals(0, flow.stats().submitted());
        assertEquals(0, flow.stats().admitted());
        assertTrue(flow.admission().tryAdmitDirect()); // the refund gave it back
    }
}
