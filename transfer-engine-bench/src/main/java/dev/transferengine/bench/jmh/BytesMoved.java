package dev.transferengine.bench.jmh;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * A secondary JMH result, {@code bytes}: payload bytes moved, reported as a rate in the benchmark's output unit
 * (bytes/s; divide by 10^9 for GB/s). Benchmarks add what each invocation posted.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.OPERATIONS)
public class BytesMoved {

    /** Payload bytes this iteration. */
    public long bytes;

    /** JMH keeps counters across iterations unless reset. */
    @Setup(Level.Iteration)
    public void reset() {
        bytes = 0;
    }
}
