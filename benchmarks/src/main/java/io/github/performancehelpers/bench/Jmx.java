package io.github.performancehelpers.bench;

import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;

/**
 * The few {@code java.lang.management} read-outs the bench commands need, by reflection: the
 * test sources compile inside the library's module, which does not read {@code java.management}
 * (and must not, for the library's sake); the commands themselves run on the class path, where
 * the platform MXBeans are reachable.
 */
final class Jmx {

    private static final Object THREADS;
    private static final Method THREAD_CPU;
    private static final Object OS;
    private static final Method PROCESS_CPU;
    private static final Method LOAD_AVERAGE;

    static {
        try {
            Class<?> factory = Class.forName("java.lang.management.ManagementFactory");
            THREADS = factory.getMethod("getThreadMXBean").invoke(null);
            THREAD_CPU = Class.forName("java.lang.management.ThreadMXBean").getMethod("getThreadCpuTime", long.class);
            OS = factory.getMethod("getOperatingSystemMXBean").invoke(null);
            LOAD_AVERAGE = Class.forName("java.lang.management.OperatingSystemMXBean").getMethod("getSystemLoadAverage");
            PROCESS_CPU = Class.forName("com.sun.management.OperatingSystemMXBean").getMethod("getProcessCpuTime");
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private Jmx() {
    }

    private static Object call(Method m, Object target, Object... args) {
        try {
            return m.invoke(target, args);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(m.getName(), e);
        }
    }

    /** A platform thread's CPU time in nanoseconds, or -1 if it has ended. */
    static long threadCpuNanos(long threadId) {
        return (Long) call(THREAD_CPU, THREADS, threadId);
    }

    /** The process's CPU time in nanoseconds. */
    static long processCpuNanos() {
        return (Long) call(PROCESS_CPU, OS);
    }

    /** The one-minute load average. */
    static double loadAverage() {
        return (Double) call(LOAD_AVERAGE, OS);
    }

    /** CPU time of every live virtual-thread carrier ({@code ForkJoinPool-N-worker-M}), by thread id. */
    static Map<Long, Long> carrierCpu() {
        Map<Long, Long> cpu = new HashMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String n = t.getName();
            if (!t.isVirtual() && n.startsWith("ForkJoinPool-") && n.contains("-worker-")) {
                long c = threadCpuNanos(t.threadId());
                if (c >= 0) {
                    cpu.put(t.threadId(), c);
                }
            }
        }
        return cpu;
    }

    /** The JDK and machine line for the tables. */
    static String machineLine() {
        return String.format(java.util.Locale.ROOT, "java %s (%s), %d CPUs, load average %.2f",
                System.getProperty("java.version"), System.getProperty("java.vm.name"),
                Runtime.getRuntime().availableProcessors(), loadAverage());
    }
}
