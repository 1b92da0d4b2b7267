package dev.transferengine.transport.fabric;

import dev.transferengine.nativeaccess.Errno;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import static dev.transferengine.transport.fabric.FabricLayout.DOMAIN_ATTR_AV_TYPE;
import static dev.transferengine.transport.fabric.FabricLayout.DOMAIN_ATTR_MR_MODE;
import static dev.transferengine.transport.fabric.FabricLayout.DOMAIN_ATTR_NAME;
import static dev.transferengine.transport.fabric.FabricLayout.DOMAIN_ATTR_THREADING;
import static dev.transferengine.transport.fabric.FabricLayout.EP_ATTR_TYPE;
import static dev.transferengine.transport.fabric.FabricLayout.FABRIC_ATTR_PROV_NAME;
import static dev.transferengine.transport.fabric.FabricLayout.INFO_CAPS;
import static dev.transferengine.transport.fabric.FabricLayout.INFO_DOMAIN_ATTR;
import static dev.transferengine.transport.fabric.FabricLayout.INFO_EP_ATTR;
import static dev.transferengine.transport.fabric.FabricLayout.INFO_FABRIC_ATTR;
import static dev.transferengine.transport.fabric.FabricLayout.INFO_MODE;
import static dev.transferengine.transport.fabric.FabricLayout.INFO_NEXT;
import static dev.transferengine.transport.fabric.FabricLayout.INFO_TX_ATTR;
import static dev.transferengine.transport.fabric.FabricLayout.TX_ATTR_MSG_ORDER;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Finds the NICs (fi_info entries) one provider offers: builds the hints (RDM endpoint, messages and RMA, the MR
 * modes this binding handles, AV table), asks fi_getinfo with the negotiated API version and keeps one entry per
 * distinct domain. Control path only; allocates.
 */
final class FabricDiscovery {

    static final long FI_MSG = 1L << 1;
    static final long FI_RMA = 1L << 2;
    /** Tagged messages: sends match only receive buffers they fit in (see FabricOps#sizeTag). */
    static final long FI_TAGGED = 1L << 3;

    static final long FI_SOURCE = 1L << 57;
    /**
     * Receives that may name their sender, asked of the RxM providers (tcp, verbs) for a side effect: RxM looks up
     * the connection of each message that arrives only with this or {@link #FI_SOURCE}. Without either, libfabric
     * 2.1's tcp;ofi_rxm (whose receives come through a shared context, so no connection is known beforehand) queues
     * a message that found no buffer with a null connection, and the next fi_av_insert reads it (rxm_get_addr):
     * SIGSEGV (docs/delivery-contract.md). Every receive is posted for FI_ADDR_UNSPEC, so it still takes any sender.
     */
    static final long FI_DIRECTED_RECV = 1L << 59;
    /** Registers device (heterogeneous) memory, e.g. CUDA, through fi_mr_regattr's iface and device. */
    static final long FI_HMEM = 1L << 47;

    static final long FI_CONTEXT = 1L << 59;
    static final long FI_CONTEXT2 = 1L << 52;
    static final int FI_EP_RDM = 3;
    static final int FI_AV_TABLE = 2;
    static final int FI_THREAD_DOMAIN = 3;
    static final int FI_MR_LOCAL = 1 << 2;
    static final int FI_MR_VIRT_ADDR = 1 << 4;
    static final int FI_MR_ALLOCATED = 1 << 5;
    static final int FI_MR_PROV_KEY = 1 << 6;
    /**
     * Device memory must be registered and its descriptor passed with every post: shm's FI_HMEM entry (CUDA IPC)
     * has this mode and no other, so a query for FI_HMEM must accept it.
     */
    static final int FI_MR_HMEM = 1 << 10;

    static final int FI_ENODATA = 61;
    /**
     * tx_attr.msg_order: RMA writes are processed at the target in the order they were posted. Asked of shm only
     * (see {@link FabricDomain}'s write chains); asking it also turns off shm's "fast RMA" path, which copies a
     * write into the target process at once (process_vm_writev) without checking the target's key.
     */
    static final long FI_ORDER_WAW = 1L << 4;

    private FabricDiscovery() {}

    /**
     * The fi_info list for {@code provider}, or null when the provider offers nothing (fi_getinfo's -FI_ENODATA).
     * shm is asked for {@link #FI_SOURCE} and {@link #FI_ORDER_WAW} first, and without them where it offers nothing
     * with them.
     * The caller frees the list with {@link FabricLibrary#freeInfo}.
     *
     * @param node    the address to bind to, for providers that bind one; ignored by the others
     * @param service the port to bind to, or 0 for any
     * @param caps    capabilities to ask for besides messages and RMA, e.g. {@link #FI_HMEM}, or 0
     * @throws dev.transferengine.nativeaccess.NativeCallException when fi_getinfo fails for another reason
     */
    static MemorySegment query(
            final FabricLibrary library,
            final FabricProvider provider,
            final int apiVersion,
            final String node,
            final int service,
            final long caps) {
        // FI_SOURCE where completions were seen to name their writer (fi_cq_readfrom), for per-peer imm shares: shm.
        // tcp;ofi_rxm names none for a remote write on 2.1 and the wrong peer on 1.17 (docs/security.md)
        if (provider == FabricProvider.SHM) {
            final MemorySegment withSource =
                    queryOrdered(library, provider, apiVersion, node, service, caps | FI_SOURCE);
            if (withSource.address() != 0) {
                return withSource;
            }
        }
        final boolean rxm = provider.libfabricName().endsWith(";ofi_rxm");
        return queryOrdered(library, provider, apiVersion, node, service, rxm ? caps | FI_DIRECTED_RECV : caps);
    }

