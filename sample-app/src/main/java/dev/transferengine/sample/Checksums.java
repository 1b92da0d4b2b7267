package dev.transferengine.sample;

import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

/** CRC32C over ranges of memory segments, the integrity check of both scenarios. */
public final class Checksums {

    private Checksums() {}

    /**
     * The CRC32C of {@code length} bytes of {@code segment} from {@code offset}.
     *
     * @param segment the memory
     * @param offset  first byte
     * @param length  number of bytes
     * @return the checksum, in the low 32 bits
     */
    public static long crc32c(final MemorySegment segment, final long offset, final long length) {
        final CRC32C crc = new CRC32C();
        update(crc, segment, offset, length);
        return crc.getValue();
    }

    /**
     * Adds {@code length} bytes of {@code segment} from {@code offset} to {@code crc}.
     *
     * @param crc     the running checksum
     * @param segment the memory
     * @param offset  first byte
     * @param length  number of bytes
     */
    public static void update(final CRC32C crc, final MemorySegment segment, final long offset, final long length) {
        crc.update(segment.asSlice(offset, length).asByteBuffer());
    }
}
