package dev.transferengine.transport.fabric;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/** The libfabric providers this transport drives, chosen with the option {@code fabric.provider}. */
enum FabricProvider {

    /** AWS EFA (RDM over SRD); needs API 1.18 for device RDMA and gets its shm and CUDA-API paths turned off. */
    EFA("efa", "efa", false, FabricLibrary.version(1, 18)),
    /** TCP sockets with the RxM utility layer; binds to the configured address. The default: runs anywhere. */
    TCP("tcp", "tcp;ofi_rxm", true, FabricLibrary.version(1, 5)),
    /**
     * Shared memory between processes of one host; needs 1.19 (see {@link #SHM_TOO_OLD}): before it shm sends only
     * untagged, so a send takes any buffer (a smaller one truncates it) and no negative acknowledgement can be kept
     * apart from the user's messages, and a killed peer deadlocks the endpoint on its region's spinlock.
     */
    SHM("shm", "shm", false, FabricLibrary.version(1, 19)),
    /** Verbs (ConnectX, RoCE) with the RxM utility layer. */
    VERBS("verbs", "verbs;ofi_rxm", true, FabricLibrary.version(1, 5));

    /** The newest API this binding is written for; asked for when the library offers it. */
    static final int NEWEST_API = FabricLibrary.version(1, 22);

    private final String option;
    private final String libfabricName;
    private final boolean bindsAddress;
    private final int minimumApi;

    FabricProvider(final String option, final String libfabricName, final boolean bindsAddress, final int minimumApi) {
        this.option = option;
        this.libfabricName = libfabricName;
        this.bindsAddress = bindsAddress;
        this.minimumApi = minimumApi;
    }

    /** The provider for an option value, case-insensitive; null when there is none of that name. */
    static @Nullable FabricProvider byOption(final String value) {
        final String wanted = value.strip().toLowerCase(Locale.ROOT);
        for (final FabricProvider provider : values()) {
            if (provider.option.equals(wanted) || provider.libfabricName.equals(wanted)) {
                return provider;
            }
        }
        return null;
    }

    static String choices() {
        return Arrays.stream(values()).map(p -> p.option).collect(Collectors.joining(", "));
    }

    /** The value of {@code fabric.provider} that selects it. */
    String option() {
        return option;
    }

    /** The provider name as fi_getinfo takes and reports it (layered providers joined with ';'). */
    String libfabricName() {
        return libfabricName;
    }

    /** Whether endpoints bind to the engine's bind address (FI_SOURCE with a node), as socket providers do. */
    boolean bindsAddress() {
        return bindsAddress;
    }

    /** The API version to ask for from a library offering {@code offered}, or -1 when it is too old. */
    int negotiate(final int offered) {
        final int asked = Math.min(offered, NEWEST_API);
        return asked < minimumApi ? -1 : asked;
    }

    int minimumApi() {
        return minimumApi;
    }

    /** Why a library older than {@link #minimumApi} will not do, and the fix; empty where the version is all. */
    String tooOldWhy() {
        return this == SHM ? SHM_TOO_OLD : "";
    }

    /** Why shm needs 1.19 and what to do instead. */
    static final String SHM_TOO_OLD = ": before 1.19 shm cannot keep the delivery contract (sends match any receive"
            + " buffer in post order and can be truncated, negative acknowledgements cannot be told apart from the"
            + " user's messages, a killed peer deadlocks the endpoint). Fix: install libfabric 1.19 or newer (2.1 is"
            + " tested; .ci/libfabric-2.1.sh builds it) and set fabric.library to its libfabric.so.1, or use"
            + " fabric.provider=tcp or transport=tcp";
}
