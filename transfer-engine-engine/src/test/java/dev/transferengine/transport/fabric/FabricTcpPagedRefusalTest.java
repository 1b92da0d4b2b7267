package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * fabric/tcp paged writes: every page goes delivery-complete on its own (no chain: see {@link FabricDomain}, "Write
 * chains (shm)", and docs/benchmarks.md "fabric/tcp paged writes: why the inner pages keep their acknowledgement").
 * These pin what that argument rests on: a target that refuses a page drops the connection without an answer and
 * handles nothing behind it, so the refused page fails with a typed error, no page is reported done that did not
 * land, the pages before it landed, the pages behind it did not, and writes to the peer land again on a new
 * connection (those posted before RxM noticed the old one's end fail as unreachable). A request here is what the
 * engine makes of a paged write on one NIC; each page carries a token of its own so that the test can tell them
 * apart.
 */
class FabricTcpPagedRefusalTest {

    private static final int PAGE = 1024;
    private static final int PAGES = 16;
    /** The page that reaches past the target's region. */
    private static final int REFUSED = 8;
    /** The token of the write that connects to the peer before the request. */
    private static final long FIRST = 1000;
    /** The token of the first write after the request. */
    private static final long AFTER = 2000;

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        fixture.close();
        arena.close();
    }

    @Test
    void aRefusedInnerPageFailsTypedAndNothingBehindItLands() {
        FabricFixture.assumeAvailable("tcp");
        final EndCountingListener events = new EndCountingListener();
        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        final Domain initiator = fixture.open(FabricFixture.config("tcp", 1, Map.of()), 0, events);
        final Domain target = fixture.open(FabricFixture.config("tcp", 1, Map.of()), 0, targetEvents);
        final long peer = initiator.resolve(target.address());
        final MemorySegment src = arena.allocate((long) PAGES * PAGE, 4096);
        for (long i = 0; i < src.byteSize(); i++) {
            src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
        }
        // the region holds every page but the refused one, which the request writes past its end
        final MemorySegment dst = arena.allocate((long) PAGES * PAGE, 4096);
        final MemorySegment region = dst.asSlice(0, (long) REFUSED * PAGE);
        final long srcKey = initiator.register(src, Device.host());
        final long dstKey = target.register(region, Device.host());
        final MemorySegment untouched = arena.allocate((long) PAGES * PAGE);
        initiator.write(page(FIRST, 0, 0, peer, src, srcKey, region, dstKey));
        fixture.pollUntil(() -> events.completed.containsKey(FIRST) && targetEvents.imms.contains((int) FIRST));
        region.fill((byte) 0);
        targetEvents.imms.clear();

        for (int page = 0; page < PAGES; page++) {
            // the pages behind the refused one go to the region again, where they would land if the target read them
            final int at = page < REFUSED ? page : page == REFUSED ? REFUSED : page - REFUSED - 1;
            initiator.write(page(page, page, at, peer, src, srcKey, region, dstKey));
        }
        fixture.pollUntil(() -> {
            for (long page = 0; page < PAGES; page++) {
                if (!events.ended(page)) {
                    return false;
                }
            }
            return true;
        });

        // typed by the errno the socket was left with, since the target answers nothing (docs/benchmarks.md)
        assertThat(events.failed.get((long) REFUSED))
                .as("the refused page")
                .isInstanceOfAny(RemoteAccessException.class, PeerUnreachableException.class)
                .hasMessageContaining("tcp;ofi_rxm");
        for (long page = 0; page < PAGES; page++) {
            assertThat(events.ends.get(page)).as("reports of page %d", page).isEqualTo(1);
            if (page >= REFUSED) {
                assertThat(events.completed).as("pages done").doesNotContainKey(page);
            }
            if (events.failed.containsKey(page)) {
                assertThat(events.failed.get(page))
                        .as("page %d", page)
                        .isInstanceOfAny(RemoteAccessException.class, PeerUnreachableException.class);
            }
        }
        // the target handled the pages in their order and nothing after the one it refused
        fixture.pollUntil(() -> targetEvents.imms.size() >= REFUSED);
        assertThat(region.mismatch(src.asSlice(0, (long) REFUSED * PAGE)))
                .as("the pages before the refused one landed")
                .isEqualTo(-1);
        assertThat(targetEvents.imms).as("imms at the target").containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        assertThat(dst.asSlice((long) REFUSED * PAGE).mismatch(untouched.asSlice((long) REFUSED * PAGE)))
                .as("beyond the region")
                .isEqualTo(-1);

        // RxM reconnects once it has read the connection's end (FI_OFI_RXM_CM_PROGRESS_INTERVAL); a write posted before
        // that fails as unreachable, and the next one is posted then, until one goes on the new connection
        region.fill((byte) 0);
        final long[] after = {AFTER};
        initiator.write(page(after[0], 0, 0, peer, src, srcKey, region, dstKey));
        fixture.pollUntil(() -> {
            if (!events.ended(after[0])) {
                return false;
            }
            if (events.completed.containsKey(after[0])) {
                return true;
            }
            assertThat(events.failed.get(after[0])).isInstanceOf(PeerUnreachableException.class);
            initiator.write(page(++after[0], 0, 0, peer, src, srcKey, region, dstKey));
            return false;
        });
        fixture.pollUntil(() -> targetEvents.imms.contains((int) after[0]));
        assertThat(region.asSlice(0, PAGE).mismatch(src.asSlice(0, PAGE))).isEqualTo(-1);
        assertThat(initiator.failure()).isNull();
        assertThat(target.failure()).isNull();
    }

    /** Page {@code page} of {@code src} to page {@code at} of {@code region} ({@code at} may lie past its end). */
    private static WriteDescriptor page(
            final long token,
            final int page,
            final int at,
            final long peer,
            final MemorySegment src,
            final long srcKey,
            final MemorySegment region,
            final long dstKey) {
        return new WriteDescriptor()
                .token(token)
                .source(src, (long) page * PAGE, srcKey, PAGE)
                .target(peer, region.address(), (long) at * PAGE, dstKey)
                .imm(true, (int) token);
    }
}