    private static MemorySegment queryOrdered(
            final FabricLibrary library,
            final FabricProvider provider,
            final int apiVersion,
            final String node,
            final int service,
            final long caps) {
        if (provider == FabricProvider.SHM) {
            final MemorySegment ordered = query(library, provider, apiVersion, node, service, caps, FI_ORDER_WAW);
            if (ordered.address() != 0) {
                return ordered;
            }
        }
        return query(library, provider, apiVersion, node, service, caps, 0);
    }

    private static MemorySegment query(
            final FabricLibrary library,
            final FabricProvider provider,
            final int apiVersion,
            final String node,
            final int service,
            final long caps,
            final long msgOrder) {
        final MemorySegment hints = library.allocInfo();
        if (hints.address() == 0) {
            throw library.failure("fi_dupinfo", -12, 0);
        }
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment info = FabricLibrary.NATIVE.asSlice(hints.address(), FabricLayout.FI_INFO.byteSize());
            // both kinds of messages: FabricEndpoint#tagged picks one by provider and version
            info.set(JAVA_LONG, INFO_CAPS, FI_MSG | FI_TAGGED | FI_RMA | caps);
            info.set(JAVA_LONG, INFO_MODE, FI_CONTEXT | FI_CONTEXT2);
            final long ep = info.get(JAVA_LONG, INFO_EP_ATTR);
            FabricLibrary.NATIVE.set(JAVA_INT, ep + EP_ATTR_TYPE, FI_EP_RDM);
            FabricLibrary.NATIVE.set(JAVA_LONG, info.get(JAVA_LONG, INFO_TX_ATTR) + TX_ATTR_MSG_ORDER, msgOrder);
            final long domain = info.get(JAVA_LONG, INFO_DOMAIN_ATTR);
            FabricLibrary.NATIVE.set(
                    JAVA_INT,
                    domain + DOMAIN_ATTR_MR_MODE,
                    FI_MR_LOCAL
                            | FI_MR_VIRT_ADDR
                            | FI_MR_ALLOCATED
                            | FI_MR_PROV_KEY
                            | ((caps & FI_HMEM) != 0 ? FI_MR_HMEM : 0));
            FabricLibrary.NATIVE.set(JAVA_INT, domain + DOMAIN_ATTR_THREADING, FI_THREAD_DOMAIN);
            FabricLibrary.NATIVE.set(JAVA_INT, domain + DOMAIN_ATTR_AV_TYPE, FI_AV_TABLE);
            final long fabric = info.get(JAVA_LONG, INFO_FABRIC_ATTR);
            FabricLibrary.NATIVE.set(
                    ADDRESS, fabric + FABRIC_ATTR_PROV_NAME, library.mallocString(provider.libfabricName()));

            final boolean bind = provider.bindsAddress();
            final MemorySegment nodeText = bind ? arena.allocateFrom(node) : MemorySegment.NULL;
            final MemorySegment serviceText =
                    bind && service != 0 ? arena.allocateFrom(Integer.toString(service)) : MemorySegment.NULL;
            final MemorySegment out = arena.allocate(ADDRESS);
            final MemorySegment errno = Errno.allocate(arena);
            final int rc = library.getinfo(apiVersion, nodeText, serviceText, bind ? FI_SOURCE : 0, hints, out, errno);
            if (rc == -FI_ENODATA) {
                return MemorySegment.NULL;
            }
            library.check("fi_getinfo(" + provider.libfabricName() + ")", rc, errno);
            return out.get(ADDRESS, 0);
        } finally {
            library.freeInfo(hints);
        }
    }

    /** The entries of a fi_info list that name distinct domains (NICs), in the library's order. */
    static List<Long> distinctDomains(final MemorySegment list) {
        final List<Long> out = new ArrayList<>();
        final Set<String> seen = new LinkedHashSet<>();
        for (long info = list.address(); info != 0; info = FabricLibrary.pointer(info + INFO_NEXT)) {
            final long domain = FabricLibrary.pointer(info + INFO_DOMAIN_ATTR);
            if (seen.add(FabricLibrary.string(FabricLibrary.pointer(domain + DOMAIN_ATTR_NAME)))) {
                out.add(info);
            }
        }
        return out;
    }
}
