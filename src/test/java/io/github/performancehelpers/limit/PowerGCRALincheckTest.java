package io.github.performancehelpers.limit;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.testsupport.FakeTicker;

/**
 * Lincheck model checking: every concurrent execution of PowerGCRA's operations (including the
 * clock moving, reset and setRate's epoch switch) is linearizable with respect to a sequential run
 * of the same limiter on the same fake ticker.
 */
@Param(name = "n", gen = LongGen.class, conf = "1:3")
@Param(name = "k", gen = IntGen.class, conf = "1:3")
@Tag("lincheck")
public class PowerGCRALincheckTest {

    private final FakeTicker clock = new FakeTicker(1_000_000_000L);
    private final PowerGCRA limiter = PowerGCRA.builder().rate(1000).burst(2).ticker(clock).build();

    /**
     * Tries a batch.
     *
     * @param n the batch size
     * @return whether it was admitted
     */
    @Operation
    public boolean tryConsume(@Param(name = "n") long n) {
        return limiter.tryConsume(n);
    }

    /**
     * Tries a batch, reporting the wait.
     *
     * @param n the batch size
     * @return the answer
     */
    @Operation
    public Take take(@Param(name = "n") long n) {
        return limiter.take(n);
    }

    /**
     * Reads the budget.
     *
     * @return available()
     */
    @Operation
    public long available() {
        return limiter.available();
    }

    /**
     * Reads the exact wait.
     *
     * @param n the batch size
     * @return retryAfterNanos(n)
     */
    @Operation
    public long retryAfterNanos(@Param(name = "n") long n) {
        return limiter.retryAfterNanos(n);
    }

    /** Moves the clock forward by 0.4 ms (not a whole interval). */
    @Operation
    public void advance() {
        clock.advanceNanos(400_000L);
    }

    /** Hard clear. */
    @Operation
    public void reset() {
        limiter.reset();
    }

    /**
     * Changes the rate (an epoch switch).
     *
     * @param k selects 1000, 2000 or 3000 per second
     */
    @Operation
    public void setRate(@Param(name = "k") int k) {
        limiter.setRate(1000.0 * k);
    }

    /** Small, so it runs in seconds: 2 threads x 3 operations, a couple of thousand interleavings. */
    @Test
    void modelChecking() {
        new ModelCheckingOptions()
                .iterations(8)
                .invocationsPerIteration(150)
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(1)
                .check(getClass());
    }
}
