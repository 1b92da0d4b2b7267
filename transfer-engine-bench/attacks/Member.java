import dev.transferengine.Device;
import dev.transferengine.EngineCounter;
import dev.transferengine.GroupSpec;
import dev.transferengine.ImmCountListener;
import dev.transferengine.ImmWrite;
import dev.transferengine.MemoryRegion;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PagedWrite;
import dev.transferengine.ReceivePool;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SingleRead;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.TransferListener;
import dev.transferengine.TransportEvent;
import dev.transferengine.TransportTls;
import dev.transferengine.WriteRequest;
import dev.transferengine.exceptions.ImmAbandonedException;
import dev.transferengine.exceptions.TransferEngineException;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The legitimate side of the outside attacks (issue 16): engines in their own JVMs, run from the built te-bench.jar
 * with {@code java -cp te-bench.jar Member.java MODE ...}. Engine settings come from system properties:
 * {@code -Dkey=<cluster key>}, {@code -Dtls=<PKCS12 key store, password changeit>}, {@code -Dtransport=tcp|fabric},
 * {@code -Dprovider=tcp|shm}, {@code -Dbind=<address>}, {@code -DmaxUnexpectedImms=<n>}, {@code -Dopt.<engine option>=<value>}; the target's
 * {@code -Dclaim=false} leaves every imm unexpected (no listener claims it), its {@code -Ddevice=cuda:0} puts its region
 * in GPU memory ({@link TargetMemory}), its {@code -Dmemory=engine} has the engine allocate it
 * ({@code TransferEngine.allocate}; the default {@code raw}: the application allocates and registers it).
 *
 * <pre>
 * target SIZE          registers SIZE bytes, prints "te-target &lt;descriptor text&gt;", then answers stdin lines:
 *                      report (JSON: healthy, heap after GC, imms, receives, peers, events, non-zero bytes, bytes
 *                      no member wrote, changed bytes of the 1 MiB guards around the region),
 *                      free (frees the region's memory without deregistering: closes its arena, or cuMemFree and
 *                      a zeroed allocation of the same size, whose non-zero bytes the next report counts; with
 *                      -Dmemory=engine: deregister, and a new engine allocation of the same size), quit
 * writer DESC FILE     writes 64 KiB to DESC with 16 in flight until FILE exists, then times a fresh engine's way in
 * relayed DESC PORT    writes and sends to DESC's region through 127.0.0.1:PORT (a relay), then to DESC itself
 * imms DESC FIRST N W  N zero-byte imms FIRST.. (W in flight), prints how many landed and how many were refused
 * sends ADDR N W       N 1 KiB sends to ADDR, W in flight; prints delivered and refused
 * hammer DESC FILE     writes 4 KiB to DESC until FILE exists and for 2 s more; counts writes ACKed after FILE
 *                      ({@code -Dpages=N}: paged writes of N 4 KiB pages instead)
 * victim DESC FILE     writes 64 KiB to DESC with 16 in flight until FILE exists (through a man in the middle);
 *                      prints writes done and failed, the first failure and how long until a write landed after it
 * overrun DESC         single and paged writes (with an imm) and reads past the end of DESC's region, with the true
 *                      descriptor and with forged ones (twice the length, Long.MAX_VALUE); prints each outcome
 * (imms and sends with -Dready=FILE print "te-member ADDRESS" and wait for FILE first; the target with
 *  -Dexpect=FIRST:N waits for imms FIRST.. with expectations, and its report counts those reached and abandoned)
 * api                  issue 16 item 9: a null listener, maxInFlight(-1), postedReceivePool(1 &lt;&lt; 30, 4)
 * </pre>
 */
public final class Member {

