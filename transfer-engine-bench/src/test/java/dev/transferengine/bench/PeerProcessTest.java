package dev.transferengine.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code serve} child gets the system properties of the benchmark's command line, and those only. */
class PeerProcessTest {

    @Test
    void forwardsCommandLinePropertiesButNotToolOptions() throws IOException, InterruptedException {
        final String java = ProcessHandle.current().info().command().orElseThrow();
        final ProcessBuilder builder = new ProcessBuilder(
                        java,
                        "-Dte.experiment=on",
                        "-Xmx64m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        PrintForwarded.class.getName())
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().put("JAVA_TOOL_OPTIONS", "-Dte.fromTool=1");
        final Process child = builder.start();

        final String printed = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

        assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(printed.lines().toList()).containsExactly("-Dte.experiment=on");
    }

    /** The child: prints, one a line, what {@link PeerProcess} would pass on to a {@code serve} JVM. */
    static final class PrintForwarded {
        public static void main(final String[] args) {
            final List<String> forwarded = PeerProcess.systemProperties();
            forwarded.forEach(System.out::println);
        }
    }
}
