package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.ImmCounter;
import dev.transferengine.MemoryRegion;
import dev.transferengine.PagedWrite;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;
import dev.transferengine.test.TlsFixture;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.OptionalInt;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/** Paged writes over TLS, in both record layers, with PAGES frames and with WRITEV (the feature off). */
class TcpPagesTlsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int PAGE = 1024;
    private static final int PAGES = 1000;

    @ParameterizedTest(name = "tcp.tlsRecords={0}, tcp.pageTables={1}")
    @CsvSource({"engine, true", "jsse, true", "engine, false"})
    void aPagedWriteOverTlsLandsEveryPageWithOneImmEach(final String records, final String pageTables) {
        try (Arena arena = Arena.ofShared();
                TransferEngine sender = engine(records, pageTables);
                TransferEngine receiver = engine(records, pageTables)) {
            final MemorySegment source = arena.allocate((long) PAGES * PAGE);
            for (long i = 0; i < source.byteSize(); i += Long.BYTES) {
                source.set(ValueLayout.JAVA_LONG_UNALIGNED, i, 0x5EED_0000_0000L + i);
            }
            final MemorySegment destination = arena.allocate((long) PAGES * PAGE);
            final MemoryRegion from = sender.register(source, Device.host());
            final RegionDescriptor to =
                    receiver.register(destination, Device.host()).descriptor();
            final ImmCounter counter = receiver.immCounter(5);
            final int[] sourcePages = new int[PAGES];
            final int[] destinationPages = new int[PAGES];
            for (int p = 0; p < PAGES; p++) {
                sourcePages[p] = p;
                destinationPages[p] = PAGES - 1 - p;
            }

            final PagedWrite write =
                    new PagedWrite(from, 0, PAGE, sourcePages, to, 0, PAGE, destinationPages, PAGE, OptionalInt.of(5));
            assertThat(sender.submit(write)).succeedsWithin(WAIT);
            counter.await(PAGES, WAIT);

            for (int p = 0; p < PAGES; p++) {
                final MemorySegment landed = destination.asSlice((long) (PAGES - 1 - p) * PAGE, PAGE);
                assertThat(landed.mismatch(source.asSlice((long) p * PAGE, PAGE)))
                        .isEqualTo(-1);
            }
        }
    }

    private static TransferEngine engine(final String records, final String pageTables) {
        return TransferEngine.builder()
                .transport("tcp")
                .bindAddress("127.0.0.1")
                .tls(TlsFixture.trusted())
                .option(TcpSettings.TLS_RECORDS, records)
                .option(TcpSettings.PAGE_TABLES, pageTables)
                .build();
    }
}
