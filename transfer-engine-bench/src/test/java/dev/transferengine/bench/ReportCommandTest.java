package dev.transferengine.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code te-bench report}: report.sh's JSON lines become the table of medians over the rounds (failed cases as
 * FAILED rows with their errors), the other sections, the template's marker and the plots.
 */
class ReportCommandTest {

    private static final String IMM = "{\"op\":\"imm\",\"transport\":\"tcp\",\"nics\":1,\"size\":0,\"gb_per_s\":0.0,"
            + "\"p50_us\":12.0,\"p99_us\":20.0,\"p999_us\":30.0,\"ops_per_s\":80000.0,\"errors\":0,\"stages_us\":{"
            + "\"queue_p50\":0.5,\"queue_p99\":1.0,\"post_p50\":0.2,\"post_p99\":0.4,\"wire_p50\":10.5,\"wire_p99\":18.0,"
            + "\"notify_p50\":0.3,\"notify_p99\":0.6},\"anchor\":\"tcp_pingpong\",\"anchor_round_trip_us\":9.0,"
            + "\"ratio\":1.333,\"goal\":\"ratio <= 1.5\",\"goal_met\":true}";

    private static String write(final double gb, final double anchor) {
        return "{\"op\":\"write\",\"transport\":\"tcp\",\"nics\":4,\"size\":1048576,\"gb_per_s\":" + gb
                + ",\"p50_us\":4000.0,\"errors\":0,\"anchor\":\"iperf3\",\"anchor_command\":"
                + "\"bin/iperf3 -c 127.0.0.1 -p 5299 -t 2 -J -P 4\",\"anchor_gb_per_s\":" + anchor
                + ",\"goal\":\"ratio >= 0.9\"}";
    }

    private static String paged(final double pagesPerS, final double anchor) {
        return "{\"op\":\"paged\",\"transport\":\"fabric\",\"provider\":\"shm\",\"size\":1024,\"pages\":256,"
                + "\"gb_per_s\":1.0,\"ops_per_s\":" + pagesPerS + ",\"errors\":2,\"anchor\":\"fi_rma_bw\","
                + "\"anchor_command\":\"fi_rma_bw -S 1024\",\"anchor_messages_per_s\":" + anchor
                + ",\"goal\":\"ratio >= 0.9\"}";
    }

    private static String plain(final double gb) {
        return "{\"op\":\"write\",\"transport\":\"tcp\",\"nics\":1,\"size\":1048576,\"gb_per_s\":" + gb + "}";
    }

