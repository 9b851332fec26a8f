package io.github.performancehelpers.loop;

import java.util.ArrayDeque;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck: {@link PowerQueue}'s offer, poll, peek and size are linearizable against a plain
 * bounded FIFO. Capacity 2 so that concurrent scenarios reach both "full" and "empty" and wrap
 * the ring. ({@code dropped()} is deliberately not an operation here: it is incremented just after
 * the refusal, so it is exact once the refusing offer has returned but not linearizable with it;
 * the model checker showed that, and the class documentation says so.)
 */
@Param(name = "element", gen = IntGen.class, conf = "1:4")
@Tag("lincheck")
public class PowerQueueLincheckTest {

    private final PowerQueue<Integer> queue = new PowerQueue<>(2);

    /**
     * Offers an element.
     *
     * @param e the element
     * @return whether it was accepted
     */
    @Operation
    public boolean offer(@Param(name = "element") int e) {
        return queue.offer(e);
    }

    /**
     * Polls.
     *
     * @return the head or null
     */
    @Operation
    public Integer poll() {
        return queue.poll();
    }

    /**
     * Peeks.
     *
     * @return the head or null
     */
    @Operation
    public Integer peek() {
        return queue.peek();
    }

    /**
     * The depth.
     *
     * @return the size
     */
    @Operation
    public int size() {
        return queue.size();
    }

    /** Every interleaving the model checker explores of small scenarios is linearizable. */
    @Test
    void modelCheckingFindsNoNonLinearizableInterleaving() {
        new ModelCheckingOptions()
                .iterations(15)
                .invocationsPerIteration(200)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class)
                .check(PowerQueueLincheckTest.class);
    }

    /** Real concurrent runs of small scenarios are linearizable. */
    @Test
    void stressFindsNoNonLinearizableRun() {
        new StressOptions()
                .iterations(15)
                .invocationsPerIteration(200)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class)
                .check(PowerQueueLincheckTest.class);
    }

    /** The sequential specification: a bounded FIFO of capacity 2. */
    public static final class Spec {
        private final ArrayDeque<Integer> deque = new ArrayDeque<>();

        /**
         * Offers an element.
         *
         * @param e the element
         * @return whether it was accepted
         */
        public boolean offer(int e) {
            return deque.size() < 2 && deque.offer(e);
        }

        /**
         * Polls.
         *
         * @return the head or null
         */
        public Integer poll() {
            return deque.poll();
        }

        /**
         * Peeks.
         *
         * @return the head or null
         */
        public Integer peek() {
            return deque.peek();
        }

        /**
         * The depth.
         *
         * @return the size
         */
        public int size() {
            return deque.size();
        }
    }
}
