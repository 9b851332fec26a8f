package io.github.performancehelpers.limit;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A composite rate limiter: admits a batch only if every component admits it, and then charges
 * every component; a refused batch charges none.
 *
 * <pre>{@code
 * // A global 200/s ceiling plus a stricter 10/s per-tenant ceiling.
 * PowerRateLimit limiter = PowerRateLimit.of(
 *         PowerGCRA.builder().rate(200).burst(50).build(),
 *         PowerGCRA.builder().rate(10).burst(9).build());
 * if (limiter.tryConsume()) doWork();
 * }</pre>
 *
 * <h2>All or none</h2>
 * {@link #tryConsume(long)} holds the composite's lock, checks {@link RateLimiter#available()} of
 * every component, refuses without charging anything if one is below the ask, and otherwise calls
 * {@code tryConsume(n)} on each. The guarantee, precisely:
 * <ul>
 *   <li>If every component is used only through this composite, a component that passed the
 *       pre-check still admits when charged (time only adds capacity), so a refused batch charges
 *       no component at all, at any concurrency.</li>
 *   <li>If a component is shared (also consumed directly or by another composite), it can refuse
 *       after the pre-check. The components already charged are then refunded: {@link PowerGCRA}
 *       and {@code PowerRateLimit} components support an exact refund (the charge is undone as if
 *       it never happened, except that a concurrent caller of that component may have been
 *       refused meanwhile). Components are charged refundable ones first, so the batch is still
 *       all-or-none as long as at most one component is both shared and of another type.</li>
 * </ul>
 * {@code available()} relies on each component's {@code available()} agreeing exactly with its
 * {@code tryConsume(n)}; {@link PowerGCRA} guarantees that, including {@code burst + 1} at an idle
 * instant.
 *
 * <p><b>Thread safety.</b> Instances are safe for concurrent use by any number of threads.
 * Concurrent {@code tryConsume} calls on one composite are serialized by a {@link ReentrantLock}
 * (never {@code synchronized}, so virtual threads do not pin); the components themselves stay
 * lock-free for their other users.
 *
 * @since 0.1.0
 */
public final class PowerRateLimit implements RateLimiter {

    private final List<RateLimiter> components;
    /** The components in charging order: refundable ones first, then the others, each stable. */
    private final RateLimiter[] chargeOrder;
    private final ReentrantLock lock = new ReentrantLock();

    private PowerRateLimit(List<RateLimiter> components) {
        this.components = components;
        List<RateLimiter> order = new ArrayList<>(components.size());
        for (RateLimiter c : components) {
            if (refundable(c)) {
                order.add(c);
            }
        }
        for (RateLimiter c : components) {
            if (!refundable(c)) {
                order.add(c);
            }
        }
        this.chargeOrder = order.toArray(new RateLimiter[0]);
    }

    /**
     * Creates a composite of the given components, in order.
     *
     * @param components the limiters; at least one
     * @return the composite
     * @throws NullPointerException     if the array or any component is null
     * @throws IllegalArgumentException if there is no component
     */
    public static PowerRateLimit of(RateLimiter... components) {
        Objects.requireNonNull(components, "components");
        return of(List.of(components));
    }

    /**
     * Creates a composite of the given components, in order. The list is copied.
     *
     * @param components the limiters; at least one
     * @return the composite
     * @throws NullPointerException     if the list or any component is null
     * @throws IllegalArgumentException if there is no component
     */
    public static PowerRateLimit of(List<? extends RateLimiter> components) {
        Objects.requireNonNull(components, "components");
        List<RateLimiter> copy = new ArrayList<>(components.size());
        for (int i = 0; i < components.size(); i++) {
            copy.add(Objects.requireNonNull(components.get(i), "components[" + i + "]"));
        }
        if (copy.isEmpty()) {
            throw new IllegalArgumentException("components must not be empty: []");
        }
        return new PowerRateLimit(List.copyOf(copy));
    }

    /**
     * Admits a batch of {@code n} if every component admits it, consuming from all of them, or
     * from none (see the class documentation for the exact guarantee with shared components).
     *
     * @param n the number of operations; {@code n <= 0} is a no-op returning {@code true}
     * @return {@code true} if every component admitted the batch
     */
    @Override
    public boolean tryConsume(long n) {
        if (n <= 0) {
            return true;
        }
        lock.lock();
        try {
            for (RateLimiter c : chargeOrder) {
                if (c.available() < n) {
                    return false;
                }
            }
            for (int i = 0; i < chargeOrder.length; i++) {
                if (!chargeOrder[i].tryConsume(n)) {
                    for (int j = i - 1; j >= 0; j--) {
                        refund(chargeOrder[j], n);
                    }
                    return false;
                }
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns the minimum of the components' {@link RateLimiter#available()}.
     *
     * @return the operations every component could admit now
     */
    @Override
    public long available() {
        long min = Long.MAX_VALUE;
        for (RateLimiter c : components) {
            min = Math.min(min, c.available());
        }
        return min;
    }

    /**
     * Returns the components, in order.
     *
     * @return an unmodifiable list
     */
    public List<RateLimiter> components() {
        return components;
    }

    /**
     * Gives back a batch of {@code n} charged to every component (used when this composite is
     * itself a component of another composite whose later component refused).
     */
    void refund(long n) {
        for (RateLimiter c : chargeOrder) {
            refund(c, n);
        }
    }

    private static boolean refundable(RateLimiter c) {
        return c instanceof PowerGCRA || c instanceof PowerRateLimit;
    }

    private static void refund(RateLimiter c, long n) {
        if (c instanceof PowerGCRA g) {
            g.refund(n);
        } else if (c instanceof PowerRateLimit p) {
            p.refund(n);
        }
    }

    /**
     * Returns a short description listing the components.
     *
     * @return for example {@code PowerRateLimit[PowerGCRA[...], PowerGCRA[...]]}
     */
    @Override
    public String toString() {
        return "PowerRateLimit" + components;
    }
}
