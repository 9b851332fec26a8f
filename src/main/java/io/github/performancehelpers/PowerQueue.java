package io.github.performancehelpers;

import java.util.Collection;
import java.util.concurrent.TimeUnit;

/**
 * A bounded FIFO queue for many producers and many consumers, which refuses (and counts) what
 * does not fit instead of blocking the producer.
 *
 * <p>{@link #offer(Object)} never blocks: when the queue holds {@link #capacity()} elements it
 * returns {@code false} and increments {@link #dropped()}, the number the flow controller tells
 * you to alert on. Consumers either {@link #poll()} (never blocks) or wait for the next element
 * with {@link #take()} or {@link #poll(long, TimeUnit)}, which block without pinning a virtual
 * thread's carrier and respond to interruption.
 *
 * <p>Thread-safety: every method may be called by any number of threads at once. No element is
 * lost or delivered twice, and elements offered by one thread are delivered in the order that
 * thread offered them. {@code offer}, {@code poll}, {@code peek} and {@code size} are
 * linearizable.
 *
 * <p><b>Note:</b> this is not a {@link java.util.Queue}: it has no iterator, and
 * {@link #remove(Object)} is meant for cancellation, not as a fast path (see there).
 *
 * @param <E> the element type
 */
public final class PowerQueue<E> {

    /**
     * Creates an empty queue.
     *
     * @param capacity the most elements the queue holds at once, {@code >= 1}
     * @throws IllegalArgumentException if {@code capacity < 1}
     */
    public PowerQueue(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
        }
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Adds an element at the tail if there is room. Never blocks.
     *
     * @param e the element
     * @return {@code true} if added; {@code false} if the queue was full, in which case
     *         {@link #dropped()} is incremented and {@code e} is not retained
     * @throws NullPointerException if {@code e} is null
     */
    public boolean offer(E e) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Removes and returns the head element. Never blocks.
     *
     * @return the head element, or {@code null} if the queue is empty
     */
    public E poll() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the head element without removing it. Never blocks.
     *
     * @return the head element, or {@code null} if the queue is empty
     */
    public E peek() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Removes and returns the head element, waiting for one if the queue is empty. Suitable for a
     * virtual thread: it parks through {@link java.util.concurrent.locks}, never through a
     * monitor.
     *
     * @return the head element
     * @throws InterruptedException if the current thread is interrupted before or while
     *                              waiting; no element is removed in that case
     */
    public E take() throws InterruptedException {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Removes and returns the head element, waiting up to the given time for one if the queue is
     * empty.
     *
     * @param timeout how long to wait at most; {@code <= 0} means do not wait
     * @param unit    the unit of {@code timeout}
     * @return the head element, or {@code null} if none arrived within the timeout
     * @throws InterruptedException if the current thread is interrupted before or while
     *                              waiting; no element is removed in that case
     * @throws NullPointerException if {@code unit} is null
     */
    public E poll(long timeout, TimeUnit unit) throws InterruptedException {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Removes one instance of {@code o} ({@code o.equals(element)}) if present: the form used when
     * a queued task is cancelled. Slower than {@link #poll()}: it scans the queue.
     *
     * @param o the element to remove; {@code null} is never present
     * @return {@code true} if an element was removed
     */
    public boolean remove(Object o) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the number of elements in the queue (its depth).
     *
     * @return the number of elements, in {@code [0, capacity()]}
     */
    public int size() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the capacity given at construction.
     *
     * @return the most elements the queue holds at once
     */
    public int capacity() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns how many offers have been refused because the queue was full, since construction.
     * {@link #clear()} does not reset it.
     *
     * @return the number of refused offers
     */
    public long dropped() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns whether the queue holds no element.
     *
     * @return {@code true} if {@link #size()} is 0
     */
    public boolean isEmpty() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Removes the elements present when the call starts (elements offered concurrently may
     * remain). Does not reset {@link #dropped()}.
     */
    public void clear() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Removes the elements present when the call starts, in FIFO order, and adds them to
     * {@code c}.
     *
     * <p>As with {@link java.util.concurrent.BlockingQueue#drainTo(Collection)}, if
     * {@code c.add} throws, the element it was given is in neither collection, and the exception
     * propagates.
     *
     * @param c the collection to add the elements to
     * @return the number of elements transferred
     * @throws NullPointerException if {@code c} is null
     */
    public int drainTo(Collection<? super E> c) {
        throw new UnsupportedOperationException("not yet implemented");
    }
}
