package io.github.performancehelpers.loop;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A writer/reader phaser, after HdrHistogram's {@code WriterReaderPhaser} (written anew here): it
 * lets wait-free writers update a data structure while a reader swaps it out and waits until the
 * swapped-out copy is quiescent.
 *
 * <p>Protocol. A writer brackets each update with {@link #writerEnter()} and
 * {@link #writerExit(long)} (one atomic increment each; never waits). The reader, holding its own
 * lock so that only one reader flips at a time, first publishes the new active structure, then
 * calls {@link #flipPhase()}, which returns once every writer that entered before the flip has
 * exited. A writer that could have seen the old structure read it after entering, hence entered
 * before the flip, hence has finished when {@code flipPhase} returns.
 *
 * <p>State. {@code startEpoch} counts writer entries in the current phase; its sign is the phase
 * (non-negative: even, negative: odd, starting from {@code 0} and {@link Long#MIN_VALUE}). Each
 * phase has its own exit counter starting at the same origin; a phase is drained when its exit
 * counter equals the entry count captured at the flip.
 *
 * <p><b>Thread safety.</b> Any number of writers may enter and exit at once; only one reader at a
 * time may call {@link #flipPhase()}, which the caller ensures with its own lock.
 */
final class WriterReaderPhaser {

    private static final VarHandle START;
    private static final VarHandle EVEN_END;
    private static final VarHandle ODD_END;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            START = l.findVarHandle(WriterReaderPhaser.class, "startEpoch", long.class);
            EVEN_END = l.findVarHandle(WriterReaderPhaser.class, "evenEndEpoch", long.class);
            ODD_END = l.findVarHandle(WriterReaderPhaser.class, "oddEndEpoch", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Writer entries of the current phase; the sign is the phase. Updated atomically. */
    @SuppressWarnings("unused") // accessed through START
    private volatile long startEpoch = 0;
    /** Writer exits of even phases (entered with a non-negative epoch). */
    @SuppressWarnings("unused") // accessed through EVEN_END
    private volatile long evenEndEpoch = 0;
    /** Writer exits of odd phases (entered with a negative epoch). */
    @SuppressWarnings("unused") // accessed through ODD_END
    private volatile long oddEndEpoch = Long.MIN_VALUE;

    /**
     * Marks the start of a writer's critical section. Wait-free.
     *
     * @return the value to pass to {@link #writerExit(long)}
     */
    long writerEnter() {
        return (long) START.getAndAdd(this, 1L);
    }

    /**
     * Marks the end of a writer's critical section. Wait-free.
     *
     * @param enterValue the value {@link #writerEnter()} returned
     */
    void writerExit(long enterValue) {
        if (enterValue < 0) {
            ODD_END.getAndAdd(this, 1L);
        } else {
            EVEN_END.getAndAdd(this, 1L);
        }
    }

    /**
     * Starts a new phase and waits until every writer that entered in the previous one has
     * exited: spins briefly, then yields. Callers must serialize calls (one reader at a time).
     */
    void flipPhase() {
        boolean nextPhaseIsEven = startEpoch < 0;
        long origin = nextPhaseIsEven ? 0L : Long.MIN_VALUE;
        // The next phase's exit counter is reset before any writer can enter that phase.
        if (nextPhaseIsEven) {
            EVEN_END.setVolatile(this, origin);
        } else {
            ODD_END.setVolatile(this, origin);
        }
        long entriesAtFlip = (long) START.getAndSet(this, origin);
        VarHandle previousEnd = nextPhaseIsEven ? ODD_END : EVEN_END;
        for (int spins = 0; (long) previousEnd.getVolatile(this) != entriesAtFlip; spins++) {
            if (spins < 100) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }
}