    @Test
    void tablesOfMediansFailedRowsAndTheTemplate(@TempDir final Path dir) throws Exception {
        final Path in = dir.resolve("report.jsonl");
        Files.write(
                in,
                List.of(
                        "{\"meta\":{\"date\":\"2026-12-02T00:00:00Z\",\"cpus\":16,\"cpu\":\"test cpu\",\"rounds\":3,"
                                + "\"duration\":\"2s\",\"commit\":\"abc1234\"}}",
                        line("tcp-4nic", 1, "\"result\":" + write(5.0, 5.5)),
                        line("tcp-4nic", 2, "\"failed\":\"exit 1: java.io.IOException: peer | gone\""),
                        line("tcp-4nic", 3, "\"result\":" + write(4.0, 6.0)),
                        line("tcp-imm", 1, "\"result\":" + IMM),
                        line("shm-imm", 1, "\"failed\":\"exit 1: java.util.concurrent.TimeoutException\""),
                        line("shm-imm", 2, "\"skipped\":\"the run's time budget\""),
                        line("shm-paged", 1, "\"result\":" + paged(900_000, 1_000_000)),
                        line("plain", 1, "\"result\":" + plain(3.0)),
                        line("tls", 1, "\"baseline\":\"plain\",\"goal\":\"ratio >= 0.5\",\"result\":" + plain(1.2)),
                        "{\"case\":\"nack-fabric-tcp\",\"group\":\"nack\",\"round\":1,\"args\":\"-p transport=fabric\","
                                + "\"result\":{\"p50_us\":59250.0,\"p99_us\":60410.6,\"samples\":137}}",
                        "{\"case\":\"nack-fabric-shm\",\"group\":\"nack\",\"round\":1,\"args\":\"-p provider=shm\","
                                + "\"failed\":\"a round did not end\"}",
                        "{\"case\":\"tcp-imm-stages\",\"group\":\"stages\",\"round\":1,\"args\":\"\",\"result\":" + IMM
                                + "}"),
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
                .contains("commit abc1234")
                // medians over the rounds that have a result: 4.5 GB/s against 5.75
                .contains("| tcp-4nic | 4.50 GB/s | iperf3 -P 4: 5.75 GB/s | 0.78 | ratio >= 0.9 | **no** |"
                        + " 5.00 / 5.50, FAILED, 4.00 / 6.00 |")
                .contains("| tcp-imm | 12.00 us p50 (p99 20.00 us) | tcp_pingpong 9.00 us round trip | 1.33 |"
                        + " ratio <= 1.5 | yes |")
                .contains("| shm-imm | **FAILED**: exit 1: java.util.concurrent.TimeoutException |"
                        + " — | — | — | **FAILED** | FAILED, skipped |")
                .contains("| shm-paged | 0.900 M pages/s (1.00 GB/s) | fi_rma_bw -S 1024: 1.000 M msgs/s | 0.90 |"
                        + " ratio >= 0.9 | yes | 0.900 M / 1.000 M (2 requests failed) |")
                .contains("| tls | 1.20 GB/s | `plain`: 3.00 GB/s | 0.40 | ratio >= 0.5 | **no** |")
                .contains("- `tcp-4nic` round 2: exit 1: java.io.IOException: peer \\| gone")
                .contains("- `shm-imm` round 2: skipped: the run's time budget")
                .contains("- `tcp-4nic`: `--nics 4`; `bin/iperf3 -c 127.0.0.1 -p 5299 -t 2 -J -P 4`")
                .contains("| fabric/tcp | `-p transport=fabric` | 59.3 ms | 60.4 ms | 137 | **no** |")
                .contains("| fabric/shm | `-p provider=shm` | **FAILED**: a round did not end | | | **FAILED** |")
                .contains("| tcp-imm-stages | 12.00 | 0.50 / 1.00 | 0.20 / 0.40 | 10.50 / 18.00 | 0.30 / 0.60 |");
        assertThat(out.resolve("images/latency.png")).isNotEmptyFile();
        assertThat(md).contains("![latency.png]".replace(".png", "") + "(images/latency.png)");
    }

    @Test
    void theCStreamWithACasesFootprintGetsARowUnderIt(@TempDir final Path dir) throws Exception {
        final String md = report(
                dir,
                line("tcp-4nic", 1, "\"result\":" + write(5.0, 6.5)),
                footprint(1, "\"result\":" + tcpStream(5.5)),
                line("tcp-4nic", 2, "\"result\":" + write(4.0, 6.8)),
                footprint(2, "\"failed\":\"exit 1: connect: Connection refused\""),
                line("tcp-4nic", 3, "\"result\":" + write(4.5, 6.6)),
                footprint(3, "\"result\":" + tcpStream(4.5)));
        // the engine's median over its rounds (4.5) against tcp_stream's over the rounds it ran (5.0)
        assertThat(md)
                .contains("| tcp-4nic | 4.50 GB/s | iperf3 -P 4: 6.60 GB/s | 0.68 | ratio >= 0.9 | **no** |"
                        + " 5.00 / 6.50, 4.00 / 6.80, 4.50 / 6.60 |\n"
                        + "| tcp-4nic vs tcp_stream | 4.50 GB/s | tcp_stream 64 MiB, 4 streams: 5.00 GB/s | 0.90 |"
                        + " — | — | 5.00 / 5.50, FAILED, 4.50 / 4.50 |\n")
                .contains("- `tcp-4nic vs tcp_stream` round 2: exit 1: connect: Connection refused")
                .contains("- `tcp-4nic vs tcp_stream`: `bin/tcp_stream 64 0 1.5 5298 0 4` (C, the engine's memory"
                        + " footprint) right after `tcp-4nic` in each round");
    }

    @Test
    void theCPingpongOverTwoConnectionsGetsARowUnderTheTcpImmCase(@TempDir final Path dir) throws Exception {
        final String md = report(
                dir,
                line("tcp-imm", 1, "\"result\":" + IMM),
                split(1, "\"result\":" + pingpongSplit(8.0)),
                line("tcp-imm", 2, "\"result\":" + IMM.replace("\"p50_us\":12.0", "\"p50_us\":14.0")),
                split(2, "\"failed\":\"exit 1: bind: Address already in use\""),
                line("tcp-imm", 3, "\"result\":" + IMM.replace("\"p50_us\":12.0", "\"p50_us\":13.0")),
                split(3, "\"result\":" + pingpongSplit(10.0)));
        // the engine's median p50 over its rounds (13) against the split ping-pong's over the rounds it ran (9):
        // engine / C as the imm row's ratio, lower is better
        assertThat(md)
                .contains("| tcp-imm | 13.00 us p50 (p99 20.00 us) | tcp_pingpong 9.00 us round trip | 1.44 |"
                        + " ratio <= 1.5 | yes | 12.00 / 9.00, 14.00 / 9.00, 13.00 / 9.00 |\n"
                        + "| tcp-imm vs tcp_pingpong split | 13.00 us p50 | tcp_pingpong split, 2 connections: 9.00 us"
                        + " round trip | 1.44 | — | — | 12.00 / 8.00, FAILED, 13.00 / 10.00 |\n")
                .contains("- `tcp-imm vs tcp_pingpong split` round 2: exit 1: bind: Address already in use")
                .contains("- `tcp-imm vs tcp_pingpong split`: `bin/tcp_pingpong server 18516 8 100000 10000 split &"
                        + " bin/tcp_pingpong client 127.0.0.1 18516 8 100000 10000 split` (C, the engine's topology:"
                        + " two one-way connections, no Java) right after `tcp-imm` in each round");
    }

    @Test
    void aCaseRunWithHugePagesShowsTheLeastBytesTheyBackedInEachRegion(@TempDir final Path dir) throws Exception {
        final String md = report(
                dir,
                line("tcp-4nic", 1, "\"result\":" + write(5.0, 6.5)),
                line("huge", 1, "\"result\":" + huge(5.5, 64, 64)),
                line("huge", 2, "\"result\":" + huge(4.5, 64, 60)),
                line("huge", 3, "\"failed\":\"exit 1: madvise(MADV_HUGEPAGE) failed\""));
        assertThat(md)
                .contains("| huge | 5.00 GB/s; huge pages back source 64 MiB, target 60 MiB | iperf3 one stream:"
                        + " 6.00 GB/s | 0.83 | ratio >= 0.9 | **no** | 5.50 / 6.00, 4.50 / 6.00, FAILED |")
                // a case without the field says nothing of huge pages
                .contains("| tcp-4nic | 5.00 GB/s | iperf3 -P 4:");
    }

    /** A 1-NIC write run with --huge-pages: the bytes huge pages backed in the source and target regions. */
    private static String huge(final double gb, final int sourceMib, final int targetMib) {
        return "{\"op\":\"write\",\"transport\":\"tcp\",\"nics\":1,\"size\":1048576,\"gb_per_s\":" + gb
                + ",\"errors\":0,\"huge_pages_bytes\":{\"source\":" + (sourceMib << 20) + ",\"target\":"
                + (targetMib << 20) + "},\"anchor\":\"iperf3\",\"anchor_command\":\"bin/iperf3 -c 127.0.0.1 -t 2 -J\","
                + "\"anchor_gb_per_s\":6.0,\"goal\":\"ratio >= 0.9\"}";
    }

    @Test
    void aTemplateWithoutTheMarkerIsRefused(@TempDir final Path dir) throws Exception {
        final Path in = dir.resolve("report.jsonl");
        Files.writeString(in, line("tcp-imm", 1, "\"result\":" + IMM) + "\n", StandardCharsets.UTF_8);
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

    /** tcp_stream's line for 4 streams into one 64 MiB region. */
    private static String tcpStream(final double gb) {
        return "{\"anchor\":\"tcp_stream\",\"region_mib\":64,\"page\":0,\"huge\":0,\"gb_per_s\":" + gb
                + ",\"sender_cpu_s_per_gb\":0.2,\"receiver_cpu_s_per_gb\":0.2,\"anon_huge_mib\":0,\"streams\":4,"
                + "\"sent_bytes\":[1,2,3,4],\"received_bytes\":[1,2,3,4]}";
    }

    /** A line of report.sh's footprint group: tcp_stream run beside the case {@code tcp-4nic}. */
    private static String footprint(final int round, final String outcome) {
        return "{\"case\":\"tcp_stream-tcp-4nic\",\"group\":\"footprint\",\"round\":" + round
                + ",\"beside\":\"tcp-4nic\",\"args\":\"bin/tcp_stream 64 0 1.5 5298 0 4\"," + outcome + "}";
    }

    /** tcp_pingpong's line with {@code split}: the round trip over two one-way connections. */
    private static String pingpongSplit(final double p50) {
        return "{\"anchor\":\"tcp_pingpong\",\"size\":8,\"round_trips\":100000,\"p50_us\":" + p50
                + ",\"p99_us\":30.0,\"mean_us\":" + p50 + ",\"connections\":2}";
    }

    /** A line of report.sh's topology group: tcp_pingpong split run beside the case {@code tcp-imm}. */
    private static String split(final int round, final String outcome) {
        return "{\"case\":\"tcp_pingpong-split-tcp-imm\",\"group\":\"topology\",\"round\":" + round
                + ",\"beside\":\"tcp-imm\",\"args\":\"bin/tcp_pingpong server 18516 8 100000 10000 split &"
                + " bin/tcp_pingpong client 127.0.0.1 18516 8 100000 10000 split\"," + outcome + "}";
    }

    /**
     * docs/benchmarks.md is generated: the template (hand-written sections included) over the committed data gives
     * it byte for byte, so a section edited in the page alone would be lost at the next report run.
     */
    @Test
    void thePublishedPageIsTheTemplateOverTheCommittedData(@TempDir final Path out) throws Exception {
        final Path docs = Path.of("..", "docs");
        final int exit = TeBench.commandLine()
                .execute(
                        "report",
                        "--in",
                        docs.resolve("bench-data/report.jsonl").toString(),
                        "--jmh",
                        docs.resolve("bench-data/jmh.json").toString(),
                        "--template",
                        "benchmarks-template.md",
                        "--out",
                        out.toString());

        assertThat(exit).isZero();
        assertThat(out.resolve("benchmarks.md"))
                .as(
                        "regenerate it: te-bench report ... --template transfer-engine-bench/benchmarks-template.md --out docs")
                .hasSameTextualContentAs(docs.resolve("benchmarks.md"), StandardCharsets.UTF_8);
    }

    /** report.sh's {@code lines} through {@code te-bench report} without a template: the page it writes. */
    private static String report(final Path dir, final String... lines) throws Exception {
        final Path in = dir.resolve("report.jsonl");
        Files.write(in, List.of(lines), StandardCharsets.UTF_8);
        final Path out = dir.resolve("out");
        assertThat(TeBench.commandLine().execute("report", "--in", in.toString(), "--out", out.toString()))
                .isZero();
        return Files.readString(out.resolve("benchmarks.md"), StandardCharsets.UTF_8);
    }

    private static String line(final String name, final int round, final String outcome) {
        final String args = name.equals("tcp-4nic") ? "--duration 2s --warmup 1s --nics 4" : "";
        return "{\"case\":\"" + name + "\",\"group\":\"table\",\"round\":" + round + ",\"args\":\"" + args + "\","
                + outcome + "}";
    }
}
