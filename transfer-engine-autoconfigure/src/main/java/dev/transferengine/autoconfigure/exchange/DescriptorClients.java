package dev.transferengine.autoconfigure.exchange;

import dev.transferengine.autoconfigure.jackson.TransferEngineJacksonModule;

import org.springframework.context.ApplicationContext;
import org.springframework.http.codec.json.JacksonJsonDecoder;
import org.springframework.http.codec.json.JacksonJsonEncoder;
import org.springframework.util.ClassUtils;
import org.springframework.web.reactive.function.client.WebClient;
import tools.jackson.databind.json.JsonMapper;

/**
 * The web client of a {@link DescriptorFetcher} when the application has no {@code WebClient.Builder} bean. Each
 * missing piece fails start-up with the dependency that brings it, instead of the first fetch failing later.
 */
final class DescriptorClients {

    private static final String JSON_MAPPER = "tools.jackson.databind.json.JsonMapper";
    private static final String REACTOR_NETTY = "reactor.netty.http.client.HttpClient";

    private DescriptorClients() {}

    /**
     * A builder whose JSON codec carries {@link TransferEngineJacksonModule}: the application's {@code JsonMapper}
     * when it has one (Boot registers the module there), otherwise a mapper of its own with the module.
     *
     * @throws IllegalStateException naming the dependency to add when Jackson or an HTTP client is missing
     */
    static WebClient.Builder plain(final ApplicationContext context) {
        final ClassLoader loader = context.getClassLoader();
        if (!ClassUtils.isPresent(JSON_MAPPER, loader)) {
            throw new IllegalStateException("DescriptorFetcher reads descriptors as JSON and needs Jackson 3 ("
                    + JSON_MAPPER + "): add org.springframework.boot:spring-boot-starter-webclient (or "
                    + "spring-boot-starter-jackson), or exclude DescriptorExchangeAutoConfiguration");
        }
        if (!ClassUtils.isPresent(REACTOR_NETTY, loader)) {
            throw new IllegalStateException("DescriptorFetcher needs an HTTP client for WebClient (" + REACTOR_NETTY
                    + " from io.projectreactor.netty:reactor-netty-http): add "
                    + "org.springframework.boot:spring-boot-starter-webclient, or define a WebClient.Builder bean");
        }
        return JsonCodecs.builder(context);
    }

    /** Touches Jackson only once it is known to be there. */
    private static final class JsonCodecs {

        static WebClient.Builder builder(final ApplicationContext context) {
            final JsonMapper mapper = context.getBeanProvider(JsonMapper.class)
                    .getIfAvailable(() -> JsonMapper.builder()
                            .addModule(new TransferEngineJacksonModule())
                            .build());
            return WebClient.builder().codecs(codecs -> {
                codecs.defaultCodecs().jacksonJsonDecoder(new JacksonJsonDecoder(mapper));
                codecs.defaultCodecs().jacksonJsonEncoder(new JacksonJsonEncoder(mapper));
            });
        }
    }
}
