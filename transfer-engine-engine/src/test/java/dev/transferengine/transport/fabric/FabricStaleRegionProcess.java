package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The process of {@link FabricStaleRegionTest}: first puts in place the files that a killed process of its pid would
 * have left in /dev/shm under the names its shm endpoints take ({@code <pid>:<uid>:<index>}, the first
 * {@value #STALE} indices; even ones a page of zeros, odd ones empty, as left by a process killed before it sized
 * them), then opens two shm domains and writes {@value #BYTES} bytes from one to the other. Prints
 * {@code TOOK <whether each endpoint took one of those names>} and {@code MOVED <bytes that landed>}, or
 * {@code FAILED <exception>}, then removes the files no endpoint took and exits.
 */
public final class FabricStaleRegionProcess {

    static final int STALE = 4;
    static final int BYTES = 4096;

    private FabricStaleRegionProcess() {}

    public static void main(final String[] args) throws IOException {
        final List<Path> stale = new ArrayList<>();
        for (int index = 0; index < STALE; index++) {
            final Path file =
                    Path.of("/dev/shm", ProcessHandle.current().pid() + ":" + FabricShmKeys.OUR_UID + ":" + index);
            Files.write(file, new byte[index % 2 == 0 ? 4096 : 0]);
            stale.add(file);
        }
        try (FabricFixture fixture = new FabricFixture();
                Arena arena = Arena.ofShared()) {
            final RecordingDomainListener sourceEvents = new RecordingDomainListener();
            final RecordingDomainListener targetEvents = new RecordingDomainListener();
            final Domain source = fixture.open("shm", 0, sourceEvents);
            final Domain target = fixture.open("shm", 0, targetEvents);
            final List<Boolean> took = new ArrayList<>();
            for (final Domain domain : List.of(source, target)) {
                took.add(stale.contains(FabricShmRegion.path(FabricAddress.endpointName(domain.address(), "shm"))));
            }
            System.out.println("TOOK " + took);
            final MemorySegment from = arena.allocate(BYTES, 4096);
            for (int i = 0; i < BYTES; i++) {
                from.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
            }
            final MemorySegment to = arena.allocate(BYTES, 4096);
            final long toKey = target.register(to, Device.host());
            source.write(new WriteDescriptor()
                    .token(1)
                    .source(from, 0, source.register(from, Device.host()), BYTES)
                    .target(source.resolve(target.address()), to.address(), 0, toKey)
                    .imm(true, 7));
            fixture.pollUntil(() -> sourceEvents.ended(1) && targetEvents.imms.contains(7));
            System.out.println("MOVED " + (to.mismatch(from) == -1 ? BYTES : to.mismatch(from)));
        } catch (final RuntimeException e) {
            System.out.println("FAILED " + e.toString().replace('\n', ' '));
        } finally {
            System.out.flush();
            for (final Path file : stale) {
                Files.deleteIfExists(file); // those no endpoint took: the others went with the endpoints
            }
        }
    }
}
