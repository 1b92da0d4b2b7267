package dev.transferengine.moe;

/** bfloat16, the top 16 bits of an IEEE float: conversions with round-to-nearest-even. */
public final class Bf16 {

    private Bf16() {}

    /**
     * Rounds a float to bf16 (nearest, ties to even); NaN stays a quiet NaN. Any thread; allocates nothing.
     *
     * @param value the float
     * @return its bf16 bits
     */
    public static short fromFloat(final float value) {
        if (Float.isNaN(value)) {
            return (short) 0x7FC0;
        }
        final int bits = Float.floatToRawIntBits(value);
        return (short) ((bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16);
    }

    /**
     * Widens bf16 bits to the float they stand for (exact). Any thread; allocates nothing.
     *
     * @param bits bf16 bits
     * @return the float
     */
    public static float toFloat(final short bits) {
        return Float.intBitsToFloat((bits & 0xFFFF) << 16);
    }
}
