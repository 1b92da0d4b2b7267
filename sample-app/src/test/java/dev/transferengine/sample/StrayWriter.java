package dev.transferengine.sample;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

/**
 * An engine of the test's that overwrites a node's region with a fixed pattern just before the node checks what
 * landed there: the wrong output a stray or buggy writer on the network makes, with the transfer itself succeeding.
 */
final class StrayWriter implements AutoCloseable {

    private final TransferEngine engine =
            TransferEngine.builder().transport("tcp").bindAddress("127.0.0.1").build();
    private final Arena arena = Arena.ofShared();

    /**
     * Registers, in a node about to start, a web filter that overwrites its region before each request whose path
     * ends with {@code pathEnd} is handled.
     *
     * @param pathEnd the end of the path of the node's verification request
     * @param region  the text form of the node's region, looked up in its context when a request comes
     * @return the initializer for {@link SampleNode#start}
     */
    ApplicationContextInitializer<ConfigurableApplicationContext> before(
            final String pathEnd, final Function<ApplicationContext, String> region) {
        return context -> ((GenericApplicationContext) context)
                .registerBean(
                        WebFilter.class,
                        () -> (exchange, chain) ->
                                exchange.getRequest().getPath().value().endsWith(pathEnd)
                                        ? Mono.fromFuture(
                                                        () -> overwrite(RegionDescriptor.parse(region.apply(context))))
                                                .then(chain.filter(exchange))
                                        : chain.filter(exchange));
    }

    private CompletableFuture<Void> overwrite(final RegionDescriptor target) {
        final MemorySegment pattern = arena.allocate(target.length(), 4096).fill((byte) 0x5A);
        final MemoryRegion source = engine.register(pattern, Device.host());
        return engine.submit(SingleWrite.of(source, 0, target.length(), target, 0));
    }

    @Override
    public void close() {
        engine.close();
        arena.close();
    }
}
