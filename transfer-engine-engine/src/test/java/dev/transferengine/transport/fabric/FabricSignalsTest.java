package dev.transferengine.transport.fabric;

import dev.transferengine.spi.RecordingDomainListener;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import org.junit.jupiter.api.Test;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An shm endpoint leaves the JVM's SIGSEGV and SIGBUS handlers in place ({@link FabricSignals}): shm's own handler
 * unlinked the process's shm regions at the JVM's first routine SIGSEGV (a safepoint trap in a spinning worker), and
 * no peer process could reach the endpoint after that.
 */
@SuppressWarnings("restricted") // sigaction and dladdr, to see which library the installed handler lives in
class FabricSignalsTest {

    private static final int SIGBUS = 7;
    private static final int SIGSEGV = 11;
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle SIGACTION = LINKER.downcallHandle(
            LINKER.defaultLookup().find("sigaction").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle DLADDR = LINKER.downcallHandle(
            LINKER.defaultLookup().find("dladdr").orElseThrow(), FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));

    @Test
    void anShmEndpointLeavesTheJvmsSegvAndBusHandlersInstalled() throws Throwable {
        FabricFixture.assumeAvailable("shm");
        try (FabricFixture fixture = new FabricFixture()) {
            fixture.open("shm", 0, new RecordingDomainListener());
            assertThat(handlerLibrary(SIGSEGV)).as("SIGSEGV handler").contains("libjvm");
            assertThat(handlerLibrary(SIGBUS)).as("SIGBUS handler").contains("libjvm");
        }
    }

    /** The file of the shared object that holds the handler now installed for {@code signal}. */
    private static String handlerLibrary(final int signal) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment action = arena.allocate(256, 8); // glibc's struct sigaction: handler first
            assertThat((int) SIGACTION.invokeExact(signal, MemorySegment.NULL, action))
                    .isZero();
            final MemorySegment info = arena.allocate(4 * ADDRESS.byteSize(), 8); // Dl_info: dli_fname first
            assertThat((int) DLADDR.invokeExact(action.get(ADDRESS, 0), info))
                    .as("dladdr finds the handler of signal %d", signal)
                    .isNotZero();
            return info.get(ADDRESS, 0).reinterpret(4096).getString(0);
        }
    }
}
