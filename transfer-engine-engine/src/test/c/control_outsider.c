/*
 * An outsider of the fabric transport's control messages (FabricControl): a libfabric endpoint of its own, in a
 * process of its own, that sends tagged messages with the control tag (1 << 60) to an engine's endpoint. It holds no
 * descriptor and is no configured member; it only knows the target's address (and, to forge in a member's name,
 * that member's). Used by FabricControlOutsiderTest and transfer-engine-bench/attacks/run.sh (fabric-control-*).
 *
 *   control_outsider TARGET MODE COUNT [ARG...]     TARGET: the target's NetworkAddress in hex (Member's te-target
 *                                                   line, TransferEngine.mainAddress().toString())
 * Modes (each sends COUNT messages, WINDOW in flight, then prints one JSON line: sent, failed):
 *   garbage             random bytes of random lengths (0 to 1,100; every 16th 4,096), every 4th after a valid
 *                       magic (TENA, TEAK, TEPQ, TEPS) and then cut short or filled with garbage
 *   nack FIRST VICTIM [KEY]
 *                       abandonments of imms FIRST.. naming VICTIM (a member's address in hex) as their sender, each
 *                       with a fresh random nonce; with KEY (decimal) in the current form that carries a region key
 *                       (a guess: the outsider has no descriptor), else in the form without one
 *   replay IMM VICTIM   COUNT copies of one abandonment of IMM naming VICTIM (one nonce)
 *   sizes VICTIM        pool-size answers naming VICTIM: one pool of 1 byte, or none, at the highest versions, with
 *                       and without a nonce (guessed)
 *   query               questions for the pool sizes, each naming another address nobody listens on
 *                       (127.0.0.1 and a port from 1 up, or a made-up shm name), so the target answers strangers
 *   receipt             receipts with random nonces
 * HOLD=SECONDS keeps the endpoint open that long after the last send: a provider may drop what a closed peer sent
 * and the target has not read yet. Exits 2 when the provider is not available, 1 on another error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define CONTROL_TAG (1ULL << 60)
#define WINDOW 64
#define MAX_MESSAGE 4096
#define CHECK(x) do { int rc_ = (int) (x); if (rc_) { printf("{\"error\":\"%s: %d\"}\n", #x, rc_); exit(1); } } while (0)

static struct fid_ep *ep;
static struct fid_cq *cq;
static fi_addr_t target;
static char buffers[WINDOW][MAX_MESSAGE];
static struct fi_context2 contexts[WINDOW];
static int busy[WINDOW];
static long in_flight, sent, failed;
static char provider[64];

static size_t parse_hex(const char *hex, unsigned char *out, size_t max) {
    size_t n = strlen(hex) / 2;
    if (n > max) {
        printf("{\"error\":\"address too long\"}\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        sscanf(hex + 2 * i, "%2hhx", &out[i]);
    }
    return n;
}

/* version(1) = 1, nameLength(1), "fabric", then the payload: providerLength(1), provider, fi_getname bytes */
static size_t endpoint_name(const unsigned char *address, size_t length, unsigned char *name) {
    const size_t payload = 2 + address[1];
    const size_t provider_length = address[payload];
    memcpy(provider, address + payload + 1, provider_length);
    provider[provider_length] = 0;
    const size_t at = payload + 1 + provider_length;
    memcpy(name, address + at, length - at);
    return length - at;
}

static void reap(void) {
    struct fi_cq_tagged_entry entries[16];
    const ssize_t n = fi_cq_read(cq, entries, 16);
    if (n > 0) {
        for (ssize_t i = 0; i < n; i++) {
            busy[(struct fi_context2 *) entries[i].op_context - contexts] = 0;
            in_flight--;
        }
    } else if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry err = { 0 };
        if (fi_cq_readerr(cq, &err, 0) == 1) {
            busy[(struct fi_context2 *) err.op_context - contexts] = 0;
            in_flight--;
            failed++;
        }
    }
}

/* A free buffer to build a message in; waits while WINDOW are in flight. */
static int take(void) {
    for (;;) {
        for (int i = 0; i < WINDOW; i++) {
            if (!busy[i]) {
                return i;
            }
        }
        reap();
    }
}

static void post(int slot, size_t length) {
    busy[slot] = 1;
    in_flight++;
    ssize_t rc;
    while ((rc = fi_tsend(ep, buffers[slot], length, NULL, target, CONTROL_TAG, &contexts[slot])) == -FI_EAGAIN) {
        reap();
    }
    if (rc) {
        busy[slot] = 0;
        in_flight--;
        failed++;
    }
    sent++;
}

static uint64_t random64(void) { return ((uint64_t) random() << 33) ^ ((uint64_t) random() << 11) ^ random(); }

static size_t put32(char *at, uint32_t v) { memcpy(at, &v, 4); return 4; }
static size_t put64(char *at, uint64_t v) { memcpy(at, &v, 8); return 8; }
static size_t put16(char *at, uint16_t v) { memcpy(at, &v, 2); return 2; }
static size_t put_address(char *at, const unsigned char *address, size_t length) {
    put16(at, (uint16_t) length);
    memcpy(at + 2, address, length);
    return 2 + length;
}

/* An abandonment: "TENA" imm missing nonce [key] address cause (little-endian, as FabricControl encodes it) */
static size_t nack(char *b, int imm, uint64_t nonce, const unsigned char *victim, size_t victim_length, int keyed,
                   uint64_t key) {
    size_t n = put32(b, keyed ? 0x4B4E4554 /* TENK */ : 0x414E4554 /* TENA */);
    n += put32(b + n, (uint32_t) imm);
    n += put32(b + n, 1);
    n += put64(b + n, nonce);
    if (keyed) {
        n += put64(b + n, key);
    }
    n += put_address(b + n, victim, victim_length);
    static const char cause[] = "forged by an outsider";
    n += put16(b + n, sizeof cause - 1);
    memcpy(b + n, cause, sizeof cause - 1);
    return n + sizeof cause - 1;
}

