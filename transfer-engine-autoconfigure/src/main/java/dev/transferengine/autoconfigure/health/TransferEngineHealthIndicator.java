package dev.transferengine.autoconfigure.health;

import dev.transferengine.NicInfo;
import dev.transferengine.PeerInfo;
import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.TransferEngineSecurity;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * UP while every worker runs and every NIC is healthy, DOWN otherwise. Details: the transport, the main address,
 * the TLS and key modes ({@link TransferEngineSecurity}),
 * the operations in flight, every NIC per group (address, description, failure), and the peers that stopped
 * answering. An unreachable peer does not make the engine DOWN: it is that peer's problem, and it is listed.
 */
public final class TransferEngineHealthIndicator extends AbstractHealthIndicator {

    private final TransferEngine engine;
    private final @Nullable TransferEngineSecurity security;

    /**
     * A health indicator of one engine; each check reads its NICs and peers (allocates, does not block).
     *
     * @param engine the engine to report on
     */
    public TransferEngineHealthIndicator(final TransferEngine engine) {
        this(engine, null);
    }

    /**
     * A health indicator of one engine that also shows its TLS and key modes.
     *
     * @param engine   the engine to report on
     * @param security its TLS and key modes, or null where the application built the engine itself
     */
    public TransferEngineHealthIndicator(final TransferEngine engine, final @Nullable TransferEngineSecurity security) {
        super("Transfer engine health check failed");
        this.engine = engine;
        this.security = security;
    }

    @Override
    protected void doHealthCheck(final Health.Builder builder) {
        final List<NicInfo> nics = engine.nics();
        final boolean nicsHealthy = nics.stream().allMatch(NicInfo::healthy);
        if (engine.isHealthy() && nicsHealthy) {
            builder.up();
        } else {
            builder.down();
        }
        builder.withDetail("transport", engine.transport())
                .withDetail("mainAddress", engine.mainAddress().describe())
                .withDetail("tls", security == null ? "set by the application" : security.tls())
                .withDetail("key", security == null ? "set by the application" : security.key())
                .withDetail("inFlight", engine.metrics().inFlight())
                .withDetail("groups", groups(nics))
                .withDetail("unreachablePeers", unreachablePeers());
    }

    private Map<String, Object> groups(final List<NicInfo> nics) {
        final Map<String, Object> groups = new LinkedHashMap<>();
        for (int g = 0; g < engine.groupCount(); g++) {
            final Map<String, Object> groupNics = new LinkedHashMap<>();
            for (final NicInfo nic : nics) {
                if (nic.group() == g) {
                    groupNics.put(String.valueOf(nic.nic()), nic(nic));
                }
            }
            groups.put(String.valueOf(g), Map.of("nics", groupNics));
        }
        return groups;
    }

    private static Map<String, Object> nic(final NicInfo nic) {
        final Map<String, Object> details = new LinkedHashMap<>();
        details.put("status", nic.healthy() ? "UP" : "DOWN");
        details.put("address", nic.address().describe());
        details.put("description", nic.description());
        if (!nic.healthy()) {
            details.put("failure", nic.failure());
        }
        return details;
    }

    private List<Map<String, Object>> unreachablePeers() {
        return engine.peers().stream()
                .filter(PeerInfo::unreachable)
                .map(peer -> Map.<String, Object>of(
                        "nic",
                        peer.group() + "." + peer.nic(),
                        "address",
                        peer.address().describe(),
                        "lastError",
                        peer.lastError()))
                .toList();
    }
}
