/*
 * Whether libfabric's shm provider matches a tagged message that arrived before its receive (an unexpected one)
 * with the receive's ignore bits, as FabricOps' size tags need. Two endpoints of one process, tags as FabricOps
 * makes them: a send of n bytes carries 2^ceil(log2 n) - 1, a buffer of b bytes is posted with tag 0 and ignore
 * 2^floor(log2 b) - 1. Prints two lines:
 *   "small-into-larger matched|held": a held 5-byte send, then a 64-byte buffer;
 *   "large-into-smaller truncated|held": once a queue entry served a 64-byte receive, a held 17-byte send, then
 *   a 16-byte buffer (truncated: it matched a buffer it does not fit in).
 * FabricShmHeldTagTest compiles and runs it. Exits 2 when shm is not available.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define SPINS 100000
#define CHECK(x) do { int rc_ = (int) (x); if (rc_) { printf("error %s: %d\n", #x, rc_); exit(1); } } while (0)

struct end { struct fid_ep *ep; struct fid_cq *cq; struct fid_av *av; fi_addr_t peer; char name[256]; size_t len; };

static struct fi_info *info;
static struct fid_domain *domain;
static struct fi_context2 contexts[16];
static int used;

static void open_end(struct end *e) {
    struct fi_cq_attr cq = { .format = FI_CQ_FORMAT_DATA };
    struct fi_av_attr av = { .type = FI_AV_TABLE };
    CHECK(fi_endpoint(domain, info, &e->ep, NULL));
    CHECK(fi_cq_open(domain, &cq, &e->cq, NULL));
    CHECK(fi_av_open(domain, &av, &e->av, NULL));
    CHECK(fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV));
    CHECK(fi_ep_bind(e->ep, &e->av->fid, 0));
    CHECK(fi_enable(e->ep));
    e->len = sizeof e->name;
    CHECK(fi_getname(&e->ep->fid, e->name, &e->len));
}

static void open_pair(struct end *a, struct end *b) {
    open_end(a);
    open_end(b);
    CHECK(fi_av_insert(a->av, b->name, 1, &a->peer, 0, NULL) != 1);
    CHECK(fi_av_insert(b->av, a->name, 1, &b->peer, 0, NULL) != 1);
}

/* One CQ read: the length received (>= 0) for a receive of ours, -1 for none, -2 for an error (1.17's shm reports
 * the truncation as err -FI_ETRUNC, negative). */
static long poll_recv(struct end *e) {
    struct fi_cq_data_entry entry;
    const ssize_t n = fi_cq_read(e->cq, &entry, 1);
    if (n == 1) {
        return (entry.flags & FI_RECV) ? (long) entry.len : -1;
    }
    if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry err = { 0 };
        return fi_cq_readerr(e->cq, &err, 0) == 1 ? -2 : -1;
    }
    return -1;
}

/* Polls both ends; the receiver's first receive completion (or truncation), else -1 after SPINS rounds. */
static long progress(struct end *a, struct end *b) {
    for (int i = 0; i < SPINS; i++) {
        poll_recv(a);
        const long got = poll_recv(b);
        if (got != -1) {
            return got;
        }
    }
    return -1;
}

static uint64_t size_tag(size_t n) { return n <= 1 ? 0 : ~0UL >> __builtin_clzl(n - 1); }
static uint64_t fit_mask(size_t n) { return n <= 1 ? 0 : (1UL << (63 - __builtin_clzl(n))) - 1; }

static void send_tagged(struct end *a, struct end *b, size_t n) {
    static char buf[64];
    memset(buf, 'x', n);
    struct iovec iov = { buf, n };
    void *desc = NULL;
    struct fi_msg_tagged m = { .msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = a->peer,
                               .tag = size_tag(n), .context = &contexts[used++] };
    ssize_t rc;
    for (int i = 0; (rc = fi_tsendmsg(a->ep, &m, FI_COMPLETION)) == -FI_EAGAIN && i < SPINS; i++) {
        poll_recv(a);
        poll_recv(b); /* shm connects while the peer progresses */
    }
    CHECK(rc);
}

static void post_tagged(struct end *b, size_t n) {
    struct iovec iov = { malloc(n), n };
    void *desc = NULL;
    struct fi_msg_tagged m = { .msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
                               .tag = 0, .ignore = fit_mask(n), .context = &contexts[used++] };
    CHECK(fi_trecvmsg(b->ep, &m, FI_COMPLETION));
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    struct fi_info *hints = fi_allocinfo();
    hints->caps = FI_MSG | FI_TAGGED | FI_RMA;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->fabric_attr->prov_name = strdup("shm");
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    if (fi_getinfo(fi_version(), NULL, NULL, 0, hints, &info)) {
        printf("no shm provider\n");
        return 2;
    }
    struct fid_fabric *fabric;
    CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
    CHECK(fi_domain(fabric, info, &domain, NULL));
    struct end a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
    open_pair(&c, &d);
    post_tagged(&d, 64); /* a queue entry serves a 64-byte receive */
    send_tagged(&c, &d, 4);
    progress(&c, &d);
    send_tagged(&c, &d, 17);
    progress(&c, &d);
    post_tagged(&d, 16);
    printf("large-into-smaller %s\n", progress(&c, &d) == -1 ? "held" : "truncated");

    open_pair(&a, &b);
    send_tagged(&a, &b, 5);
    progress(&a, &b); /* the message arrives, finds no receive and is held */
    post_tagged(&b, 64);
    printf("small-into-larger %s\n", progress(&a, &b) == 5 ? "matched" : "held");

    return 0;
}
