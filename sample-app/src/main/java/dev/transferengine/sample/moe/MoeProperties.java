package dev.transferengine.sample.moe;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code moe} role's exchange, under {@code sample.moe}.
 *
 * @param tokens tokens per layer (T)
 * @param hidden hidden size (H), bf16
 * @param topK experts per token (k)
 * @param experts experts in total (X), a multiple of {@code expertRanks}
 * @param expertRanks expert ranks (E), each on its own engine in this process
 * @param width the experts' inner width (the CPU matmul's R)
 * @param interval the pause between layers
 * @param layerTimeout how long a layer waits for a silent rank before it fails naming it
 * @param provider the libfabric provider of the expert engines when the starter's engine runs {@code fabric}, or null
 */
@ConfigurationProperties("sample.moe")
public record MoeProperties(
        @DefaultValue("16") int tokens,
        @DefaultValue("256") int hidden,
        @DefaultValue("4") int topK,
        @DefaultValue("16") int experts,
        @DefaultValue("4") int expertRanks,
        @DefaultValue("4") int width,
        @DefaultValue("200ms") Duration interval,
        @DefaultValue("30s") Duration layerTimeout,
        @Nullable String provider) {}
