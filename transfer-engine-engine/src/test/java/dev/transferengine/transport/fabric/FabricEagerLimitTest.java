package dev.transferengine.transport.fabric;

import java.util.Map;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Which sends {@link FabricDomain} refuses on RxM providers: those above RxM's eager limit (issue 21). */
class FabricEagerLimitTest {

    private static final int V1_17 = FabricLibrary.version(1, 17);
    private static final int V2_1 = FabricLibrary.version(2, 1);

    @Test
    void rxmProvidersCarryAtMostTheEagerLimitOthersAnything() {
        assertThat(FabricDomain.eagerLimit("tcp;ofi_rxm", V1_17, env(Map.of()))).isEqualTo(16_384);
        assertThat(FabricDomain.eagerLimit("verbs;ofi_rxm", V2_1, env(Map.of())))
                .isEqualTo(16_384);
        assertThat(FabricDomain.eagerLimit("shm", V2_1, env(Map.of("FI_OFI_RXM_BUFFER_SIZE", "8192"))))
                .isEqualTo(Long.MAX_VALUE);
        assertThat(FabricDomain.eagerLimit("efa", V1_17, env(Map.of()))).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void theLimitSetInTheEnvironmentIsTheOneTheLibraryVersionReads() {
        final Map<String, String> both = Map.of("FI_OFI_RXM_EAGER_LIMIT", "32768", "FI_OFI_RXM_BUFFER_SIZE", "8192");
        assertThat(FabricDomain.eagerLimit("tcp;ofi_rxm", V1_17, env(both))).isEqualTo(32_768);
        assertThat(FabricDomain.eagerLimit("tcp;ofi_rxm", V2_1, env(both))).isEqualTo(8_192);
        assertThat(FabricDomain.eagerLimit("tcp;ofi_rxm", V1_17, env(Map.of("FI_OFI_RXM_BUFFER_SIZE", "8192"))))
                .isEqualTo(8_192);
        assertThat(FabricDomain.eagerLimit("tcp;ofi_rxm", V1_17, env(Map.of("FI_OFI_RXM_BUFFER_SIZE", "65536"))))
                .as("1.x: a buffer size set alone never lifts the limit above its default")
                .isEqualTo(16_384);
        assertThat(FabricDomain.eagerLimit("tcp;ofi_rxm", V2_1, env(Map.of("FI_OFI_RXM_EAGER_LIMIT", "32768"))))
                .isEqualTo(16_384);
        assertThat(FabricDomain.eagerLimit("tcp;ofi_rxm", V2_1, env(Map.of("FI_OFI_RXM_BUFFER_SIZE", "lots"))))
                .isEqualTo(16_384);
    }

    private static Function<String, @Nullable String> env(final Map<String, String> variables) {
        return variables::get;
    }
}
