/*
 * The C anchor for te-bench's tcp imm round trip: one TCP connection on loopback, SIZE-byte messages bounced back and
 * forth, both sides busy-polling non-blocking sockets with TCP_NODELAY (as the engine's spinning workers do).
 *   tcp_pingpong server PORT SIZE ITERATIONS WARMUP [split]
 *   tcp_pingpong client HOST PORT SIZE ITERATIONS WARMUP [split]
 * The client prints one JSON line: {"anchor":"tcp_pingpong","size":8,"round_trips":..,"p50_us":..,"p99_us":..,
 * "mean_us":..} with round-trip times in microseconds ("connections":2 added with split).
 * split (both sides): two connections, each side writing on one and reading the other, as the engine's tcp
 * transport does (a request on the requester's connection, the reply on the replier's); the kernel then cannot let
 * a message's TCP ACK ride on the reply (docs/benchmarks.md, "tcp imm round trip: syscalls and segments"). Not the
 * anchor: it measures what that topology costs.
 * Build: gcc -O2 -o tcp_pingpong tcp_pingpong.c
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void setup(int fd) {
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0) die("TCP_NODELAY");
}

/* Spins on a non-blocking socket until exactly len bytes moved. */
static void spin_io(int fd, char *buf, size_t len, int sending) {
    size_t done = 0;
    while (done < len) {
        ssize_t n = sending ? send(fd, buf + done, len - done, MSG_DONTWAIT | MSG_NOSIGNAL)
                            : recv(fd, buf + done, len - done, MSG_DONTWAIT);
        if (n > 0) {
            done += (size_t) n;
        } else if (n == 0) {
            fprintf(stderr, "peer closed\n");
            exit(1);
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            die(sending ? "send" : "recv");
        }
    }
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* The client's connection to the server, retried while the server starts. */
static int connect_to(const struct sockaddr_in *addr) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    for (int tries = 0; connect(fd, (const struct sockaddr *) addr, sizeof *addr) < 0; tries++) {
        if (tries == 100) die("connect");
        usleep(50000);
    }
    return fd;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int client = argc > 1 && !strcmp(argv[1], "client");
    int fixed = client ? 7 : 6;
    if (argc < fixed || argc > fixed + 1 || (!client && strcmp(argv[1], "server"))) {
        fprintf(stderr,
                "usage: %s server PORT SIZE ITERATIONS WARMUP [split]"
                " | client HOST PORT SIZE ITERATIONS WARMUP [split]\n",
                argv[0]);
        return 2;
    }
    if (argc == fixed + 1 && strcmp(argv[fixed], "split")) {
        fprintf(stderr, "the argument after WARMUP must be 'split' (two one-way connections), not '%s'\n", argv[fixed]);
        return 2;
    }
    int split = argc == fixed + 1;
    int a = client ? 3 : 2;
    int port = atoi(argv[a]);
    size_t size = (size_t) atol(argv[a + 1]);
    long iterations = atol(argv[a + 2]), warmup = atol(argv[a + 3]);
    char *buf = calloc(1, size ? size : 1);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short) port)};
    /* The client writes on its first connection and reads the second; the server accepts them in that order. */
    int out, in;
    if (client) {
        if (inet_pton(AF_INET, argv[2], &addr.sin_addr) != 1) die("address");
        out = connect_to(&addr);
        in = split ? connect_to(&addr) : out;
    } else {
        int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (bind(listener, (struct sockaddr *) &addr, sizeof addr) < 0) die("bind");
        if (listen(listener, 2) < 0) die("listen");
        in = accept(listener, NULL, NULL);
        if (in < 0) die("accept");
        out = split ? accept(listener, NULL, NULL) : in;
        if (out < 0) die("accept");
        close(listener);
    }
    setup(out);
    if (split) {
        setup(in);
        /* One message each way on each connection first, as the engine's handshake (HELLO, CHALLENGE): the kernel
         * then holds each connection in the state the engine's are in when its requests start. */
        int first = client ? out : in, second = client ? in : out;
        for (int c = 0; c < 2; c++) {
            int fd = c == 0 ? first : second;
            spin_io(fd, buf, size, client);
            spin_io(fd, buf, size, !client);
        }
    }
    long total = iterations + warmup;
    double *rtt = client ? malloc(sizeof(double) * (size_t) iterations) : NULL;
    for (long i = 0; i < total; i++) {
        if (client) {
            double start = now_us();
            spin_io(out, buf, size, 1);
            spin_io(in, buf, size, 0);
            if (i >= warmup) rtt[i - warmup] = now_us() - start;
        } else {
            spin_io(in, buf, size, 0);
            spin_io(out, buf, size, 1);
        }
    }
    if (client) {
        double sum = 0;
        for (long i = 0; i < iterations; i++) sum += rtt[i];
        qsort(rtt, (size_t) iterations, sizeof(double), compare);
        printf("{\"anchor\":\"tcp_pingpong\",\"size\":%zu,\"round_trips\":%ld,\"p50_us\":%.2f,\"p99_us\":%.2f,"
               "\"mean_us\":%.2f%s}\n", size, iterations, rtt[iterations / 2], rtt[iterations * 99 / 100],
               sum / iterations, split ? ",\"connections\":2" : "");
    }
    close(out);
    if (split) close(in);
    return 0;
}
