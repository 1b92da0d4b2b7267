package dev.transferengine.autoconfigure.exchange;

import dev.transferengine.RegionDescriptor;

import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/** The descriptor endpoint: {@code GET <path>} for everything published, {@code GET <path>/<name>} for one region. */
final class DescriptorExchangeRoutes {

    private DescriptorExchangeRoutes() {}

    static RouterFunction<ServerResponse> of(final String path, final PublishedRegions published) {
        return RouterFunctions.route()
                .GET(path, request -> ServerResponse.ok().bodyValue(published.snapshot()))
                .GET(path + "/{name}", request -> {
                    final RegionDescriptor region =
                            published.snapshot().regions().get(request.pathVariable("name"));
                    return region == null
                            ? ServerResponse.notFound().build()
                            : ServerResponse.ok().bodyValue(region);
                })
                .build();
    }
}
