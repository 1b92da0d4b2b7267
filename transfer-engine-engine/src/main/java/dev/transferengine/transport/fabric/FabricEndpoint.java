package dev.transferengine.transport.fabric;

import dev.transferengine.nativeaccess.Errno;
import dev.transferengine.nativeaccess.NativeCallException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static dev.transferengine.transport.fabric.FabricLayout.*;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The libfabric object graph of one NIC: fabric, domain, completion queue (FI_CQ_FORMAT_DATA), address vector
 * (FI_AV_TABLE) and one RDM endpoint bound to both, opened from one fi_info. Reads every function pointer it calls
 * from the objects' ops tables once, at open, after checking each table's {@code size} covers the slot.
 *
 * <p>Single-threaded like its domain, except that it may be opened and closed on another thread than the one that
 * drives it. The data-path methods ({@link #writeMsg}, {@link #readMsg}, {@link #sendMsg}, {@link #recvMsg}, {@link #cqRead}) do not
 * allocate and never block.
 */
final class FabricEndpoint implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(FabricEndpoint.class);

    private static final long FI_TRANSMIT = 1L << 11;
    private static final long FI_RECV = 1L << 10;
    /** Transmit completions only for operations posted with FI_COMPLETION (fi_ep_bind). */
    private static final long FI_SELECTIVE_COMPLETION = 1L << 59;

    private static final int FI_ENABLE = 6;
    private static final int FI_CQ_FORMAT_DATA = 3;
    /** The fi_addr_t of a source that is not in the AV (FI_ADDR_NOTAVAIL, {@code UINT64_MAX}). */
    static final long FI_ADDR_NOTAVAIL = -1L;

    private static final int FI_OPT_ENDPOINT = 0;
    private static final int FI_OPT_CUDA_API_PERMITTED = 10;
    private static final int FI_OPT_SHARED_MEMORY_PERMITTED = 11;
    private static final int FI_ETOOSMALL = 257;
    private static final int FI_ENOPROTOOPT = 92;
    private static final int FI_EOPNOTSUPP = 95;
    private static final int FI_EINVAL = 22;
    private static final long NAME_BYTES = 256;
    /** shm's inject size (SMR_INJECT_SIZE): the largest message that is copied, not read from its sender. */
    private static final long MIN_SCRATCH_BYTES = 4096;
    /**
     * How many replaced regions keep their header mapped here (each keeps its file's memory, up to 16 MiB, while
     * mapped): a peer that still maps a region older than that and takes a connection request of ours while the
     * name has no region can still crash in 2.1 (see {@link FabricShmRegion}).
     */
    private static final int RETIRED_REGIONS_KEPT = 4;

    private final FabricLibrary library;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment errno = Errno.allocate(arena);
    private final List<MemorySegment> opened = new ArrayList<>();

    private final MemorySegment info;
    private final String provider;
    private final String domainName;
    private final int mrMode;
    private final long mrKeySize;
    private final long cqDataSize;
    private final long msgOrder;
    private final long injectSize;
    private final int apiVersion;
    private final boolean tagged;

    private final MemorySegment domain;
    /** The completion queue and endpoint: shm replaces both after a gone peer stalled them ({@link #replace}). */
    private MemorySegment cq;

    private final MemorySegment av;
    private MemorySegment ep;
    private final byte[] name;
    private final boolean efa;

    private final MemorySegment regattrFn;
    private final MemorySegment avInsertFn;
    private final MemorySegment avRemoveFn;
    private MemorySegment cqReadFn;
    private MemorySegment cqReadFromFn;
    /** Whether completions carry the source's fi_addr_t (the FI_SOURCE capability): see {@link #cqReadFrom}. */
    private final boolean sources;

    private MemorySegment cqReadErrFn;
    private MemorySegment cqStrerrorFn;
    private MemorySegment sendMsgFn;
    private MemorySegment recvMsgFn;
    private MemorySegment writeMsgFn;
    private MemorySegment readMsgFn;
    /** How often {@link #replace} opened a new endpoint. */
    private int replacements;
    /**
     * shm: the headers of the regions of the endpoints {@link #replace} closed, newest last, whose pid it sets while
     * the name has no region; the oldest is unmapped beyond {@link #RETIRED_REGIONS_KEPT}. Closed with the endpoint.
     */
    private final Deque<FabricShmRegion> retired = new ArrayDeque<>();
    /** shm: what takes the held messages before fi_close; allocated at the first close. */
    private @Nullable FabricUnexpectedMessages unexpected;
    /** shm: this endpoint among the process's ({@link FabricLocalEndpoints}); null for other providers. */
    private FabricLocalEndpoints.@Nullable Entry local;

    /**
     * Opens everything for {@code entry} (an fi_info of a list the caller still owns and frees; it is duplicated).
     * On failure closes what it opened and throws.
     *
     * @param efa whether to apply EFA's endpoint options
     * @throws NativeCallException when a call fails
     */
    FabricEndpoint(final FabricLibrary library, final long entry, final boolean efa) {
        this.library = library;
        this.efa = efa;
        this.info = library.dupInfo(MemorySegment.ofAddress(entry));
        if (info.address() == 0) {
            arena.close();
            throw library.failure("fi_dupinfo", -12, 0);
        }
        final long domainAttr = FabricLibrary.pointer(info.address() + INFO_DOMAIN_ATTR);
        final long fabricAttr = FabricLibrary.pointer(info.address() + INFO_FABRIC_ATTR);
        this.provider = FabricLibrary.string(FabricLibrary.pointer(fabricAttr + FABRIC_ATTR_PROV_NAME));
        this.domainName = FabricLibrary.string(FabricLibrary.pointer(domainAttr + DOMAIN_ATTR_NAME));
        this.mrMode = FabricLibrary.NATIVE.get(JAVA_INT, domainAttr + DOMAIN_ATTR_MR_MODE);
        this.mrKeySize = FabricLibrary.NATIVE.get(JAVA_LONG, domainAttr + DOMAIN_ATTR_MR_KEY_SIZE);
        this.cqDataSize = FabricLibrary.NATIVE.get(JAVA_LONG, domainAttr + DOMAIN_ATTR_CQ_DATA_SIZE);
        this.sources =
                (FabricLibrary.NATIVE.get(JAVA_LONG, info.address() + INFO_CAPS) & FabricDiscovery.FI_SOURCE) != 0;
        this.apiVersion = FabricLibrary.NATIVE.get(JAVA_INT, fabricAttr + FABRIC_ATTR_API_VERSION);
        final long txAttr = FabricLibrary.pointer(info.address() + INFO_TX_ATTR);
        this.msgOrder = FabricLibrary.NATIVE.get(JAVA_LONG, txAttr + TX_ATTR_MSG_ORDER);
        this.injectSize = FabricLibrary.NATIVE.get(JAVA_LONG, txAttr + TX_ATTR_INJECT_SIZE);
        this.tagged = tagsMatchBuffersThatFit(provider, library.version());
        try {
            final MemorySegment out = arena.allocate(ADDRESS);
            check("fi_fabric", library.openFabric(MemorySegment.ofAddress(fabricAttr), out, errno));
            final MemorySegment fabric = track(out.get(ADDRESS, 0));
            this.domain = open("fi_domain", fabric, FABRIC_OPS_DOMAIN, "fi_ops_fabric.domain", info, out);

            this.cq = openCq(out);

            final MemorySegment avAttr = arena.allocate(FI_AV_ATTR);
            avAttr.set(JAVA_INT, FI_AV_ATTR.byteOffset(groupElement("type")), FabricDiscovery.FI_AV_TABLE);
            this.av = open("fi_av_open", domain, DOMAIN_OPS_AV_OPEN, "fi_ops_domain.av_open", avAttr, out);

            this.ep = openEndpoint(cq, out, null);
            this.name = readName(ep);

            this.regattrFn = slot(domain, DOMAIN_MR_OPS, MR_OPS_REGATTR, "fi_ops_mr.regattr");
            this.avInsertFn = slot(av, OBJ_OPS, AV_OPS_INSERT, "fi_ops_av.insert");
            this.avRemoveFn = slot(av, OBJ_OPS, AV_OPS_REMOVE, "fi_ops_av.remove");
            this.cqReadFn = slot(cq, OBJ_OPS, CQ_OPS_READ, "fi_ops_cq.read");
            this.cqReadFromFn = slot(cq, OBJ_OPS, CQ_OPS_READFROM, "fi_ops_cq.readfrom");
            this.cqReadErrFn = slot(cq, OBJ_OPS, CQ_OPS_READERR, "fi_ops_cq.readerr");
            this.cqStrerrorFn = slot(cq, OBJ_OPS, CQ_OPS_STRERROR, "fi_ops_cq.strerror");
            this.sendMsgFn = tagged
                    ? slot(ep, EP_TAGGED_OPS, TAGGED_OPS_SENDMSG, "fi_ops_tagged.sendmsg")
                    : slot(ep, EP_MSG_OPS, MSG_OPS_SENDMSG, "fi_ops_msg.sendmsg");
            this.recvMsgFn = tagged
                    ? slot(ep, EP_TAGGED_OPS, TAGGED_OPS_RECVMSG, "fi_ops_tagged.recvmsg")
                    : slot(ep, EP_MSG_OPS, MSG_OPS_RECVMSG, "fi_ops_msg.recvmsg");
            this.writeMsgFn = slot(ep, EP_RMA_OPS, RMA_OPS_WRITEMSG, "fi_ops_rma.writemsg");
            this.readMsgFn = slot(ep, EP_RMA_OPS, RMA_OPS_READMSG, "fi_ops_rma.readmsg");
            if (isShm()) {
                local = FabricLocalEndpoints.opened(this);
            }
        } catch (final RuntimeException e) {
            closeQuietly(e);
            throw e;
        }
    }

    private MemorySegment openCq(final MemorySegment out) {
        final MemorySegment cqAttr = arena.allocate(FI_CQ_ATTR);
        cqAttr.set(JAVA_INT, FI_CQ_ATTR.byteOffset(groupElement("format")), FI_CQ_FORMAT_DATA);
        return open("fi_cq_open", domain, DOMAIN_OPS_CQ_OPEN, "fi_ops_domain.cq_open", cqAttr, out);
    }

    /**
     * Opens an endpoint bound to {@code completions} and the AV and enables it; under {@code setName} (fi_setname
     * before fi_enable) where given, else under the provider's name for it.
     */
    private MemorySegment openEndpoint(
            final MemorySegment completions, final MemorySegment out, final byte @Nullable [] setName) {
        // shm's first endpoint replaces the JVM's SIGSEGV handler with one that unlinks its regions: see
        // FabricSignals
        final MemorySegment endpoint = FabricSignals.keepingJvmHandlers(
                () -> open("fi_endpoint", domain, DOMAIN_OPS_ENDPOINT, "fi_ops_domain.endpoint", info, out));
        if (setName != null) {
            final MemorySegment bytes = arena.allocate(setName.length);
            MemorySegment.copy(setName, 0, bytes, JAVA_BYTE, 0, setName.length);
            check(
                    "fi_setname",
                    FabricCalls.intPPL(
                            slot(endpoint, EP_CM_OPS, CM_OPS_SETNAME, "fi_ops_cm.setname"),
                            errno,
                            endpoint,
                            bytes,
                            setName.length));
        }
        final MemorySegment bind = slot(endpoint, FID_OPS, FI_OPS_BIND, "fi_ops.bind");
        if (isShm()) {
            // transmit completions only where asked for: FabricDomain posts the inner writes of a write chain
            // as injects without one (every other operation asks); receive completions are unchanged
            check(
                    "fi_ep_bind(cq, transmit)",
                    FabricCalls.intPPL(bind, errno, endpoint, completions, FI_TRANSMIT | FI_SELECTIVE_COMPLETION));
            check("fi_ep_bind(cq, receive)", FabricCalls.intPPL(bind, errno, endpoint, completions, FI_RECV));
        } else {
            check("fi_ep_bind(cq)", FabricCalls.intPPL(bind, errno, endpoint, completions, FI_TRANSMIT | FI_RECV));
        }
        check("fi_ep_bind(av)", FabricCalls.intPPL(bind, errno, endpoint, av, 0));
        if (efa) {
            disallow(endpoint, FI_OPT_SHARED_MEMORY_PERMITTED, "FI_OPT_SHARED_MEMORY_PERMITTED");
            disallow(endpoint, FI_OPT_CUDA_API_PERMITTED, "FI_OPT_CUDA_API_PERMITTED");
        }
        if (isShm()) {
            // shm names the endpoint before fi_enable creates its file, which a killed process of our pid left
            FabricShmRegion.removeStale(readName(endpoint));
        }
        check(
                "fi_enable",
                FabricCalls.intPIP(
                        slot(endpoint, FID_OPS, FI_OPS_CONTROL, "fi_ops.control"),
                        errno,
                        endpoint,
                        FI_ENABLE,
                        MemorySegment.NULL));
        return endpoint;
    }

    /**
     * shm only: closes the endpoint and its completion queue, with whatever they still held, and opens new ones
     * under the same name, bound to the same AV on the same domain. Peers and registrations (and their keys) stay;
     * nothing posted on the old endpoint completes any more. Why and what the peers must do: {@link
     * FabricDomain}'s class comment, "A gone shm peer". The endpoint's memory is unmapped here, so no endpoint of
     * this process may hold it in its AV ({@link FabricLocalEndpoints#heldHere}). Control path, on the driving
     * thread.
     *
     * @throws NativeCallException when opening the new ones fails; the endpoint is then unusable (close it)
     */
    void replace() {
        takeUnexpected();
        // the old region's pid is cleared only once the new region is there (see FabricShmRegion), and the
        // regions of earlier replacements are ours again until then; mapped before the close unlinks it
        retired.forEach(FabricShmRegion::claim);
        final @Nullable FabricShmRegion closing = FabricShmRegion.mapOwn(name);
        if (closing != null) {
            retired.addLast(closing);
            if (retired.size() > RETIRED_REGIONS_KEPT) {
                retired.removeFirst().close();
            }
        }
        for (final MemorySegment old : List.of(ep, cq)) {
            opened.removeIf(o -> o.address() == old.address());
            final int rc = closeObject(old);
            if (rc < 0) {
                LOG.warn("fi_close on {} failed: {}", provider, library.describe(rc));
            }
        }
        final MemorySegment out = arena.allocate(ADDRESS);
        cq = openCq(out);
        ep = openEndpoint(cq, out, name);
        cqReadFn = slot(cq, OBJ_OPS, CQ_OPS_READ, "fi_ops_cq.read");
        cqReadFromFn = slot(cq, OBJ_OPS, CQ_OPS_READFROM, "fi_ops_cq.readfrom");
        cqReadErrFn = slot(cq, OBJ_OPS, CQ_OPS_READERR, "fi_ops_cq.readerr");
        cqStrerrorFn = slot(cq, OBJ_OPS, CQ_OPS_STRERROR, "fi_ops_cq.strerror");
        sendMsgFn = tagged
                ? slot(ep, EP_TAGGED_OPS, TAGGED_OPS_SENDMSG, "fi_ops_tagged.sendmsg")
                : slot(ep, EP_MSG_OPS, MSG_OPS_SENDMSG, "fi_ops_msg.sendmsg");
        recvMsgFn = tagged
                ? slot(ep, EP_TAGGED_OPS, TAGGED_OPS_RECVMSG, "fi_ops_tagged.recvmsg")
                : slot(ep, EP_MSG_OPS, MSG_OPS_RECVMSG, "fi_ops_msg.recvmsg");
        writeMsgFn = slot(ep, EP_RMA_OPS, RMA_OPS_WRITEMSG, "fi_ops_rma.writemsg");
        readMsgFn = slot(ep, EP_RMA_OPS, RMA_OPS_READMSG, "fi_ops_rma.readmsg");
        replacements++;
        if (!Arrays.equals(name, readName(ep))) {
            throw new NativeCallException("fi_setname", -FI_EINVAL, "the new endpoint took another name", 0);
        }
        retired.forEach(FabricShmRegion::forgetOwner);
    }

    /** How often {@link #replace} opened a new endpoint. */
    int replacements() {
        return replacements;
    }

    /** Calls the open function at {@code fn} of {@code parent}'s ops table and tracks what it opened. */
    private MemorySegment open(
            final String call,
            final MemorySegment parent,
            final long fn,
            final String fnName,
            final MemorySegment attr,
            final MemorySegment out) {
        check(
                call,
                FabricCalls.intPPPP(slot(parent, OBJ_OPS, fn, fnName), errno, parent, attr, out, MemorySegment.NULL));
        return track(out.get(ADDRESS, 0));
    }

    private MemorySegment track(final MemorySegment object) {
        opened.add(object);
        return object;
    }

    private void check(final String function, final int rc) {
        library.check(function, rc, errno);
    }

    /**
     * The function pointer at {@code slot} of the ops table that {@code object} points to at {@code opsField},
     * after checking the table is large enough to hold it (ops tables grow at the end across versions).
     */
    private MemorySegment slot(final MemorySegment object, final long opsField, final long slot, final String what) {
        final long ops = FabricLibrary.pointer(object.address() + opsField);
        if (ops == 0) {
            throw new NativeCallException(what, -FI_EOPNOTSUPP, "provider " + provider + " has no such ops table", 0);
        }
        final long size = FabricLibrary.pointer(ops + OPS_SIZE);
        final long fn = FabricLibrary.pointer(ops + slot);
        if (size < slot + ADDRESS.byteSize() || fn == 0) {
            throw new NativeCallException(
                    what,
                    -FI_EOPNOTSUPP,
                    "provider " + provider + " does not implement it" + " (ops table size " + size + ")",
                    0);
        }
        return MemorySegment.ofAddress(fn);
    }

    private void disallow(final MemorySegment endpoint, final int option, final String optionName) {
        final MemorySegment off = arena.allocate(JAVA_BYTE);
        final int rc = FabricCalls.intPIIPL(
                slot(endpoint, OBJ_OPS, EP_OPS_SETOPT, "fi_ops_ep.setopt"),
                errno,
                endpoint,
                FI_OPT_ENDPOINT,
                option,
                off,
                1);
        if (rc == -FI_ENOPROTOOPT || rc == -FI_EOPNOTSUPP || rc == -FI_EINVAL) {
            // Older libraries lack the option; without CUDA the provider refuses the CUDA one. Both are harmless.
            LOG.debug("fi_setopt({}=false) on {}: {}", optionName, provider, library.describe(rc));
            return;
        }
        check("fi_setopt(" + optionName + ")", rc);
    }

    private byte[] readName(final MemorySegment endpoint) {
        final MemorySegment getname = slot(endpoint, EP_CM_OPS, CM_OPS_GETNAME, "fi_ops_cm.getname");
        final MemorySegment length = arena.allocate(JAVA_LONG);
        length.set(JAVA_LONG, 0, NAME_BYTES);
        MemorySegment buffer = arena.allocate(NAME_BYTES);
        int rc = FabricCalls.intPPP(getname, errno, endpoint, buffer, length);
        if (rc == -FI_ETOOSMALL) {
            buffer = arena.allocate(length.get(JAVA_LONG, 0));
            rc = FabricCalls.intPPP(getname, errno, endpoint, buffer, length);
        }
        check("fi_getname", rc);
        return buffer.asSlice(0, length.get(JAVA_LONG, 0)).toArray(JAVA_BYTE);
    }

    FabricLibrary library() {
        return library;
    }

    /** The provider as libfabric names it, e.g. {@code tcp;ofi_rxm}. */
    String provider() {
        return provider;
    }

    String domainName() {
        return domainName;
    }

    int mrMode() {
        return mrMode;
    }

    long mrKeySize() {
        return mrKeySize;
    }

    long cqDataSize() {
        return cqDataSize;
    }

    int apiVersion() {
        return apiVersion;
    }

    /** The tx_attr.msg_order of the fi_info the endpoint was opened with: the orderings the provider keeps. */
    long msgOrder() {
        return msgOrder;
    }

    /**
     * The tx_attr.inject_size of the fi_info the endpoint was opened with: the most bytes a write posted with
     * FI_INJECT may carry (the provider copies them before the post returns).
     */
    long injectSize() {
        return injectSize;
    }

    /**
     * Whether transmit completions are selective (FI_SELECTIVE_COMPLETION, on shm): an operation posted without
     * FI_COMPLETION then writes no entry to the CQ unless it fails.
     */
    boolean selectiveTransmitCompletion() {
        return isShm();
    }

    /** The endpoint's own address bytes (fi_getname). */
    byte[] name() {
        return name.clone();
    }

    MemorySegment errnoState() {
        return errno;
    }

    /** fi_mr_regattr with {@code flags}; returns the rc, the MR in {@code out}. Control path. */
    int regAttr(final MemorySegment attr, final long flags, final MemorySegment out) {
        return FabricCalls.intPPLP(regattrFn, errno, domain, attr, flags, out);
    }

    /** Closes an MR (fi_close). */
    int closeObject(final MemorySegment object) {
        return FabricCalls.intP(slot(object, FID_OPS, FI_OPS_CLOSE, "fi_ops.close"), errno, object);
    }

    /** fi_av_insert of one address; returns the number inserted (1) or a negative code. */
    int avInsert(final MemorySegment address, final MemorySegment fiAddr) {
        return FabricCalls.intPPLPLP(avInsertFn, errno, av, address, 1, fiAddr, 0, MemorySegment.NULL);
    }

    /** fi_av_remove of the one fi_addr_t in {@code fiAddr}; returns 0 or a negative code. */
    int avRemove(final MemorySegment fiAddr) {
        return FabricCalls.intPPLL(avRemoveFn, errno, av, fiAddr, 1, 0);
    }

    /**
     * Whether sends and receives are tagged messages matched by size class ({@link FabricOps#sizeTag}), so that a
     * send lands only in a buffer it fits in and one that fits none is held until one is posted; otherwise they are
     * untagged and a send takes the oldest posted buffer, truncated there if it does not fit.
     */
    boolean tagged() {
        return tagged;
    }

    /**
     * Whether {@code provider} of a library of API {@code version} matches tagged messages with ignore bits also on
     * its unexpected path. shm before libfabric 1.19 (its own shared receive context, before util_srx) does not: a
     * receive posted after the message arrived is compared with the ignore mask left in the reused queue entry by
     * whatever receive last used it, not with its own (smr_get_tag leaves {@code ignore} unset). Measured with
     * {@code src/test/c/shm_held_tagged.c} (FabricShmHeldTagTest runs it against the loaded library) on 1.17: a held 5-byte send never matched a later 64-byte buffer, and a held 17-byte send matched, and
     * was truncated in, a later 16-byte buffer once the entry had served a 64-byte receive; 2.1 and tcp at 1.17 got
     * both right. There the transport stays untagged (the README's fabric section says what that leaves).
     */
    static boolean tagsMatchBuffersThatFit(final String provider, final int version) {
        return !"shm".equals(provider) || version >= (1 << 16 | 19);
    }

    /**
     * shm: {@code readCompletions} reads this endpoint's completions once on the thread that drives it; closing
     * peers of this process that posted here run it where they are that thread ({@link FabricLocalEndpoints}).
     */
    void drivenBy(final Runnable readCompletions) {
        final FabricLocalEndpoints.Entry entry = local;
        if (entry != null) {
            entry.drivenBy(readCompletions);
        }
    }

    /** The driving thread read this endpoint's completions once. Does not allocate. */
    void progressedOnce() {
        final FabricLocalEndpoints.Entry entry = local;
        if (entry != null) {
            entry.progressedOnce();
        }
    }

    /** Whether this is libfabric's shm provider, whose peers in this process need {@link FabricLocalEndpoints}. */
    boolean isShm() {
        return "shm".equals(provider);
    }

    long writeMsg(final MemorySegment msg, final long flags) {
        return FabricCalls.longPPLCritical(writeMsgFn, ep, msg, flags);
    }

    /** {@code fi_readmsg}: the remote range of {@code msg}'s rma_iov into its local iov. */
    long readMsg(final MemorySegment msg, final long flags) {
        return FabricCalls.longPPLCritical(readMsgFn, ep, msg, flags);
    }

    long sendMsg(final MemorySegment msg, final long flags) {
        return FabricCalls.longPPLCritical(sendMsgFn, ep, msg, flags);
    }

    long recvMsg(final MemorySegment msg, final long flags) {
        return FabricCalls.longPPLCritical(recvMsgFn, ep, msg, flags);
    }

    /** fi_trecvmsg (with {@code tagged}) or fi_recvmsg of {@code msg}, in either mode of the endpoint. Control path. */
    long postReceiveForAny(final MemorySegment msg, final boolean tagged, final long flags) {
        final MemorySegment fn = tagged
                ? slot(ep, EP_TAGGED_OPS, TAGGED_OPS_RECVMSG, "fi_ops_tagged.recvmsg")
                : slot(ep, EP_MSG_OPS, MSG_OPS_RECVMSG, "fi_ops_msg.recvmsg");
        return FabricCalls.longPPLCritical(fn, ep, msg, flags);
    }

    /**
     * shm: receives what the endpoint holds unexpected, which libfabric 2.1's fi_close would hand to a broken
     * discard ({@link FabricUnexpectedMessages}). Before every fi_close of the endpoint.
     */
    private void takeUnexpected() {
        if (unexpected == null) {
            unexpected = new FabricUnexpectedMessages(this, arena, Math.max(injectSize, MIN_SCRATCH_BYTES));
        }
        try {
            final int taken = unexpected.takeAll();
            if (taken > 0) {
                LOG.debug("{}: took {} unexpected messages before closing the endpoint", provider, taken);
            }
        } catch (final RuntimeException e) {
            LOG.warn("taking the unexpected messages of {} before closing failed", provider, e);
        }
    }

    /**
     * fi_cancel of the operation posted with {@code context}: 0 when it is cancelled (its completion comes with
     * FI_ECANCELED), -FI_ENOENT when the provider holds it no more (it completes as usual).
     */
    long cancel(final long context) {
        return FabricCalls.longPP(
                slot(ep, OBJ_OPS, EP_OPS_CANCEL, "fi_ops_ep.cancel"), ep, MemorySegment.ofAddress(context));
    }

    /** fi_cq_read into {@code entries} (FI_CQ_FORMAT_DATA); entry count, -FI_EAGAIN or -FI_EAVAIL. */
    long cqRead(final MemorySegment entries, final long count) {
        return FabricCalls.longPPLCritical(cqReadFn, cq, entries, count);
    }

    /**
     * fi_cq_readfrom: {@link #cqRead}, and each entry's source in {@code sources} (one fi_addr_t per entry): the
     * handle of the peer in this endpoint's AV, or {@link #FI_ADDR_NOTAVAIL} for a peer not in it. Only when
     * {@link #reportsSources()}.
     */
    long cqReadFrom(final MemorySegment entries, final long count, final MemorySegment sources) {
        return FabricCalls.longPPLPCritical(cqReadFromFn, cq, entries, count, sources);
    }

    /** Whether the provider gave this endpoint FI_SOURCE: {@link #cqReadFrom} then says who each completion is from. */
    boolean reportsSources() {
        return sources;
    }

    long cqReadErr(final MemorySegment errEntry) {
        return FabricCalls.longPPL(cqReadErrFn, cq, errEntry, 0);
    }

    /** The provider's text for a completion error (fi_cq_strerror). Allocates. */
    String cqStrerror(final int provErrno, final long errData, final MemorySegment buffer) {
        final MemorySegment text = FabricCalls.ptrPIPPL(
                cqStrerrorFn, cq, provErrno, MemorySegment.ofAddress(errData), buffer, buffer.byteSize());
        return text.address() == 0 ? "" : FabricLibrary.string(text.address());
    }

    /**
     * Closes endpoint, AV, CQ, domain and fabric, in that order; an shm endpoint that another AV of this process
     * still holds is closed by the last holder instead ({@link FabricLocalEndpoints}). Failures are logged, not
     * thrown.
     */
    @Override
    public void close() {
        if (isShm()) {
            FabricLocalEndpoints.close(this);
        } else {
            closeNow();
        }
    }

    /** Closes everything now, on the calling thread. */
    void closeNow() {
        if (isShm()) {
            takeUnexpected();
        }
        closeQuietly(null);
    }

    private void closeQuietly(final @Nullable RuntimeException primary) {
        for (int i = opened.size() - 1; i >= 0; i--) {
            final MemorySegment object = opened.get(i);
            try {
                final int rc = closeObject(object);
                if (rc < 0) {
                    LOG.warn("fi_close on {} failed: {}", provider, library.describe(rc));
                }
            } catch (final RuntimeException e) {
                if (primary != null) {
                    primary.addSuppressed(e);
                } else {
                    LOG.warn("fi_close on {} failed", provider, e);
                }
            }
        }
        opened.clear();
        retired.forEach(FabricShmRegion::close);
        retired.clear();
        library.freeInfo(info);
        arena.close();
    }
}
