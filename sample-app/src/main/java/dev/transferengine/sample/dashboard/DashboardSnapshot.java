package dev.transferengine.sample.dashboard;

import java.util.List;

/**
 * What the dashboard shows at one instant. Counters are totals since each engine started; the rates beside them are
 * averages over {@code sample.dashboard.rate-window} (see {@link DashboardHistory}), the same for every viewer.
 *
 * @param timeMillis when it was taken, milliseconds since the epoch
 * @param kvMode     how this node's KV pages move ({@code sample.kv.mode}): {@code push} or {@code pull}
 * @param engines    every {@code TransferEngine} bean, by bean name
 * @param latencies  the latency timers that publish percentiles
 */
public record DashboardSnapshot(long timeMillis, String kvMode, List<Engine> engines, List<Latency> latencies) {

    /**
     * One engine.
     *
     * @param name      its bean name
     * @param transport e.g. {@code tcp}
     * @param address   its main address
     * @param healthy   whether every worker runs
     * @param inFlight  requests and sends accepted and not yet ended
     * @param nics      every NIC of every group
     * @param peers     the peers its NICs talk to
     */
    public record Engine(
            String name,
            String transport,
            String address,
            boolean healthy,
            long inFlight,
            List<Nic> nics,
            List<Peer> peers) {

        /** The same engine with other NIC figures. */
        Engine withNics(final List<Nic> newNics) {
            return new Engine(name, transport, address, healthy, inFlight, newNics, peers);
        }
    }

    /**
     * One NIC's totals and rates.
     *
     * @param nic      {@code group.nic}
     * @param address  the NIC's address
     * @param healthy  whether it works
     * @param bytesOut payload bytes written and sent
     * @param bytesIn  payload bytes placed into local memory
     * @param imms     imm events received
     * @param writes   writes completed
     * @param rates    bytes and imm events per second over the rate window; zero in the first snapshot
     */
    public record Nic(
            String nic,
            String address,
            boolean healthy,
            long bytesOut,
            long bytesIn,
            long imms,
            long writes,
            Rates rates) {

        /** The same NIC with other rates. */
        Nic withRates(final Rates newRates) {
            return new Nic(nic, address, healthy, bytesOut, bytesIn, imms, writes, newRates);
        }
    }

    /**
     * Per-second rates of one NIC, averaged over a window.
     *
     * @param bytesOut      payload bytes sent per second
     * @param bytesIn       payload bytes received per second
     * @param imms          imm events per second
     * @param windowMillis  the span they are averaged over, milliseconds (shorter than the rate window while the
     *                      history is younger than it)
     */
    public record Rates(double bytesOut, double bytesIn, double imms, long windowMillis) {

        /** No rate yet. */
        static final Rates NONE = new Rates(0, 0, 0, 0);
    }

    /**
     * A peer one of the engine's NICs talks to.
     *
     * @param nic       the local NIC, {@code group.nic}
     * @param address   the peer's address
     * @param state     e.g. {@code CONNECTED}, {@code UNREACHABLE}
     * @param lastError its last failure, or empty
     */
    public record Peer(String nic, String address, String state, String lastError) {}

    /**
     * The recent percentiles of one timer.
     *
     * @param name       what it measures, for people (see {@link TimerNames})
     * @param meter      the Micrometer meter: its name and tags
     * @param count      events recorded since start
     * @param p50Millis  median, milliseconds
     * @param p90Millis  90th percentile, milliseconds
     * @param p99Millis  99th percentile, milliseconds
     */
    public record Latency(
            String name, String meter, long count, double p50Millis, double p90Millis, double p99Millis) {}
}
