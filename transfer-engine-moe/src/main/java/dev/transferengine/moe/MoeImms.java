package dev.transferengine.moe;

/**
 * The imm values of the exchange: one per kind, layer parity and sending rank, so a receiver counts each sender apart
 * (and can name the one that is missing) and a fast rank's next layer never credits this one's.
 */
final class MoeImms {

    static final int TOKENS = 2;
    static final int COMBINE = 3;
    static final int BARRIER = 4;
    private static final int PROBE = 5;
    private static final int ABORT = 6;

    /** The rank field of an abort whose failed rank is not known. */
    static final int UNKNOWN_RANK = 0xFFFF;

    private static final int TAG = 0x4D000000;

    private MoeImms() {}

    /** The imm of a {@code kind} message of {@code layer} sent by global rank {@code sender}. */
    static int of(final int kind, final int layer, final int sender) {
        return TAG | kind << 17 | (layer & 1) << 16 | sender;
    }

    /** The imm that tells every rank that global rank {@code failed} failed a layer; it stays set. */
    static int abort(final int failed) {
        return TAG | ABORT << 17 | failed;
    }

    /** The imm of a liveness probe; receivers only credit it. */
    static int probe(final int sender) {
        return TAG | PROBE << 17 | sender;
    }
}