/* A made-up address of the target's provider that nobody listens on: 127.0.0.1:port, or a shm name */
static size_t stranger(unsigned char *out, int i) {
    const unsigned char head[] = { 1, 6, 'f', 'a', 'b', 'r', 'i', 'c' };
    size_t n = sizeof head;
    memcpy(out, head, n);
    const size_t provider_length = strlen(provider);
    out[n++] = (unsigned char) provider_length;
    memcpy(out + n, provider, provider_length);
    n += provider_length;
    if (strncmp(provider, "shm", 3) == 0) {
        n += (size_t) sprintf((char *) out + n, "fi_shm://%d:0:%d", 4000000 + i, i);
        return n;
    }
    struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons((uint16_t) (1 + i % 1000)) };
    in.sin_addr.s_addr = htonl(0x7F000001);
    memcpy(out + n, &in, sizeof in);
    return n + sizeof in;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 4) {
        fprintf(stderr, "usage: control_outsider TARGET MODE COUNT [ARG...]\n");
        return 1;
    }
    srandom((unsigned) getpid());
    unsigned char address[512], name[512];
    endpoint_name(address, parse_hex(argv[1], address, sizeof address), name);
    const char *mode = argv[2];
    const long count = atol(argv[3]);

    struct fi_info *hints = fi_allocinfo(), *info;
    hints->caps = FI_MSG | FI_TAGGED;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->fabric_attr->prov_name = strdup(provider);
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    if (fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info)) {
        printf("{\"error\":\"no provider %s\"}\n", provider);
        return 2;
    }
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
    struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
    CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
    CHECK(fi_domain(fabric, info, &domain, NULL));
    CHECK(fi_endpoint(domain, info, &ep, NULL));
    CHECK(fi_cq_open(domain, &cq_attr, &cq, NULL));
    CHECK(fi_av_open(domain, &av_attr, &av, NULL));
    CHECK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
    CHECK(fi_ep_bind(ep, &av->fid, 0));
    CHECK(fi_enable(ep));
    CHECK(fi_av_insert(av, name, 1, &target, 0, NULL) != 1);

    unsigned char victim[512];
    size_t victim_length = 0;
    for (long i = 0; i < count; i++) {
        const int slot = take();
        char *b = buffers[slot];
        size_t n = 0;
        if (strcmp(mode, "garbage") == 0) {
            n = i % 16 == 15 ? MAX_MESSAGE : (size_t) (random() % 1101);
            for (size_t j = 0; j < n; j++) {
                b[j] = (char) random();
            }
            if (i % 4 == 0 && n >= 4) {
                static const uint32_t magics[] = { 0x414E4554, 0x4B4E4554, 0x4B414554, 0x51504554, 0x53504554 };
                put32(b, magics[(i / 4) % 5]);
                n = 4 + (size_t) random() % (n - 3); /* cut short, or garbage after the magic */
            }
        } else if (strcmp(mode, "nack") == 0 || strcmp(mode, "replay") == 0) {
            if (victim_length == 0) {
                victim_length = parse_hex(argv[5], victim, sizeof victim);
            }
            const int replay = strcmp(mode, "replay") == 0;
            const int keyed = argc > 6;
            n = nack(b, atoi(argv[4]) + (replay ? 0 : (int) i), replay ? 42 : random64(), victim, victim_length,
                     keyed, keyed ? strtoull(argv[6], NULL, 10) + (uint64_t) i : 0);
        } else if (strcmp(mode, "sizes") == 0) {
            if (victim_length == 0) {
                victim_length = parse_hex(argv[4], victim, sizeof victim);
            }
            n = put32(b, 0x53504554); /* TEPS */
            n += put_address(b + n, victim, victim_length);
            const int pools = i % 2 == 0 ? 1 : 0;
            n += put16(b + n, (uint16_t) (2 * pools));
            for (int p = 0; p < pools; p++) {
                n += put32(b + n, 1);
                n += put32(b + n, 1);
            }
            n += put64(b + n, INT64_MAX - (uint64_t) i);
            if (i % 4 >= 2) {
                n += put64(b + n, random64()); /* a guessed nonce */
            }
        } else if (strcmp(mode, "query") == 0) {
            unsigned char other[512];
            n = put32(b, 0x51504554); /* TEPQ */
            n += put_address(b + n, other, stranger(other, (int) i));
            n += put64(b + n, random64());
        } else if (strcmp(mode, "receipt") == 0) {
            n = put32(b, 0x4B414554); /* TEAK */
            n += put64(b + n, random64());
        } else {
            fprintf(stderr, "unknown mode %s\n", mode);
            return 1;
        }
        post(slot, n);
    }
    for (int spins = 0; in_flight > 0 && spins < 50000000; spins++) {
        reap();
    }
    /* HOLD=SECONDS keeps the connection (and what the target has not read yet) that long before exiting */
    const time_t until = time(NULL) + (getenv("HOLD") ? atoi(getenv("HOLD")) : 0);
    while (time(NULL) < until) {
        reap();
        usleep(1000);
    }
    printf("{\"outsider\":\"%s\",\"provider\":\"%s\",\"sent\":%ld,\"failed\":%ld,\"unfinished\":%ld}\n", mode, provider,
           sent, failed, in_flight);
    return 0;
}
