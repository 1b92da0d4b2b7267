package dev.transferengine.transport.fabric;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** Reading a child's whole output is bounded: in time and in lines. Plain shell commands stand in for the programs. */
class ChildJvmTest {

    @Test
    void theOutputOfAChildThatEndsIsReadWhole() throws Exception {
        try (ChildJvm child = ChildJvm.start(new ProcessBuilder("sh", "-c", "echo one; echo two"))) {
            assertThat(child.awaitOutput(Duration.ofSeconds(60), 10)).containsExactly("one", "two");
            assertThat(child.exitStatus()).isEqualTo("0");
        }
    }

    @Test
    void aChildThatHangsFailsTheWaitOnItsDeadline() throws Exception {
        try (ChildJvm child = ChildJvm.start(new ProcessBuilder("sh", "-c", "echo started; exec sleep 600"))) {
            final Throwable failure = catchThrowable(() -> child.awaitOutput(Duration.ofMillis(500), 10));

            assertThat(failure)
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("did not end within PT0.5S")
                    .hasMessageContaining("still running")
                    .hasMessageContaining("started");
        }
    }

    @Test
    void aChildThatFloodsFailsTheWaitAtTheLineCap() throws Exception {
        try (ChildJvm child = ChildJvm.start(new ProcessBuilder("sh", "-c", "while :; do echo line; done"))) {
            final Throwable failure = catchThrowable(() -> child.awaitOutput(Duration.ofSeconds(60), 100));

            assertThat(failure).isInstanceOf(AssertionError.class).hasMessageContaining("within 100 lines");
        }
    }

    @Test
    void cProgramsRunReturnsTheOutputOfAProgramThatExitsZero() throws Exception {
        assertThat(CPrograms.run(List.of("sh", "-c", "echo a; echo b >&2"), Path.of(".")))
                .isEqualTo("a\nb");
    }
}
