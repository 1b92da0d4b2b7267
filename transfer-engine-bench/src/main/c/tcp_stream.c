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
 * engine's paged rows can be held against the kernel's copies of the same pages (issue 22). PAGE_BYTES 0: contiguous.
 * With STREAMS (tcp_stream REGION_MIB HUGE SECONDS PORT PAGE_BYTES STREAMS, 1 to 64) it runs STREAMS connections,
 * stream i taking the i-th of STREAMS equal parts of both regions: the footprint of te-bench's `--nics N --routing
 * pinned` (N connections, 1 MiB writes cycling through one pair of regions). Several streams keep the one sending and
 * the one receiving thread, each serving all sockets, non-blocking, through poll(): whichever has room gets its next
 * 1 MiB slot (or what fits of it), whichever has data is read into its part (contiguous or its shuffled pages), as the
 * single worker per side of te-bench's NIC group drives its sockets and iperf3 3.12 runs `-P N` on one thread. So
 * gb_per_s is the sum over the streams and the CPU times per GB are still those of one thread per side; the line adds
 * "streams":N and each stream's bytes ("sent_bytes":[..],"received_bytes":[..], the warm-up included), which must
 * match: the program fails where a receiver did not get what its sender wrote. STREAMS 1: blocking, as without it.
 * Build: gcc -O2 -pthread -o tcp_stream tcp_stream.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
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
#define MAX_STREAMS 64

#define PAGES_PER_READ 256

static size_t region;
/* each stream's part of the regions: region / streams, whole MiB */
static size_t part;
static int huge;
/* 0: the receiver reads whole slots; else the size of the shuffled pages it reads into */
static size_t page;
static double seconds;
/* mapped and advised by main; the sending thread touches the source first, the receiving one the target */
static char *source;
static char *target;
/* the pages of a part in their shuffled order, the same for every stream (NULL: contiguous) */
static size_t *order;

/* One connection: its two sockets and each end's bytes, warm-up included. */
struct stream {
    int sender;
    int receiver;
    size_t sent;
    size_t received;
};

static struct stream streams[MAX_STREAMS];
static long stream_count;

/* What one side's thread measured after the warm-up: the bytes it moved over all streams, its seconds and CPU. */
struct side {
    double bytes;
    double seconds;
    double cpu;
};

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

/* A region aligned to a huge page, advised before anything touches it, so that huge pages can back it whole. */
static char *map(void) {
    char *raw = mmap(NULL, region + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) die("mmap");
    char *aligned = (char *) (((unsigned long) raw + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
    if (huge && madvise(aligned, region, MADV_HUGEPAGE) < 0) die("madvise");
    return aligned;
}

/* The part's pages in a fixed shuffled order (a fixed seed: every run writes the same pattern). */
static size_t *shuffled(size_t pages) {
    size_t *shuffle = malloc(pages * sizeof *shuffle);
    if (shuffle == NULL) die("malloc");
    for (size_t i = 0; i < pages; i++) shuffle[i] = i;
    srand(42);
    for (size_t i = pages - 1; i > 0; i--) {
        size_t j = (size_t) rand() % (i + 1), t = shuffle[i];
        shuffle[i] = shuffle[j];
        shuffle[j] = t;
    }
    return shuffle;
}

/* Reads the stream's bytes from {at} on into their shuffled pages: one readv over up to PAGES_PER_READ of them. */
static ssize_t read_pages(int fd, char *into, size_t at) {
    struct iovec iov[PAGES_PER_READ];
    size_t pages = part / page, next = at / page;
    int used = 0;
    for (; used < PAGES_PER_READ; used++, next++) {
        size_t skip = used == 0 ? at % page : 0;
        iov[used].iov_base = into + order[next % pages] * page + skip;
        iov[used].iov_len = page - skip;
    }
    return readv(fd, iov, used);
}

/* Waits until any of several non-blocking streams is ready; one stream blocks in its own read or write instead. */
static void wait_ready(struct pollfd *ready, int timeout_ms) {
    if (stream_count > 1 && poll(ready, (nfds_t) stream_count, timeout_ms) < 0) die("poll");
}

/* Whether stream i is to be served in this turn: still open, and ready (or the only one, blocking). */
static int is_ready(const struct pollfd *ready, long i) {
    return ready[i].fd >= 0 && (stream_count == 1 || ready[i].revents != 0);
}

/* The receiving thread: reads every stream, whichever is ready, into its part of the target until each ends. */
static void *receive_all(void *arg) {
    struct side *measured = arg;
    memset(target, 0x5A, region);
    struct pollfd ready[MAX_STREAMS];
    for (long i = 0; i < stream_count; i++) ready[i] = (struct pollfd) {.fd = streams[i].receiver, .events = POLLIN};
    long open = stream_count;
    double start = now(), cpu = 0, bytes = 0;
    int measuring = 0;
    while (open > 0) {
        wait_ready(ready, -1);
        size_t moved = 0;
        for (long i = 0; i < stream_count; i++) {
            if (!is_ready(ready, i)) continue;
            struct stream *s = &streams[i];
            char *into = target + (size_t) i * part;
            size_t slot = s->received % part;
            ssize_t n = page > 0 ? read_pages(s->receiver, into, s->received)
                                 : read(s->receiver, into + slot, SLOT - slot % SLOT);
            if (n < 0 && errno == EAGAIN) continue;
            if (n < 0) die("read");
            if (n == 0) {
                ready[i].fd = -1;
                open--;
                continue;
            }
            s->received += (size_t) n;
            moved += (size_t) n;
        }
        if (moved == 0) continue;
        if (!measuring && now() - start > WARMUP_S) {
            measuring = 1;
            cpu = thread_cpu();
            bytes = 0;
        }
        bytes += (double) moved;
    }
    measured->cpu = thread_cpu() - cpu;
    measured->bytes = bytes;
    return NULL;
}

/* The sending thread: writes 1 MiB slots of each stream's part into every stream with room, for the run's time. */
static void *send_all(void *arg) {
    struct side *measured = arg;
    memset(source, 0x5A, region);
    struct pollfd ready[MAX_STREAMS];
    for (long i = 0; i < stream_count; i++) ready[i] = (struct pollfd) {.fd = streams[i].sender, .events = POLLOUT};
    double start = now(), measured_from = start, cpu = 0, bytes = 0;
    int measuring = 0;
    while (now() - start < WARMUP_S + seconds) {
        /* a bounded wait: the clock is read again even if no stream had room */
        wait_ready(ready, 100);
        size_t moved = 0;
        for (long i = 0; i < stream_count; i++) {
            if (!is_ready(ready, i)) continue;
            struct stream *s = &streams[i];
            ssize_t n = write(s->sender, source + (size_t) i * part + s->sent % part, SLOT - s->sent % SLOT);
            if (n < 0 && errno == EAGAIN) continue;
            if (n <= 0) die("write");
            s->sent += (size_t) n;
            moved += (size_t) n;
        }
        if (moved == 0) continue;
        if (!measuring && now() - start > WARMUP_S) {
            measuring = 1;
            measured_from = now();
            cpu = thread_cpu();
            bytes = 0;
        }
        bytes += (double) moved;
    }
    measured->seconds = now() - measured_from;
    measured->cpu = thread_cpu() - cpu;
    measured->bytes = bytes;
    for (long i = 0; i < stream_count; i++) shutdown(streams[i].sender, SHUT_WR);
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

/* Each stream's bytes, warm-up included, as a JSON array: sent (1) or received (0). */
static void print_bytes(int sent) {
    for (long i = 0; i < stream_count; i++) printf("%s%zu", i == 0 ? "[" : ",", sent ? streams[i].sent : streams[i].received);
    printf("]");
}

/* Several streams share one thread per side, so none may block it while another has room or data. */
static void set_non_blocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) die("fcntl");
}
int main(int argc, char **argv) {
    if (argc < 5 || argc > 7) {
        fprintf(stderr, "usage: tcp_stream REGION_MIB HUGE SECONDS PORT [PAGE_BYTES [STREAMS]]\n");
        return 2;
    }
    long mib = atol(argv[1]);
    huge = atoi(argv[2]);
    seconds = atof(argv[3]);
    int port = atoi(argv[4]);
    char *page_end = "";
    page = argc >= 6 ? (size_t) strtoul(argv[5], &page_end, 10) : 0;
    stream_count = 1;
    if (argc == 7) {
        char *end;
        stream_count = strtol(argv[6], &end, 10);
        if (end == argv[6] || *end != '\0' || stream_count < 1 || stream_count > MAX_STREAMS) {
            fprintf(stderr, "STREAMS must be a whole number from 1 to %d, not '%s'\n", MAX_STREAMS, argv[6]);
            return 2;
        }
    }
    if (mib < 1 || seconds <= 0) {
        fprintf(stderr, "REGION_MIB must be at least 1 and SECONDS positive\n");
        return 2;
    }
    if (mib % stream_count != 0) {
        fprintf(stderr, "REGION_MIB (%ld) must be a multiple of STREAMS (%ld): each stream takes whole MiB slots\n",
                mib, stream_count);
        return 2;
    }
    region = (size_t) mib << 20;
    part = region / (size_t) stream_count;
    if (*page_end != '\0' || page > SLOT || (page > 0 && part % page != 0)) {
        fprintf(stderr, "PAGE_BYTES must divide the region (each stream's part of it) and be at most 1 MiB; 0: "
                        "contiguous\n");
        return 2;
    }
    source = map();
    target = map();
    order = page > 0 ? shuffled(part / page) : NULL;
    int one = 1;
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0 || setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0) die("socket");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short) port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *) &address, sizeof address) < 0 || listen(listener, (int) stream_count) < 0)
        die("bind");
    for (long i = 0; i < stream_count; i++) {
        struct stream *s = &streams[i];
        s->sender = socket(AF_INET, SOCK_STREAM, 0);
        /* TCP_NODELAY as the engine's sockets; a stream of 1 MiB writes fills every segment either way */
        if (s->sender < 0 || setsockopt(s->sender, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0) die("sender");
        if (connect(s->sender, (struct sockaddr *) &address, sizeof address) < 0) die("connect");
        s->receiver = accept(listener, NULL, NULL);
        if (s->receiver < 0) die("accept");
        if (stream_count > 1) {
            set_non_blocking(s->sender);
            set_non_blocking(s->receiver);
        }
    }
    struct side sending = {0}, receiving = {0};
    pthread_t send_thread, receive_thread;
    if (pthread_create(&receive_thread, NULL, receive_all, &receiving) != 0 ||
        pthread_create(&send_thread, NULL, send_all, &sending) != 0)
        die("pthread_create");
    pthread_join(send_thread, NULL);
    pthread_join(receive_thread, NULL);
    for (long i = 0; i < stream_count; i++) {
        if (streams[i].received != streams[i].sent) {
            fprintf(stderr, "stream %ld: its receiver got %zu bytes of the %zu sent\n", i, streams[i].received,
                    streams[i].sent);
            return 1;
        }
    }
    printf("{\"anchor\":\"tcp_stream\",\"region_mib\":%zu,\"page\":%zu,\"huge\":%d,\"gb_per_s\":%.3f,\"sender_cpu_s_per_gb\":%.3f,"
           "\"receiver_cpu_s_per_gb\":%.3f,\"anon_huge_mib\":%ld",
           region >> 20, page, huge, sending.bytes / sending.seconds / 1e9, sending.cpu / (sending.bytes / 1e9),
           receiving.bytes > 0 ? receiving.cpu / (receiving.bytes / 1e9) : -1.0, anon_huge_kib() / 1024);
    if (argc == 7) {
        printf(",\"streams\":%ld,\"sent_bytes\":", stream_count);
        print_bytes(1);
        printf(",\"received_bytes\":");
        print_bytes(0);
    }
    printf("}\n");
    return 0;
}
