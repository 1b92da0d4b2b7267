package dev.transferengine.nativeaccess;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.OptionalInt;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pins the calling thread to one CPU with {@code sched_setaffinity(0, ...)} (Linux). Pinning is best effort: where
 * it is not permitted (containers, missing native access) the caller logs the returned reason and runs unpinned.
 */
public final class CpuAffinity {

    private static final Logger LOG = LoggerFactory.getLogger(CpuAffinity.class);
    private static final int CPU_SET_BYTES = 128; // glibc cpu_set_t: 1024 bits
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final VarHandle ERRNO_HANDLE = Linker.Option.captureStateLayout()
            .varHandle(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));
    private static final @Nullable MethodHandle SCHED_SETAFFINITY = lookup();

    private CpuAffinity() {}

    @SuppressWarnings("restricted")
    private static @Nullable MethodHandle lookup() {
        if (!CpuAffinity.class.getModule().isNativeAccessEnabled()) {
            return null;
        }
        final Linker linker = Linker.nativeLinker();
        return linker.defaultLookup()
                .find("sched_setaffinity")
                .map(symbol -> linker.downcallHandle(
                        symbol,
                        FunctionDescriptor.of(
                                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS),
                        ERRNO))
                .orElse(null);
    }

    /**
     * Pins the calling thread to {@code cpu} when one is given; where that is not possible, logs why and lets the
     * thread run unpinned.
     *
     * @param thread what the thread is, for the log line (e.g. {@code "worker of group 0"})
     */
    public static void pinCurrentThread(final OptionalInt cpu, final String thread) {
        if (cpu.isPresent()) {
            final String failure = pinCurrentThread(cpu.getAsInt());
            if (failure != null) {
                LOG.warn("{} runs unpinned: {}", thread, failure);
            }
        }
    }

    /**
     * Pins the calling thread to {@code cpu}.
     *
     * @return null on success, otherwise why the thread stays unpinned
     */
    public static @Nullable String pinCurrentThread(final int cpu) {
        if (cpu < 0 || cpu >= CPU_SET_BYTES * 8) {
            return "CPU " + cpu + " is outside 0.." + (CPU_SET_BYTES * 8 - 1);
        }
        if (SCHED_SETAFFINITY == null) {
            return "sched_setaffinity unavailable (needs Linux and --enable-native-access=ALL-UNNAMED)";
        }
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment set = arena.allocate(CPU_SET_BYTES, 8);
            set.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
            final MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
            final int rc = (int) SCHED_SETAFFINITY.invokeExact(state, 0, (long) CPU_SET_BYTES, set);
            if (rc != 0) {
                final int errno = (int) ERRNO_HANDLE.get(state, 0L);
                return "sched_setaffinity(cpu " + cpu + ") failed with errno " + errno;
            }
            return null;
        } catch (final Throwable t) {
            return "sched_setaffinity(cpu " + cpu + ") threw " + t;
        }
    }
}
