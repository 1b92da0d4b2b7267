package dev.transferengine.bench;

import dev.transferengine.MemoryRegion;
import dev.transferengine.NetworkAddress;
import dev.transferengine.ReceivePool;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;

import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The client's hello: sends its region descriptor to the server's main address (two-sided) and waits for the server's
 * region descriptor in return. So a client needs only the server's address, and the server learns where to echo pongs.
 */
final class ClientHandshake {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final int BUFFER = 4096;

    private ClientHandshake() {}

    /** Returns the server's region descriptor. Blocks up to 20 s. */
    static RegionDescriptor exchange(final TransferEngine engine, final NetworkAddress server, final MemoryRegion own)
            throws InterruptedException, ExecutionException, TimeoutException {
        final CompletableFuture<RegionDescriptor> reply = new CompletableFuture<>();
        try (ReceivePool _ = engine.postedReceivePool(
                BUFFER,
                2,
                message -> reply.complete(RegionDescriptor.fromBytes(message.toArray(ValueLayout.JAVA_BYTE))))) {
            engine.send(server, own.descriptor().toBytes()).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            return reply.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        }
    }
}
