package dev.transferengine.bench;

import dev.transferengine.Device;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code --huge-pages}: host regions 2 MiB aligned and advised {@code MADV_HUGEPAGE} before their fill, and the bytes
 * huge pages back, as {@code /proc/self/smaps} says. Where the kernel's setting ({@link HugePages#ENABLED}) lets
 * madvised memory have huge pages, some must back the region: an option that does nothing fails here.
 */
class HugePagesTest {

    private static final long REGION = 8L << 20;
    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    @Test
    void aHugePageRegionIsAlignedFilledAndReportsWhatSmapsSays() throws IOException {
        final String setting = HugePages.enabledSetting();
        try (Arena arena = Arena.ofShared();
                RegionMemory memory = RegionMemory.allocate(arena, Device.host(), REGION, (byte) 0x5A, true)) {
            final MemorySegment segment = memory.segment();
            final long before = anonHugeBytes(segment.address());
            final long reported = memory.hugePageBytes();
            final long after = anonHugeBytes(segment.address());

            assertThat(segment.address() % HugePages.HUGE_PAGE).isZero();
            assertThat(segment.byteSize()).isEqualTo(REGION);
            final MemorySegment expected = arena.allocate(REGION).fill((byte) 0x5A);
            assertThat(segment.mismatch(expected)).isEqualTo(-1L);
            // khugepaged may collapse pages meanwhile, never split them back here
            assertThat(reported).isBetween(before, after).isLessThanOrEqualTo(REGION);
            assertThat(reported % HugePages.HUGE_PAGE).isZero();
            if (HugePages.madvisedMayHaveHugePages(setting)) {
                assertThat(reported)
                        .as("huge pages back the region where %s says '%s'", HugePages.ENABLED, setting)
                        .isPositive();
            } else {
                assertThat(reported).isZero();
            }
        }
    }

    @Test
    void gpuMemoryWithHugePagesIsRefusedByName() {
        try (Arena arena = Arena.ofShared()) {
            assertThatThrownBy(() -> RegionMemory.allocate(arena, Device.cuda(0), REGION, (byte) 0, true))
                    .isInstanceOf(HugePages.UnavailableException.class)
                    .hasMessageContaining("--huge-pages is for host regions")
                    .hasMessageContaining("cuda:0");
        }
        final Result refused = run("write", "--huge-pages", "--device", "cuda:0");
        assertThat(refused.exit()).isNotZero();
    }

    @Test
    void writeWithHugePagesReportsTheBytesTheyBackOnBothSides() {
        final String setting = HugePages.enabledSetting();
        final Result result = run(
                "write", "--huge-pages", "--duration", "1s", "--warmup", "200ms", "--region", "8MiB", "--size", "1MiB");

        assertThat(result.exit()).as("exit status; stdout:%n%s", result.out()).isZero();
        final JsonNode line = result.json();
        assertThat(line.get("errors").asLong()).isZero();
        assertThat(line.get("gb_per_s").asDouble()).isPositive();
        final JsonNode huge = line.get("huge_pages_bytes");
        assertThat(huge).as("huge_pages_bytes in %s", line).isNotNull();
        for (final String region : List.of("source", "target")) {
            final long bytes = huge.get(region).asLong();
            assertThat(bytes).as(region).isBetween(0L, REGION);
            assertThat(bytes % HugePages.HUGE_PAGE).as(region).isZero();
            if (HugePages.madvisedMayHaveHugePages(setting)) {
                assertThat(bytes)
                        .as("%s, where %s says '%s'", region, HugePages.ENABLED, setting)
                        .isPositive();
            }
        }
    }

    @Test
    void writeWithoutHugePagesHasNoSuchField() {
        final Result result = run("write", "--duration", "300ms", "--warmup", "100ms", "--region", "4MiB");

        assertThat(result.exit()).as("exit status; stdout:%n%s", result.out()).isZero();
        assertThat(result.json().has("huge_pages_bytes")).isFalse();
    }

    @Test
    void smapsOfARangeSumsTheMappingsOverlappingIt(@TempDir final Path dir) throws IOException {
        final Path smaps = dir.resolve("smaps");
        Files.writeString(smaps, """
                7f0000000000-7f0000400000 rw-p 00000000 00:00 0
                Size:               4096 kB
                AnonHugePages:      2048 kB
                7f0000400000-7f0000800000 rw-p 00000000 00:00 0
                AnonHugePages:      4096 kB
                7f0000800000-7f0000a00000 rw-p 00000000 00:00 0
                AnonHugePages:      2048 kB
                """, StandardCharsets.UTF_8);

        assertThat(HugePages.backedBytes(smaps, 0x7f0000400000L, 0x400000L)).isEqualTo(4096L << 10);
        assertThat(HugePages.backedBytes(smaps, 0x7f0000200000L, 0x400000L)).isEqualTo(6144L << 10);
        assertThat(HugePages.backedBytes(smaps, 0x7f0000a00000L, 0x200000L)).isZero();
    }

    /** AnonHugePages of the smaps mapping that holds {@code address}, read independently of {@link HugePages}. */
    private static long anonHugeBytes(final long address) throws IOException {
        boolean holds = false;
        for (final String line : Files.readAllLines(Path.of("/proc/self/smaps"), StandardCharsets.UTF_8)) {
            if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                final String[] range = line.substring(0, line.indexOf(' ')).split("-", -1);
                holds = Long.parseUnsignedLong(range[0], 16) <= address
                        && address < Long.parseUnsignedLong(range[1], 16);
            } else if (holds && line.startsWith("AnonHugePages:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new AssertionError("no mapping of /proc/self/smaps holds " + Long.toHexString(address));
    }

    private record Result(int exit, String out) {
        JsonNode json() {
            return MAPPER.readTree(out.substring(out.lastIndexOf('\n') + 1));
        }
    }

    /** Runs te-bench in this JVM with stdout captured. */
    private static Result run(final String... args) {
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final PrintStream original = System.out;
        final int exit;
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            exit = TeBench.commandLine().execute(args);
        } finally {
            System.setOut(original);
        }
        return new Result(exit, captured.toString(StandardCharsets.UTF_8).strip());
    }
}
