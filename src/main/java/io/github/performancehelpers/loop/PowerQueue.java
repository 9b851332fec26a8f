package io.github.performancehelpers.loop;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Collection;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

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
 * <p><b>Thread safety.</b> Instances are safe for concurrent use by any number of threads: every
 * method may be called by any number of threads at once. No element is lost or delivered twice,
 * and elements offered by one thread are delivered in the order that thread offered them.
 * {@code offer}, {@code poll}, {@code peek} and {@code size} are linearizable (checked with
 * Lincheck). {@code offer} and {@code poll} are lock-free except for a brief spin while another
 * thread finishes writing or taking the slot in question; a consumer parks only in {@code take}
 * and the timed {@code poll}, and a producer touches a lock only when a consumer is parked.
 *
 * <p><b>Note:</b> this is not a {@link java.util.Queue}: it has no iterator, and
 * {@link #remove(Object)} is meant for cancellation, not as a fast path (see there).
 *
 * @param <E> the element type
 * @since 0.1.0
 */
public final class PowerQueue<E> {

    /*
     * Implementation notes.
     *
     * The ring is Dmitry Vyukov's bounded MPMC array queue: every slot i carries a sequence
     * number. A producer may fill position pos (slot pos % length) when the slot's sequence
     * equals pos; it claims pos by CAS on tail, stores the element, then publishes sequence
     * pos + 1. A consumer may take position pos when the sequence equals pos + 1; it claims pos by
     * CAS on head, takes the element, then frees the slot with sequence pos + length, which is
     * the next lap's pos. Any length works (the index is pos % length; a power of two uses a
     * mask). offer and poll are linearized at their CAS. The ring has length == capacity slots,
     * except for capacity 1: one slot cannot tell "filled at pos" (sequence pos + 1) from "free
     * for pos + 1", so capacity 1 gets two slots and offer also checks tail - head < capacity.
     *
     * Linearizability of the refusals: a slot that is not ready does not by itself mean "full" or
     * "empty", because the producer or consumer that claimed it may still be writing. offer
     * reports full only if tail - head >= capacity when head is re-read; poll reports empty only
     * if head == tail when tail is re-read. Otherwise the claimant is in flight (a few
     * instructions) and the caller spins until it finishes (as JCTools' MpmcArrayQueue.poll does).
     *
     * Blocking consumers. take() and poll(timeout) loop on awaitNotEmpty, the one wait: it
     * increments `waiters` (volatile, guarded by lock for writes), then peeks, then awaits
     * notEmpty; a producer reads `waiters` after its CAS on tail and signals only if it is
     * non-zero. Both sides write a volatile and then read the other's volatile, so either the
     * producer sees the waiter or the waiter's poll sees the producer's position; and because the
     * waiter holds `lock` from the increment until await() releases it, the producer's signal
     * (taken under `lock`) cannot fall between them. So offer touches the lock only when a
     * consumer is actually parked.
     *
     * remove(o) replaces the element in its slot with the REMOVED tombstone by CAS; consumers take
     * elements with getAndSet, so exactly one of the remover and the consumer wins an element.
     * Consumers skip tombstones (poll, peek) and free their slots. `removedPending` counts
     * tombstones not yet skipped, so size() excludes them; the slot itself is reclaimed only when
     * consumers reach it (documented as a Note on the class).
     */

    /**
     * The largest capacity: 2^20 (1,048,576) elements. The ring is allocated up front, about 12
     * bytes a slot (12 MB at this bound); a larger bound would let one option exhaust the heap
     * ({@code Integer.MAX_VALUE} would ask for 24 GB).
     */
    public static final int MAX_CAPACITY = 1 << 20;

    /** The tombstone left by remove(Object) in the slot of the removed element. */
    private static final Object REMOVED = new Object();

    private static final VarHandle SEQUENCE = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle ELEMENT = MethodHandles.arrayElementVarHandle(Object[].class);
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;
    private static final VarHandle DROPPED;
    private static final VarHandle REMOVED_PENDING;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            HEAD = lookup.findVarHandle(HeadIndex.class, "head", long.class);
            TAIL = lookup.findVarHandle(TailIndex.class, "tail", long.class);
            DROPPED = lookup.findVarHandle(PowerQueue.class, "dropped", long.class);
            REMOVED_PENDING = lookup.findVarHandle(PowerQueue.class, "removedPending", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int capacity;
    /**
     * The number of slots: {@code capacity}, except 2 for capacity 1 (with one slot, a filled
     * slot's sequence would equal the next producer's position; see {@link #offer}).
     */
    private final int length;
    /** {@code length - 1} if length is a power of two, else -1 (use {@code %}). */
    private final int mask;
    /** Per-slot sequence numbers; accessed only through {@link #SEQUENCE}. */
    private final long[] sequences;
    /** The elements (or {@link #REMOVED}); accessed only through {@link #ELEMENT}. */
    private final Object[] elements;
    /** head and tail, each on its own cache lines: producers and consumers hammer them. */
    private final Indexes indexes = new Indexes();

    /** Guards waiting; taken by a producer only when {@link #waiters} is non-zero. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    /**
     * Consumers inside take()/poll(timeout). Guarded by {@code lock} for writes; producers read it
     * without the lock (see the implementation notes).
     */
    private volatile int waiters;
    @SuppressWarnings("unused") // accessed through DROPPED
    private volatile long dropped;
    @SuppressWarnings("unused") // accessed through REMOVED_PENDING
    private volatile long removedPending;

    /**
     * Creates an empty queue.
     *
     * @param capacity the most elements the queue holds at once, in {@code [1, MAX_CAPACITY]}
     * @throws IllegalArgumentException if {@code capacity < 1} or {@code capacity > MAX_CAPACITY}
     */
    public PowerQueue(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
        }
        if (capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("capacity must be at most MAX_CAPACITY (" + MAX_CAPACITY + "): "
                    + capacity);
        }
        this.capacity = capacity;
        this.length = Math.max(2, capacity);
        this.mask = Integer.bitCount(length) == 1 ? length - 1 : -1;
        this.sequences = new long[length];
        this.elements = new Object[length];
        for (int i = 0; i < length; i++) {
            sequences[i] = i;
        }
    }

    private int index(long pos) {
        int m = mask;
        return m >= 0 ? (int) pos & m : (int) (pos % length);
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
        Objects.requireNonNull(e, "e");
        final Indexes ix = indexes;
        final long[] seqs = sequences;
        long pos = (long) TAIL.getVolatile(ix);
        int spins = 0;
        for (;;) {
            int i = index(pos);
            long diff = (long) SEQUENCE.getAcquire(seqs, i) - pos;
            if (diff == 0
                    && (length == capacity || pos - (long) HEAD.getVolatile(ix) < capacity)) {
                long witness = (long) TAIL.compareAndExchange(ix, pos, pos + 1);
                if (witness == pos) {
                    ELEMENT.set(elements, i, e);
                    SEQUENCE.setRelease(seqs, i, pos + 1);
                    if (waiters != 0) {
                        signalWaiter();
                    }
                    return true;
                }
                pos = witness;
            } else if (diff <= 0) {
                // The slot still holds the element from one lap ago, or its consumer is in flight
                // (or, for capacity 1, the other slot is full).
                if (pos - capacity >= (long) HEAD.getVolatile(ix)) {
                    DROPPED.getAndAdd(this, 1L);
                    return false;
                }
                spins = backOff(spins);
                pos = (long) TAIL.getVolatile(ix);
            } else {
                pos = (long) TAIL.getVolatile(ix);
            }
        }
    }

    /**
     * Waits a moment for a producer or consumer that has claimed a position but not yet
     * finished with its slot (a few instructions, unless its thread was descheduled: then yield).
     */
    private static int backOff(int spins) {
        if (spins < 64) {
            Thread.onSpinWait();
        } else {
            Thread.yield();
        }
        return spins + 1;
    }

    private void signalWaiter() {
        final ReentrantLock lock = this.lock;
        lock.lock();
        try {
            notEmpty.signal();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes and returns the head element. Never blocks.
     *
     * @return the head element, or {@code null} if the queue is empty
     */
    @SuppressWarnings("unchecked")
    public E poll() {
        final Indexes ix = indexes;
        final long[] seqs = sequences;
        long pos = (long) HEAD.getVolatile(ix);
        int spins = 0;
        for (;;) {
            int i = index(pos);
            long diff = (long) SEQUENCE.getAcquire(seqs, i) - (pos + 1);
            if (diff == 0) {
                long witness = (long) HEAD.compareAndExchange(ix, pos, pos + 1);
                if (witness == pos) {
                    Object e = ELEMENT.getAndSet(elements, i, (Object) null);
                    SEQUENCE.setRelease(seqs, i, pos + length);
                    if (e != REMOVED) {
                        return (E) e;
                    }
                    REMOVED_PENDING.getAndAdd(this, -1L);
                    pos = (long) HEAD.getVolatile(ix);
                } else {
                    pos = witness;
                }
            } else if (diff < 0) {
                // Not yet published: empty, or the producer that claimed pos is in flight.
                if (pos >= (long) TAIL.getVolatile(ix)) {
                    return null;
                }
                spins = backOff(spins);
                pos = (long) HEAD.getVolatile(ix);
            } else {
                pos = (long) HEAD.getVolatile(ix);
            }
        }
    }

    /**
     * Returns the head element without removing it. Never blocks.
     *
     * @return the head element, or {@code null} if the queue is empty
     */
    @SuppressWarnings("unchecked")
    public E peek() {
        final Indexes ix = indexes;
        final long[] seqs = sequences;
        int spins = 0;
        for (;;) {
            long pos = (long) HEAD.getVolatile(ix);
            int i = index(pos);
            long diff = (long) SEQUENCE.getAcquire(seqs, i) - (pos + 1);
            if (diff == 0) {
                Object e = ELEMENT.getVolatile(elements, i);
                if (e != null && (long) HEAD.getVolatile(ix) == pos) {
                    if (e != REMOVED) {
                        return (E) e;
                    }
                    skipTombstone(pos, i);
                }
            } else if (diff < 0) {
                if (pos >= (long) TAIL.getVolatile(ix)) {
                    return null;
                }
                spins = backOff(spins);
            }
        }
    }

    /** Consumes the tombstone at the head position pos (slot i), unless a consumer did first. */
    private void skipTombstone(long pos, int i) {
        if (HEAD.compareAndSet(indexes, pos, pos + 1)) {
            ELEMENT.setVolatile(elements, i, (Object) null);
            SEQUENCE.setRelease(sequences, i, pos + length);
            REMOVED_PENDING.getAndAdd(this, -1L);
        }
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
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        for (;;) {
            E e = poll();
            if (e != null) {
                return e;
            }
            awaitNotEmpty(); // another consumer may take what it saw: then wait again
        }
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
        Objects.requireNonNull(unit, "unit");
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        long nanos = unit.toNanos(timeout);
        for (;;) {
            E e = poll();
            if (e != null || nanos <= 0L) {
                return e;
            }
            nanos = awaitNotEmpty(true, nanos); // another consumer may take what it saw
        }
    }

    /**
     * Waits until the queue holds an element, without removing it: for a consumer that must
     * prepare (acquire a slot, say) before it takes, and for {@link #take()}. Another consumer may
     * take the element before the caller does, so a following {@link #poll()} can still return
     * {@code null}.
     *
     * @throws InterruptedException if the current thread is interrupted before or while waiting
     */
    void awaitNotEmpty() throws InterruptedException {
        awaitNotEmpty(false, 0L);
    }

    /**
     * The one wait of every blocking consumer: until the queue holds an element or, if
     * {@code timed}, {@code nanos} have passed.
     *
     * @return the nanoseconds left of {@code nanos} ({@code <= 0} if the time ran out while the
     *     queue was empty); unspecified if not {@code timed}
     */
    private long awaitNotEmpty(boolean timed, long nanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (peek() != null) {
            return nanos;
        }
        final ReentrantLock lock = this.lock;
        lock.lockInterruptibly();
        try {
            waiters++; // volatile write (under lock), then peek's volatile reads: see notes
            try {
                while (peek() == null) {
                    if (!timed) {
                        notEmpty.await();
                    } else if (nanos <= 0L) {
                        return nanos;
                    } else {
                        nanos = notEmpty.awaitNanos(nanos);
                    }
                }
                passSignalOn(); // this waiter consumed nothing: another may take the element
                return nanos;
            } catch (InterruptedException ie) {
                passSignalOn();
                throw ie;
            } finally {
                waiters--;
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * An interrupted waiter may have absorbed a producer's signal; hand it to another waiter.
     * Called under {@link #lock}.
     */
    private void passSignalOn() {
        if (waiters > 1 && !isEmpty()) {
            notEmpty.signal();
        }
    }

    /**
     * Removes one instance of {@code o} ({@code o.equals(element)}) if present: the form used when
     * a queued task is cancelled. Slower than {@link #poll()}: it scans the queue from the head.
     *
     * <p><b>Note:</b> the removed element stops counting in {@link #size()} at once, but its slot
     * is reclaimed only when consumers reach it, so until then it still counts against
     * {@link #capacity()} for {@link #offer(Object)}.
     *
     * @param o the element to remove; {@code null} is never present
     * @return {@code true} if an element was removed
     */
    public boolean remove(Object o) {
        if (o == null) {
            return false;
        }
        final Indexes ix = indexes;
        final long[] seqs = sequences;
        long end = (long) TAIL.getVolatile(ix);
        for (long pos = (long) HEAD.getVolatile(ix); pos < end; pos++) {
            int i = index(pos);
            if ((long) SEQUENCE.getAcquire(seqs, i) != pos + 1) {
                continue; // already consumed, or its producer is still writing it
            }
            Object e = ELEMENT.getVolatile(elements, i);
            if (e == null || e == REMOVED || !o.equals(e)) {
                continue;
            }
            if (ELEMENT.compareAndSet(elements, i, e, REMOVED)) {
                REMOVED_PENDING.getAndAdd(this, 1L);
                return true;
            }
        }
        return false;
    }

    /**
     * Returns the number of elements in the queue (its depth).
     *
     * @return the number of elements, in {@code [0, capacity()]}
     */
    public int size() {
        final Indexes ix = indexes;
        for (;;) {
            long head = (long) HEAD.getVolatile(ix);
            long tail = (long) TAIL.getVolatile(ix);
            if ((long) HEAD.getVolatile(ix) == head) {
                long n = tail - head - (long) REMOVED_PENDING.getVolatile(this);
                return (int) Math.max(0L, Math.min(capacity, n));
            }
        }
    }

    /**
     * Returns the capacity given at construction.
     *
     * @return the most elements the queue holds at once
     */
    public int capacity() {
        return capacity;
    }

    /**
     * Returns how many offers have been refused because the queue was full, since construction.
     * {@link #clear()} does not reset it.
     *
     * <p>The count is exact once each refusing {@code offer} has returned; it is incremented just
     * after the refusal is decided, so unlike {@link #size()} it is not linearizable with a
     * concurrent {@code offer}.
     *
     * @return the number of refused offers
     */
    public long dropped() {
        return (long) DROPPED.getVolatile(this);
    }

    /**
     * How many offers have succeeded since construction: the tail position, which every
     * successful offer advances by exactly one and nothing else moves. Exact once each offer has
     * returned. Package-private: the flow controller counts its submissions with it instead of a
     * counter of its own, which every producer would write.
     */
    long offered() {
        return (long) TAIL.getVolatile(indexes);
    }

    /**
     * Returns whether the queue holds no element.
     *
     * @return {@code true} if {@link #size()} is 0
     */
    public boolean isEmpty() {
        return size() == 0;
    }

    /**
     * Removes the elements present when the call starts (elements offered concurrently may
     * remain). Does not reset {@link #dropped()}.
     */
    public void clear() {
        long end = (long) TAIL.getVolatile(indexes);
        while ((long) HEAD.getVolatile(indexes) < end && poll() != null) {
            // discard
        }
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
        Objects.requireNonNull(c, "c");
        long end = (long) TAIL.getVolatile(indexes);
        int n = 0;
        E e;
        while ((long) HEAD.getVolatile(indexes) < end && (e = poll()) != null) {
            c.add(e);
            n++;
        }
        return n;
    }

    /**
     * Returns a description of the queue's counters, for logs.
     *
     * @return the size, capacity and dropped count
     */
    @Override
    public String toString() {
        return "PowerQueue[size=" + size() + ", capacity=" + capacity + ", dropped=" + dropped()
                + "]";
    }

    // head and tail on separate cache lines (128 bytes apart: adjacent-line prefetch), and away
    // from neighbouring objects. Superclass fields are laid out before subclass fields.

    @SuppressWarnings("unused")
    private abstract static class PadBeforeHead {
        long p00, p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15;
    }

    private abstract static class HeadIndex extends PadBeforeHead {
        volatile long head;
    }

    @SuppressWarnings("unused")
    private abstract static class PadBeforeTail extends HeadIndex {
        long p20, p21, p22, p23, p24, p25, p26, p27, p28, p29, p30, p31, p32, p33, p34, p35;
    }

    private abstract static class TailIndex extends PadBeforeTail {
        volatile long tail;
    }

    @SuppressWarnings("unused")
    private static final class Indexes extends TailIndex {
        long p40, p41, p42, p43, p44, p45, p46, p47, p48, p49, p50, p51, p52, p53, p54, p55;
    }
}
