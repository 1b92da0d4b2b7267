package dev.transferengine.autoconfigure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A worker asked to be pinned in a JVM without native access fails start-up with the exact flag and manifest entry,
 * where the engine alone would only log a warning and run unpinned. Runs a child JVM, since this one has the flag.
 */
class NativeAccessStartupTests {

    @Test
    void pinnedWorkerWithoutNativeAccessFailsStartUpWithTheFlagAndTheManifestEntry() throws Exception {
        final Result result = start(false, "--transfer-engine.groups[0].worker-cpu=0");

        assertThat(result.exitCode()).as(result.output()).isEqualTo(1);
        assertThat(result.output())
                .contains("APPLICATION FAILED TO START")
                .contains("transfer-engine.groups[0].worker-cpu")
                .contains("pinning the worker needs native access")
                .contains("Start the JVM with --enable-native-access=ALL-UNNAMED")
                .contains("'Enable-Native-Access: ALL-UNNAMED'");
    }

    @Test
    void pinnedWorkerWithNativeAccessStarts() throws Exception {
        final Result result = start(true, "--transfer-engine.groups[0].worker-cpu=0");

        assertThat(result.output()).doesNotContain("APPLICATION FAILED TO START");
        assertThat(result.exitCode()).as(result.output()).isZero();
    }

    @Test
    void unpinnedEngineWithoutNativeAccessStarts() throws Exception {
        final Result result = start(false);

        assertThat(result.exitCode()).as(result.output()).isZero();
    }

    private static Result start(final boolean nativeAccess, final String... properties)
            throws IOException, InterruptedException {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (nativeAccess) {
            command.add("--enable-native-access=ALL-UNNAMED");
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(NativeAccessStartupApplication.class.getName());
        command.addAll(List.of(properties));
        final Process process =
                new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Result(process.waitFor(), output);
    }

    private record Result(int exitCode, String output) {}
}
