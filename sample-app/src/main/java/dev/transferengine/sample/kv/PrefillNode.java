package dev.transferengine.sample.kv;

import dev.transferengine.ImmWrite;
import dev.transferengine.PagedWrite;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.reactive.ReactiveTransferEngine;
import dev.transferengine.sample.BusyException;
import dev.transferengine.sample.Checksums;
import dev.transferengine.sample.HostBuffer;
import dev.transferengine.sample.Millis;

import java.util.Comparator;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The prefill side of a KV-cache transfer. Layers are computed one after the other; as soon as a layer is done, its
 * pages go to decode in one paged write with imm = layer, while the next layer computes (push). In pull mode the
 * cache is registered read-only and a finished layer is only announced, with an imm-only write (imm = layer): decode
 * reads the pages itself. One transfer runs at a time, because all transfers share the cache (in pull mode the next
 * one starts only after decode verified, so after it read every page).
 */
public final class PrefillNode implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PrefillNode.class);

    private final ReactiveTransferEngine engine;
    private final KvLayout layout;
    private final HostBuffer cache;
    private final LayerCompute compute;
    private final DecodeClient decode;
    private final AtomicBoolean busy = new AtomicBoolean();
    private final AtomicLong steps = new AtomicLong();
    private final Timer layerWrites;
    private final Timer exposedTimes;
    private final boolean pull;

    /**
     * @param engine  the engine to write through
     * @param layout  the cache's shape, which decode's must match
     * @param cache   the registered cache the pages are written from; closed with this node
     * @param compute produces each layer's pages in {@code cache}
     * @param decode   the client of decode nodes' HTTP API
     * @param registry where the timers of layer writes and exposed time go
     * @param pull     whether decode reads the pages ({@code cache} then registered read-only) instead of prefill
     *                 writing them
     */
    public PrefillNode(
            final ReactiveTransferEngine engine,
            final KvLayout layout,
            final HostBuffer cache,
            final LayerCompute compute,
            final DecodeClient decode,
            final MeterRegistry registry,
            final boolean pull) {
        this.pull = pull;
        this.engine = engine;
        this.layout = layout;
        this.cache = cache;
        this.compute = compute;
        this.decode = decode;
        this.layerWrites = Timer.builder("sample.kv.layer.write")
                .description("One layer's paged write to decode, from submit to completion")
                .register(registry);
        this.exposedTimes = Timer.builder("sample.kv.transfer.exposed")
                .description(
                        "From the end of the last layer's compute to the end of its writes: what overlap cannot hide")
                .register(registry);
    }

    /**
     * Computes and transfers the KV cache of {@code tokens} tokens to the decode node at {@code decodeUrl}, then has
     * decode verify it.
     *
     * @param tokens    tokens to transfer
     * @param decodeUrl the decode node's base URL, e.g. {@code http://decode:8080}
     * @return the timings and decode's receipt; fails with the engine's exception if a write failed
     */
    public Mono<KvTransferReport> transfer(final int tokens, final String decodeUrl) {
        return Mono.defer(() -> {
            final int pages = layout.pagesFor(tokens);
            if (!busy.compareAndSet(false, true)) {
                return Mono.error(new BusyException("prefill is already running a transfer"));
            }
            final long step = steps.incrementAndGet();
            return decode.descriptor(decodeUrl)
                    .map(this::destination)
                    // the grant's keys, not the descriptor's: decode re-keys its pool after an abandoned session
                    .flatMap(checked -> decode.open(
                                    decodeUrl,
                                    new KvSessionRequest(
                                            pages,
                                            pull ? cache.region().descriptor().toText() : null))
                            .flatMap(grant ->
                                    run(step, tokens, pages, RegionDescriptor.parse(grant.region()), grant, decodeUrl)))
                    // released before the result goes downstream, so a caller may start the next one from its onNext
                    .doOnTerminate(() -> busy.set(false))
                    .doOnCancel(() -> busy.set(false));
        });
    }

    @Override
    public void close() {
        cache.close();
    }

    private RegionDescriptor destination(final KvDescriptor descriptor) {
        final KvLayout theirs = new KvLayout(
                descriptor.layers(), descriptor.pagesPerLayer(), descriptor.pageSize(), layout.tokensPerPage());
        if (!layout.compatibleWith(theirs)) {
            throw new IllegalArgumentException("decode's cache is " + theirs + " but prefill's is " + layout);
        }
        return RegionDescriptor.parse(descriptor.region());
    }

    private Mono<KvTransferReport> run(
            final long step,
            final int tokens,
            final int pages,
            final RegionDescriptor dst,
            final KvSessionGrant grant,
            final String decodeUrl) {
        final long start = System.nanoTime();
        return Flux.range(0, layout.layers())
                .concatMap(layer -> compute.compute(step, layer, pages)
                        .then(Mono.fromSupplier(
                                () -> new Computed(layer, checksum(layer, pages), System.nanoTime() - start))))
                .flatMap(
                        done -> {
                            final long submitted = System.nanoTime();
                            // pull: the imm only says the layer is ready; decode reads its pages
                            return engine.write(
                                            pull
                                                    ? ImmWrite.of(dst, done.layer)
                                                    : layerWrite(done.layer, pages, dst, grant.pageTable()))
                                    .then(Mono.fromSupplier(() -> {
                                        final long now = System.nanoTime();
                                        layerWrites.record(now - submitted, TimeUnit.NANOSECONDS);
                                        return new KvTransferReport.Layer(
                                                done.layer, Millis.of(done.nanos), Millis.of(now - start));
                                    }))
                                    .map(layer -> new Written(layer, done.checksum));
                        },
                        layout.layers())
                .collectSortedList(Comparator.comparingInt(written -> written.layer.layer()))
                .flatMap(written -> {
                    final List<KvTransferReport.Layer> layers =
                            written.stream().map(Written::layer).toList();
                    final List<Long> checksums =
                            written.stream().map(Written::checksum).toList();
                    return decode.verify(decodeUrl, grant.id(), new KvVerifyRequest(checksums))
                            .map(receipt -> report(tokens, pages, layers, receipt));
                });
    }

    private PagedWrite layerWrite(final int layer, final int pages, final RegionDescriptor dst, final int[] pageTable) {
        final int[] srcPages = new int[pages];
        final int[] dstPages = new int[pages];
        for (int k = 0; k < pages; k++) {
            srcPages[k] = layout.globalPage(layer, k);
            dstPages[k] = layout.globalPage(layer, pageTable[k]);
        }
        final long page = layout.pageSize();
        return new PagedWrite(cache.region(), 0, page, srcPages, dst, 0, page, dstPages, page, OptionalInt.of(layer));
    }

    private long checksum(final int layer, final int pages) {
        final CRC32C crc = new CRC32C();
        Checksums.update(
                crc, cache.segment(), layout.globalPage(layer, 0) * layout.pageSize(), pages * layout.pageSize());
        return crc.getValue();
    }

    private KvTransferReport report(
            final int tokens, final int pages, final List<KvTransferReport.Layer> layers, final KvReceipt receipt) {
        final KvTransferReport.Layer last = layers.getLast();
        final double prefill = layers.stream()
                .mapToDouble(KvTransferReport.Layer::writtenMillis)
                .max()
                .orElse(0);
        final double exposed = Math.round((prefill - last.computedMillis()) * 1_000) / 1_000.0;
        exposedTimes.record((long) (exposed * 1_000_000), TimeUnit.NANOSECONDS);
        final long bytes = (long) layout.layers() * pages * layout.pageSize();
        LOG.info(
                "kv transfer: {} tokens, {} layers x {} pages, {} bytes, prefill {} ms, exposed {} ms, decode last layer {} ms, verified={}",
                tokens,
                layout.layers(),
                pages,
                bytes,
                prefill,
                exposed,
                receipt.totalMillis(),
                receipt.verified());
        return new KvTransferReport(tokens, pages, layers, bytes, prefill, exposed, receipt, receipt.verified());
    }

    /** A layer whose pages are in memory. */
    private record Computed(int layer, long checksum, long nanos) {}

    /** A layer whose writes completed. */
    private record Written(KvTransferReport.Layer layer, long checksum) {}
}
