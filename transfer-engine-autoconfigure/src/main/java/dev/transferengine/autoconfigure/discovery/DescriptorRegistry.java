package dev.transferengine.autoconfigure.discovery;

import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Where engines publish their main address and named regions for their peers, and find each other's. An engine's
 * entry lives under a lease that the registry renews while it is open; an engine that dies (or whose registry is
 * closed without {@link #unpublish()}) vanishes when the lease runs out. Every entry carries a generation that
 * changes when the engine restarts and whenever it publishes or withdraws a region (publish a region again after a
 * {@link MemoryRegion#rekey() rekey}), so a peer can tell that a descriptor it holds is stale.
 *
 * <p>Publishing hands out remote keys: whoever reads the registry can write into the published regions. Every
 * {@code Mono} and {@code Flux} is cold; none blocks the subscribing thread. Implementations are thread-safe.
 */
public interface DescriptorRegistry extends AutoCloseable {

    /**
     * This engine's name in the registry, what peers {@link #lookup} it by.
     *
     * @return the name
     */
    String engineName();

    /**
     * Publishes this engine's entry (its main address and the regions published so far) and starts its lease.
     * {@link #publish} and {@link #withdraw} do it too; announcing makes an engine without regions findable.
     *
     * @return completes once the entry is in the registry
     */
    Mono<Void> announce();

    /**
     * Publishes {@code descriptor} under {@code region}, replacing what was published under that name, with a new
     * generation.
     *
     * @param region     the region's name; non-blank, without {@code /} or line breaks
     * @param descriptor the descriptor peers write to
     * @return completes once the registry holds it; fails with {@link IllegalArgumentException} for a bad name
     */
    Mono<Void> publish(String region, RegionDescriptor descriptor);

    /**
     * Publishes {@code region}'s current descriptor under {@code name}; after a rekey, call it again.
     *
     * @param name   the region's name; non-blank, without {@code /} or line breaks
     * @param region the registered region
     * @return completes once the registry holds it
     */
    default Mono<Void> publish(final String name, final MemoryRegion region) {
        return Mono.defer(() -> publish(name, region.descriptor()));
    }

    /**
     * Stops publishing {@code region}, with a new generation; peers that read it before keep their copy until the
     * region is deregistered.
     *
     * @param region the region's name; an unknown one changes nothing but the generation
     * @return completes once the registry no longer holds it
     */
    Mono<Void> withdraw(String region);

    /**
     * Removes this engine's entry now and stops renewing it: peers see it vanish at once, instead of when the lease
     * runs out. A later {@link #announce()} or {@link #publish} brings it back under a new generation.
     *
     * @return completes once the entry is gone
     */
    Mono<Void> unpublish();

    /**
     * The entry of the engine named {@code engineName}, as the registry holds it now.
     *
     * @param engineName the engine's name in the registry
     * @return the entry, or empty when no live engine has that name (never published, unpublished or its lease ran
     *     out)
     */
    Mono<RegisteredEngine> lookup(String engineName);

    /**
     * Every engine in the registry as it appears, changes (a new generation) or vanishes: first an
     * {@link RegistryChange.Kind#APPEARED} for each engine there now, then the changes as they happen. Each
     * subscription watches on its own until it is cancelled or the registry is closed (then it completes). A registry that cannot be read for a
     * while reports nothing for that while (no engine vanishes because the registry is unreachable).
     *
     * @return the changes, cold
     */
    Flux<RegistryChange> watch();

    /**
     * Stops renewing this engine's entry without removing it, so it vanishes when its lease runs out; completes
     * every watch and releases what the registry holds. Idempotent.
     */
    @Override
    void close();
}
