package io.github.performancehelpers.backpressure;

import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import io.github.performancehelpers.QueueFullException;

/**
 * The blocking iterator of {@link PowerBackpressure#iterator()}: each {@code hasNext()} acquires
 * the next permit (waiting as {@link PowerBackpressure#acquire()} does) and holds it until
 * {@code next()} hands it over; iteration ends when the controller is closed or the wait is
 * interrupted.
 *
 * <p><b>Thread safety.</b> Not safe for concurrent use: one thread at a time iterates.
 */
final class PermitIterator implements Iterator<Permit> {
    private final PowerBackpressure owner;
    private Permit next;

    PermitIterator(PowerBackpressure owner) {
        this.owner = owner;
    }

    @Override
    public boolean hasNext() {
        while (next == null) {
            if (owner.isClosed()) {
                return false;
            }
            CompletableFuture<Permit> f = owner.acquire();
            try {
                next = f.get();
            } catch (ExecutionException e) {
                if (owner.isClosed()) {
                    return false;
                }
                if (e.getCause() instanceof QueueFullException q) {
                    throw q;
                }
                // reset while waiting: queue again
            } catch (InterruptedException e) {
                Permit p = PowerBackpressure.abandon(f);
                if (p != null) {
                    p.release();
                }
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    @Override
    public Permit next() {
        if (!hasNext()) {
            throw new NoSuchElementException("PowerBackpressure is closed");
        }
        Permit p = next;
        next = null;
        return p;
    }
}
