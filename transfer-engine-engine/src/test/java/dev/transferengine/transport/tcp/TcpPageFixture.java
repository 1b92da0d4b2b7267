package dev.transferengine.transport.tcp;

import dev.transferengine.spi.DomainListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the tests of paged writes share: the loopback domains a test opens and the memory it allocates, both closed
 * after it, the source they write from and where each page goes.
 */
final class TcpPageFixture implements AutoCloseable {

    private final Arena arena = Arena.ofShared();
    private final List<TcpDomain> domains = new ArrayList<>();

    /** The test's memory, freed by {@link #close} after its domains closed. */
    Arena arena() {
        return arena;
    }

    /** Opens a loopback domain with {@code options} on an ephemeral port; {@link #close} closes it. */
    TcpDomain open(final DomainListener listener, final Map<String, String> options) {
        final TcpDomain domain = TcpDomains.open(listener, 0, 0, options);
        domains.add(domain);
        return domain;
    }

    /** {@code size} bytes from {@code arena}, byte i set to {@code i * 31 + 7}, so that a misplaced page shows. */
    static MemorySegment pattern(final Arena arena, final long size) {
        final MemorySegment segment = arena.allocate(size);
        for (long i = 0; i < size; i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
        }
        return segment;
    }

    /**
     * The target offset of page {@code i} of {@code pages} pages of {@code page} bytes: slot pages - 1 - i (in
     * reverse, so that no page lands where a copy in order would put it), or, for page {@code outOfBounds} (none
     * where -1), half a page past the end of a region of {@code pages} pages.
     */
    static long target(final int i, final int pages, final int page, final int outOfBounds) {
        return i == outOfBounds ? (long) pages * page + page / 2 : (long) (pages - 1 - i) * page;
    }

    @Override
    public void close() {
        domains.forEach(TcpDomain::close);
        arena.close();
    }
}
