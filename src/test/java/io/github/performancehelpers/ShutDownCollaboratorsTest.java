package io.github.performancehelpers;

import static io.github.performancehelpers.PowerFlowExecutorTest.LONG_DELAY_MS;
import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A delegate or a scheduler that is already shut down is refused by name at {@code build()}; a
 * delegate its owner shuts down later makes {@code submit} refuse, never return a cancelled
 * {@code Future}.
 */
class ShutDownCollaboratorsTest {

    static ThreadPoolExecutor pool() {
        return new ThreadPoolExecutor(2, 2, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
    }

    /** A ThreadPoolExecutor delegate that is shut down is refused at build(), naming the option. */
    @Test
    void aShutDownPoolDelegateIsRefusedAtBuild() {
        ThreadPoolExecutor p = pool();
        p.shutdown();
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                () -> PowerFlowExecutor.builder().delegate(p).build());
        assertTrue(x.getMessage().startsWith("delegate must not be shut down: "), x.getMessage());
    }

    /** Any other delegate that is shut down is refused at build() too. */
    @Test
    void aShutDownPlainDelegateIsRefusedAtBuild() {
        ExecutorService other = Executors.newSingleThreadExecutor();
        other.shutdown();
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                () -> PowerFlowExecutor.builder().delegate(other).ownsDelegate(true).build());
        assertTrue(x.getMessage().startsWith("delegate must not be shut down: "), x.getMessage());
    }

    /** A delegate its owner shuts down after build() makes every submit form refuse, counted. */
    @Test
    void aDelegateShutDownLaterMakesSubmitRefuse() throws Exception {
        for (ExecutorService d : new ExecutorService[] {pool(), Executors.newSingleThreadExecutor()}) {
            PowerFlowExecutor e = PowerFlowExecutor.builder().delegate(d).build();
            assertEquals("ok", e.submit(() -> "ok").get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            d.shutdown();
            assertTrue(d.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            RejectedExecutionException x = assertThrows(RejectedExecutionException.class, () -> e.submit(() -> "no"));
            assertTrue(x.getMessage().contains("delegate is shut down"), x.getMessage());
            assertThrows(RejectedExecutionException.class, () -> e.execute(() -> { }));
            assertEquals(2, e.stats().rejected());
            assertEquals(0, e.stats().cancelled());
            e.shutdown();
            assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        }
    }

    /** A scheduler that is shut down is refused at build(), naming the option, not the JDK's raw RejectedExecutionException. */
    @Test
    void aShutDownSchedulerIsRefusedAtBuild() {
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor();
        s.shutdown();
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                () -> PowerFlowExecutor.builder().scheduler(s).build());
        assertTrue(x.getMessage().startsWith("scheduler must not be shut down: "), x.getMessage());
    }
}
