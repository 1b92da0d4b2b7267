package dev.transferengine.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.core.io.ClassPathResource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/** The configuration processor documented every property, so IDEs complete and explain them. */
class TransferEngineConfigurationMetadataTests {

    @Test
    void generatedMetadataDescribesEveryTransferEngineProperty() throws IOException {
        final JsonNode metadata;
        try (InputStream in = new ClassPathResource("META-INF/spring-configuration-metadata.json").getInputStream()) {
            metadata = JsonMapper.builder().build().readTree(in);
        }
        final List<String> documented = metadata.get("properties")
                .valueStream()
                .filter(property -> property.hasNonNull("description"))
                .map(property -> property.get("name").asString())
                .toList();

        assertThat(documented)
                .contains(
                        "transfer-engine.transport",
                        "transfer-engine.groups",
                        "transfer-engine.bind-address",
                        "transfer-engine.base-port",
                        "transfer-engine.options",
                        "transfer-engine.fabric.provider",
                        "transfer-engine.fabric.library-path",
                        "transfer-engine.tcp.cluster-key",
                        "transfer-engine.tcp.cluster-key-file",
                        "transfer-engine.tcp.insecure",
                        "transfer-engine.tcp.ssl.records",
                        "transfer-engine.worker.idle-strategy",
                        "transfer-engine.worker.submit-queue-capacity",
                        "transfer-engine.worker.max-in-flight",
                        "transfer-engine.receive.pool-size",
                        "transfer-engine.receive.buffer-size",
                        "transfer-engine.imms.max-unexpected",
                        "transfer-engine.imms.unexpected-ttl",
                        "transfer-engine.timeouts.operation",
                        "transfer-engine.timeouts.imm",
                        "transfer-engine.timeouts.drain",
                        "transfer-engine.discovery.type",
                        "transfer-engine.discovery.name",
                        "transfer-engine.discovery.lease",
                        "transfer-engine.discovery.watch-interval",
                        "transfer-engine.discovery.http-peers",
                        "transfer-engine.discovery.redis-key-prefix",
                        "transfer-engine.discovery.redis-allow-insecure",
                        "management.health.transferengine.enabled");
        assertThat(metadata.get("hints").valueStream().map(hint -> hint.get("name")
                        .asString()))
                .contains(
                        "transfer-engine.transport",
                        "transfer-engine.discovery.type",
                        "transfer-engine.tcp.ssl.records");
    }
}
