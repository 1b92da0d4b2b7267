package dev.transferengine.autoconfigure.jackson;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;

import java.lang.foreign.Arena;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import tools.jackson.databind.exc.InvalidFormatException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Boot's own {@link JsonMapper} writes descriptors in their text forms and reads them back. */
class TransferEngineJacksonModuleTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    JacksonAutoConfiguration.class,
                    TransferEngineJacksonAutoConfiguration.class,
                    TransferEngineAutoConfiguration.class));

    /** A controller's response body with descriptors in it. */
    record Published(NetworkAddress address, List<RegionDescriptor> regions) {}

    @Test
    void descriptorsTravelAsTheirTextFormsAndComeBackEqual() {
        runner.run(context -> {
            final JsonMapper json = context.getBean(JsonMapper.class);
            final TransferEngine engine = context.getBean(TransferEngine.class);
            try (Arena arena = Arena.ofShared()) {
                final MemoryRegion region = engine.register(arena.allocate(4096, 4096), Device.host());
                final Published published = new Published(engine.mainAddress(), List.of(region.descriptor()));

                final String text = json.writeValueAsString(published);

                assertThat(text)
                        .isEqualTo("{\"address\":\"" + engine.mainAddress() + "\",\"regions\":[\""
                                + region.descriptor().toText() + "\"]}");
                assertThat(json.readValue(text, Published.class)).isEqualTo(published);
            }
        });
    }

    @Test
    void badTextFailsNamingTheProblem() {
        runner.run(context -> {
            final JsonMapper json = context.getBean(JsonMapper.class);

            assertThatThrownBy(() -> json.readValue("\"AQID\"", RegionDescriptor.class))
                    .isInstanceOf(InvalidFormatException.class)
                    .hasMessageContaining("RegionDescriptor is truncated");
            assertThatThrownBy(() -> json.readValue("\"not hex\"", NetworkAddress.class))
                    .isInstanceOf(InvalidFormatException.class)
                    .hasMessageContaining("NetworkAddress text is not hex");
            assertThatThrownBy(() -> json.readValue("{\"address\":42,\"regions\":[]}", Published.class))
                    .isInstanceOf(MismatchedInputException.class)
                    .hasMessageContaining("NetworkAddress");
            assertThatThrownBy(() -> json.readValue(
                            "{\"k\":\"%%%\"}",
                            json.getTypeFactory().constructMapType(Map.class, String.class, RegionDescriptor.class)))
                    .isInstanceOf(InvalidFormatException.class)
                    .hasMessageContaining("not URL-safe base64");
        });
    }
}
