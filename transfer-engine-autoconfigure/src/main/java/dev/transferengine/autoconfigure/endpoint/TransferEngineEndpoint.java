package dev.transferengine.autoconfigure.endpoint;

import dev.transferengine.EngineCounter;
import dev.transferengine.EngineMetrics;
import dev.transferengine.MemoryRegion;
import dev.transferengine.NicCounter;
import dev.transferengine.NicInfo;
import dev.transferengine.PeerInfo;
import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.TransferEngineSecurity;

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

    private static final String BY_APPLICATION = "set by the application";

    private final Map<String, TransferEngine> engines;
    private final List<TransferEngineSecurity> security;

    /**
     * An endpoint over a fixed set of engines.
     *
     * @param engines the application's engines, by bean name (copied)
     */
    public TransferEngineEndpoint(final Map<String, TransferEngine> engines) {
        this(engines, List.of());
    }

    /**
     * An endpoint over a fixed set of engines that shows the TLS and key modes of those it has them for.
     *
     * @param engines  the application's engines, by bean name (copied)
     * @param security the TLS and key modes of the auto-configured engine, if any (copied)
     */
    public TransferEngineEndpoint(
            final Map<String, TransferEngine> engines, final List<TransferEngineSecurity> security) {
        this.engines = Map.copyOf(engines);
        this.security = List.copyOf(security);
    }

    /**
     * A snapshot of every engine. Allocates; does not block.
     *
     * @return every engine, by bean name in name order
     */
    @ReadOperation
    public EnginesDescriptor engines() {
        final Map<String, EngineDescriptor> descriptors = new TreeMap<>();
        engines.forEach((name, engine) -> descriptors.put(name, describe(engine)));
        return new EnginesDescriptor(descriptors);
    }

    /**
     * A snapshot of one engine. Allocates; does not block.
     *
     * @param name the engine's bean name
     * @return the engine's descriptor, or null (404) when there is none by that name
     */
    @ReadOperation
    public @Nullable EngineDescriptor engine(@Selector final String name) {
        final TransferEngine engine = engines.get(name);
        return engine == null ? null : describe(engine);
    }

    private EngineDescriptor describe(final TransferEngine engine) {
        final TransferEngineSecurity modes = security.stream()
                .filter(described -> described.describes(engine))
                .findFirst()
                .orElse(null);
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
                modes == null ? BY_APPLICATION : modes.tls(),
                modes == null ? BY_APPLICATION : modes.key(),
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

    /**
     * Every engine, by bean name.
     *
     * @param engines each engine's descriptor, by bean name
     */
    public record EnginesDescriptor(Map<String, EngineDescriptor> engines) {}

    /**
     * The whole engine.
     *
     * @param transport   the transport in use, e.g. {@code tcp}
     * @param mainAddress group 0, NIC 0's address, readable (e.g. {@code tcp://10.0.0.5:7400})
     * @param tls         {@code off}, {@code server} or {@code mutual} (see {@link TransferEngineSecurity#tls()})
     * @param key         {@code configured}, {@code rotating}, {@code public-loopback} or {@code insecure} (see
     *                    {@link TransferEngineSecurity#key()})
     * @param healthy     whether every worker runs and every NIC is healthy
     * @param inFlight    requests and sends accepted and not yet ended
     * @param groups      every group, in index order
     * @param peers       the peers the NICs talk to
     * @param regions     the registered regions, without addresses or keys
     * @param counters    the engine-wide counters, by lower-case name with dashes (e.g. {@code requests-done})
     */
    public record EngineDescriptor(
            String transport,
            String mainAddress,
            String tls,
            String key,
            boolean healthy,
            long inFlight,
            List<GroupDescriptor> groups,
            List<PeerDescriptor> peers,
            List<RegionDescriptor> regions,
            Map<String, Long> counters) {}

    /**
     * One domain group and its NICs.
     *
     * @param group the group's index
     * @param nics  its NICs, in NIC order
     */
    public record GroupDescriptor(int group, List<NicDescriptor> nics) {}

    /**
     * One NIC: address, health and its counters.
     *
     * @param nic         the NIC's index within its group
     * @param address     its address, readable
     * @param description the transport's description of it
     * @param healthy     whether it works
     * @param failure     why it failed, or empty
     * @param counters    its counters, by lower-case name with dashes (e.g. {@code bytes-written})
     */
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

    /**
     * A peer one of our NICs talks to.
     *
     * @param nic       our NIC, as {@code <group>.<nic>}
     * @param address   the peer NIC's address, readable
     * @param state     e.g. {@code CONNECTED} or {@code UNREACHABLE}
     * @param lastError the last failure, or empty
     */
    public record PeerDescriptor(String nic, String address, String state, String lastError) {

        static PeerDescriptor of(final PeerInfo peer) {
            return new PeerDescriptor(
                    peer.group() + "." + peer.nic(),
                    peer.address().describe(),
                    peer.state().name(),
                    peer.lastError());
        }
    }

    /**
     * A registered region, without anything that would let a reader touch it.
     *
     * @param group      the group that registered it
     * @param device     {@code host} or {@code cuda:<ordinal>}
     * @param length     its length in bytes
     * @param nics       how many NICs it is registered on
     * @param registered false once deregistered
     */
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
