package dev.transferengine.bench;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Runs {@code te-bench moe} in a small shape on tcp and checks its rows. */
class MoeCommandTest {

    @Test
    void moePrintsARoutedAndAPaddedRowPerTokenCountPooledOverItsRounds() {
        final PrintStream original = System.out;
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final int status;
        try (PrintStream out = new PrintStream(captured, true, StandardCharsets.UTF_8)) {
            System.setOut(out);
            status = TeBench.commandLine()
                    .execute(
                            "moe",
                            "--transports",
                            "tcp",
                            "--tokens",
                            "1,4",
                            "--hidden",
                            "64",
                            "--top-k",
                            "2",
                            "--experts",
                            "8",
                            "--ranks",
                            "2",
                            "--layers",
                            "3",
                            "--warmup",
                            "1",
                            "--inputs",
                            "2",
                            "--rounds",
                            "2");
        } finally {
            System.setOut(original);
        }
        final String[] lines = captured.toString(StandardCharsets.UTF_8).strip().split("\n", -1);

        assertThat(status).isZero();
        assertThat(lines).hasSize(6);
        assertThat(lines[2]).startsWith("| tcp | 1 | routed | ").doesNotContain("failed");
        assertThat(lines[3]).startsWith("| tcp | 1 | padded | ").doesNotContain("failed");
        assertThat(lines[4]).startsWith("| tcp | 4 | routed | ").doesNotContain("failed");
        assertThat(lines[5]).startsWith("| tcp | 4 | padded | ").doesNotContain("failed");
        // posting twice: summed over the ranks and on the critical path, each with its share
        assertThat(lines[0]).contains("posting, all ranks summed", "posting on the critical path");
        for (int i = 2; i < lines.length; i++) {
            assertThat(lines[i].split("\\|", -1)).hasSameSizeAs(lines[0].split("\\|", -1));
        }
    }
}
