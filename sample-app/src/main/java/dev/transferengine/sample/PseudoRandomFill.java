package dev.transferengine.sample;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/** Fills memory with deterministic pseudo-random bytes, so that every transfer carries different, checkable data. */
public final class PseudoRandomFill {

    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED;

    private PseudoRandomFill() {}

    /**
     * Overwrites {@code length} bytes of {@code segment} from {@code offset} with bytes drawn from {@code seed}.
     *
     * @param segment the memory
     * @param offset  first byte
     * @param length  number of bytes
     * @param seed    the same seed gives the same bytes
     */
    public static void fill(final MemorySegment segment, final long offset, final long length, final long seed) {
        final SplittableRandom random = new SplittableRandom(seed);
        final long words = length / Long.BYTES;
        for (long i = 0; i < words; i++) {
            segment.set(WORD, offset + i * Long.BYTES, random.nextLong());
        }
        for (long i = words * Long.BYTES; i < length; i++) {
            segment.set(ValueLayout.JAVA_BYTE, offset + i, (byte) random.nextInt());
        }
    }
}
