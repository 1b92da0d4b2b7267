package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.NetAddr;
import dev.transferengine.TransferEngineException;
import dev.transferengine.spi.DomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Map;

/**
 * A manual two-process benchmark of one tcp domain pair over loopback; not a test. Start the target, then the
 * initiator with the key the target prints:
 *
 * <pre>
 *   java -cp ... dev.transferengine.transport.tcp.TcpDomainBenchmark target PORT SECONDS
 *   java -cp ... dev.transferengine.transport.tcp.TcpDomainBenchmark bw   PORT RKEY SIZE WINDOW SECONDS [SPAN]
 *   java -cp ... dev.transferengine.transport.tcp.TcpDomainBenchmark imm  PORT RKEY COUNT
 * </pre>
 *
 * {@code bw} keeps WINDOW writes of SIZE bytes in flight, cycling through SPAN bytes of source and region (default
 * 64 MiB; SPAN = SIZE keeps the memory cache-hot, as iperf3 does), and prints GB/s (10^9 bytes) and op/s; {@code imm} posts
 * imm-only writes one at a time and prints round-trip percentiles (post to ACK). Idle loops yield the core.
 */
public final class TcpDomainBenchmark {

    private static final long REGION = 64L << 20;
    /** {@code -Dbench.socketBufferBytes=N} passes the transport option through; unset keeps its default. */
    private static final Map<String, String> OPTIONS = System.getProperty("bench.socketBufferBytes") == null
            ? Map.of()
            : Map.of(TcpTransport.SOCKET_BUFFER_OPTION, System.getProperty("bench.socketBufferBytes"));

    private TcpDomainBenchmark() {}

