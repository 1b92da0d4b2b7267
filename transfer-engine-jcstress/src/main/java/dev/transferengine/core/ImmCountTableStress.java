package dev.transferengine.core;

import dev.transferengine.EngineCounter;
import dev.transferengine.JcstressAccess;
import dev.transferengine.NetworkAddress;
import dev.transferengine.spi.DomainListener;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;
import org.openjdk.jcstress.infra.results.I_Result;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/** {@link ImmCountTable} under two NICs' workers reporting at once. */
public final class ImmCountTableStress {

    private ImmCountTableStress() {}

    private static final NetworkAddress PEER = NetworkAddress.of("tcp", new byte[] {1});
    private static final NetworkAddress OTHER_PEER = NetworkAddress.of("tcp", new byte[] {2});

    static ImmCountTable table(final CallbackDispatcher callbacks, final Counters counters, final int maxCredited) {
        return new ImmCountTable(callbacks, counters, maxCredited, Long.MAX_VALUE, 0);
    }

    static Counters counters() {
        return new Counters(List.of(2), JcstressAccess.transferCountersUpdater());
    }

    /** Two workers reserve the last place of the bound for two new values: exactly one gets it. */
    @JCStressTest
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the first worker took the last place")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the second worker took the last place")
    @Outcome(expect = FORBIDDEN, desc = "the bound was broken or a place was lost")
    @State
    public static class LastPlace {
        private final Counters counters = counters();
        private final ImmCountTable table = table(new CallbackDispatcher(counters), counters, 1);

        @Actor
        public void first(final II_Result r) {
            r.r1 = table.reserve(PEER, 1) == DomainListener.IMM_REFUSED ? 0 : 1;
        }

        @Actor
        public void second(final II_Result r) {
            r.r2 = table.reserve(PEER, 2) == DomainListener.IMM_REFUSED ? 0 : 1;
        }
    }

    /** Two workers each credit one imm of an expectation of two: it fires exactly once. */
    @JCStressTest
    @Outcome(id = "1", expect = ACCEPTABLE, desc = "fired once, after both imms")
    @Outcome(expect = FORBIDDEN, desc = "an imm was lost or counted twice")
    @State
    public static class ExpectationFiresOnce {
        private final Counters counters = counters();
        private final CallbackDispatcher callbacks = new CallbackDispatcher(counters);
        private final ImmCountTable table = table(callbacks, counters, 16);
        private final AtomicInteger fired = new AtomicInteger();

        public ExpectationFiresOnce() {
            table.expect(7, 2, imm -> {
                fired.incrementAndGet();
                return false;
            });
        }

        @Actor
        public void firstNic() {
            table.consume(table.reserve(PEER, 7));
        }

        @Actor
        public void secondNic() {
            table.consume(table.reserve(PEER, 7));
        }

        @Arbiter
        public void callbacksRan(final I_Result r) {
            while (callbacks.doWork() > 0) {
                // run what the workers dispatched
            }
            r.r1 = fired.get();
        }
    }

    /** One worker releases a reservation while another asks for the last place: the place is never lost. */
    @JCStressTest
    @Outcome(id = "1", expect = ACCEPTABLE, desc = "the place was free again, before or after the reservation")
    @Outcome(expect = FORBIDDEN, desc = "a released place stayed taken")
    @State
    public static class ReleaseFreesThePlace {
        private final Counters counters = counters();
        private final ImmCountTable table = table(new CallbackDispatcher(counters), counters, 1);
        private final long held = table.reserve(PEER, 1);

        @Actor
        public void abandon() {
            table.release(held);
        }

        @Actor
        public void other() {
            final long reservation = table.reserve(PEER, 2);
            if (reservation != DomainListener.IMM_REFUSED) {
                table.release(reservation);
            }
        }

        @Arbiter
        public void afterwards(final I_Result r) {
            r.r1 = table.reserve(PEER, 3) == DomainListener.IMM_REFUSED ? 0 : 1;
        }
    }

    /** Two peers' workers take the places of a bound of 2 at once: each gets its share, one place. */
    @JCStressTest
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "each peer got its share")
    @Outcome(expect = FORBIDDEN, desc = "a peer was starved or the bound was broken")
    @State
    public static class TwoPeersShareTheBound {
        private final Counters counters = counters();
        private final ImmCountTable table = table(new CallbackDispatcher(counters), counters, 2);

        @Actor
        public void first(final II_Result r) {
            r.r1 = table.reserve(PEER, 1) == DomainListener.IMM_REFUSED ? 0 : 1;
        }

        @Actor
        public void second(final II_Result r) {
            r.r2 = table.reserve(OTHER_PEER, 2) == DomainListener.IMM_REFUSED ? 0 : 1;
        }
    }

    /** The sweep expires an unclaimed credit while an API thread claims it: it ends up claimed or expired, once. */
    @JCStressTest
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "claimed before the sweep")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "expired before the claim")
    @Outcome(expect = FORBIDDEN, desc = "the credit was lost or counted twice")
    @State
    public static class ExpiryRacesAClaim {
        private final Counters counters = counters();
        private final ImmCountTable table = new ImmCountTable(new CallbackDispatcher(counters), counters, 4, 1, 0);

        public ExpiryRacesAClaim() {
            table.consume(table.reserve(PEER, 5));
        }

        @Actor
        public void sweep() {
            table.tick(1);
        }

        @Actor
        public void claim() {
            table.counter(5);
        }

        @Arbiter
        public void afterwards(final II_Result r) {
            r.r1 = (int) table.counter(5).balance();
            r.r2 = (int) counters.counter(EngineCounter.IMMS_EXPIRED);
        }
    }
}
