package dev.transferengine.transport.fabric;

import dev.transferengine.EngineConfig;
import dev.transferengine.exceptions.TransportUnavailableException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.Transport;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * libfabric through FFM, with no native code of our own: RDM endpoints, {@code fi_writemsg} with remote CQ data
 * for writes and imms, {@code fi_tsendmsg}/{@code fi_trecvmsg} for messages.
 *
 * <p>Messages are tagged by size class so that a send lands only in a receive buffer it fits in, and a receive
 * pool takes messages of at most the size it was asked for, as on every transport: its buffers are exactly that
 * size, each peer learns the sizes of the others' pools over the control messages, and a send longer than every
 * pool of its peer fails at once with a {@link dev.transferengine.exceptions.RemoteAccessException}
 * ({@code NO_RECEIVE_BUFFER}) naming both sizes ({@link FabricPoolSizes} says how, and where it is conservative).
 * A send that fits a pool but no posted buffer is
 * held by the receiver's provider until one that fits is posted, behind none of the sends that do fit. No
 * provider tells the sender of a send still held: it completes as the provider takes it. libfabric's shm before 1.19 compares a buffer posted after
 * the message arrived with a stale ignore mask (see {@code FabricEndpoint#tagsMatchBuffersThatFit}); there
 * messages stay untagged ({@code fi_sendmsg}/{@code fi_recvmsg}, the domain's description says "untagged sends"):
 * a send takes the oldest posted buffer, and one larger than that buffer is truncated and dropped at the
 * receiver ({@code FI_ETRUNC}, logged there) while the sender sees success.
 *
 * <p>Options (in {@link EngineConfig#options()}):
 * <ul>
 *   <li>{@code fabric.library}: the library to load, default {@code libfabric.so.1} (AWS installs its own under
 *       {@code /opt/amazon/efa/lib});</li>
 *   <li>{@code fabric.provider}: {@code tcp} (tcp;ofi_rxm, the default, runs anywhere), {@code shm},
 *       {@code efa} or {@code verbs} (verbs;ofi_rxm); with {@code transport=auto} and no provider named, only
 *       {@code efa} and then {@code verbs} are tried, so auto falls back to the pure-Java tcp transport where
 *       there is no RDMA device;</li>
 *   <li>{@code fabric.postsPerPoll}: posts per progress pass from the pending queue, default 32;</li>
 *   <li>{@code fabric.maxOps}: operations outstanding per NIC before posts fail with back pressure, default
 *       262144 (slots are made on demand, in chunks of 256, about 200 bytes each);</li>
 *   <li>{@code fabric.deliveryComplete}: ask for FI_DELIVERY_COMPLETE on writes (default true), so a write
 *       completes only once the target placed it, and a write the target refuses (stale key, out of bounds) fails
 *       instead of completing; on shm zero-byte writes go without it, as libfabric 1.17's shm never completes
 *       them with it, and the writes of one request to one peer and key go transmit-complete but the two that
 *       bound their remote range, delivery-complete after them, which keeps the guarantee (see
 *       {@code FabricDomain});</li>
 *   <li>{@code fabric.hmem}: ask for FI_HMEM, so CUDA memory registers with {@code iface = FI_HMEM_CUDA}:
 *       {@code auto} (the default) asks efa and verbs, and any provider when a group names a CUDA device
 *       ({@link dev.transferengine.GroupSpec#withCudaDevice}), and falls back to a provider without it; {@code true} asks
 *       any provider and requires it, {@code false} never asks. Without FI_HMEM, registering device memory fails
 *       with a {@link dev.transferengine.exceptions.DeviceUnavailableException} saying why;</li>
 *   <li>{@code fabric.closeTimeoutMillis}: on the RxM providers (tcp, verbs), how long closing a NIC waits at most
 *       for each peer it reported sends done to to confirm it read them, default 2000; 0 closes at once, and a
 *       send reported done whose bytes the kernel had not transmitted yet may then be lost (see
 *       {@code FabricSendConfirmations}).</li>
 * </ul>
 * The API version asked for is the newest the library offers, up to 1.22; EFA needs at least 1.18.
 * tcp and verbs endpoints bind to {@link EngineConfig#bindAddress()} (and to {@link DomainContext#port()} when
 * set). NIC {@code k} of a group uses the {@code k}-th distinct domain the provider reports, wrapping around, so
 * on one interface several endpoints share it.
 */
public final class FabricTransport implements Transport {

    /** The transport name, also the transport of every fabric {@link dev.transferengine.NetworkAddress}. */
    public static final String NAME = FabricAddress.TRANSPORT;

    static final String LIBRARY_OPTION = "fabric.library";
    /** The library loaded when {@link #LIBRARY_OPTION} is not set. */
    static final String DEFAULT_LIBRARY = "libfabric.so.1";

    static final String PROVIDER_OPTION = "fabric.provider";
    static final String POSTS_PER_POLL_OPTION = "fabric.postsPerPoll";
    static final String MAX_OPS_OPTION = "fabric.maxOps";
    private static final String AUTO = "auto";
    static final String DELIVERY_COMPLETE_OPTION = "fabric.deliveryComplete";
    static final String HMEM_OPTION = "fabric.hmem";
    static final String CLOSE_TIMEOUT_OPTION = "fabric.closeTimeoutMillis";
    /** How long a closing RxM domain waits at most for its peers to confirm the sends it reported done. */
    static final int DEFAULT_CLOSE_TIMEOUT_MILLIS = 2000;

    @Override
    public String name() {
        return NAME;
    }

    /** Preferred over the pure-Java tcp transport when the library and provider are there. */
    @Override
    public int autoPreference() {
        return 10;
    }

    /**
     * Why this transport cannot run with {@code config}: unknown provider, library missing or too old, native
     * access disabled, or the provider offering no suitable endpoint here. Never throws; loads the library and
     * calls fi_getinfo, so it blocks briefly.
     */
    @Override
    public @Nullable String unavailabilityCause(final EngineConfig config) {
        try {
            final Selection selection = select(config);
            if (selection.cause != null) {
                return selection.cause;
            }
            final MemorySegment list = query(selection, config, 0);
            if (list.address() == 0) {
                return noProvider(selection, config);
            }
            selection.usableLibrary().freeInfo(list);
            return null;
        } catch (final RuntimeException e) {
            return "libfabric probe failed: " + e.getMessage();
        }
    }

    /**
     * Opens one NIC: fabric, domain, CQ, AV and endpoint for the group's {@code nic}-th domain of the provider.
     *
     * @throws TransportUnavailableException with the cause {@link #unavailabilityCause} would give
     */
    @Override
    public Domain openDomain(final DomainContext context) {
        final EngineConfig config = context.config();
        final Selection selection = select(config);
        if (selection.cause != null) {
            throw new TransportUnavailableException(NAME, selection.cause);
        }
        final MemorySegment list;
        try {
            list = query(selection, config, context.port());
        } catch (final RuntimeException e) {
            throw new TransportUnavailableException(NAME, "fi_getinfo failed: " + e.getMessage(), e);
        }
        if (list.address() == 0) {
            throw new TransportUnavailableException(NAME, noProvider(selection, config));
        }
        try {
            final List<Long> nics = FabricDiscovery.distinctDomains(list);
            final long entry = nics.get(context.nic() % nics.size());
            final FabricEndpoint endpoint =
                    new FabricEndpoint(selection.usableLibrary(), entry, selection.provider == FabricProvider.EFA);
            try {
                final long caps = FabricLibrary.pointer(entry + FabricLayout.INFO_CAPS);
                return new FabricDomain(
                        endpoint,
                        context.listener(),
                        context.group(),
                        context.nic(),
                        caps,
                        new FabricDomain.Options(
                                intOption(config, POSTS_PER_POLL_OPTION, 32, 1),
                                intOption(config, MAX_OPS_OPTION, 262_144, 1),
                                Boolean.parseBoolean(config.option(DELIVERY_COMPLETE_OPTION, "true")),
                                selection.provider != FabricProvider.SHM,
                                intOption(config, CLOSE_TIMEOUT_OPTION, DEFAULT_CLOSE_TIMEOUT_MILLIS, 0)));
            } catch (final RuntimeException e) {
                endpoint.close();
                throw e;
            }
        } finally {
            selection.usableLibrary().freeInfo(list);
        }
    }

    /** fi_getinfo with FI_HMEM asked for as {@value #HMEM_OPTION} says; NULL when the provider offers nothing. */
    private static MemorySegment query(final Selection selection, final EngineConfig config, final int port) {
        final String hmem = config.option(HMEM_OPTION, "auto").strip();
        final boolean required = hmem.equals("true");
        if (required
                || (hmem.equals("auto")
                        && (selection.provider == FabricProvider.EFA
                                || selection.provider == FabricProvider.VERBS
                                || config.groups().stream()
                                        .anyMatch(g -> g.cudaDevice().isPresent())))) {
            final MemorySegment list = FabricDiscovery.query(
                    selection.usableLibrary(),
                    selection.usableProvider(),
                    selection.apiVersion,
                    config.bindAddress(),
                    port,
                    FabricDiscovery.FI_HMEM);
            if (list.address() != 0 || required) {
                return list;
            }
        }
        return FabricDiscovery.query(
                selection.usableLibrary(),
                selection.usableProvider(),
                selection.apiVersion,
                config.bindAddress(),
                port,
                0);
    }

    private static int intOption(final EngineConfig config, final String key, final int fallback, final int least) {
        final String value = config.option(key, Integer.toString(fallback));
        try {
            final int parsed = Integer.parseInt(value.strip());
            if (parsed < least) {
                throw new IllegalArgumentException(key + " must be >= " + least + ", was " + parsed);
            }
            return parsed;
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be an integer, was '" + value + "'", e);
        }
    }

    private static String noProvider(final Selection selection, final EngineConfig config) {
        final FabricLibrary library = selection.usableLibrary();
        final FabricProvider provider = selection.usableProvider();
        return "libfabric " + FabricLibrary.versionText(library.version()) + " (" + library.path()
                + ") has no provider '" + provider.libfabricName() + "' offering an RDM endpoint with messages"
                + " and RMA" + (config.option(HMEM_OPTION, "auto").strip().equals("true") ? " and FI_HMEM" : "")
                + (provider.bindsAddress() ? " on " + config.bindAddress() : "")
                + " (fi_getinfo found nothing; `fi_info -p " + provider.libfabricName()
                + "` lists what it offers)";
    }

    private static Selection select(final EngineConfig config) {
        final String explicit = config.options().get(PROVIDER_OPTION);
        if (explicit == null && AUTO.equals(config.transport())) {
            return selectHardware(config);
        }
        return select(config, explicit == null ? FabricProvider.TCP.option() : explicit);
    }

    /**
     * {@code transport=auto} takes libfabric only for RDMA hardware, EFA first, then verbs: where libfabric offers
     * just its tcp and shm providers, the pure-Java tcp transport reports failures better.
     */
    private static Selection selectHardware(final EngineConfig config) {
        for (final FabricProvider provider : List.of(FabricProvider.EFA, FabricProvider.VERBS)) {
            final Selection selection = select(config, provider.option());
            if (selection.cause != null) {
                if (selection.library == null || selection.library.unavailabilityCause() != null) {
                    return selection; // no usable library at all: that is the reason to give
                }
                continue;
            }
            final MemorySegment list = query(selection, config, 0);
            if (list.address() != 0) {
                selection.usableLibrary().freeInfo(list);
                return selection;
            }
        }
        return new Selection(
                null,
                null,
                0,
                "transport=auto uses libfabric only for EFA or verbs devices and found" + " none here; set "
                        + PROVIDER_OPTION + " (e.g. tcp or shm) to use libfabric anyway");
    }

    private static Selection select(final EngineConfig config, final String providerOption) {
        final FabricProvider provider = FabricProvider.byOption(providerOption);
        if (provider == null) {
            return new Selection(
                    null,
                    null,
                    0,
                    "unknown libfabric provider '" + providerOption + "' (" + PROVIDER_OPTION + "); choose one of "
                            + FabricProvider.choices());
        }
        final FabricLibrary library = FabricLibrary.open(config.option(LIBRARY_OPTION, DEFAULT_LIBRARY));
        final String missing = library.unavailabilityCause();
        if (missing != null) {
            return new Selection(
                    provider,
                    library,
                    0,
                    "libfabric unavailable (" + LIBRARY_OPTION + "=" + library.path() + "): " + missing);
        }
        final String hmem = config.option(HMEM_OPTION, "auto").strip();
        if (!hmem.equals("auto") && !hmem.equals("true") && !hmem.equals("false")) {
            return new Selection(
                    provider, library, 0, HMEM_OPTION + " must be auto, true or false, not '" + hmem + "'");
        }
        final int apiVersion = provider.negotiate(library.version());
        if (apiVersion < 0) {
            return new Selection(
                    provider,
                    library,
                    0,
                    "libfabric " + FabricLibrary.versionText(library.version())
                            + " at " + library.path() + " is too old for provider " + provider.option()
                            + ", which needs API "
                            + FabricLibrary.versionText(provider.minimumApi()) + " or newer"
                            + provider.tooOldWhy());
        }
        return new Selection(provider, library, apiVersion, null);
    }

    /** A provider and its library when {@code cause} is null; otherwise why libfabric cannot be used. */
    private record Selection(
            @Nullable FabricProvider provider,
            @Nullable FabricLibrary library,
            int apiVersion,
            @Nullable String cause) {

        /** The provider of a selection without a cause. */
        FabricProvider usableProvider() {
            return Objects.requireNonNull(provider);
        }

        /** The library of a selection without a cause. */
        FabricLibrary usableLibrary() {
            return Objects.requireNonNull(library);
        }
    }
}
