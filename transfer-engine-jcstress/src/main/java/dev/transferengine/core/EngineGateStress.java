package dev.transferengine.core;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.I_Result;
import org.openjdk.jcstress.infra.results.ZZ_Result;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/** The engine's enter/exit/close gate ({@link EngineGate}) under an API caller and a closing thread. */
public final class EngineGateStress {

    private EngineGateStress() {}

    /** A caller that got in never sees what close tears down: close waits for it. */
    @JCStressTest
    @Outcome(id = "0", expect = ACCEPTABLE, desc = "refused: the engine was closing")
    @Outcome(id = "1", expect = ACCEPTABLE, desc = "entered and left before the workers stopped")
    @Outcome(id = "2", expect = FORBIDDEN, desc = "entered, yet saw the workers stopped")
    @State
    public static class CloseWaitsForCallersInside {
        private final EngineGate gate = new EngineGate();
        private volatile boolean workersStopped;

        @Actor
        public void caller(final I_Result r) {
            if (gate.tryEnter()) {
                r.r1 = workersStopped ? 2 : 1;
                gate.exit();
            } else {
                r.r1 = 0;
            }
        }

        @Actor
        public void closer() {
            if (gate.close()) {
                workersStopped = true;
            }
        }
    }

    /** Two threads close at once: exactly one of them does the closing. */
    @JCStressTest
    @Outcome(id = "true, false", expect = ACCEPTABLE, desc = "the first closed it")
    @Outcome(id = "false, true", expect = ACCEPTABLE, desc = "the second closed it")
    @Outcome(expect = FORBIDDEN, desc = "closed twice or not at all")
    @State
    public static class CloseOnce {
        private final EngineGate gate = new EngineGate();

        @Actor
        public void first(final ZZ_Result r) {
            r.r1 = gate.close();
        }

        @Actor
        public void second(final ZZ_Result r) {
            r.r2 = gate.close();
        }
    }
}
