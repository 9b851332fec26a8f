/**
 * performance-helpers: admission control, queueing and latency feedback in one closed loop.
 *
 * <p>The module exports five packages, the whole public API, one per concern:
 * {@code io.github.performancehelpers} (the executor, its factories and options),
 * {@code .limit} (rate limiters), {@code .loop} (the loop's parts, its control laws and
 * {@code PowerFlowController}), {@code .backpressure} and {@code .metrics}.
 * {@code io.github.performancehelpers.internal} holds implementation details shared between the
 * packages and is not exported. The module has no dependency outside the JDK.
 */
module io.github.performancehelpers {
    exports io.github.performancehelpers;
    exports io.github.performancehelpers.limit;
    exports io.github.performancehelpers.loop;
    exports io.github.performancehelpers.backpressure;
    exports io.github.performancehelpers.metrics;

    // Plain requires, not "requires static": the JFR events are committed by every observation
    // and the MXBeans are registered by a builder option, so both modules are needed at run time
    // whenever those paths run. With "requires static" a modular application would not resolve
    // them unless it added --add-modules itself, and jmx(true) or the first observation would
    // fail with NoClassDefFoundError. Both ship in every standard JDK runtime (java.management
    // is Java SE; jdk.jfr is in every OpenJDK build), and jlink adds them to an image from this
    // line. Resolving them starts nothing: no MBean server and no recording until used.
    requires java.management;
    requires jdk.jfr;
}