    public static void main(final String[] args) throws Exception {
        switch (args[0]) {
            case "target" -> target(Long.parseLong(args[1]));
            case "writer" -> writer(RegionDescriptor.parse(args[1]), Path.of(args[2]));
            case "relayed" -> relayed(RegionDescriptor.parse(args[1]), Integer.parseInt(args[2]));
            case "imms" -> imms(RegionDescriptor.parse(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                    Integer.parseInt(args[4]));
            case "sends" -> sends(NetworkAddress.parse(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]));
            case "hammer" -> hammer(RegionDescriptor.parse(args[1]), Path.of(args[2]));
            case "victim" -> victim(RegionDescriptor.parse(args[1]), Path.of(args[2]));
            case "overrun" -> overrun(RegionDescriptor.parse(args[1]));
            case "api" -> api();
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    static TransferEngine open() throws Exception {
        TransferEngineBuilder builder = TransferEngine.builder().transport(System.getProperty("transport", "tcp"));
        if (System.getProperty("bind") != null) {
            builder.bindAddress(System.getProperty("bind"));
        }
        if (System.getProperty("key") != null) {
            builder.option("tcp.clusterKey", System.getProperty("key"));
        }
        if (System.getProperty("maxUnexpectedImms") != null) {
            builder.maxUnexpectedImms(Integer.parseInt(System.getProperty("maxUnexpectedImms")));
        }
        if (System.getProperty("provider") != null) {
            builder.option("fabric.provider", System.getProperty("provider"));
        }
        for (final String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith("opt.")) {
                builder.option(name.substring(4), System.getProperty(name));
            }
        }
        final String device = System.getProperty("device", "host");
        if (device.startsWith("cuda:")) { // GPU memory registers only with a group that serves its device
            builder.group(GroupSpec.of(1).withCudaDevice(Integer.parseInt(device.substring("cuda:".length()))));
        }
        if (System.getProperty("tls") != null) {
            builder.tls(new TransportTls(sslContext(Path.of(System.getProperty("tls"))), true, List.of(), List.of()));
        }
        return builder.build();
    }

    static SSLContext sslContext(final Path path) throws Exception {
        final char[] password = "changeit".toCharArray();
        final KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(path)) {
            store.load(in, password);
        }
        final KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, password);
        final TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(store);
        final SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys.getKeyManagers(), trust.getTrustManagers(), null);
        return context;
    }

    // ---------------------------------------------------------------------------------------------- the target

    static void target(final long size) throws Exception {
        final AtomicLong imms = new AtomicLong();
        final AtomicLong receives = new AtomicLong();
        try (TransferEngine engine = open()) {
            final TargetMemory memory = TargetMemory.allocate(
                    System.getProperty("memory", "raw"), System.getProperty("device", "host"), size, engine);
            final MemoryRegion region = memory.region();
            if (Boolean.parseBoolean(System.getProperty("claim", "true"))) {
                engine.onImm(imm -> imms.incrementAndGet()); // else imms stay unexpected: nobody claims them
            }
            expect(engine);
            final ReceivePool pool = engine.postedReceivePool(4096, 4, message -> receives.incrementAndGet());
            System.out.println("te-target " + region.descriptor().toText() + " " + engine.mainAddress() + " "
                    + port(engine.mainAddress()));
            System.out.flush();
            final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null && !line.equals("quit"); line = in.readLine()) {
                System.out.println(line.equals("free")
                        ? "{" + memory.free() + "}"
                        : report(engine, imms.get(), receives.get(), memory));
                System.out.flush();
            }
            pool.close();
        }
    }

    /** Expectations reached and abandoned (-Dexpect), and the first abandonment's text. */
    static final AtomicLong REACHED = new AtomicLong();

    static final AtomicLong ABANDONED = new AtomicLong();
    static final AtomicReference<String> FIRST_ABANDONMENT = new AtomicReference<>();

    /**
     * With {@code -Dexpect=FIRST:N}: waits for one imm of each value FIRST to FIRST + N - 1 (an expectation each,
     * {@code TransferEngine.expectImmCount}), counting those reached and those a negative acknowledgement ended.
     */
    static void expect(final TransferEngine engine) {
        final String expect = System.getProperty("expect");
        if (expect == null) {
            return;
        }
        final int first = Integer.parseInt(expect.split(":")[0]);
        final int count = Integer.parseInt(expect.split(":")[1]);
        for (int imm = first; imm < first + count; imm++) {
            engine.expectImmCount(imm, 1, new ImmCountListener() {
                @Override
                public boolean onReached(final int value) {
                    REACHED.incrementAndGet();
                    return false;
                }

                @Override
                public void onAbandoned(final ImmAbandonedException abandoned) {
                    ABANDONED.incrementAndGet();
                    FIRST_ABANDONMENT.compareAndSet(null, abandoned.getMessage());
                }
            });
        }
    }

    /** The TCP port of a tcp address (port little-endian after the family) or of a fabric/tcp one (a sockaddr_in). */
    static int port(final NetworkAddress address) {
        final byte[] payload = address.payload();
        if (address.transport().equals("tcp")) {
            return (payload[1] & 0xFF) | ((payload[2] & 0xFF) << 8);
        }
        final int name = 1 + (payload[0] & 0xFF);
        final String provider = new String(payload, 1, payload[0] & 0xFF, StandardCharsets.US_ASCII);
        return provider.startsWith("tcp") ? ((payload[name + 2] & 0xFF) << 8) | (payload[name + 3] & 0xFF) : -1;
    }

    static String report(final TransferEngine engine, final long imms, final long receives, final TargetMemory memory) {
        final long nonZero = memory.nonZeroBytes();
        final long foreign = memory.foreignBytes();
        final long guardChanged = memory.guardBytesChanged();
        System.gc();
        final MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        final Map<String, Object> out = new LinkedHashMap<>();
        out.put("healthy", engine.isHealthy());
        out.put("heap_used_after_gc", heap.getUsed());
        out.put("heap_max", heap.getMax());
        out.put("imm_events", imms);
        out.put("receives", receives);
        out.put("imms_refused", engine.metrics().counter(EngineCounter.IMMS_REFUSED));
        out.put("expectations_reached", REACHED.get());
        out.put("expectations_abandoned", ABANDONED.get());
        out.put("first_abandonment", FIRST_ABANDONMENT.get());
        out.put("imms_expired", engine.metrics().counter(EngineCounter.IMMS_EXPIRED));
        out.put("regions_freed", engine.metrics().counter(EngineCounter.REGIONS_FREED));
        out.put("worker_restarts", engine.metrics().counter(EngineCounter.WORKER_RESTARTS));
        out.put("peers", engine.peers().size());
        out.put("non_zero_bytes", nonZero);
        out.put("foreign_bytes", foreign);
        out.put("guard_bytes_changed", guardChanged);
        final StringBuilder events = new StringBuilder();
        for (final TransportEvent event : engine.transportEvents()) {
            events.append(events.isEmpty() ? "" : ",").append('"').append(event.category()).append('/')
                    .append(event.reason()).append("\":").append(event.count());
        }
        return json(out).replaceFirst("}$", ",\"events\":{" + events + "}}");
    }

    // ---------------------------------------------------------------------------------------------- members

    static void writer(final RegionDescriptor target, final Path floodClosed) throws Exception {
        final int size = 64 * 1024;
        final long slots = target.length() / size;
        try (Arena arena = Arena.ofShared(); TransferEngine engine = open()) {
            final MemorySegment data = pattern(arena, size);
            final MemoryRegion source = engine.register(data, Device.host());
            // the first write: retried until it lands (a newcomer may be refused while handshake slots are full)
            final long joining = System.nanoTime();
            int joinAttempts = 0;
            while (true) {
                joinAttempts++;
                try {
                    engine.submit(SingleWrite.of(source, 0, size, target, 0)).get(60, TimeUnit.SECONDS);
                    break;
                } catch (final ExecutionException e) {
                    if (System.nanoTime() - joining > TimeUnit.SECONDS.toNanos(120)) {
                        throw e;
                    }
                    Thread.sleep(20);
                }
            }
            final long joinedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - joining);
            System.out.println("{\"writer\":\"connected\"}");
            System.out.flush();
            final TransferCounters counters = new TransferCounters();
            long submitted = 0;
            while (!Files.exists(floodClosed)) {
                while (submitted - counters.completed() >= 16) {
                    Thread.onSpinWait();
                }
                engine.submit(SingleWrite.of(source, 0, size, target, (submitted % slots) * size), counters);
                submitted++;
            }
            counters.awaitCompleted(submitted, Duration.ofSeconds(120));
            final long closed = System.nanoTime();
            long recoveryMs = -1; // never, within 60 s
            int attempts = 0;
            String lastError = null;
            try (TransferEngine newcomer = open()) {
                final MemoryRegion from = newcomer.register(data, Device.host());
                while (recoveryMs < 0 && System.nanoTime() - closed < TimeUnit.SECONDS.toNanos(60)) {
                    attempts++;
                    try {
                        newcomer.submit(SingleWrite.of(from, 0, size, target, 0)).get(60, TimeUnit.SECONDS);
                        recoveryMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closed);
                    } catch (final ExecutionException | java.util.concurrent.TimeoutException e) {
                        lastError = String.valueOf(e.getCause());
                        Thread.sleep(20);
                    }
                }
            }
            final Map<String, Object> out = new LinkedHashMap<>();
            out.put("joined_ms", joinedMs);
            out.put("join_attempts", joinAttempts);
            out.put("writes", counters.completed());
            out.put("failed", counters.failed());
            out.put("newcomer_in_ms_after_flood_closed", recoveryMs);
            out.put("newcomer_attempts", attempts);
            out.put("newcomer_last_error", recoveryMs < 0 ? lastError : null);
            System.out.println(json(out));
        }
    }

    static void relayed(final RegionDescriptor genuine, final int relayPort) throws Exception {
        final byte[] relayAddress = {4, (byte) relayPort, (byte) (relayPort >>> 8), 127, 0, 0, 1};
        final NetworkAddress relay = NetworkAddress.of("tcp", relayAddress);
        final RegionDescriptor forged = new RegionDescriptor(genuine.address(), genuine.length(),
                List.of(new RegionDescriptor.Nic(relay, genuine.nic(0).rkey())), genuine.access());
        final Map<String, Object> out = new LinkedHashMap<>();
        try (Arena arena = Arena.ofShared(); TransferEngine engine = open()) {
            final MemorySegment data = pattern(arena, 4096);
            final MemoryRegion source = engine.register(data, Device.host());
            out.put("write_imm_via_relay", outcome(() -> engine.submit(
                    SingleWrite.of(source, 0, 4096, forged, 0).withImm(7)).get(60, TimeUnit.SECONDS)));
            out.put("send_via_relay", outcome(() -> engine.send(relay, new byte[] {1, 2, 3}).get(60, TimeUnit.SECONDS)));
            out.put("events", events(engine));
            out.put("write_imm_to_genuine", outcome(() -> engine.submit(
                    SingleWrite.of(source, 0, 4096, genuine, 8192).withImm(8)).get(60, TimeUnit.SECONDS)));
        }
        System.out.println(json(out));
    }

    static void imms(final RegionDescriptor target, final int first, final int count, final int window)
            throws Exception {
        try (TransferEngine engine = open()) {
            final Tally tally = new Tally();
            awaitReady(engine);
            tally.post(count, window, i -> engine.submit(ImmWrite.of(target, first + i), tally));
            tally.print("imms", count, "landed");
        }
    }

    static void sends(final NetworkAddress to, final int count, final int window) throws Exception {
        try (Arena arena = Arena.ofShared(); TransferEngine engine = open()) {
            final MemorySegment message = pattern(arena, 1024);
            final Tally tally = new Tally();
            awaitReady(engine);
            tally.post(count, window, i -> engine.send(to, message, tally));
            tally.print("sends", count, "delivered");
        }
    }

    /**
     * With {@code -Dready=FILE}: prints "te-member ADDRESS" (this engine's address, for an outsider to forge control
     * messages in its name), then waits until FILE exists (up to 120 s) before the mode's work begins.
     */
    static void awaitReady(final TransferEngine engine) throws InterruptedException {
        final String ready = System.getProperty("ready");
        if (ready == null) {
            return;
        }
        System.out.println("te-member " + engine.mainAddress());
        System.out.flush();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!Files.exists(Path.of(ready)) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
    }

    static void hammer(final RegionDescriptor target, final Path freed) throws Exception {
        final int pages = Integer.getInteger("pages", 0);
        final int size = 4096 * Math.max(1, pages);
        try (Arena arena = Arena.ofShared(); TransferEngine engine = open()) {
            final MemoryRegion source = engine.register(pattern(arena, size), Device.host());
            final WriteRequest write = pages == 0
                    ? SingleWrite.of(source, 0, size, target, 0)
                    : PagedWrite.of(source, target, 4096, IntStream.range(0, pages).toArray());
            engine.submit(write).get(60, TimeUnit.SECONDS);
            System.out.println("{\"hammer\":\"connected\"}");
            System.out.flush();
            long before = 0;
            long after = 0;
            long refused = 0;
            String firstRefusal = null;
            long freedAt = 0;
            while (freedAt == 0 || System.nanoTime() - freedAt < TimeUnit.SECONDS.toNanos(2)) {
                final boolean known = freedAt != 0;
                try {
                    engine.submit(write).get(60, TimeUnit.SECONDS);
                    if (known) {
                        after++;
                    } else {
                        before++;
                    }
                } catch (final ExecutionException e) {
                    refused++;
                    firstRefusal = firstRefusal == null ? e.getCause().toString() : firstRefusal;
                }
                if (freedAt == 0 && Files.exists(freed)) {
                    freedAt = System.nanoTime();
                }
            }
            final Map<String, Object> out = new LinkedHashMap<>();
            out.put("acked_before_free_seen", before);
            out.put("acked_after_free_seen", after);
            out.put("refused", refused);
            out.put("first_refusal", firstRefusal);
            System.out.println(json(out));
        }
    }

    static void victim(final RegionDescriptor target, final Path stop) throws Exception {
        final int size = 64 * 1024;
        final long slots = target.length() / size;
        final long started = System.nanoTime();
        final AtomicLong firstFailure = new AtomicLong();
        final AtomicLong landedAfterFailure = new AtomicLong();
        final Tally tally = new Tally() {
            @Override
            public void onDone() {
                if (firstFailure.get() != 0) {
                    landedAfterFailure.compareAndSet(0, System.nanoTime());
                }
                super.onDone();
            }

            @Override
            public void onError(final TransferEngineException error) {
                firstFailure.compareAndSet(0, System.nanoTime());
                super.onError(error);
            }
        };
        try (Arena arena = Arena.ofShared(); TransferEngine engine = open()) {
            final MemoryRegion source = engine.register(pattern(arena, size), Device.host());
            engine.submit(SingleWrite.of(source, 0, size, target, 0)).get(60, TimeUnit.SECONDS);
            System.out.println("{\"victim\":\"connected\"}");
            System.out.flush();
            long submitted = 0;
            while (!Files.exists(stop)) {
                while (submitted - tally.completed() >= 16) {
                    Thread.onSpinWait();
                }
                engine.submit(SingleWrite.of(source, 0, size, target, (submitted % slots) * size), tally);
                submitted++;
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (tally.completed() < submitted && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            final Map<String, Object> out = new LinkedHashMap<>();
            out.put("victim_writes", submitted);
            out.put("landed", tally.done.get());
            out.put("failed", tally.failed.get());
            out.put("first_failure", tally.firstError.get());
            out.put("first_failure_after_ms", firstFailure.get() == 0
                    ? -1 : TimeUnit.NANOSECONDS.toMillis(firstFailure.get() - started));
            out.put("landed_again_after_ms", landedAfterFailure.get() == 0
                    ? -1 : TimeUnit.NANOSECONDS.toMillis(landedAfterFailure.get() - firstFailure.get()));
            out.put("events", events(engine));
            System.out.println(json(out));
        }
    }

    static void overrun(final RegionDescriptor genuine) throws Exception {
        final int page = 4096;
        final long length = genuine.length();
        final int last = (int) (length / page) - 1; // the region's last page
        final Map<String, Object> out = new LinkedHashMap<>();
        try (Arena arena = Arena.ofShared(); TransferEngine engine = open()) {
            final MemoryRegion source = engine.register(pattern(arena, 64 * page), Device.host());
            final MemoryRegion sink = engine.register(arena.allocate(64 * page, page), Device.host());
            final Map<String, RegionDescriptor> descriptors = new LinkedHashMap<>();
            descriptors.put("true", genuine);
            descriptors.put("2x", withLength(genuine, 2 * length));
            descriptors.put("max", withLength(genuine, Long.MAX_VALUE));
            descriptors.forEach((name, to) -> {
                out.put(name + " write past the end", outcome(() -> engine.submit(
                        SingleWrite.of(source, 0, page, to, length)).get(60, TimeUnit.SECONDS)));
                out.put(name + " write straddling the end", outcome(() -> engine.submit(
                        SingleWrite.of(source, 0, 2 * page, to, length - page)).get(60, TimeUnit.SECONDS)));
                out.put(name + " imm write 1 MiB past", outcome(() -> engine.submit(
                        SingleWrite.of(source, 0, page, to, length + (1 << 20) - page).withImm(5))
                        .get(60, TimeUnit.SECONDS)));
                // paged: an outside page first (an inner, injected page on fabric/shm), the last page inside; an
                // outside page between two inside; 16 contiguous pages across the end, with an imm
                out.put(name + " paged outside page first", outcome(() -> engine.submit(new PagedWrite(
                        source, 0, page, new int[] {0, 1}, to, 0, page, new int[] {last + 1, last}, page,
                        java.util.OptionalInt.empty())).get(60, TimeUnit.SECONDS)));
                out.put(name + " paged outside page inner", outcome(() -> engine.submit(new PagedWrite(
                        source, 0, page, new int[] {0, 1, 2}, to, 0, page, new int[] {last - 1, last + 8, last},
                        page, java.util.OptionalInt.empty())).get(60, TimeUnit.SECONDS)));
                out.put(name + " paged across the end", outcome(() -> engine.submit(new PagedWrite(
                        source, 0, page, IntStream.range(0, 16).toArray(), to, 0, page,
                        IntStream.range(last - 7, last + 9).toArray(), page, java.util.OptionalInt.of(6)))
                        .get(60, TimeUnit.SECONDS)));
                out.put(name + " read past the end", outcome(() -> engine.submit(
                        SingleRead.of(to, length, page, sink, 0)).get(60, TimeUnit.SECONDS)));
            });
            out.put("sink_non_zero_bytes", TargetMemory.count(sink.segment()));
            out.put("still_writes", outcome(() -> engine.submit(
                    SingleWrite.of(source, 0, page, genuine, 0)).get(60, TimeUnit.SECONDS)));
            out.put("events", events(engine));
        }
        System.out.println(json(out));
    }

    static RegionDescriptor withLength(final RegionDescriptor genuine, final long length) {
        return new RegionDescriptor(genuine.address(), length, genuine.nics(), genuine.access());
    }

    static void api() throws Exception {
        final Map<String, Object> out = new LinkedHashMap<>();
        out.put("maxInFlight(-1)", outcome(() -> TransferEngine.builder().maxInFlight(-1).build().close()));
        try (Arena arena = Arena.ofShared(); TransferEngine engine = open()) {
            final MemoryRegion region = engine.register(arena.allocate(4096), Device.host());
            final SingleWrite write = SingleWrite.of(region, 0, 64, region.descriptor(), 1024);
            out.put("submit(write, null listener)", outcome(() -> engine.submit(write, (TransferListener) null)));
            out.put("send(.., null listener)",
                    outcome(() -> engine.send(engine.mainAddress(), arena.allocate(8), (TransferListener) null)));
            out.put("postedReceivePool(1<<30, 4)", outcome(() -> engine.postedReceivePool(1 << 30, 4, m -> {})));
            out.put("postedReceivePool(4096, 4, null)", outcome(() -> engine.postedReceivePool(4096, 4, null)));
            out.put("still_writes", outcome(() -> engine.submit(write).get(30, TimeUnit.SECONDS)));
        }
        System.out.println(json(out));
    }

    // ---------------------------------------------------------------------------------------------- helpers

    interface Step {
        void run() throws Exception;
    }

    static String outcome(final Step step) {
        try {
            step.run();
            return "ok";
        } catch (final ExecutionException e) {
            return e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage();
        } catch (final Exception e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }

    /** Done and failed operations, and the first failure. */
    static class Tally implements TransferListener {
        final AtomicLong done = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final AtomicReference<String> firstError = new AtomicReference<>();

        long completed() {
            return done.get() + failed.get();
        }

        /** Posts operations 0 to {@code count - 1}, at most {@code window} of them outstanding. */
        void post(final int count, final int window, final IntConsumer operation) {
            for (int i = 0; i < count; i++) {
                while (i - completed() >= window) {
                    Thread.onSpinWait();
                }
                operation.accept(i);
            }
        }

        /** Waits (up to 300 s) for {@code count} operations to end, then prints how many did which way. */
        void print(final String operations, final int count, final String succeeded) throws InterruptedException {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
            while (completed() < count && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            final Map<String, Object> out = new LinkedHashMap<>();
            out.put(operations, count);
            out.put(succeeded, done.get());
            out.put("refused", failed.get());
            out.put("first_refusal", firstError.get());
            System.out.println(json(out));
        }

        @Override
        public void onDone() {
            done.incrementAndGet();
        }

        @Override
        public void onError(final TransferEngineException error) {
            firstError.compareAndSet(null, error.getClass().getSimpleName() + ": " + error.getMessage());
            failed.incrementAndGet();
        }
    }

    static String events(final TransferEngine engine) {
        final List<String> parts = new ArrayList<>();
        for (final TransportEvent event : engine.transportEvents()) {
            parts.add(event.category() + "/" + event.reason() + "=" + event.count());
        }
        return String.join(" ", parts);
    }

    static MemorySegment pattern(final Arena arena, final int size) {
        final MemorySegment data = arena.allocate(size, 4096);
        for (int i = 0; i < size; i++) {
            data.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + 1));
        }
        return data;
    }

    static String json(final Map<String, Object> fields) {
        final StringBuilder out = new StringBuilder("{");
        fields.forEach((name, value) -> {
            out.append(out.length() > 1 ? "," : "").append('"').append(name).append("\":");
            if (value instanceof Number || value instanceof Boolean) {
                out.append(value);
            } else {
                out.append('"').append(String.valueOf(value).replace("\\", "\\\\").replace("\"", "'")).append('"');
            }
        });
        return out.append('}').toString();
    }
}
