package dev.transferengine;

import dev.transferengine.transport.fabric.FabricTestAccess;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Issue 16 item 3 on fabric/shm: completions name their writer (FI_SOURCE, fi_cq_readfrom), so one member flooding
 * distinct imms nobody expects takes its share of the unexpected-imm bound and another member's imms all land. On
 * libfabric RDM a refused imm is not reported to its writer (the bytes landed, the imm is dropped and counted), so the
 * outcome is read at the receiver. The receiver has both writers in its address vector (it sent to each), as members
 * that talk both ways do; a writer it never addressed is not told apart (docs/security.md).
 */
class FabricImmSharesTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int BOUND = 16_384;
    private static final int MEMBER_IMMS = 3_500;
    private static final int WINDOW = 512;

    private final List<TransferEngine> engines = new ArrayList<>();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        engines.forEach(TransferEngine::close);
        arena.close();
    }

    private TransferEngine engine(final String provider, final TransferEngineBuilder builder) {
        final TransferEngine engine =
                FabricTestAccess.onLoopback(builder, provider).build();
        engines.add(engine);
        return engine;
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm"}) // tcp;ofi_rxm cannot name the writer: one quota (FabricImmSourceTest)
    void aMemberFloodingDistinctImmsLeavesAnotherMemberEveryImm(final String provider) throws Exception {
        FabricTestAccess.assumeAvailable(provider);
        final TransferEngine receiver =
                engine(provider, TransferEngine.builder().maxUnexpectedImms(BOUND));
        final TransferEngine attacker = engine(provider, TransferEngine.builder());
        final TransferEngine member = engine(provider, TransferEngine.builder());
        for (final TransferEngine writer : List.of(attacker, member)) {
            writer.postedReceivePool(64, 1, message -> {});
            receiver.send(writer.mainAddress(), new byte[1]).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        final RegionDescriptor dst =
                receiver.register(arena.allocate(4096, 4096), Device.host()).descriptor();

        writeImms(attacker, dst, 0, BOUND);
        await().atMost(WAIT)
                .until(() -> receiver.metrics().counter(EngineCounter.IMM_EVENTS)
                                + receiver.metrics().counter(EngineCounter.IMMS_REFUSED)
                        >= BOUND);
        assertThat(receiver.metrics().counter(EngineCounter.IMMS_REFUSED))
                .as("the flooder keeps half the bound, the rest is refused")
                .isEqualTo(BOUND / 2);

        writeImms(member, dst, BOUND, MEMBER_IMMS);
        await().atMost(WAIT)
                .until(() -> receiver.metrics().counter(EngineCounter.IMM_EVENTS)
                                + receiver.metrics().counter(EngineCounter.IMMS_REFUSED)
                        >= BOUND + MEMBER_IMMS);
        assertThat(IntStream.range(BOUND, BOUND + MEMBER_IMMS)
                        .filter(imm -> receiver.immCounter(imm).balance() != 1))
                .as("member imms not credited once")
                .isEmpty();
        assertThat(receiver.metrics().counter(EngineCounter.IMMS_REFUSED))
                .as("none of the member's imms refused")
                .isEqualTo(BOUND / 2);
    }

    /** Imm-only writes of the values {@code first} on, {@link #WINDOW} in flight; each must complete at the writer. */
    private static void writeImms(
            final TransferEngine writer, final RegionDescriptor dst, final int first, final int count)
            throws Exception {
        for (int start = first; start < first + count; start += WINDOW) {
            final List<CompletableFuture<Void>> window = new ArrayList<>();
            for (int imm = start; imm < Math.min(start + WINDOW, first + count); imm++) {
                window.add(writer.submit(ImmWrite.of(dst, imm)));
            }
            for (final CompletableFuture<Void> write : window) {
                write.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
        }
    }
}
