/*
 * What tcp;ofi_rxm does with RMA writes that ask for no completion when the target refuses one of them
 * (docs/benchmarks.md, "fabric/tcp paged writes: why the inner pages keep their acknowledgement").
 *
 * One process, two RDM endpoints (initiator, target), manual progress. After one acknowledged write connects them,
 * the initiator posts COUNT writes of PAGE bytes with fi_writemsg and no FI_COMPLETION (its transmit CQ bound
 * FI_SELECTIVE_COMPLETION), FI_INJECT where PAGE is at most the reported inject_size; with BAD=1 the first one
 * names a key the target does not know. Then both sides are progressed and every initiator CQ entry is counted.
 *
 *   LF=/tmp/transfer-engine-ci/libfabric-2.1.0   # or link /usr/lib/x86_64-linux-gnu/libfabric.so.1 for 1.17
 *   cc -O1 -o rxm_refused_unacked_writes rxm_refused_unacked_writes.c -I$LF/include -L$LF/lib \
 *       -Wl,-rpath,$LF/lib -lfabric
 *   ./rxm_refused_unacked_writes COUNT BAD PAGE
 *
 * Seen on the 2-core VM (2026-12-05), the same with 1.17 (the system's) and 2.1; inject_size is 64 both times:
 *   20000 1 64    ends; no entry at all: the refused write and the 19,999 behind it, which the target never read,
 *                 asked for none and report nothing
 *   20000 1 1024  ends; 2,110 writes fail with their own context (err 107, prov_errno 32: EPIPE), the first of
 *                 them write 2,048; the other 17,890, the refused one among them, report nothing
 *   500000 1 64   SIGSEGV in rxm_handle_comp_error: injects still queued when the connection dropped are
 *                 cancelled with a null context, which RxM dereferences
 *   500000 0 64   ends; no entry at all
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#define CHECK(x) do { int _r = (int) (x); if (_r) { fprintf(stderr, "%s: %d %s\n", #x, _r, fi_strerror(-_r)); exit(1); } } while (0)

struct side {
	struct fi_info *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_ep *ep;
	struct fid_av *av;
	struct fid_cq *cq;
	char name[64];
	size_t namelen;
	long done, errors;
};

static void open_side(struct side *s, struct fi_info *hints, int selective)
{
	CHECK(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", NULL, 0, hints, &s->info));
	CHECK(fi_fabric(s->info->fabric_attr, &s->fab, NULL));
	CHECK(fi_domain(s->fab, s->info, &s->dom, NULL));
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA, .size = 100000 };
	CHECK(fi_cq_open(s->dom, &cq_attr, &s->cq, NULL));
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	CHECK(fi_av_open(s->dom, &av_attr, &s->av, NULL));
	CHECK(fi_endpoint(s->dom, s->info, &s->ep, NULL));
	CHECK(fi_ep_bind(s->ep, &s->av->fid, 0));
	CHECK(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV | (selective ? FI_SELECTIVE_COMPLETION : 0)));
	CHECK(fi_enable(s->ep));
	s->namelen = sizeof s->name;
	CHECK(fi_getname(&s->ep->fid, s->name, &s->namelen));
}

static void progress(struct side *s)
{
	struct fi_cq_data_entry entries[16];
	ssize_t n = fi_cq_read(s->cq, entries, 16);
	if (n > 0) {
		s->done += n;
	} else if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err = { 0 };
		fi_cq_readerr(s->cq, &err, 0);
		if (s->errors++ == 0)
			printf("first error entry: context %p err %d (%s) prov_errno %d\n", err.op_context, err.err,
			       fi_strerror(err.err), err.prov_errno);
	}
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	long count = argc > 1 ? atol(argv[1]) : 20000;
	int bad = argc > 2 ? atoi(argv[2]) : 1;
	size_t page = argc > 3 ? (size_t) atol(argv[3]) : 1024;
	struct fi_info *hints = fi_allocinfo();
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_RMA;
	hints->fabric_attr->prov_name = strdup("tcp;ofi_rxm");
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	struct side ini = { 0 }, tgt = { 0 };
	open_side(&ini, hints, 1);
	open_side(&tgt, hints, 0);
	printf("%s %s, inject_size %zu\n", fi_tostr(&ini.info->fabric_attr->api_version, FI_TYPE_VERSION),
	       ini.info->fabric_attr->prov_name, ini.info->tx_attr->inject_size);
	fi_addr_t peer;
	if (fi_av_insert(ini.av, tgt.name, 1, &peer, 0, NULL) != 1)
		return 1;
	size_t bytes = 512 * 1024;
	char *src = aligned_alloc(4096, bytes), *dst = aligned_alloc(4096, bytes);
	memset(src, 7, bytes);
	memset(dst, 0, bytes);
	struct fid_mr *src_mr, *dst_mr;
	CHECK(fi_mr_reg(ini.dom, src, bytes, FI_WRITE, 0, 0, 0, &src_mr, NULL));
	CHECK(fi_mr_reg(tgt.dom, dst, bytes, FI_REMOTE_WRITE, 0, 0, 0, &dst_mr, NULL));
	uint64_t key = fi_mr_key(dst_mr);
	uint64_t base = (tgt.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t) (uintptr_t) dst : 0;
	void *desc = fi_mr_desc(src_mr);
	struct iovec iov = { src, page };
	struct fi_rma_iov rma = { base, page, key };
	struct fi_msg_rma msg = { &iov, &desc, 1, peer, &rma, 1, NULL, 0 };
	ssize_t rc;
	while ((rc = fi_writemsg(ini.ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE)) == -FI_EAGAIN)
		progress(&tgt);
	CHECK(rc);
	while (ini.done == 0 && ini.errors == 0) {
		progress(&ini);
		progress(&tgt);
	}
	printf("connected: %ld done, %ld failed\n", ini.done, ini.errors);
	ini.done = 0;
	long eagain = 0;
	uint64_t flags = page <= ini.info->tx_attr->inject_size ? FI_INJECT : 0;
	for (long i = 0; i < count; i++) {
		rma.key = bad && i == 0 ? key ^ 0x5a5a : key;
		rma.addr = base + (i % (bytes / page)) * page;
		iov.iov_base = src + (i % (bytes / page)) * page;
		msg.context = (void *) (0x100 + i);
		while ((rc = fi_writemsg(ini.ep, &msg, flags)) == -FI_EAGAIN) {
			eagain++;
			progress(&ini);
			progress(&tgt);
		}
		CHECK(rc);
	}
	printf("posted %ld writes%s (%ld times -FI_EAGAIN)\n", count, flags ? " with FI_INJECT" : "", eagain);
	for (int i = 0; i < 200000; i++) {
		progress(&tgt);
		progress(&ini);
	}
	printf("ended: %ld completion entries, %ld error entries at the initiator\n", ini.done, ini.errors);
	return 0;
}
