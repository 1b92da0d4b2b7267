package dev.transferengine.moe;

import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * One rank of an exchange in a process of its own, whatever drives it ({@link MoeRankProcess} over stdin/stdout,
 * {@link MoeRankServer} over HTTP): a dispatcher feeds each layer's output into the next layer's input, as the
 * reference does. Arguments (after the driver's own): {@code role index seed T H k X E D width mode}.
 */
final class MoeRankNode implements AutoCloseable {

    /** Arguments {@link #fromArgs} reads. */
    static final int ARGS = 11;

    private final MoeShape shape;
    private final MoeModel model;
    private final int index;
    private final @Nullable MoeDispatcher dispatcher;
    private final @Nullable MoeExpertRank expert;
    private final Arena arena = Arena.ofShared();
    private MemorySegment tokens;
    private MemorySegment out;

    private MoeRankNode(
            final TransferEngine engine,
            final boolean isDispatcher,
            final int index,
            final MoeModel model,
            final ExchangeMode mode,
            final Duration timeout) {
        this.shape = model.shape();
        this.model = model;
        this.index = index;
        this.dispatcher = isDispatcher ? new MoeDispatcher(engine, shape, index, mode, timeout) : null;
        this.expert = isDispatcher
                ? null
                : new MoeExpertRank(engine, shape, index, model.expertsOfRank(index), mode, timeout);
        final long bytes = shape.tokens() * shape.rowBytes();
        this.tokens = arena.allocate(bytes);
        this.out = arena.allocate(bytes);
        model.fillTokens(index, 0, tokens);
    }

    /** A rank from {@code args[from .. from+ARGS-1]} on an engine the caller owns. */
    static MoeRankNode fromArgs(final TransferEngine engine, final String[] args, final int from) {
        final int[] n = Arrays.stream(args, from + 3, from + 9)
                .mapToInt(Integer::parseInt)
                .toArray();
        final MoeShape shape = new MoeShape(n[0], n[1], n[2], n[3], n[4], n[5]);
        final MoeModel model = new MoeModel(shape, Long.parseLong(args[from + 2]), Integer.parseInt(args[from + 9]));
        return new MoeRankNode(
                engine,
                args[from].equals("dispatcher"),
                Integer.parseInt(args[from + 1]),
                model,
                ExchangeMode.valueOf(args[from + 10]),
                Duration.ofSeconds(60));
    }

    /** The command-line arguments {@link #fromArgs} reads for a rank. */
    static List<String> args(
            final String role, final int index, final long seed, final MoeShape shape, final int width) {
        return List.of(
                role,
                Integer.toString(index),
                Long.toString(seed),
                Integer.toString(shape.tokens()),
                Integer.toString(shape.hidden()),
                Integer.toString(shape.topK()),
                Integer.toString(shape.experts()),
                Integer.toString(shape.expertRanks()),
                Integer.toString(shape.dispatchers()),
                Integer.toString(width),
                ExchangeMode.ROUTED.name());
    }

    RegionDescriptor descriptor() {
        return dispatcher != null
                ? dispatcher.descriptor()
                : java.util.Objects.requireNonNull(expert).descriptor();
    }

    /** Connects to every rank; {@code peers} is {@code <dispatchers ,-separated> <experts ,-separated>}. */
    void connect(final String peers) {
        final String[] lists = peers.trim().split(" ", -1);
        final MoePeers all = new MoePeers(parse(lists[0]), parse(lists[1]));
        if (dispatcher != null) {
            dispatcher.connect(all);
        } else {
            java.util.Objects.requireNonNull(expert).connect(all);
        }
    }

    /**
     * Runs a layer; returns a dispatcher's combined output (an expert rank's is empty).
     *
     * @throws MoeRankFailedException naming the failed rank
     */
    byte[] layer(final int layer) {
        if (dispatcher == null) {
            java.util.Objects.requireNonNull(expert).runLayer(layer);
            return new byte[0];
        }
        dispatcher.runLayer(layer, tokens, model.route(tokens), out);
        final byte[] result = out.toArray(ValueLayout.JAVA_BYTE);
        final MemorySegment next = tokens;
        tokens = out;
        out = next;
        return result;
    }

    /**
     * Serves the drivers' line protocol until {@code in} ends: prints {@code READY <descriptor>}; then reads {@code
     * PEERS <dispatchers ,-separated> <experts ,-separated>} (prints {@code CONNECTED}) and {@code LAYER <n>} (prints
     * {@code DONE <n>} and what {@code output} makes of the layer's output, or {@code FAILED <n> <role> <rank>
     * <message>}).
     */
    void serve(final BufferedReader in, final PrintWriter out, final Function<byte[], String> output)
            throws IOException {
        out.println("READY " + descriptor().toText());
        String line;
        while ((line = in.readLine()) != null) {
            if (line.startsWith("PEERS ")) {
                connect(line.substring("PEERS ".length()));
                out.println("CONNECTED");
            } else if (line.startsWith("LAYER ")) {
                final int n = Integer.parseInt(line.substring("LAYER ".length()));
                try {
                    out.println("DONE " + n + output.apply(layer(n)));
                } catch (final MoeRankFailedException e) {
                    out.println(failed(n, e));
                }
            } else {
                throw new IllegalArgumentException("unknown command: " + line);
            }
        }
    }

    /** The line a driver prints for a failed layer: {@code FAILED <layer> <role> <rank> <message>}. */
    static String failed(final int layer, final MoeRankFailedException e) {
        return "FAILED " + layer + " " + e.role() + " " + e.rank() + " " + e.getMessage();
    }

    private static List<RegionDescriptor> parse(final String list) {
        return Arrays.stream(list.split(",", -1)).map(RegionDescriptor::parse).toList();
    }

    @Override
    public void close() {
        if (dispatcher != null) {
            dispatcher.close();
        }
        if (expert != null) {
            expert.close();
        }
        arena.close();
    }

    @Override
    public String toString() {
        return (dispatcher != null ? MoeRole.DISPATCHER : MoeRole.EXPERT).name(index);
    }
}
