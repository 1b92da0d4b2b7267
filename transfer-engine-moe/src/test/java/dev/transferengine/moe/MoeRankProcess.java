package dev.transferengine.moe;

import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * One rank of the exchange in its own JVM, driven over stdin/stdout by {@link MoeMultiProcessTest}. Arguments:
 * {@code transport role index seed T H k X E D width mode outFile}. Prints {@code READY <descriptor>}; then reads
 * {@code PEERS <dispatchers ,-separated> <experts ,-separated>} (prints {@code CONNECTED}) and {@code LAYER <n>}
 * (prints {@code DONE <n>} or {@code FAILED <n> <role> <rank> <message>}). A dispatcher feeds each layer's output into
 * the next and appends each layer's output to {@code outFile}.
 */
public final class MoeRankProcess {

    private MoeRankProcess() {}

    public static void main(final String[] args) throws Exception {
        final String transport = args[0];
        final boolean dispatcher = args[1].equals("dispatcher");
        final int index = Integer.parseInt(args[2]);
        final long seed = Long.parseLong(args[3]);
        final int[] n = Arrays.stream(args, 4, 10).mapToInt(Integer::parseInt).toArray();
        final MoeShape shape = new MoeShape(n[0], n[1], n[2], n[3], n[4], n[5]);
        final MoeModel model = new MoeModel(shape, seed, Integer.parseInt(args[10]));
        final ExchangeMode mode = ExchangeMode.valueOf(args[11]);
        final Path outFile = Path.of(args[12]);
        final Duration timeout = Duration.ofSeconds(60);
        try (TransferEngine engine = Engines.builder(transport).build();
                Arena arena = Arena.ofShared()) {
            final MoeDispatcher asDispatcher =
                    dispatcher ? new MoeDispatcher(engine, shape, index, mode, timeout) : null;
            final MoeExpertRank asExpert = dispatcher
                    ? null
                    : new MoeExpertRank(engine, shape, index, model.expertsOfRank(index), mode, timeout);
            final RegionDescriptor own = asDispatcher != null
                    ? asDispatcher.descriptor()
                    : java.util.Objects.requireNonNull(asExpert).descriptor();
            System.out.println("READY " + own.toText());
            final long bytes = shape.tokens() * shape.rowBytes();
            MemorySegment tokens = arena.allocate(bytes);
            MemorySegment out = arena.allocate(bytes);
            model.fillTokens(index, 0, tokens);
            final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                final String[] command = line.split(" ", -1);
                if (command[0].equals("PEERS")) {
                    final MoePeers peers = new MoePeers(parse(command[1]), parse(command[2]));
                    if (asDispatcher != null) {
                        asDispatcher.connect(peers);
                    } else {
                        java.util.Objects.requireNonNull(asExpert).connect(peers);
                    }
                    System.out.println("CONNECTED");
                } else if (command[0].equals("LAYER")) {
                    final int layer = Integer.parseInt(command[1]);
                    try {
                        if (asDispatcher != null) {
                            asDispatcher.runLayer(layer, tokens, model.route(tokens), out);
                            try (OutputStream file = Files.newOutputStream(
                                    outFile, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
                                file.write(out.toArray(ValueLayout.JAVA_BYTE));
                            }
                            final MemorySegment next = tokens;
                            tokens = out;
                            out = next;
                        } else {
                            java.util.Objects.requireNonNull(asExpert).runLayer(layer);
                        }
                        System.out.println("DONE " + layer);
                    } catch (final MoeRankFailedException e) {
                        System.out.println("FAILED " + layer + " " + e.role() + " " + e.rank() + " " + e.getMessage());
                    }
                }
            }
        }
    }

    private static List<RegionDescriptor> parse(final String list) {
        return Arrays.stream(list.split(",", -1)).map(RegionDescriptor::parse).toList();
    }
}
