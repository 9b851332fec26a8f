package io.github.performancehelpers.bench;

import static org.junit.jupiter.api.Assertions.*;

import java.util.function.BooleanSupplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Each limiter of {@link GcraBenchmark} does what its regime's name says: under {@code admit} at
 * least 99 % of calls are admitted (the CAS path is what is timed), under {@code refuse} at most
 * 1 %. Bucket4j's default millisecond clock failed this (it admitted 2.8-5.4 % at 10^9 per second,
 * a burst's worth a millisecond), so its "admit" figures timed refusals. No timing is asserted.
 */
class GcraBenchmarkRegimeTest {

    private static final int CALLS = 200_000;

    private static double admitted(BooleanSupplier call) {
        int yes = 0;
        for (int i = 0; i < CALLS; i++) {
            if (call.getAsBoolean()) {
                yes++;
            }
        }
        return yes / (double) CALLS;
    }

    @ParameterizedTest
    @ValueSource(strings = {"admit", "refuse"})
    void everyLimiterAdmitsOrRefusesAsItsRegimeSays(String regime) {
        GcraBenchmark b = new GcraBenchmark();
        b.regime = regime;
        b.setup();
        boolean admit = regime.equals("admit");
        String[] names = {"gcra", "bucket4j", "guava", "resilience4j"};
        BooleanSupplier[] calls = {b::gcra1, b::bucket4j1, b::guava1, b::resilience4j1};
        for (int i = 0; i < names.length; i++) {
            double share = admitted(calls[i]);
            if (admit) {
                assertTrue(share >= 0.99, names[i] + " admitted only " + share + " of its calls under admit");
            } else {
                assertTrue(share <= 0.01, names[i] + " admitted " + share + " of its calls under refuse");
            }
        }
    }
}
