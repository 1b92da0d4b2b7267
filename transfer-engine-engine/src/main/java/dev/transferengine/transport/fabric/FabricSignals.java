package dev.transferengine.transport.fabric;

import dev.transferengine.nativeaccess.NativeCallException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.function.Supplier;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Keeps the JVM's own SIGSEGV and SIGBUS handlers in place across the libfabric call that opens an endpoint.
 *
 * <p>libfabric's shm provider installs handlers for SIGSEGV, SIGBUS, SIGTERM and SIGINT when the process opens its
 * first shm endpoint ({@code smr_init_sig_handlers}): on the signal they unlink the process's shm regions from
 * {@code /dev/shm}, then pass the signal to the handler they replaced. The JVM raises SIGSEGV on purpose and
 * routinely: a compiled loop stopped for a safepoint traps through it, e.g. a worker spinning with
 * {@code IdleStrategyKind.SPIN}. The first such trap unlinked the endpoint's region, so no other process could map
 * it any more, and a connection request between the two processes was never answered: every operation between
 * them waited out its timeout (issue 21). SIGTERM and SIGINT keep shm's handlers, which clean up and then run the
 * JVM's shutdown. A JVM that really crashes now leaves its shm region files behind, as a killed one does.
 */
@SuppressWarnings("restricted") // linked once, below; fabric needs native access anyway
final class FabricSignals {

    /** Linux signal numbers on x86_64 and aarch64. */
    private static final int SIGBUS = 7;

    private static final int SIGSEGV = 11;
    /** glibc's struct sigaction takes 152 bytes on x86_64 and aarch64; the rest is room to spare. */
    private static final long SIGACTION_BYTES = 256;

    private static final MethodHandle SIGACTION = Linker.nativeLinker()
            .downcallHandle(
                    Linker.nativeLinker().defaultLookup().find("sigaction").orElseThrow(),
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));

    private FabricSignals() {}

    /**
     * Runs {@code open} and then puts back the SIGSEGV and SIGBUS handlers that were in place before it. One call at
     * a time in the process, so that no call saves the handlers another one is about to replace.
     */
    static synchronized <T> T keepingJvmHandlers(final Supplier<T> open) {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment segv = arena.allocate(SIGACTION_BYTES, 8);
            final MemorySegment bus = arena.allocate(SIGACTION_BYTES, 8);
            sigaction(SIGSEGV, MemorySegment.NULL, segv);
            sigaction(SIGBUS, MemorySegment.NULL, bus);
            try {
                return open.get();
            } finally {
                sigaction(SIGSEGV, segv, MemorySegment.NULL);
                sigaction(SIGBUS, bus, MemorySegment.NULL);
            }
        }
    }

    private static void sigaction(final int signal, final MemorySegment action, final MemorySegment old) {
        final int rc;
        try {
            rc = (int) SIGACTION.invokeExact(signal, action, old);
        } catch (final Throwable t) {
            throw new IllegalStateException("sigaction(" + signal + ") threw " + t, t);
        }
        if (rc != 0) {
            throw new NativeCallException("sigaction", rc, "signal " + signal, 0);
        }
    }
}
