package dev.transferengine.nativeaccess;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * Captures {@code errno} around native calls and describes it. Link a control call with {@link #CAPTURE} and pass
 * it a segment from {@link #allocate(Arena)} as its first argument; read the value with {@link #read}.
 */
public final class Errno {

    /** The linker option that makes a downcall save errno into its leading capture-state segment. */
    public static final Linker.Option CAPTURE = Linker.Option.captureCallState("errno");

    private static final StructLayout STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = STATE.varHandle(StructLayout.PathElement.groupElement("errno"));

    @SuppressWarnings("restricted") // linked once; the caller checked native access
    private static final MethodHandle STRERROR = Linker.nativeLinker()
            .downcallHandle(
                    Linker.nativeLinker().defaultLookup().findOrThrow("strerror"),
                    FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));

    private Errno() {}

    /** A capture-state segment; one per calling thread or per call site that is not shared between threads. */
    public static MemorySegment allocate(final Arena arena) {
        return arena.allocate(STATE);
    }

    /** The errno saved by the last call that used {@code state}. */
    public static int read(final MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }

    /** The C library's text for {@code errno}. Allocates. */
    @SuppressWarnings("restricted")
    public static String describe(final int errno) {
        try {
            final MemorySegment text = (MemorySegment) STRERROR.invokeExact(errno);
            return text.equals(MemorySegment.NULL)
                    ? "errno " + errno
                    : text.reinterpret(4096).getString(0);
        } catch (final Throwable t) {
            return "errno " + errno;
        }
    }
}
