package dev.transferengine.moe;

import dev.transferengine.TransferEngine;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One rank of the exchange in its own JVM, driven over stdin/stdout by {@link MoeMultiProcessTest} with the protocol of
 * {@link MoeRankNode#serve}. Arguments: {@code transport role index seed T H k X E D width mode outFile}. A dispatcher
 * appends each layer's output to {@code outFile}.
 */
public final class MoeRankProcess {

    private MoeRankProcess() {}

    public static void main(final String[] args) throws Exception {
        final Path outFile = Path.of(args[1 + MoeRankNode.ARGS]);
        try (TransferEngine engine = Engines.builder(args[0]).build();
                MoeRankNode node = MoeRankNode.fromArgs(engine, args, 1)) {
            node.serve(
                    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)),
                    new PrintWriter(System.out, true, StandardCharsets.UTF_8),
                    output -> {
                        if (output.length > 0) {
                            try (OutputStream file = Files.newOutputStream(
                                    outFile, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
                                file.write(output);
                            } catch (final IOException e) {
                                throw new UncheckedIOException(e);
                            }
                        }
                        return "";
                    });
        }
    }
}
