package dev.transferengine.sample.kv;

import dev.transferengine.PagedRead;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.reactive.ReactiveTransferEngine;
import dev.transferengine.sample.BusyException;
import dev.transferengine.sample.Checksums;
import dev.transferengine.sample.HostBuffer;
import dev.transferengine.sample.Millis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The decode side of a KV-cache transfer: a registered page pool that prefill nodes write into, layer by layer,
 * with imm = layer (push); or, in a pull session, that this node reads each layer into from prefill's read-only cache
 * once prefill says the layer is ready (one imm write, imm = layer). One transfer is received at a time, because imms
 * name layers, not transfers.
 */
public final class DecodeNode implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DecodeNode.class);

    private final ReactiveTransferEngine engine;
    private final KvLayout layout;
    private final Duration receiveTimeout;
    private final HostBuffer pool;
    private final AtomicReference<KvSession> current = new AtomicReference<>();
    private final AtomicLong sessions = new AtomicLong();

    /**
     * Allocates and registers the page pool.
     *
     * @param engine         the engine prefill nodes write through
     * @param layout         the pool's shape
     * @param receiveTimeout how long a session waits for all its layers
     */
    public DecodeNode(final ReactiveTransferEngine engine, final KvLayout layout, final Duration receiveTimeout) {
        this.engine = engine;
        this.layout = layout;
        this.receiveTimeout = receiveTimeout;
        this.pool = new HostBuffer(engine.engine(), layout.bytes());
    }

    /** What prefill nodes need to write here. */
    public KvDescriptor descriptor() {
        return new KvDescriptor(
                engine.engine().mainAddress().toString(),
                pool.region().descriptor().toText(),
                layout.layers(),
                layout.pagesPerLayer(),
                layout.pageSize());
    }

    /**
     * Reserves pages for a transfer of {@code pages} pages per layer and arms one imm expectation per layer.
     *
     * @param pages pages per layer
     * @return the session and its page table
     * @throws BusyException if another transfer is still being received
     */
    public KvSessionGrant open(final int pages) {
        return open(pages, null);
    }

    /**
     * Reserves pages for a pull transfer of {@code pages} pages per layer: once prefill tells a layer is ready (one
     * imm, imm = layer), this node reads the layer's pages from {@code source} into its pool.
     *
     * @param pages  pages per layer
     * @param source prefill's cache descriptor, text form; page {@code k} of layer {@code l} is read from its page
     *               {@code k} of that layer
     * @return the session and its page table
     * @throws BusyException if another transfer is still being received
     */
    public KvSessionGrant openPull(final int pages, final String source) {
        return open(pages, RegionDescriptor.parse(source));
    }

    private KvSessionGrant open(final int pages, final @Nullable RegionDescriptor source) {
        if (pages < 1 || pages > layout.pagesPerLayer()) {
            throw new IllegalArgumentException("pages must be 1.." + layout.pagesPerLayer() + ", was " + pages);
        }
        final KvSession previous = current.get();
        if (previous != null && !previous.finished()) {
            throw new BusyException("decode is still receiving transfer " + previous.id);
        }
        // rotate the pages a session uses, as a real allocator would hand out different pages each time
        final int first = (int) (sessions.getAndIncrement() * pages % layout.pagesPerLayer());
        final int[] pageTable = new int[pages];
        for (int k = 0; k < pages; k++) {
            pageTable[k] = (first + k) % layout.pagesPerLayer();
        }
        final KvSession session = new KvSession(UUID.randomUUID().toString(), pageTable, source);
        if (!current.compareAndSet(previous, session)) {
            throw new BusyException("another transfer started at the same time");
        }
        if (previous != null && !previous.completed()) {
            // The previous transfer was abandoned (timed out): its writes may still be on the way. New keys fence
            // them, so none lands in pages this session hands out again; the old descriptor is refused from now on.
            pool.region().rekey();
            LOG.info("transfer {} was abandoned: page pool re-keyed before session {}", previous.id, session.id);
        }
        session.arm();
        return new KvSessionGrant(
                session.id, pageTable.clone(), pool.region().descriptor().toText());
    }

    /**
     * Waits until every layer of session {@code id} arrived, then checks each layer's pages against prefill's
     * checksum.
     *
     * @param id      the session
     * @param request prefill's checksums
     * @return the receipt; fails at once with {@code ImmAbandonedException} (a 502) when prefill's write of a layer
     *     failed there (its negative acknowledgement), else with the engine's timeout if a layer never arrived
     */
    public Mono<KvReceipt> verify(final String id, final KvVerifyRequest request) {
        final KvSession session = current.get();
        if (session == null || !session.id.equals(id)) {
            return Mono.error(new IllegalArgumentException("no transfer session " + id));
        }
        if (request.layerChecksums().size() != layout.layers()) {
            return Mono.error(new IllegalArgumentException("expected " + layout.layers() + " layer checksums, got "
                    + request.layerChecksums().size()));
        }
        return session.arrivals
                .publishOn(Schedulers.boundedElastic())
                .map(arrived -> session.receipt(arrived, request));
    }

    @Override
    public void close() {
        pool.close();
    }

    /** One transfer being received. */
    private final class KvSession {

        private final String id;
        private final int[] pageTable;
        private final long start = System.nanoTime();
        private final Mono<List<Long>> arrivals;
        private volatile boolean finished;
        private volatile boolean completed;

        /**
         * Push: expects {@code pages} imms per layer (a paged write raises one per page). Pull ({@code source} set):
         * expects one imm per layer, then reads the layer. Records when each layer completed.
         */
        KvSession(final String id, final int[] pageTable, final @Nullable RegionDescriptor source) {
            this.id = id;
            this.pageTable = pageTable;
            final List<Mono<Long>> layers = new ArrayList<>(layout.layers());
            for (int layer = 0; layer < layout.layers(); layer++) {
                final Mono<Void> landed = source == null
                        ? engine.expectImm(layer, pageTable.length, receiveTimeout)
                        : engine.expectImm(layer, 1, receiveTimeout).then(engine.read(layerRead(layer, source)));
                layers.add(landed.then(Mono.fromSupplier(() -> System.nanoTime() - start)));
            }
            this.arrivals = Flux.mergeSequential(layers)
                    .collectList()
                    .doOnNext(arrived -> completed = true)
                    .doFinally(signal -> finished = true)
                    .cache();
        }

        boolean finished() {
            return finished;
        }

        /** Layer {@code layer}'s pages, from prefill's page {@code k} into this pool's page {@code pageTable[k]}. */
        private PagedRead layerRead(final int layer, final RegionDescriptor source) {
            final int[] srcPages = new int[pageTable.length];
            final int[] dstPages = new int[pageTable.length];
            for (int k = 0; k < pageTable.length; k++) {
                srcPages[k] = layout.globalPage(layer, k);
                dstPages[k] = layout.globalPage(layer, pageTable[k]);
            }
            final long page = layout.pageSize();
            return new PagedRead(source, 0, page, srcPages, pool.region(), 0, page, dstPages, page);
        }

        /** Every layer arrived: nothing of this transfer is still on the way. */
        boolean completed() {
            return completed;
        }

        /** Subscribing arms the expectations, before prefill hears that the session exists. */
        void arm() {
            arrivals.subscribe(arrived -> {}, error -> LOG.warn("transfer {} not received: {}", id, error.toString()));
        }

        KvReceipt receipt(final List<Long> arrivedNanos, final KvVerifyRequest request) {
            final List<KvReceipt.Layer> layers = new ArrayList<>(arrivedNanos.size());
            boolean verified = true;
            for (int layer = 0; layer < arrivedNanos.size(); layer++) {
                final CRC32C crc = new CRC32C();
                for (final int page : pageTable) {
                    Checksums.update(
                            crc, pool.segment(), layout.globalPage(layer, page) * layout.pageSize(), layout.pageSize());
                }
                final boolean matches =
                        crc.getValue() == request.layerChecksums().get(layer);
                verified &= matches;
                layers.add(new KvReceipt.Layer(layer, Millis.of(arrivedNanos.get(layer)), crc.getValue(), matches));
            }
            final long last =
                    arrivedNanos.stream().mapToLong(Long::longValue).max().orElse(0);
            final long bytes = (long) layout.layers() * pageTable.length * layout.pageSize();
            LOG.debug(
                    "received transfer {}: {} layers x {} pages, {} bytes in {} ms, verified={}",
                    id,
                    layout.layers(),
                    pageTable.length,
                    bytes,
                    Millis.of(last),
                    verified);
            return new KvReceipt(id, pageTable.length, bytes, layers, Millis.of(last), verified);
        }
    }
}
