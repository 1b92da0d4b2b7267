package dev.transferengine.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code te-bench report}: report.sh's JSON lines become the markdown tables, the template's marker and the plots. */
class ReportCommandTest {

    private static final String WRITE = "{\"op\":\"write\",\"transport\":\"tcp\",\"nics\":1,\"size\":1048576,"
            + "\"gb_per_s\":3.5,\"p50_us\":4000.0,\"p99_us\":6000.0,\"p999_us\":7000.0,\"ops_per_s\":3338.0,"
            + "\"anchor\":\"iperf3\",\"anchor_gb_per_s\":4.0,\"ratio\":0.875,\"goal\":\"ratio >= 0.9\",\"goal_met\":false}";
    private static final String IMM = "{\"op\":\"imm\",\"transport\":\"tcp\",\"nics\":1,\"size\":0,\"gb_per_s\":0.0,"
            + "\"p50_us\":12.0,\"p99_us\":20.0,\"p999_us\":30.0,\"ops_per_s\":80000.0,\"stages_us\":{\"queue_p50\":0.5,"
            + "\"queue_p99\":1.0,\"post_p50\":0.2,\"post_p99\":0.4,\"wire_p50\":10.5,\"wire_p99\":18.0,\"notify_p50\":0.3,"
            + "\"notify_p99\":0.6},\"anchor\":\"tcp_pingpong\",\"anchor_round_trip_us\":9.0,\"ratio\":1.333,"
            + "\"goal\":\"ratio <= 1.5\",\"goal_met\":true}";
    private static final String BEFORE =
            "{\"op\":\"write\",\"transport\":\"tcp\",\"nics\":1,\"size\":1048576," + "\"gbps\":3.1,\"p50_us\":4500.0}";

    @Test
    void tablesPlotsAndTemplate(@TempDir final Path dir) throws Exception {
        final Path in = dir.resolve("report.jsonl");
        Files.write(
                in,
                List.of(
                        "{\"meta\":{\"date\":\"2026-12-01T00:00:00Z\",\"cpus\":16,\"cpu\":\"test cpu\",\"duration\":\"2s\"}}",
                        line("tcp-write-1MiB-1nic", "te-bench.jar", "table", WRITE),
                        line("tcp-write-1MiB-1nic", "before", "table", BEFORE),
                        line("tcp-imm", "te-bench.jar", "table", IMM),
                        line("tcp-imm-stages", "te-bench.jar", "stages", IMM),
                        line("tcp-sweep-1MiB", "te-bench.jar", "sweep-tcp", WRITE)),
                StandardCharsets.UTF_8);
        final Path template = dir.resolve("template.md");
        Files.writeString(template, "# Title\n\nintro\n\n<!-- results -->\n\nafter\n", StandardCharsets.UTF_8);
        final Path out = dir.resolve("out");

        final int exit = TeBench.commandLine()
                .execute("report", "--in", in.toString(), "--out", out.toString(), "--template", template.toString());

        assertThat(exit).isZero();
        final String md = Files.readString(out.resolve("benchmarks.md"), StandardCharsets.UTF_8);
        assertThat(md)
                .startsWith("# Title\n\nintro\n\n## Results")
                .endsWith("after\n")
                .doesNotContain("<!-- results -->")
                .contains("| tcp-write-1MiB-1nic | 3.50 GB/s | iperf3 | 4.00 GB/s | 0.88 | ratio >= 0.9 | **no** |")
                .contains(
                        "| tcp-imm | 12.00 us p50 (p99 20.00) | tcp_pingpong | 9.00 us round trip | 1.33 | ratio <= 1.5 | yes |")
                .contains("| tcp-write-1MiB-1nic | 3.10 GB/s | 3.50 GB/s |")
                .contains("| tcp-imm-stages | 12.00 | 0.50 / 1.00 | 0.20 / 0.40 | 10.50 / 18.00 | 0.30 / 0.60 |")
                .contains("| 1 MiB | 3.50 | 4.00 | 0.88 |");
        assertThat(out.resolve("images/bandwidth.png")).isNotEmptyFile();
        assertThat(out.resolve("images/latency.png")).isNotEmptyFile();
    }

    @Test
    void aTemplateWithoutTheMarkerIsRefused(@TempDir final Path dir) throws Exception {
        final Path in = dir.resolve("report.jsonl");
        Files.writeString(in, line("tcp-imm", "te-bench.jar", "table", IMM) + "\n", StandardCharsets.UTF_8);
        final Path template = dir.resolve("template.md");
        Files.writeString(template, "# no marker\n", StandardCharsets.UTF_8);

        final int exit = TeBench.commandLine()
                .execute(
                        "report",
                        "--in",
                        in.toString(),
                        "--out",
                        dir.resolve("out").toString(),
                        "--template",
                        template.toString());

        assertThat(exit).isNotZero();
        assertThat(dir.resolve("out/benchmarks.md")).doesNotExist();
    }

    private static String line(final String name, final String jar, final String group, final String result) {
        return "{\"case\":\"" + name + "\",\"jar\":\"" + jar + "\",\"group\":\"" + group
                + "\",\"args\":\"\",\"result\":" + result + "}";
    }
}
