package dev.transferengine.sample.weights;

import dev.transferengine.BarrierWrite;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerGroup;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.ScatterTarget;
import dev.transferengine.ScatterWrite;
import dev.transferengine.reactive.ReactiveTransferEngine;
import dev.transferengine.sample.BusyException;
import dev.transferengine.sample.Checksums;
import dev.transferengine.sample.HostBuffer;
import dev.transferengine.sample.Millis;
import dev.transferengine.sample.PseudoRandomFill;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The trainer: named tensors in registered host memory, pushed to inference nodes as one scatter over a peer group,
 * then a barrier. Each push is a new version of the tensors (a training step), so every push carries new bytes.
 */
public final class TrainerNode implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TrainerNode.class);

    private final ReactiveTransferEngine engine;
    private final TensorLayout layout;
    private final HostBuffer tensors;
    private final InferenceClient inference;
    private final AtomicBoolean busy = new AtomicBoolean();
    private final AtomicLong versions = new AtomicLong();
    private final AtomicReference<ResolvedGroup> lastGroup = new AtomicReference<>();

    /**
     * Allocates and registers the tensors.
     *
     * @param engine    the engine to write through
     * @param layout    the tensors, which every inference node must share
     * @param inference the client of inference nodes' HTTP API
     */
    public TrainerNode(
            final ReactiveTransferEngine engine, final TensorLayout layout, final InferenceClient inference) {
        this.engine = engine;
        this.layout = layout;
        this.inference = inference;
        this.tensors = new HostBuffer(engine.engine(), layout.bytes());
    }

    /**
     * Makes the next version of the tensors and pushes it to every node in {@code nodes}.
     *
     * @param nodes the inference nodes' base URLs
     * @return bytes, time, throughput and every node's receipt; fails with the engine's exception if a write failed
     */
    public Mono<PushReport> push(final List<String> nodes) {
        return Mono.defer(() -> {
            if (nodes.isEmpty()) {
                return Mono.error(new IllegalArgumentException("name at least one inference node"));
            }
            if (!busy.compareAndSet(false, true)) {
                return Mono.error(new BusyException("the trainer is already pushing"));
            }
            final long version = versions.incrementAndGet();
            return Flux.fromIterable(nodes)
                    .flatMapSequential(inference::descriptor)
                    .collectList()
                    .map(this::destinations)
                    .flatMap(dsts -> Mono.fromCallable(() -> nextVersion(version))
                            .subscribeOn(Schedulers.boundedElastic())
                            .flatMap(expectation -> Flux.fromIterable(nodes)
                                    .flatMap(node -> inference.expect(node, expectation))
                                    .then())
                            .then(peerGroup(dsts))
                            .flatMap(group -> write(dsts, group)))
                    .flatMap(nanos -> Flux.fromIterable(nodes)
                            .flatMapSequential(node -> inference.verification(node, version))
                            .collectList()
                            .map(receipts -> report(version, nodes, nanos, receipts)))
                    // released before the result goes downstream, so a caller may start the next one from its onNext
                    .doOnTerminate(() -> busy.set(false))
                    .doOnCancel(() -> busy.set(false));
        });
    }

    @Override
    public void close() {
        tensors.close();
    }

    private List<RegionDescriptor> destinations(final List<WeightsDescriptor> descriptors) {
        for (final WeightsDescriptor descriptor : descriptors) {
            if (!descriptor.tensors().equals(layout.tensors())) {
                throw new IllegalArgumentException("inference node " + descriptor.address()
                        + " holds other tensors than the trainer: "
                        + descriptor.tensors().size() + " tensors, "
                        + descriptor.tensors().stream()
                                .mapToLong(TensorLayout.Tensor::length)
                                .sum() + " bytes");
            }
        }
        return descriptors.stream()
                .map(descriptor -> RegionDescriptor.parse(descriptor.region()))
                .toList();
    }

    /** Overwrites every tensor with its next version and returns their checksums. */
    private WeightsExpectation nextVersion(final long version) {
        final Map<String, Long> checksums = new LinkedHashMap<>();
        for (final TensorLayout.Tensor tensor : layout.tensors()) {
            PseudoRandomFill.fill(
                    tensors.segment(),
                    tensor.offset(),
                    tensor.length(),
                    tensor.name().hashCode() * 1_000_003L + version);
            checksums.put(tensor.name(), Checksums.crc32c(tensors.segment(), tensor.offset(), tensor.length()));
        }
        return new WeightsExpectation(version, checksums);
    }

    /** Resolves the nodes' NICs once and reuses the group while the same nodes are pushed to. */
    private Mono<PeerGroup> peerGroup(final List<RegionDescriptor> dsts) {
        final List<List<NetworkAddress>> peers = dsts.stream()
                .map(dst ->
                        dst.nics().stream().map(RegionDescriptor.Nic::address).toList())
                .toList();
        final ResolvedGroup cached = lastGroup.get();
        if (cached != null && cached.peers.equals(peers)) {
            return Mono.just(cached.group);
        }
        return engine.addPeerGroup(peers).doOnNext(group -> lastGroup.set(new ResolvedGroup(peers, group)));
    }

    /** The scatter, then (once every byte landed) the barrier; returns the nanoseconds both took. */
    private Mono<Long> write(final List<RegionDescriptor> dsts, final PeerGroup group) {
        final List<ScatterTarget> targets = dsts.stream()
                .map(dst -> new ScatterTarget(dst, layout.bytes(), 0, 0))
                .toList();
        final ScatterWrite scatter = ScatterWrite.of(tensors.region(), targets).withGroup(group);
        final BarrierWrite barrier =
                BarrierWrite.of(dsts, InferenceNode.BARRIER_IMM).withGroup(group);
        return Mono.defer(() -> {
            final long start = System.nanoTime();
            return engine.write(scatter)
                    .then(engine.write(barrier))
                    .then(Mono.fromSupplier(() -> System.nanoTime() - start));
        });
    }

    private PushReport report(
            final long version, final List<String> nodes, final long nanos, final List<InferenceReceipt> receipts) {
        final long total = layout.bytes() * nodes.size();
        final double millis = Millis.of(nanos);
        final double gbPerSecond = Math.round(total / (double) nanos * 1_000.0) / 1_000.0;
        final boolean verified = receipts.stream().allMatch(InferenceReceipt::verified);
        LOG.info(
                "weight push {}: {} tensors x {} nodes, {} bytes in {} ms ({} GB/s), verified={}",
                version,
                layout.tensors().size(),
                nodes.size(),
                total,
                millis,
                gbPerSecond,
                verified);
        return new PushReport(
                version,
                List.copyOf(nodes),
                layout.tensors().size(),
                layout.bytes(),
                total,
                millis,
                gbPerSecond,
                receipts,
                verified);
    }

    /** A peer group and the NICs it was resolved for. */
    private record ResolvedGroup(List<List<NetworkAddress>> peers, PeerGroup group) {}
}
