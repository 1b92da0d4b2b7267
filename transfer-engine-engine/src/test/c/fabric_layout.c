/*
 * Prints sizeof/offsetof for every libfabric struct field and ops-table slot the Java binding uses
 * (dev.transferengine.transport.fabric.FabricLayout), one "name value" line each. FabricLayoutTest compiles it
 * with gcc against the installed headers, runs it and compares the lines with FabricLayout.entries().
 */
#include <stddef.h>
#include <stdio.h>
#include <sys/uio.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define SIZE(t) printf("sizeof %s %zu\n", #t, sizeof(struct t))
#define OFF(t, f) printf("%s.%s %zu\n", #t, #f, offsetof(struct t, f))

int main(void) {
    SIZE(fid); SIZE(fi_info); SIZE(fi_cq_attr); SIZE(fi_av_attr); SIZE(fi_cq_data_entry);
    SIZE(fi_cq_err_entry); SIZE(iovec); SIZE(fi_rma_iov); SIZE(fi_msg_rma); SIZE(fi_msg); SIZE(fi_msg_tagged); SIZE(fi_mr_attr);
    SIZE(fi_fabric_attr);

    OFF(fid, fclass); OFF(fid, context); OFF(fid, ops);
    OFF(fi_info, next); OFF(fi_info, caps); OFF(fi_info, mode); OFF(fi_info, addr_format);
    OFF(fi_info, src_addrlen); OFF(fi_info, dest_addrlen); OFF(fi_info, src_addr); OFF(fi_info, dest_addr);
    OFF(fi_info, handle); OFF(fi_info, tx_attr); OFF(fi_info, rx_attr); OFF(fi_info, ep_attr);
    OFF(fi_info, domain_attr); OFF(fi_info, fabric_attr); OFF(fi_info, nic);
    OFF(fi_ep_attr, type); OFF(fi_ep_attr, protocol); OFF(fi_ep_attr, protocol_version);
    OFF(fi_ep_attr, max_msg_size);
    OFF(fi_tx_attr, caps); OFF(fi_tx_attr, mode); OFF(fi_tx_attr, op_flags); OFF(fi_tx_attr, msg_order);
    OFF(fi_tx_attr, comp_order); OFF(fi_tx_attr, inject_size);
    OFF(fi_domain_attr, domain); OFF(fi_domain_attr, name); OFF(fi_domain_attr, threading);
    OFF(fi_domain_attr, control_progress); OFF(fi_domain_attr, data_progress);
    OFF(fi_domain_attr, resource_mgmt); OFF(fi_domain_attr, av_type); OFF(fi_domain_attr, mr_mode);
    OFF(fi_domain_attr, mr_key_size); OFF(fi_domain_attr, cq_data_size);
    OFF(fi_fabric_attr, fabric); OFF(fi_fabric_attr, name); OFF(fi_fabric_attr, prov_name);
    OFF(fi_fabric_attr, prov_version); OFF(fi_fabric_attr, api_version);
    OFF(fi_cq_attr, size); OFF(fi_cq_attr, flags); OFF(fi_cq_attr, format); OFF(fi_cq_attr, wait_obj);
    OFF(fi_cq_attr, signaling_vector); OFF(fi_cq_attr, wait_cond); OFF(fi_cq_attr, wait_set);
    OFF(fi_av_attr, type); OFF(fi_av_attr, rx_ctx_bits); OFF(fi_av_attr, count); OFF(fi_av_attr, ep_per_node);
    OFF(fi_av_attr, name); OFF(fi_av_attr, map_addr); OFF(fi_av_attr, flags);
    OFF(fi_cq_data_entry, op_context); OFF(fi_cq_data_entry, flags); OFF(fi_cq_data_entry, len);
    OFF(fi_cq_data_entry, buf); OFF(fi_cq_data_entry, data);
    OFF(fi_cq_err_entry, op_context); OFF(fi_cq_err_entry, flags); OFF(fi_cq_err_entry, len);
    OFF(fi_cq_err_entry, buf); OFF(fi_cq_err_entry, data); OFF(fi_cq_err_entry, tag); OFF(fi_cq_err_entry, olen);
    OFF(fi_cq_err_entry, err); OFF(fi_cq_err_entry, prov_errno); OFF(fi_cq_err_entry, err_data);
    OFF(fi_cq_err_entry, err_data_size);
    OFF(iovec, iov_base); OFF(iovec, iov_len);
    OFF(fi_rma_iov, addr); OFF(fi_rma_iov, len); OFF(fi_rma_iov, key);
    OFF(fi_msg_rma, msg_iov); OFF(fi_msg_rma, desc); OFF(fi_msg_rma, iov_count); OFF(fi_msg_rma, addr);
    OFF(fi_msg_rma, rma_iov); OFF(fi_msg_rma, rma_iov_count); OFF(fi_msg_rma, context); OFF(fi_msg_rma, data);
    OFF(fi_msg, msg_iov); OFF(fi_msg, desc); OFF(fi_msg, iov_count); OFF(fi_msg, addr); OFF(fi_msg, context);
    OFF(fi_msg, data);
    OFF(fi_msg_tagged, msg_iov); OFF(fi_msg_tagged, desc); OFF(fi_msg_tagged, iov_count); OFF(fi_msg_tagged, addr);
    OFF(fi_msg_tagged, tag); OFF(fi_msg_tagged, ignore); OFF(fi_msg_tagged, context); OFF(fi_msg_tagged, data);
    OFF(fi_mr_attr, mr_iov); OFF(fi_mr_attr, iov_count); OFF(fi_mr_attr, access); OFF(fi_mr_attr, offset);
    OFF(fi_mr_attr, requested_key); OFF(fi_mr_attr, context); OFF(fi_mr_attr, auth_key_size);
    OFF(fi_mr_attr, auth_key); OFF(fi_mr_attr, iface); OFF(fi_mr_attr, device);
    OFF(fi_mr_attr, device.cuda);

    OFF(fid_fabric, ops); OFF(fid_domain, ops); OFF(fid_domain, mr);
    OFF(fid_ep, ops); OFF(fid_ep, cm); OFF(fid_ep, msg); OFF(fid_ep, rma); OFF(fid_ep, tagged);
    OFF(fid_cq, ops); OFF(fid_av, ops); OFF(fid_mr, mem_desc); OFF(fid_mr, key);
    OFF(fi_ops, close); OFF(fi_ops, bind); OFF(fi_ops, control);
    OFF(fi_ops_fabric, domain);
    OFF(fi_ops_domain, av_open); OFF(fi_ops_domain, cq_open); OFF(fi_ops_domain, endpoint);
    OFF(fi_ops_mr, regattr);
    OFF(fi_ops_av, insert);
    OFF(fi_ops_cq, read); OFF(fi_ops_cq, readfrom); OFF(fi_ops_cq, readerr); OFF(fi_ops_cq, strerror);
    OFF(fi_ops_ep, cancel);
    OFF(fi_ops_ep, setopt);
    OFF(fi_ops_cm, setname);
    OFF(fi_ops_cm, getname);
    OFF(fi_ops_msg, recvmsg); OFF(fi_ops_msg, sendmsg);
    OFF(fi_ops_tagged, recvmsg); OFF(fi_ops_tagged, sendmsg);
    OFF(fi_ops_rma, readmsg);
    OFF(fi_ops_rma, writemsg);
    SIZE(fi_context2);
    printf("const FI_HMEM %llu\n", (unsigned long long) FI_HMEM);
    printf("const FI_SOURCE %llu\n", (unsigned long long) FI_SOURCE);
    printf("const FI_ADDR_NOTAVAIL %lld\n", (long long) FI_ADDR_NOTAVAIL);
    printf("const FI_HMEM_SYSTEM %d\n", (int) FI_HMEM_SYSTEM);
    printf("const FI_HMEM_CUDA %d\n", (int) FI_HMEM_CUDA);
    return 0;
}
