package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;
import dev.transferengine.spi.DomainListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * Negative acknowledgements on libfabric ({@link dev.transferengine.spi.Domain#abandonImm}): tagged messages with
 * {@link FabricOps#CONTROL_TAG}, sent from and received into buffers of the domain's own, never the user's receive
 * pools. A message is, little-endian: magic {@code "TENA"}, imm (int32), missing (int32), the sender's address
 * length (uint16) and bytes, the cause's length (uint16) and UTF-8 bytes, at most {@value #MESSAGE_BYTES} bytes in
 * all. The domain posts {@value #RECEIVES} receive buffers and reposts each once handled; a message that finds none
 * waits in the provider's unexpected queue. Single-threaded (the domain's worker).
 */
final class FabricControl {

    /** Largest control message, in bytes. */
    static final int MESSAGE_BYTES = 1024;
    /** Receive buffers posted at once. */
    static final int RECEIVES = 4;
    /** Control messages in flight at once; one more is dropped (and logged by the domain). */
    static final int SENDS = 16;

    private static final int MAGIC = 0x414E4554; // "TENA", little-endian
    private static final int HEADER = 4 + 4 + 4;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;

    private final MemorySegment receiveBuffers;
    private final MemorySegment sendBuffers;
    private final boolean[] sending = new boolean[SENDS];

    FabricControl(final Arena arena) {
        this.receiveBuffers = arena.allocate((long) RECEIVES * MESSAGE_BYTES, 64);
        this.sendBuffers = arena.allocate((long) SENDS * MESSAGE_BYTES, 64);
    }

    MemorySegment receiveBuffer(final int index) {
        return receiveBuffers.asSlice((long) index * MESSAGE_BYTES, MESSAGE_BYTES);
    }

    /** A free send buffer's index, now taken, or -1 when {@value #SENDS} messages are in flight. */
    int takeSend() {
        for (int i = 0; i < SENDS; i++) {
            if (!sending[i]) {
                sending[i] = true;
                return i;
            }
        }
        return -1;
    }

    void releaseSend(final int index) {
        sending[index] = false;
    }

    /** Encodes a message into send buffer {@code index}; returns the segment holding exactly its bytes. */
    MemorySegment encode(
            final int index, final NetworkAddress self, final int imm, final int missing, final String cause) {
        final MemorySegment buffer = sendBuffers.asSlice((long) index * MESSAGE_BYTES, MESSAGE_BYTES);
        final byte[] address = self.toBytes();
        final byte[] text = cause.getBytes(StandardCharsets.UTF_8);
        final int textLength = Math.min(text.length, MESSAGE_BYTES - HEADER - 4 - address.length);
        buffer.set(INT, 0, MAGIC);
        buffer.set(INT, 4, imm);
        buffer.set(INT, 8, missing);
        buffer.set(SHORT, HEADER, (short) address.length);
        MemorySegment.copy(address, 0, buffer, ValueLayout.JAVA_BYTE, HEADER + 2, address.length);
        final long at = HEADER + 2L + address.length;
        buffer.set(SHORT, at, (short) textLength);
        MemorySegment.copy(text, 0, buffer, ValueLayout.JAVA_BYTE, at + 2, textLength);
        return buffer.asSlice(0, at + 2 + textLength);
    }

    /**
     * Decodes the {@code length} bytes in receive buffer {@code index} and reports them; answers why a message that
     * is not one of ours was dropped, or an empty text once reported.
     */
    String decode(final int index, final int length, final DomainListener listener) {
        final MemorySegment buffer = receiveBuffer(index).asSlice(0, Math.clamp(length, 0, MESSAGE_BYTES));
        if (buffer.byteSize() < HEADER + 4 || buffer.get(INT, 0) != MAGIC) {
            return "a control message of " + length + " bytes without our magic";
        }
        final int imm = buffer.get(INT, 4);
        final int missing = buffer.get(INT, 8);
        final int addressLength = Short.toUnsignedInt(buffer.get(SHORT, HEADER));
        final long textAt = HEADER + 2L + addressLength;
        if (missing < 1 || textAt + 2 > buffer.byteSize()) {
            return "a control message with count " + missing + " and an address of " + addressLength + " bytes";
        }
        final int textLength = Short.toUnsignedInt(buffer.get(SHORT, textAt));
        if (textAt + 2 + textLength > buffer.byteSize()) {
            return "a control message whose cause of " + textLength + " bytes overruns it";
        }
        final NetworkAddress peer;
        try {
            peer = NetworkAddress.fromBytes(
                    buffer.asSlice(HEADER + 2, addressLength).toArray(ValueLayout.JAVA_BYTE));
        } catch (final RuntimeException e) {
            return "a control message with a bad sender address: " + e.getMessage();
        }
        final String cause = new String(
                buffer.asSlice(textAt + 2, textLength).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
        listener.onImmAbandoned(peer, imm, missing, cause);
        return "";
    }
}
