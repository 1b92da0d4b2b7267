package dev.transferengine.core;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.Z_Result;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * Two callers of {@code send} copy their messages while one pooled buffer is free: each gets a buffer of its own,
 * holding its own bytes.
 */
@JCStressTest
@Outcome(id = "true", expect = ACCEPTABLE, desc = "two buffers, each with its caller's message")
@Outcome(id = "false", expect = FORBIDDEN, desc = "a buffer was shared or a message overwritten")
@State
public class SendBuffersStress {

    private static final int LENGTH = 100;

    private final Arena arena = Arena.ofShared();
    private final SendBuffers buffers = new SendBuffers();
    private final MemorySegment first = arena.allocate(LENGTH).fill((byte) 1);
    private final MemorySegment second = arena.allocate(LENGTH).fill((byte) 2);
    private MemorySegment firstCopy = MemorySegment.NULL;
    private MemorySegment secondCopy = MemorySegment.NULL;

    public SendBuffersStress() {
        buffers.release(buffers.copyOf(first)); // one free buffer for the two to race for
    }

    @Actor
    public void firstCaller() {
        firstCopy = buffers.copyOf(first);
    }

    @Actor
    public void secondCaller() {
        secondCopy = buffers.copyOf(second);
    }

    @Arbiter
    public void check(final Z_Result r) {
        r.r1 = firstCopy.address() != secondCopy.address()
                && MemorySegment.mismatch(firstCopy, 0, LENGTH, first, 0, LENGTH) == -1
                && MemorySegment.mismatch(secondCopy, 0, LENGTH, second, 0, LENGTH) == -1;
        buffers.close();
        arena.close();
    }
}
