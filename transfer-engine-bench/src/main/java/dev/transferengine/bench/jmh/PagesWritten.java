package dev.transferengine.bench.jmh;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** A secondary JMH result, {@code pages}: pages posted, reported as pages/s beside the requests/s score. */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.OPERATIONS)
public class PagesWritten {

    /** Pages this iteration. */
    public long pages;

    /** JMH keeps counters across iterations unless reset. */
    @Setup(Level.Iteration)
    public void reset() {
        pages = 0;
    }
}
