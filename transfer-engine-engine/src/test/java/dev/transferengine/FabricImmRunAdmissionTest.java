package dev.transferengine;

import dev.transferengine.transport.fabric.FabricTestAccess;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The unexpected-imm bound at a fabric target that reserves one place per run of equal imms in a CQ batch (see
 * FabricDomain, "Imm runs"): a paged write of a value nobody expects needs one place for all its pages, so one place
 * left admits every page, and none left refuses every page, each counted in {@link EngineCounter#IMMS_REFUSED}. The
 * target never addressed the writer, so its imms share the one quota of writers nobody can tell apart, as large as the
 * bound. On libfabric RDM a refused imm is not reported to its writer, so the outcome is read at the target.
 */
class FabricImmRunAdmissionTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int BOUND = 4;
    private static final int PAGES = 200;
    private static final long PAGE = 1024;

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
    @ValueSource(strings = {"tcp", "shm"})
    void aPagedWriteIsAdmittedOnOnePlaceAndRefusedWholeWithoutOne(final String provider) throws Exception {
        FabricTestAccess.assumeAvailable(provider);
        final TransferEngine target = engine(provider, TransferEngine.builder().maxUnexpectedImms(BOUND));
        final TransferEngine writer = engine(provider, TransferEngine.builder());
        final RegionDescriptor dst = target.register(arena.allocate(PAGE * PAGES, 4096), Device.host())
                .descriptor();
        final MemoryRegion src = writer.register(arena.allocate(PAGE * PAGES, 4096), Device.host());
        final PagedWrite pages =
                PagedWrite.of(src, dst, PAGE, IntStream.range(0, PAGES).toArray());

        for (int imm = 1; imm < BOUND; imm++) { // all places but one held by credits nobody claims
            writer.submit(ImmWrite.of(dst, imm)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        awaitImmsSeen(target, BOUND - 1);

        writer.submit(pages.withImm(100)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        awaitImmsSeen(target, BOUND - 1 + PAGES);
        assertThat(refused(target))
                .as("the last place admits every page of a paged write")
                .isZero();

        writer.submit(pages.withImm(200)).get(WAIT.toSeconds(), TimeUnit.SECONDS); // no place left
        awaitImmsSeen(target, BOUND - 1 + 2 * PAGES);
        assertThat(refused(target)).as("every page refused, each counted").isEqualTo(PAGES);

        writer.submit(pages.withImm(100)).get(WAIT.toSeconds(), TimeUnit.SECONDS); // credited already: no place needed
        awaitImmsSeen(target, BOUND - 1 + 3 * PAGES);
        assertThat(target.metrics().counter(EngineCounter.IMM_EVENTS)).isEqualTo(BOUND - 1 + 2L * PAGES);
        assertThat(refused(target)).isEqualTo(PAGES);
        // an imm event is counted a moment before its imm is credited: wait for the credits themselves
        await().atMost(WAIT).until(() -> target.immCounter(100).balance() == 2L * PAGES);
        assertThat(target.immCounter(200).balance()).isZero();
    }

    private static long refused(final TransferEngine target) {
        return target.metrics().counter(EngineCounter.IMMS_REFUSED);
    }

    /** Waits until the target credited or refused {@code imms} imms in all. */
    private static void awaitImmsSeen(final TransferEngine target, final long imms) {
        await().atMost(WAIT).until(() -> target.metrics().counter(EngineCounter.IMM_EVENTS) + refused(target) >= imms);
    }
}
