package dev.transferengine.nativeaccess;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CpuAffinityTest {

    private static String allowedCpus() throws Exception {
        return Files.readAllLines(Path.of("/proc/thread-self/status")).stream()
                .filter(line -> line.startsWith("Cpus_allowed_list:"))
                .findFirst()
                .orElseThrow()
                .split(":", -1)[1]
                .strip();
    }

    @Test
    void pinsTheCallingThreadToOneCpu() throws Exception {
        final AtomicReference<@Nullable String> failure = new AtomicReference<>("not run");
        final AtomicReference<String> allowed = new AtomicReference<>();
        final Thread thread = new Thread(() -> {
            failure.set(CpuAffinity.pinCurrentThread(0));
            try {
                allowed.set(allowedCpus());
            } catch (final Exception e) {
                allowed.set(e.toString());
            }
        });
        thread.start();
        thread.join();

        assertThat(failure.get()).isNull();
        assertThat(allowed.get()).isEqualTo("0");
    }

    @Test
    void pinsOnlyWhenACpuIsGiven() throws Exception {
        final AtomicReference<String> unpinned = new AtomicReference<>();
        final AtomicReference<String> pinned = new AtomicReference<>();
        final Thread thread = new Thread(() -> {
            try {
                CpuAffinity.pinCurrentThread(OptionalInt.empty(), "test thread");
                unpinned.set(allowedCpus());
                CpuAffinity.pinCurrentThread(OptionalInt.of(0), "test thread");
                pinned.set(allowedCpus());
            } catch (final Exception e) {
                pinned.set(e.toString());
            }
        });
        final String before = allowedCpus();
        thread.start();
        thread.join();

        assertThat(unpinned.get()).isEqualTo(before);
        assertThat(pinned.get()).isEqualTo("0");
    }

    @Test
    void explainsWhyItCannotPin() {
        assertThat(CpuAffinity.pinCurrentThread(-1)).contains("outside");
        assertThat(CpuAffinity.pinCurrentThread(100_000)).contains("outside");
        assertThat(CpuAffinity.pinCurrentThread(1000)).contains("errno");
    }
}