    public static void main(final String[] args) {
        switch (args[0]) {
            case "target" -> target(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
            case "bw" ->
                bandwidth(
                        Integer.parseInt(args[1]),
                        Long.parseUnsignedLong(args[2], 16),
                        Integer.parseInt(args[3]),
                        Integer.parseInt(args[4]),
                        Integer.parseInt(args[5]),
                        args.length > 6 ? Long.parseLong(args[6]) : REGION);
            case "imm" ->
                immLatency(Integer.parseInt(args[1]), Long.parseUnsignedLong(args[2], 16), Integer.parseInt(args[3]));
            default -> throw new IllegalArgumentException("mode target|bw|imm, not " + args[0]);
        }
    }

    private static void target(final int port, final int seconds) {
        final Counting events = new Counting();
        try (Arena arena = Arena.ofShared();
                TcpDomain domain = TcpDomains.open(events, port, 0, OPTIONS)) {
            final long rkey = domain.register(arena.allocate(REGION, 4096), Device.host());
            System.out.println("READY " + Long.toHexString(rkey));
            System.out.flush();
            final long end = System.nanoTime() + seconds * 1_000_000_000L;
            while (System.nanoTime() - end < 0) {
                idle(domain.poll());
            }
            System.out.println("target received " + events.bytes + " bytes, " + events.imms + " imms");
        }
    }

    private static void bandwidth(
            final int port, final long rkey, final int size, final int window, final int seconds, final long span) {
        final Counting events = new Counting();
        try (Arena arena = Arena.ofShared();
                TcpDomain domain = TcpDomains.open(events, 0, 1, OPTIONS)) {
            final MemorySegment source = arena.allocate(REGION, 4096).fill((byte) 7);
            final long sourceKey = domain.register(source, Device.host());
            final long peer = domain.resolve(peerAddress(port));
            final int slots = (int) (Math.min(span, REGION) / size);
            long posted = 0;
            for (; posted < window; posted++) {
                post(domain, source, sourceKey, peer, rkey, size, slots, posted);
            }
            final long warmupEnd = System.nanoTime() + 1_000_000_000L;
            while (System.nanoTime() - warmupEnd < 0) {
                idle(domain.poll());
                for (; posted < events.done + window; posted++) {
                    post(domain, source, sourceKey, peer, rkey, size, slots, posted);
                }
            }
            final long startDone = events.done;
            final long start = System.nanoTime();
            final long end = start + seconds * 1_000_000_000L;
            long now;
            while ((now = System.nanoTime()) - end < 0) {
                idle(domain.poll());
                for (; posted < events.done + window; posted++) {
                    post(domain, source, sourceKey, peer, rkey, size, slots, posted);
                }
            }
            final double elapsed = (now - start) / 1e9;
            final long ops = events.done - startDone;
            System.out.printf(
                    "bw size=%d window=%d: %.3f GB/s, %.0f op/s, failures=%d%n",
                    size, window, ops * (double) size / elapsed / 1e9, ops / elapsed, events.failed);
        }
    }

    private static void immLatency(final int port, final long rkey, final int count) {
        final Counting events = new Counting();
        try (Arena arena = Arena.ofShared();
                TcpDomain domain = TcpDomains.open(events, 0, 1, OPTIONS)) {
            final MemorySegment source = arena.allocate(64);
            final long sourceKey = domain.register(source, Device.host());
            final long peer = domain.resolve(peerAddress(port));
            final long[] rounds = new long[count];
            for (int i = -count / 10; i < count; i++) {
                final long before = events.done;
                final long start = System.nanoTime();
                domain.write(new WriteDescriptor()
                        .token(i)
                        .source(source, 0, sourceKey, 0)
                        .target(peer, 0, 0, rkey)
                        .imm(true, i));
                while (events.done == before) {
                    domain.poll();
                }
                if (i >= 0) {
                    rounds[i] = System.nanoTime() - start;
                }
            }
            Arrays.sort(rounds);
            System.out.printf(
                    "imm round trip over %d: p50 %.1f us, p90 %.1f us, p99 %.1f us, failures=%d%n",
                    count,
                    rounds[count / 2] / 1e3,
                    rounds[count * 9 / 10] / 1e3,
                    rounds[count * 99 / 100] / 1e3,
                    events.failed);
        }
    }

    /** {@code -Dbench.idleParkNanos=N} parks that long when idle instead of yielding. */
    private static final long IDLE_PARK_NANOS = Long.getLong("bench.idleParkNanos", 0);

    /** Gives the core away when there was nothing to do, as the engine's idle strategies do. */
    @SuppressWarnings("ThreadPriorityCheck") // yielding is the point: two spinning peers share the cores
    private static void idle(final int work) {
        if (work == 0) {
            if (IDLE_PARK_NANOS > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(IDLE_PARK_NANOS);
            } else {
                Thread.yield();
            }
        }
    }

    private static void post(
            final TcpDomain domain,
            final MemorySegment source,
            final long sourceKey,
            final long peer,
            final long rkey,
            final int size,
            final int slots,
            final long index) {
        final long offset = (index % slots) * size;
        domain.write(new WriteDescriptor()
                .token(index)
                .source(source, offset, sourceKey, size)
                .target(peer, 0, offset, rkey)
                .imm(true, (int) index));
    }

    private static NetAddr peerAddress(final int port) {
        return TcpAddress.toNetAddr(new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), port));
    }

    /** Counts completions; failures are counted, not thrown, so a run always reports. */
    private static final class Counting implements DomainListener {
        long done;
        long failed;
        long bytes;
        long imms;

        @Override
        public void onWriteComplete(final long token, final long length) {
            done++;
        }

        @Override
        public void onWriteFailed(final long token, final TransferEngineException error) {
            done++;
            failed++;
        }

        @Override
        public void onSendComplete(final long token, final long length) {
            done++;
        }

        @Override
        public void onSendFailed(final long token, final TransferEngineException error) {
            done++;
            failed++;
        }

        @Override
        public void onReceive(final long token, final int length) {}

        @Override
        public void onImm(final int imm) {
            imms++;
        }

        @Override
        public void onBytesReceived(final long length) {
            bytes += length;
        }
    }
}
