package dev.transferengine.nativeaccess;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The C environment of this process, which native libraries read with {@code getenv} (the JDK's
 * {@link System#getenv()} is a copy taken at start-up and cannot be changed). Used to configure a library before
 * it is loaded, e.g. to keep a library's constructor from replacing the JVM's SIGSEGV handler.
 */
public final class NativeEnvironment {

    private NativeEnvironment() {}

    /**
     * Sets {@code name=value} in the C environment unless {@code name} is already set (a user's own setting wins).
     * Call before loading the library that reads it, and not while other threads call {@code getenv}
     * ({@code setenv} is not thread-safe). Allocates.
     *
     * @return false if native access is disabled or {@code setenv} failed
     */
    @SuppressWarnings("restricted") // links setenv after the native-access check above
    public static boolean setIfAbsent(final String name, final String value) {
        if (!NativeAccess.isEnabled()) {
            return false;
        }
        final Linker linker = Linker.nativeLinker();
        final MethodHandle setenv = linker.downcallHandle(
                linker.defaultLookup().findOrThrow("setenv"),
                FunctionDescriptor.of(
                        ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment key = arena.allocateFrom(name);
            final MemorySegment text = arena.allocateFrom(value);
            return (int) setenv.invokeExact(key, text, 0) == 0;
        } catch (final Throwable t) {
            return false;
        }
    }
}
