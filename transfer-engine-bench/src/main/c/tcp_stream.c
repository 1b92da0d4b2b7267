/*
 * A C anchor with te-bench's memory footprint for the tcp 1 MiB write stream: one TCP connection on loopback, a
 * sending and a receiving thread with blocking sockets (as iperf3), 1 MiB writes taken in turn from the slots of a
 * REGION_MIB source and read into the same slots of a REGION_MIB target, as te-bench cycles its requests through its
 * registered regions. iperf3 sends from and receives into one cache-hot 128 KiB buffer; with REGION_MIB 64 this
 * program pays what te-bench's default 64 MiB regions cost the kernel's two copies, and nothing of the engine, so
 * the engine against it is the engine's own share of the gap to iperf3 (issue 22 item 3). HUGE 1 advises both
 * regions MADV_HUGEPAGE before their first touch (transparent huge pages, where the kernel allows them).
 *   tcp_stream REGION_MIB HUGE SECONDS PORT
 * Prints one JSON line: {"anchor":"tcp_stream","region_mib":64,"huge":0,"gb_per_s":..,"sender_cpu_s_per_gb":..,
 * "receiver_cpu_s_per_gb":..,"anon_huge_mib":..}, measured after one second of warm-up; the CPU time is each
 * thread's own (RUSAGE_THREAD), which a loaded host disturbs less than the throughput.
 * With PAGE_BYTES (tcp_stream REGION_MIB HUGE SECONDS PORT PAGE_BYTES) the receiver reads into pages of PAGE_BYTES
 * scattered over its region by a fixed shuffle, up to 256 of them per readv, while the sender still writes contiguous
 * slots: te-bench's paged footprint (`--op paged`: contiguous source pages, destination pages shuffled), so the
 * engine's paged rows can be held against the kernel's copies of the same pages (issue 22).
 * Build: gcc -O2 -pthread -o tcp_stream tcp_stream.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SLOT (1ul << 20)
#define HUGE_PAGE (2ul << 20)
#define WARMUP_S 1.0

#define PAGES_PER_READ 256

static size_t region;
static int huge;
/* 0: the receiver reads whole slots; else the size of the shuffled pages it reads into */
static size_t page;

/* What the receiving thread measured after the warm-up. */
static double receiver_cpu;
static double receiver_bytes;

static void die(const char *what) {
    perror(what);
    exit(1);
}

