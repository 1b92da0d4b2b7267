package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.spi.DomainListener;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fabric target reserves the imms it reads from its CQ by runs of equal imms from one writer (see {@link
 * FabricDomain}, "Imm runs"): every page's imm is reserved once, for the writer the provider names, credited once if
 * admitted and never if refused, whatever runs the batches made of them. The target resolved its writers, so shm names
 * them (FI_SOURCE); tcp;ofi_rxm names none ({@link FabricImmSourceTest}).
 */
class FabricImmRunTest {

    private static final long PAGE = 1024;
    private static final int PAGES = 48;
    /** The imm the target's listener refuses. */
    private static final int REFUSED_IMM = 9;

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        fixture.close();
        arena.close();
    }

    /** Sums what each reservation stands for, by writer and imm; refuses {@link #REFUSED_IMM}, summing those apart. */
    private static final class Runs extends RecordingDomainListener {
        final Map<String, Integer> reserved = new ConcurrentHashMap<>();
        final Map<String, Integer> refused = new ConcurrentHashMap<>();

        @Override
        public long reserveImm(final @Nullable NetworkAddress peer, final int imm) {
            return reserveImms(peer, imm, 1);
        }

        @Override
        public long reserveImms(final @Nullable NetworkAddress peer, final int imm, final int count) {
            final String key = peer + "/" + imm;
            if (imm == REFUSED_IMM) {
                refused.merge(key, count, Integer::sum);
                return DomainListener.IMM_REFUSED;
            }
            reserved.merge(key, count, Integer::sum);
            return super.reserveImm(peer, imm);
        }

        long credited(final int imm) {
            return imms.stream().filter(i -> i == imm).count();
        }
    }

    /** A target with two writers it resolved, which write from one source region of {@link #PAGES} pages. */
    private final class Setup {
        final Runs events = new Runs();
        final FabricDomain target;
        final FabricDomain first;
        final FabricDomain second;
        final MemorySegment dst = arena.allocate(8 * PAGES * PAGE, 4096);
        final long dstKey;
        final MemorySegment src = arena.allocate(PAGES * PAGE, 4096);
        final Map<FabricDomain, long[]> keyAndPeer = new ConcurrentHashMap<>();

        Setup(final String provider) {
            FabricFixture.assumeAvailable(provider);
            target = (FabricDomain) fixture.open(provider, 0, events);
            first = (FabricDomain) fixture.open(provider, 0, new RecordingDomainListener());
            second = (FabricDomain) fixture.open(provider, 0, new RecordingDomainListener());
            target.resolve(first.address());
            target.resolve(second.address());
            dstKey = target.register(dst, Device.host());
            for (final FabricDomain writer : new FabricDomain[] {first, second}) {
                keyAndPeer.put(
                        writer, new long[] {writer.register(src, Device.host()), writer.resolve(target.address())});
            }
        }

        /** Request {@code token}: {@link #PAGES} 1 KiB writes with imm {@code imm} to target pages from {@code at}. */
        void write(final FabricDomain writer, final long token, final int imm, final int at) {
            final long[] srcKeyAndPeer = Objects.requireNonNull(keyAndPeer.get(writer));
            final long srcKey = srcKeyAndPeer[0];
            final long peer = srcKeyAndPeer[1];
            for (int page = 0; page < PAGES; page++) {
                writer.write(new WriteDescriptor()
                        .token(token)
                        .source(src, (long) page * PAGE, srcKey, PAGE)
                        .target(peer, dst.address(), (long) (at + page) * PAGE, dstKey)
                        .imm(true, imm));
            }
        }

        void awaitImms(final int imms) {
            fixture.pollUntil(() -> events.imms.size() + refusedImms() >= imms
                    && first.outstanding() == 0
                    && second.outstanding() == 0);
        }

        int refusedImms() {
            return events.refused.values().stream().mapToInt(Integer::intValue).sum();
        }

        /** The bytes the target counts for {@code pages} landed pages: none on 1.x's tcp;ofi_rxm, whose entries say none. */
        long landedBytes(final String provider, final int pages) {
            return provider.equals("tcp") && FabricTestAccess.libraryVersion().startsWith("1.") ? 0 : pages * PAGE;
        }

        /** The key {@link Runs} files {@code writer}'s imms under: its address where the provider names writers. */
        String of(final FabricDomain writer, final String provider, final int imm) {
            return (provider.equals("shm") ? writer.address() : null) + "/" + imm;
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void aPagedWriteWithOneImmIsReservedAndCreditedOncePerPage(final String provider) {
        final Setup setup = new Setup(provider);
        setup.write(setup.first, 1, 7, 0);
        setup.write(setup.first, 2, 7, PAGES);
        setup.awaitImms(2 * PAGES);

        assertThat(setup.events.reserved)
                .containsExactlyEntriesOf(Map.of(setup.of(setup.first, provider, 7), 2 * PAGES));
        assertThat(setup.events.imms).hasSize(2 * PAGES).containsOnly(7);
        assertThat(setup.events.bytesReceived).isEqualTo(setup.landedBytes(provider, 2 * PAGES));
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void mixedImmsAndWritersAreReservedForTheirOwnAndRefusedRunsNeverCredited(final String provider) {
        final Setup setup = new Setup(provider);
        // posted without a poll between them, so that the target's batches mix writers and imms
        setup.write(setup.first, 1, 1, 0);
        setup.write(setup.second, 2, 1, PAGES);
        setup.write(setup.first, 3, 2, 2 * PAGES);
        setup.write(setup.second, 4, REFUSED_IMM, 3 * PAGES);
        setup.write(setup.first, 5, 1, 4 * PAGES);
        setup.write(setup.second, 6, 3, 5 * PAGES);
        setup.write(setup.first, 7, REFUSED_IMM, 6 * PAGES);
        setup.awaitImms(7 * PAGES);

        if (provider.equals("shm")) {
            assertThat(setup.events.reserved)
                    .containsExactlyInAnyOrderEntriesOf(Map.of(
                            setup.of(setup.first, provider, 1), 2 * PAGES,
                            setup.of(setup.second, provider, 1), PAGES,
                            setup.of(setup.first, provider, 2), PAGES,
                            setup.of(setup.second, provider, 3), PAGES));
            assertThat(setup.events.refused)
                    .containsExactlyInAnyOrderEntriesOf(Map.of(
                            setup.of(setup.first, provider, REFUSED_IMM), PAGES,
                            setup.of(setup.second, provider, REFUSED_IMM), PAGES));
        } else {
            assertThat(setup.events.reserved)
                    .containsExactlyInAnyOrderEntriesOf(Map.of("null/1", 3 * PAGES, "null/2", PAGES, "null/3", PAGES));
            assertThat(setup.events.refused).containsExactlyEntriesOf(Map.of("null/" + REFUSED_IMM, 2 * PAGES));
        }
        assertThat(setup.events.credited(1)).isEqualTo(3 * PAGES);
        assertThat(setup.events.credited(2)).isEqualTo(PAGES);
        assertThat(setup.events.credited(3)).isEqualTo(PAGES);
        assertThat(setup.events.imms).hasSize(5 * PAGES);
        assertThat(setup.events.bytesReceived).isEqualTo(setup.landedBytes(provider, 7 * PAGES));
    }
}
