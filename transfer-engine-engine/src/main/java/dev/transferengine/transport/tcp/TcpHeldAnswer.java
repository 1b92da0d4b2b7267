package dev.transferengine.transport.tcp;

import dev.transferengine.spi.DeviceCopyStream;

import org.jspecify.annotations.Nullable;

/**
 * The answer to a request that {@link TcpInbound} holds back until its payload reached the device, or an earlier
 * one did: answers go in request order. A refusal held behind one has type NACK, its refusal code in {@code imm}
 * and the size to report in {@code length}; a READ_FAILED held behind one its reason code in {@code imm} and the read
 * id in {@code receiveToken}.
 *
 * @param reservation the imm's reservation, consumed when the answer is reported; {@code IMM_REFUSED} for none
 * @param stream      the stream of the payload's last copy to the device; null for a host target
 * @param ticket      that copy's ticket on {@code stream}
 * @param count       the requests it answers: the pages of a PAGES frame, else 1
 */
record TcpHeldAnswer(
        byte type,
        long id,
        int imm,
        long reservation,
        long length,
        long receiveToken,
        @Nullable DeviceCopyStream stream,
        long ticket,
        int count) {}
