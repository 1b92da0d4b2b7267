package dev.transferengine.moe;

import dev.transferengine.GroupSpec;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.exceptions.TransportUnavailableException;

import java.time.Duration;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Builds engines for the tests on a named transport: {@code tcp}, {@code fabric/tcp} or {@code fabric/shm}. */
final class Engines {

    private Engines() {}

    /** The builder for a transport name; {@code TE_FABRIC_LIBRARY} picks another libfabric for the fabric ones. */
    static TransferEngineBuilder builder(final String transport) {
        return builder(transport, GroupSpec.of(1));
    }

    /** The builder for a transport name with one group, e.g. one that serves a GPU. */
    static TransferEngineBuilder builder(final String transport, final GroupSpec group) {
        final TransferEngineBuilder builder =
                TransferEngine.builder().group(group).bindAddress("127.0.0.1").operationTimeout(Duration.ofSeconds(30));
        if (transport.startsWith("fabric/")) {
            builder.transport("fabric").option("fabric.provider", transport.substring("fabric/".length()));
            final String library = System.getenv("TE_FABRIC_LIBRARY");
            if (library != null && !library.isEmpty()) {
                builder.option("fabric.library", library);
            }
        } else {
            builder.transport(transport);
        }
        return builder;
    }

    /** An engine on the transport, or the test is skipped naming why the transport cannot run here. */
    static TransferEngine open(final String transport) {
        try {
            return builder(transport).build();
        } catch (final TransportUnavailableException e) {
            assumeTrue(false, transport + " cannot run here: " + e.getMessage());
            throw e;
        }
    }
}
