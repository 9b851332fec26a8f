/**
 * performance-helpers: admission control, queueing and latency feedback in one closed loop.
 *
 * <p>The module exports exactly one package, {@code io.github.performancehelpers}, which holds
 * the whole public API. {@code io.github.performancehelpers.internal} holds implementation
 * details shared between files and is not exported. The module has no dependency outside
 * the JDK.
 */
module io.github.performancehelpers {
    exports io.github.performancehelpers;
}
