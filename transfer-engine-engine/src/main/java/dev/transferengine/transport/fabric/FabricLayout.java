package dev.transferengine.transport.fabric;

import java.lang.foreign.StructLayout;
import java.util.LinkedHashMap;
import java.util.Map;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The libfabric structs and ops tables this binding touches, written by hand from the 1.17 headers for LP64
 * (size_t, pointers and uint64_t are 8 bytes; enums and int 4). Structs in libfabric only grow at the end, so these
 * prefixes stay valid for newer libraries; ops tables also grow at the end and carry their {@code size} first, which
 * {@link FabricEndpoint} checks before reading a slot. {@code FabricLayoutTest} compares every entry of
 * {@link #entries()} with offsetof/sizeof from the installed C headers.
 */
final class FabricLayout {

    static final StructLayout FID = structLayout(
                    JAVA_LONG.withName("fclass"), ADDRESS.withName("context"), ADDRESS.withName("ops"))
            .withName("fid");

    static final StructLayout FI_INFO = structLayout(
                    ADDRESS.withName("next"),
                    JAVA_LONG.withName("caps"),
                    JAVA_LONG.withName("mode"),
                    JAVA_INT.withName("addr_format"),
                    paddingLayout(4),
                    JAVA_LONG.withName("src_addrlen"),
                    JAVA_LONG.withName("dest_addrlen"),
                    ADDRESS.withName("src_addr"),
                    ADDRESS.withName("dest_addr"),
                    ADDRESS.withName("handle"),
                    ADDRESS.withName("tx_attr"),
                    ADDRESS.withName("rx_attr"),
                    ADDRESS.withName("ep_attr"),
                    ADDRESS.withName("domain_attr"),
                    ADDRESS.withName("fabric_attr"),
                    ADDRESS.withName("nic"))
            .withName("fi_info");

    static final StructLayout FI_EP_ATTR = structLayout(
                    JAVA_INT.withName("type"),
                    JAVA_INT.withName("protocol"),
                    JAVA_INT.withName("protocol_version"),
                    paddingLayout(4),
                    JAVA_LONG.withName("max_msg_size"))
            .withName("fi_ep_attr");

    /** The prefix of fi_tx_attr up to inject_size (read from the fi_info a domain is opened with). */
    static final StructLayout FI_TX_ATTR = structLayout(
                    JAVA_LONG.withName("caps"),
                    JAVA_LONG.withName("mode"),
                    JAVA_LONG.withName("op_flags"),
                    JAVA_LONG.withName("msg_order"),
                    JAVA_LONG.withName("comp_order"),
                    JAVA_LONG.withName("inject_size"))
            .withName("fi_tx_attr");

    static final StructLayout FI_DOMAIN_ATTR = structLayout(
                    ADDRESS.withName("domain"),
                    ADDRESS.withName("name"),
                    JAVA_INT.withName("threading"),
                    JAVA_INT.withName("control_progress"),
                    JAVA_INT.withName("data_progress"),
                    JAVA_INT.withName("resource_mgmt"),
                    JAVA_INT.withName("av_type"),
                    JAVA_INT.withName("mr_mode"),
                    JAVA_LONG.withName("mr_key_size"),
                    JAVA_LONG.withName("cq_data_size"))
            .withName("fi_domain_attr");

    static final StructLayout FI_FABRIC_ATTR = structLayout(
                    ADDRESS.withName("fabric"),
                    ADDRESS.withName("name"),
                    ADDRESS.withName("prov_name"),
                    JAVA_INT.withName("prov_version"),
                    JAVA_INT.withName("api_version"))
            .withName("fi_fabric_attr");

    static final StructLayout FI_CQ_ATTR = structLayout(
                    JAVA_LONG.withName("size"),
                    JAVA_LONG.withName("flags"),
                    JAVA_INT.withName("format"),
                    JAVA_INT.withName("wait_obj"),
                    JAVA_INT.withName("signaling_vector"),
                    JAVA_INT.withName("wait_cond"),
                    ADDRESS.withName("wait_set"))
            .withName("fi_cq_attr");

    static final StructLayout FI_AV_ATTR = structLayout(
                    JAVA_INT.withName("type"),
                    JAVA_INT.withName("rx_ctx_bits"),
                    JAVA_LONG.withName("count"),
                    JAVA_LONG.withName("ep_per_node"),
                    ADDRESS.withName("name"),
                    ADDRESS.withName("map_addr"),
                    JAVA_LONG.withName("flags"))
            .withName("fi_av_attr");

    static final StructLayout FI_CQ_DATA_ENTRY = structLayout(
                    ADDRESS.withName("op_context"),
                    JAVA_LONG.withName("flags"),
                    JAVA_LONG.withName("len"),
                    ADDRESS.withName("buf"),
                    JAVA_LONG.withName("data"))
            .withName("fi_cq_data_entry");

    static final StructLayout FI_CQ_ERR_ENTRY = structLayout(
                    ADDRESS.withName("op_context"),
                    JAVA_LONG.withName("flags"),
                    JAVA_LONG.withName("len"),
                    ADDRESS.withName("buf"),
                    JAVA_LONG.withName("data"),
                    JAVA_LONG.withName("tag"),
                    JAVA_LONG.withName("olen"),
                    JAVA_INT.withName("err"),
                    JAVA_INT.withName("prov_errno"),
                    ADDRESS.withName("err_data"),
                    JAVA_LONG.withName("err_data_size"))
            .withName("fi_cq_err_entry");

    static final StructLayout IOVEC = structLayout(ADDRESS.withName("iov_base"), JAVA_LONG.withName("iov_len"))
            .withName("iovec");

    static final StructLayout FI_RMA_IOV = structLayout(
                    JAVA_LONG.withName("addr"), JAVA_LONG.withName("len"), JAVA_LONG.withName("key"))
            .withName("fi_rma_iov");

    static final StructLayout FI_MSG_RMA = structLayout(
                    ADDRESS.withName("msg_iov"),
                    ADDRESS.withName("desc"),
                    JAVA_LONG.withName("iov_count"),
                    JAVA_LONG.withName("addr"),
                    ADDRESS.withName("rma_iov"),
                    JAVA_LONG.withName("rma_iov_count"),
                    ADDRESS.withName("context"),
                    JAVA_LONG.withName("data"))
            .withName("fi_msg_rma");

    static final StructLayout FI_MSG = structLayout(
                    ADDRESS.withName("msg_iov"),
                    ADDRESS.withName("desc"),
                    JAVA_LONG.withName("iov_count"),
                    JAVA_LONG.withName("addr"),
                    ADDRESS.withName("context"),
                    JAVA_LONG.withName("data"))
            .withName("fi_msg");

    static final StructLayout FI_MSG_TAGGED = structLayout(
                    ADDRESS.withName("msg_iov"),
                    ADDRESS.withName("desc"),
                    JAVA_LONG.withName("iov_count"),
                    JAVA_LONG.withName("addr"),
                    JAVA_LONG.withName("tag"),
                    JAVA_LONG.withName("ignore"),
                    ADDRESS.withName("context"),
                    JAVA_LONG.withName("data"))
            .withName("fi_msg_tagged");

    static final StructLayout FI_MR_ATTR = structLayout(
                    ADDRESS.withName("mr_iov"),
                    JAVA_LONG.withName("iov_count"),
                    JAVA_LONG.withName("access"),
                    JAVA_LONG.withName("offset"),
                    JAVA_LONG.withName("requested_key"),
                    ADDRESS.withName("context"),
                    JAVA_LONG.withName("auth_key_size"),
                    ADDRESS.withName("auth_key"),
                    JAVA_INT.withName("iface"),
                    paddingLayout(4),
                    JAVA_LONG.withName("device"))
            .withName("fi_mr_attr");

    // fi_info
    static final long INFO_CAPS = off(FI_INFO, "caps");
    static final long INFO_MODE = off(FI_INFO, "mode");
    static final long INFO_SRC_ADDRLEN = off(FI_INFO, "src_addrlen");
    static final long INFO_EP_ATTR = off(FI_INFO, "ep_attr");
    static final long INFO_DOMAIN_ATTR = off(FI_INFO, "domain_attr");
    static final long INFO_FABRIC_ATTR = off(FI_INFO, "fabric_attr");
    static final long INFO_NEXT = off(FI_INFO, "next");
    static final long EP_ATTR_TYPE = off(FI_EP_ATTR, "type");
    static final long INFO_TX_ATTR = off(FI_INFO, "tx_attr");
    static final long TX_ATTR_MSG_ORDER = off(FI_TX_ATTR, "msg_order");
    static final long TX_ATTR_INJECT_SIZE = off(FI_TX_ATTR, "inject_size");
    static final long DOMAIN_ATTR_NAME = off(FI_DOMAIN_ATTR, "name");
    static final long DOMAIN_ATTR_THREADING = off(FI_DOMAIN_ATTR, "threading");
    static final long DOMAIN_ATTR_DATA_PROGRESS = off(FI_DOMAIN_ATTR, "data_progress");
    static final long DOMAIN_ATTR_AV_TYPE = off(FI_DOMAIN_ATTR, "av_type");
    static final long DOMAIN_ATTR_MR_MODE = off(FI_DOMAIN_ATTR, "mr_mode");
    static final long DOMAIN_ATTR_MR_KEY_SIZE = off(FI_DOMAIN_ATTR, "mr_key_size");
    static final long DOMAIN_ATTR_CQ_DATA_SIZE = off(FI_DOMAIN_ATTR, "cq_data_size");
    static final long FABRIC_ATTR_NAME = off(FI_FABRIC_ATTR, "name");
    static final long FABRIC_ATTR_PROV_NAME = off(FI_FABRIC_ATTR, "prov_name");
    static final long FABRIC_ATTR_API_VERSION = off(FI_FABRIC_ATTR, "api_version");

    // objects: every fid_* starts with struct fid, then its class's ops pointers
    static final long FID_OPS = off(FID, "ops");
    static final long OBJ_OPS = FID.byteSize();
    static final long DOMAIN_MR_OPS = OBJ_OPS + 8;
    static final long EP_CM_OPS = OBJ_OPS + 8;
    static final long EP_MSG_OPS = OBJ_OPS + 16;
    static final long EP_RMA_OPS = OBJ_OPS + 24;
    static final long EP_TAGGED_OPS = OBJ_OPS + 32;
    static final long MR_MEM_DESC = OBJ_OPS;
    static final long MR_KEY = OBJ_OPS + 8;

    // ops-table slots: each table starts with size_t size, then function pointers in header order
    static final long OPS_SIZE = 0;
    static final long FI_OPS_CLOSE = 8;
    static final long FI_OPS_BIND = 16;
    static final long FI_OPS_CONTROL = 24;
    static final long FABRIC_OPS_DOMAIN = 8;
    static final long DOMAIN_OPS_AV_OPEN = 8;
    static final long DOMAIN_OPS_CQ_OPEN = 16;
    static final long DOMAIN_OPS_ENDPOINT = 24;
    static final long MR_OPS_REGATTR = 24;
    static final long AV_OPS_INSERT = 8;
    static final long AV_OPS_REMOVE = 32;
    static final long CQ_OPS_READ = 8;
    static final long CQ_OPS_READFROM = 16;
    static final long CQ_OPS_READERR = 24;
    static final long CQ_OPS_STRERROR = 56;
    static final long EP_OPS_CANCEL = 8;
    static final long EP_OPS_SETOPT = 24;
    static final long CM_OPS_SETNAME = 8;
    static final long CM_OPS_GETNAME = 16;
    static final long MSG_OPS_RECVMSG = 24;
    static final long MSG_OPS_SENDMSG = 48;
    static final long RMA_OPS_READMSG = 24;
    static final long RMA_OPS_WRITEMSG = 48;
    static final long TAGGED_OPS_RECVMSG = 24;
    static final long TAGGED_OPS_SENDMSG = 48;

    // message structs
    static final long IOV_BASE = off(IOVEC, "iov_base");
    static final long IOV_LEN = off(IOVEC, "iov_len");
    static final long RMA_IOV_ADDR = off(FI_RMA_IOV, "addr");
    static final long RMA_IOV_LEN = off(FI_RMA_IOV, "len");
    static final long RMA_IOV_KEY = off(FI_RMA_IOV, "key");
    static final long MSG_RMA_MSG_IOV = off(FI_MSG_RMA, "msg_iov");
    static final long MSG_RMA_DESC = off(FI_MSG_RMA, "desc");
    static final long MSG_RMA_IOV_COUNT = off(FI_MSG_RMA, "iov_count");
    static final long MSG_RMA_ADDR = off(FI_MSG_RMA, "addr");
    static final long MSG_RMA_RMA_IOV = off(FI_MSG_RMA, "rma_iov");
    static final long MSG_RMA_RMA_IOV_COUNT = off(FI_MSG_RMA, "rma_iov_count");
    static final long MSG_RMA_CONTEXT = off(FI_MSG_RMA, "context");
    static final long MSG_RMA_DATA = off(FI_MSG_RMA, "data");
    static final long MSG_MSG_IOV = off(FI_MSG, "msg_iov");
    static final long MSG_DESC = off(FI_MSG, "desc");
    static final long MSG_IOV_COUNT = off(FI_MSG, "iov_count");
    static final long MSG_ADDR = off(FI_MSG, "addr");
    static final long MSG_CONTEXT = off(FI_MSG, "context");
    static final long MSG_DATA = off(FI_MSG, "data");
    static final long TMSG_MSG_IOV = off(FI_MSG_TAGGED, "msg_iov");
    static final long TMSG_DESC = off(FI_MSG_TAGGED, "desc");
    static final long TMSG_IOV_COUNT = off(FI_MSG_TAGGED, "iov_count");
    static final long TMSG_ADDR = off(FI_MSG_TAGGED, "addr");
    static final long TMSG_TAG = off(FI_MSG_TAGGED, "tag");
    static final long TMSG_IGNORE = off(FI_MSG_TAGGED, "ignore");
    static final long TMSG_CONTEXT = off(FI_MSG_TAGGED, "context");
    static final long TMSG_DATA = off(FI_MSG_TAGGED, "data");
    static final long CQE_OP_CONTEXT = off(FI_CQ_DATA_ENTRY, "op_context");
    static final long CQE_FLAGS = off(FI_CQ_DATA_ENTRY, "flags");
    static final long CQE_LEN = off(FI_CQ_DATA_ENTRY, "len");
    static final long CQE_DATA = off(FI_CQ_DATA_ENTRY, "data");
    static final long CQE_SIZE = FI_CQ_DATA_ENTRY.byteSize();
    static final long ERR_OP_CONTEXT = off(FI_CQ_ERR_ENTRY, "op_context");
    static final long ERR_FLAGS = off(FI_CQ_ERR_ENTRY, "flags");
    static final long ERR_LEN = off(FI_CQ_ERR_ENTRY, "len");
    static final long ERR_DATA = off(FI_CQ_ERR_ENTRY, "data");
    static final long ERR_ERR = off(FI_CQ_ERR_ENTRY, "err");
    static final long ERR_PROV_ERRNO = off(FI_CQ_ERR_ENTRY, "prov_errno");
    static final long ERR_ERR_DATA = off(FI_CQ_ERR_ENTRY, "err_data");
    /** Newer libraries append fields (e.g. src_addr in 1.20), so the entry is read into a larger buffer. */
    static final long ERR_ENTRY_BYTES = 256;

    static final long MR_ATTR_IOV = off(FI_MR_ATTR, "mr_iov");
    static final long MR_ATTR_IOV_COUNT = off(FI_MR_ATTR, "iov_count");
    static final long MR_ATTR_ACCESS = off(FI_MR_ATTR, "access");
    static final long MR_ATTR_REQUESTED_KEY = off(FI_MR_ATTR, "requested_key");
    static final long MR_ATTR_IFACE = off(FI_MR_ATTR, "iface");
    static final long MR_ATTR_DEVICE = off(FI_MR_ATTR, "device");
    /** fi_mr_attr grew after 1.17 (hmem_data, page_size, base_mr, sub_mr_cnt); zeroed room for them. */
    static final long MR_ATTR_BYTES = 256;
    /** struct fi_context2: eight pointers the provider may use while the operation is outstanding. */
    static final long CONTEXT2_BYTES = 64;

    private FabricLayout() {}

    private static long off(final StructLayout layout, final String field) {
        return layout.byteOffset(groupElement(field));
    }

    /** Every size and offset above, named as {@code src/test/c/fabric_layout.c} prints them. */
    static Map<String, Long> entries() {
        final Map<String, Long> out = new LinkedHashMap<>();
        for (final StructLayout s : new StructLayout[] {
            FID,
            FI_INFO,
            FI_CQ_ATTR,
            FI_AV_ATTR,
            FI_CQ_DATA_ENTRY,
            FI_CQ_ERR_ENTRY,
            IOVEC,
            FI_RMA_IOV,
            FI_MSG_RMA,
            FI_MSG,
            FI_MSG_TAGGED,
            FI_MR_ATTR,
            FI_FABRIC_ATTR
        }) {
            out.put("sizeof " + s.name().orElseThrow(), s.byteSize());
        }
        for (final StructLayout s : new StructLayout[] {
            FID,
            FI_INFO,
            FI_EP_ATTR,
            FI_TX_ATTR,
            FI_DOMAIN_ATTR,
            FI_FABRIC_ATTR,
            FI_CQ_ATTR,
            FI_AV_ATTR,
            FI_CQ_DATA_ENTRY,
            FI_CQ_ERR_ENTRY,
            IOVEC,
            FI_RMA_IOV,
            FI_MSG_RMA,
            FI_MSG,
            FI_MSG_TAGGED,
            FI_MR_ATTR
        }) {
            for (final var member : s.memberLayouts()) {
                member.name().ifPresent(n -> out.put(s.name().orElseThrow() + "." + n, off(s, n)));
            }
        }
        out.put("fid_fabric.ops", OBJ_OPS);
        out.put("fid_domain.ops", OBJ_OPS);
        out.put("fid_domain.mr", DOMAIN_MR_OPS);
        out.put("fid_ep.ops", OBJ_OPS);
        out.put("fid_ep.cm", EP_CM_OPS);
        out.put("fid_ep.msg", EP_MSG_OPS);
        out.put("fid_ep.rma", EP_RMA_OPS);
        out.put("fid_ep.tagged", EP_TAGGED_OPS);
        out.put("fid_cq.ops", OBJ_OPS);
        out.put("fid_av.ops", OBJ_OPS);
        out.put("fid_mr.mem_desc", MR_MEM_DESC);
        out.put("fid_mr.key", MR_KEY);
        out.put("fi_ops.close", FI_OPS_CLOSE);
        out.put("fi_ops.bind", FI_OPS_BIND);
        out.put("fi_ops.control", FI_OPS_CONTROL);
        out.put("fi_ops_fabric.domain", FABRIC_OPS_DOMAIN);
        out.put("fi_ops_domain.av_open", DOMAIN_OPS_AV_OPEN);
        out.put("fi_ops_domain.cq_open", DOMAIN_OPS_CQ_OPEN);
        out.put("fi_ops_domain.endpoint", DOMAIN_OPS_ENDPOINT);
        out.put("fi_ops_mr.regattr", MR_OPS_REGATTR);
        out.put("fi_ops_av.insert", AV_OPS_INSERT);
        out.put("fi_ops_cq.read", CQ_OPS_READ);
        out.put("fi_ops_cq.readfrom", CQ_OPS_READFROM);
        out.put("fi_ops_cq.readerr", CQ_OPS_READERR);
        out.put("fi_ops_cq.strerror", CQ_OPS_STRERROR);
        out.put("fi_ops_ep.cancel", EP_OPS_CANCEL);
        out.put("fi_ops_ep.setopt", EP_OPS_SETOPT);
        out.put("fi_ops_cm.setname", CM_OPS_SETNAME);
        out.put("fi_ops_cm.getname", CM_OPS_GETNAME);
        out.put("fi_ops_msg.recvmsg", MSG_OPS_RECVMSG);
        out.put("fi_ops_msg.sendmsg", MSG_OPS_SENDMSG);
        out.put("fi_ops_rma.readmsg", RMA_OPS_READMSG);
        out.put("fi_ops_rma.writemsg", RMA_OPS_WRITEMSG);
        out.put("fi_ops_tagged.recvmsg", TAGGED_OPS_RECVMSG);
        out.put("fi_ops_tagged.sendmsg", TAGGED_OPS_SENDMSG);
        out.put("sizeof fi_context2", CONTEXT2_BYTES);
        // FabricRegions writes the CUDA ordinal as an int at the start of the device union.
        out.put("fi_mr_attr.device.cuda", MR_ATTR_DEVICE);
        out.put("const FI_HMEM", FabricDiscovery.FI_HMEM);
        out.put("const FI_SOURCE", FabricDiscovery.FI_SOURCE);
        out.put("const FI_ADDR_NOTAVAIL", FabricEndpoint.FI_ADDR_NOTAVAIL);
        out.put("const FI_HMEM_SYSTEM", (long) FabricRegions.FI_HMEM_SYSTEM);
        out.put("const FI_HMEM_CUDA", (long) FabricRegions.FI_HMEM_CUDA);
        return out;
    }
}
