package dev.transferengine.moe;

import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * One rank of the exchange in a container, driven by {@link MoeContainersIT} over one TCP control connection with the
 * protocol of {@link MoeRankNode#serve}; a dispatcher's {@code DONE} line carries the layer's output in base64.
 * Arguments: {@code bindAddress controlPort transport role index seed T H k X E D width mode}. The engine listens on
 * {@code bindAddress}, an address the other containers reach: on {@code tcp} with the cluster key from {@code
 * TE_TCP_CLUSTER_KEY}, on {@code fabric/tcp} through the libfabric {@code TE_FABRIC_LIBRARY} names. Prints {@code
 * SERVING} once the control port listens.
 */
public final class MoeRankServer {

    private MoeRankServer() {}

    private static TransferEngine engine(final String bindAddress, final String transport) {
        final TransferEngineBuilder builder = Engines.builder(transport).bindAddress(bindAddress);
        if (transport.equals("tcp")) {
            // peers on one host connect in microseconds: a dead one fails a layer in seconds, not ten
            builder.option("tcp.handshakeTimeoutMs", "5000");
            final String key = System.getenv("TE_TCP_CLUSTER_KEY");
            if (key == null || key.isEmpty()) {
                throw new IllegalArgumentException(
                        "TE_TCP_CLUSTER_KEY is not set: a routable bind needs a cluster key");
            }
            builder.option("tcp.clusterKey", key);
        }
        return builder.build();
    }

    public static void main(final String[] args) throws Exception {
        try (TransferEngine engine = engine(args[0], args[2]);
                MoeRankNode node = MoeRankNode.fromArgs(engine, args, 3);
                ServerSocket control = new ServerSocket(Integer.parseInt(args[1]))) {
            System.out.println("SERVING " + node);
            try (Socket driver = control.accept()) {
                node.serve(
                        new BufferedReader(new InputStreamReader(driver.getInputStream(), StandardCharsets.UTF_8)),
                        new PrintWriter(driver.getOutputStream(), true, StandardCharsets.UTF_8),
                        output -> output.length == 0
                                ? ""
                                : " " + Base64.getEncoder().encodeToString(output));
            }
        }
    }
}
