package dev.transferengine.transport.fabric;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 21: a process that was killed or crashed leaves its shm files in /dev/shm, named after its pid; a later
 * process that gets that pid takes the same names, and libfabric's shm then refused its endpoints (fi_enable:
 * -FI_EBUSY; SIGBUS on a file left empty). A child JVM puts such files in place under its own pid
 * ({@link FabricStaleRegionProcess}), then opens shm domains under those names and moves data between them.
 */
class FabricStaleRegionTest {

    @Test
    void shmEndpointsOpenOverTheFilesThatAKilledProcessOfTheSamePidLeft() throws Exception {
        FabricFixture.assumeAvailable("shm");
        try (ChildJvm child = ChildJvm.start(FabricFixture.childJvm(FabricStaleRegionProcess.class))) {
            final List<String> output = child.awaitOutput(ChildJvm.LINE_WAIT, 1_000);

            assertThat(output).as("the child's output").contains("MOVED " + FabricStaleRegionProcess.BYTES);
            assertThat(output)
                    .as("both endpoints took a name whose file was left")
                    .contains("TOOK [true, true]");
            assertThat(child.exitStatus()).isEqualTo("0");
        }
    }
}
