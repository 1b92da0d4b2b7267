package dev.transferengine.transport.fabric;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code NetworkAddress.describe()} reads the payload {@link FabricAddress} writes: the two layouts stay in step. */
class FabricAddressDescriptionTest {

    @Test
    void describeShowsTheProviderAndTheEndpointName() {
        assertThat(FabricAddress.of("shm", "fi_shm://123:4\0".getBytes(StandardCharsets.US_ASCII))
                        .describe())
                .isEqualTo("fabric:shm://123:4");
        assertThat(FabricAddress.of("efa", new byte[] {(byte) 0xAB, 0x01}).describe())
                .isEqualTo("fabric:efa:ab01");
    }
}
