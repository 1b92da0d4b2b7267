package dev.transferengine.autoconfigure.endpoint;

import dev.transferengine.EngineCounter;
import dev.transferengine.EngineMetrics;
import dev.transferengine.MemoryRegion;
import dev.transferengine.NicCounter;
import dev.transferengine.NicInfo;
import dev.transferengine.PeerInfo;
import dev.transferengine.TransferEngine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * {@code /actuator/transferengine}: what each engine of the application is made of and what it did, by bean name;
 * {@code /actuator/transferengine/<bean name>} for one. Addresses are in their readable form
 * ({@code tcp://10.0.0.5:7400}). Regions are described by size, device and group only: never their contents,
 * addresses or remote keys, which would let anyone write into them.
 */
@Endpoint(id = "transferengine")
public final class TransferEngineEndpoint {

    private final Map<String, TransferEngine> engines;

    /** @param engines the application's engines, by bean name */
    public TransferEngineEndpoint(final Map<String, TransferEngine> engines) {
        this.engines = Map.copyOf(engines);
    }

    /** A snapshot of every engine. */
    @ReadOperation
    public EnginesDescriptor engines() {
        final Map<String, EngineDescriptor> descriptors = new TreeMap<>();
        engines.forEach((name, engine) -> descriptors.put(name, describe(engine)));
        return new EnginesDescriptor(descriptors);
    }

    /** A snapshot of the engine named {@code name}, or nothing (404) when there is none by that name. */
    @ReadOperation
    public @Nullable EngineDescriptor engine(@Selector final String name) {
        final TransferEngine engine = engines.get(name);
        return engine == null ? null : describe(engine);
    }

    private static EngineDescriptor describe(final TransferEngine engine) {
        final EngineMetrics metrics = engine.metrics();
        final List<NicInfo> nics = engine.nics();
        final List<GroupDescriptor> groups = new ArrayList<>();
        for (int g = 0; g < engine.groupCount(); g++) {
            final List<NicDescriptor> groupNics = new ArrayList<>();
            for (final NicInfo nic : nics) {
                if (nic.group() == g) {
                    groupNics.add(NicDescriptor.of(nic, metrics));
                }
            }
            groups.add(new GroupDescriptor(g, groupNics));
        }
        final Map<String, Long> counters = new LinkedHashMap<>();
        for (final EngineCounter counter : EngineCounter.values()) {
            counters.put(name(counter), metrics.counter(counter));
        }
        return new EngineDescriptor(
                engine.transport(),
                engine.mainAddress().describe(),
                engine.isHealthy(),
                metrics.inFlight(),
                groups,
                engine.peers().stream().map(PeerDescriptor::of).toList(),
                engine.regions().stream().map(RegionDescriptor::of).toList(),
                counters);
    }

    private static String name(final Enum<?> counter) {
        return counter.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** Every engine, by bean name. */
    public record EnginesDescriptor(Map<String, EngineDescriptor> engines) {}

    /** The whole engine. */
    public record EngineDescriptor(
            String transport,
            String mainAddress,
            boolean healthy,
            long inFlight,
            List<GroupDescriptor> groups,
            List<PeerDescriptor> peers,
            List<RegionDescriptor> regions,
            Map<String, Long> counters) {}

    /** One domain group and its NICs. */
    public record GroupDescriptor(int group, List<NicDescriptor> nics) {}

    /** One NIC: address, health and its counters. */
    public record NicDescriptor(
            int nic, String address, String description, boolean healthy, String failure, Map<String, Long> counters) {

        static NicDescriptor of(final NicInfo nic, final EngineMetrics metrics) {
            final Map<String, Long> counters = new LinkedHashMap<>();
            for (final NicCounter counter : NicCounter.values()) {
                counters.put(name(counter), metrics.counter(nic.group(), nic.nic(), counter));
            }
            return new NicDescriptor(
                    nic.nic(), nic.address().describe(), nic.description(), nic.healthy(), nic.failure(), counters);
        }
    }

    /** A peer one of our NICs talks to. */
    public record PeerDescriptor(String nic, String address, String state, String lastError) {

        static PeerDescriptor of(final PeerInfo peer) {
            return new PeerDescriptor(
                    peer.group() + "." + peer.nic(), peer.address().describe(), peer.state(), peer.lastError());
        }
    }

    /** A registered region, without anything that would let a reader touch it. */
    public record RegionDescriptor(int group, String device, long length, int nics, boolean registered) {

        static RegionDescriptor of(final MemoryRegion region) {
            return new RegionDescriptor(
                    region.group(),
                    region.device().toString(),
                    region.length(),
                    region.descriptor().nicCount(),
                    region.isRegistered());
        }
    }
}
