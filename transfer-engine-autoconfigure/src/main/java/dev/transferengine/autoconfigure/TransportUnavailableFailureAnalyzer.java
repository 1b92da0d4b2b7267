package dev.transferengine.autoconfigure;

import dev.transferengine.exceptions.TransportUnavailableException;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a transport that cannot run on this machine or with these settings, quoting the transport's own reason
 * with the engine's option names replaced by the Spring properties that set them.
 */
final class TransportUnavailableFailureAnalyzer extends AbstractFailureAnalyzer<TransportUnavailableException> {

    /** The engine's option names as the tcp transport quotes them, longest first, and their Spring properties. */
    private static final Map<String, String> PROPERTIES = new LinkedHashMap<>();

    private static final String CLUSTER_KEY_ACTION = "Set transfer-engine.tcp.cluster-key (or"
            + " transfer-engine.tcp.cluster-key-file, one key a line) to the same random secret on every engine of"
            + " the cluster, e.g. $(openssl rand -base64 32); during a rotation give 'new,old'. docs/security.md says"
            + " which keys are accepted and why.";

    static {
        PROPERTIES.put("tcp.clusterKeyFile", "transfer-engine.tcp.cluster-key-file");
        PROPERTIES.put("tcp.clusterKey", "transfer-engine.tcp.cluster-key");
        PROPERTIES.put("tcp.insecure", "transfer-engine.tcp.insecure");
    }

    @Override
    protected FailureAnalysis analyze(final Throwable rootFailure, final TransportUnavailableException cause) {
        final String reason = springNames(String.valueOf(cause.getMessage()));
        final String action = isAboutTheClusterKey(reason) ? CLUSTER_KEY_ACTION : action(cause.transport());
        return new FailureAnalysis("The transfer engine could not start: " + reason + ".", action, cause);
    }

    private static boolean isAboutTheClusterKey(final String reason) {
        return reason.contains("transfer-engine.tcp.cluster-key") || reason.contains("cluster key");
    }

    /** Replaces the engine's option names with the properties a Spring user sets. */
    static String springNames(final String reason) {
        String named = reason;
        for (final Map.Entry<String, String> option : PROPERTIES.entrySet()) {
            named = named.replace(option.getKey(), option.getValue());
        }
        return named;
    }

    private static String action(final String transport) {
        return switch (transport) {
            case "fabric" ->
                "Install libfabric (Debian package libfabric1) or point transfer-engine.fabric.library-path"
                        + " at it, check transfer-engine.fabric.provider names a provider of this machine (fi_info lists"
                        + " them), or set transfer-engine.transport=tcp.";
            default -> "Set transfer-engine.transport to a transport this machine can run: tcp runs anywhere.";
        };
    }
}