static double thread_cpu(void) {
    struct rusage u;
    getrusage(RUSAGE_THREAD, &u);
    return (double) (u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + t.tv_nsec * 1e-9;
}

/* A region aligned to a huge page, advised before the fill touches it, so that huge pages can back it whole. */
static char *allocate(void) {
    char *raw = mmap(NULL, region + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) die("mmap");
    char *aligned = (char *) (((unsigned long) raw + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
    if (huge && madvise(aligned, region, MADV_HUGEPAGE) < 0) die("madvise");
    memset(aligned, 0x5A, region);
    return aligned;
}

/* The region's pages in a fixed shuffled order (a fixed seed: every run writes the same pattern). */
static size_t *shuffled(size_t pages) {
    size_t *order = malloc(pages * sizeof *order);
    if (order == NULL) die("malloc");
    for (size_t i = 0; i < pages; i++) order[i] = i;
    srand(42);
    for (size_t i = pages - 1; i > 0; i--) {
        size_t j = (size_t) rand() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    return order;
}

/* Reads the stream's bytes from {at} on into their shuffled pages: one readv over up to PAGES_PER_READ of them. */
static ssize_t read_pages(int fd, char *target, const size_t *order, size_t at) {
    struct iovec iov[PAGES_PER_READ];
    size_t pages = region / page, next = at / page;
    int count = 0;
    for (; count < PAGES_PER_READ; count++, next++) {
        size_t skip = count == 0 ? at % page : 0;
        iov[count].iov_base = target + order[next % pages] * page + skip;
        iov[count].iov_len = page - skip;
    }
    return readv(fd, iov, count);
}

static void *receive(void *arg) {
    int fd = *(int *) arg;
    char *target = allocate();
    size_t *order = page > 0 ? shuffled(region / page) : NULL;
    size_t at = 0;
    double start = now(), cpu = 0, bytes = 0;
    int measuring = 0;
    for (;;) {
        size_t slot = at % region;
        ssize_t n = page > 0 ? read_pages(fd, target, order, at) : read(fd, target + slot, SLOT - slot % SLOT);
        if (n < 0) die("read");
        if (n == 0) break;
        at += (size_t) n;
        if (!measuring && now() - start > WARMUP_S) {
            measuring = 1;
            cpu = thread_cpu();
            bytes = 0;
        }
        bytes += (double) n;
    }
    receiver_cpu = thread_cpu() - cpu;
    receiver_bytes = bytes;
    return NULL;
}

static long anon_huge_kib(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long kib = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "AnonHugePages:", 14) == 0) kib = atol(line + 14);
    }
    if (f != NULL) fclose(f);
    return kib;
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: tcp_stream REGION_MIB HUGE SECONDS PORT [PAGE_BYTES]\n");
        return 2;
    }
    long mib = atol(argv[1]);
    huge = atoi(argv[2]);
    double seconds = atof(argv[3]);
    int port = atoi(argv[4]);
    page = argc == 6 ? (size_t) atol(argv[5]) : 0;
    if (mib < 1 || seconds <= 0) {
        fprintf(stderr, "REGION_MIB must be at least 1 and SECONDS positive\n");
        return 2;
    }
    region = (size_t) mib << 20;
    if (argc == 6 && (page < 1 || page > SLOT || region % page != 0)) {
        fprintf(stderr, "PAGE_BYTES must divide the region and be at most 1 MiB\n");
        return 2;
    }
    int one = 1;
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0 || setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0) die("socket");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short) port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *) &address, sizeof address) < 0 || listen(listener, 1) < 0) die("bind");
    int sender = socket(AF_INET, SOCK_STREAM, 0);
    /* TCP_NODELAY as the engine's sockets; a stream of 1 MiB writes fills every segment either way */
    if (sender < 0 || setsockopt(sender, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0) die("sender");
    if (connect(sender, (struct sockaddr *) &address, sizeof address) < 0) die("connect");
    int receiver = accept(listener, NULL, NULL);
    if (receiver < 0) die("accept");
    pthread_t thread;
    if (pthread_create(&thread, NULL, receive, &receiver) != 0) die("pthread_create");

    char *source = allocate();
    size_t at = 0;
    double start = now(), measured_from = start, cpu = 0, bytes = 0;
    int measuring = 0;
    while (now() - start < WARMUP_S + seconds) {
        ssize_t n = write(sender, source + at % region, SLOT - at % SLOT);
        if (n <= 0) die("write");
        at += (size_t) n;
        if (!measuring && now() - start > WARMUP_S) {
            measuring = 1;
            measured_from = now();
            cpu = thread_cpu();
            bytes = 0;
        }
        bytes += (double) n;
    }
    double elapsed = now() - measured_from;
    double sender_cpu = thread_cpu() - cpu;
    shutdown(sender, SHUT_WR);
    pthread_join(thread, NULL);
    printf("{\"anchor\":\"tcp_stream\",\"region_mib\":%zu,\"page\":%zu,\"huge\":%d,\"gb_per_s\":%.3f,\"sender_cpu_s_per_gb\":%.3f,"
           "\"receiver_cpu_s_per_gb\":%.3f,\"anon_huge_mib\":%ld}\n",
           region >> 20, page, huge, bytes / elapsed / 1e9, sender_cpu / (bytes / 1e9),
           receiver_bytes > 0 ? receiver_cpu / (receiver_bytes / 1e9) : -1.0, anon_huge_kib() / 1024);
    return 0;
}
