package dev.transferengine.test;

import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

/** Checksums of native memory for tests. */
public final class Checksums {

    private Checksums() {}

    /**
     * The CRC32C of every byte of {@code segment}.
     *
     * @param segment the bytes
     * @return their checksum
     */
    public static long crc32c(final MemorySegment segment) {
        final CRC32C crc = new CRC32C();
        crc.update(segment.asByteBuffer());
        return crc.getValue();
    }
}
