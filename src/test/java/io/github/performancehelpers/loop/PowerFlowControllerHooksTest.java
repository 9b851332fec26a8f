package io.github.performancehelpers.loop;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;
import io.github.performancehelpers.internal.Access;
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
        assertEquals(Access.ControllerAccess.DIRECT_CHARGED, flow.admission().tryAdmitDirect());
        assertEquals(Access.ControllerAccess.DIRECT_REFUSED, flow.admission().tryAdmitDirect()); // spent
        assertEquals(1, flow.stats().submitted());
        assertEquals(1, flow.stats().admitted());
        flow.admission().unadmitDirect(Access.ControllerAccess.DIRECT_CHARGED);
        assertEquals(0, flow.stats().submitted());
        assertEquals(0, flow.stats().admitted());
        assertEquals(Access.ControllerAccess.DIRECT_CHARGED, flow.admission().tryAdmitDirect()); // refunded
    }

    /** A controller at the open rate, one admission a nanosecond, no burst, on a frozen clock. */
    private static PowerFlowController<String> open(FakeTicker t) {
        return PowerFlowController.<String>builder().rate(1e9).maxRate(1e9).minRate(1).targetP99(30)
                .ticker(t).build();
    }

    /**
     * At one admission a nanosecond the direct path does not consult the limiter: on a frozen
     * clock with no burst, a charged limiter would admit one; the open one admits all, counts
     * each, and leaves the limiter's capacity as it was.
     */
    @Test
    void anOpenLimiterAdmitsDirectlyWithoutBeingCharged() {
        PowerFlowController<String> flow = open(new FakeTicker());
        long before = flow.limiter().available();
        for (int i = 0; i < 1_000; i++) {
            assertEquals(Access.ControllerAccess.DIRECT_OPEN, flow.admission().tryAdmitDirect());
        }
        assertEquals(before, flow.limiter().available());
        assertEquals(1_000, flow.stats().submitted());
        assertEquals(1_000, flow.stats().admitted());
    }

    /**
     * An admission made open is taken back without a refund, even when the rate was cut in
     * between: a refund then would give the new rate an admission it never charged.
     */
    @Test
    void anOpenAdmissionIsTakenBackWithoutARefund() {
        PowerFlowController<String> flow = open(new FakeTicker());
        assertEquals(Access.ControllerAccess.DIRECT_OPEN, flow.admission().tryAdmitDirect());
        flow.limiter().setRate(100);
        assertEquals(Access.ControllerAccess.DIRECT_CHARGED, flow.admission().tryAdmitDirect());
        long spent = flow.limiter().available();
        flow.admission().unadmitDirect(Access.ControllerAccess.DIRECT_OPEN);
        assertEquals(spent, flow.limiter().available());
        assertEquals(1, flow.stats().submitted());
        assertEquals(1, flow.stats().admitted());
    }
}
