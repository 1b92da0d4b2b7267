/*
 * The C anchor for te-bench's tcp imm round trip: one TCP connection on loopback, SIZE-byte messages bounced back and
 * forth, both sides busy-polling non-blocking sockets with TCP_NODELAY (as the engine's spinning workers do).
 *   tcp_pingpong server PORT SIZE ITERATIONS WARMUP
 *   tcp_pingpong client HOST PORT SIZE ITERATIONS WARMUP
 * The client prints one JSON line: {"anchor":"tcp_pingpong","size":8,"round_trips":..,"p50_us":..,"p99_us":..,
 * "mean_us":..} with round-trip times in microseconds.
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

static int compare(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 6 || (strcmp(argv[1], "server") && strcmp(argv[1], "client")) ||
        (!strcmp(argv[1], "client") && argc < 7)) {
        fprintf(stderr, "usage: %s server PORT SIZE ITERATIONS WARMUP | client HOST PORT SIZE ITERATIONS WARMUP\n",
                argv[0]);
        return 2;
    }
    int client = !strcmp(argv[1], "client");
    int a = client ? 3 : 2;
    int port = atoi(argv[a]);
    size_t size = (size_t) atol(argv[a + 1]);
    long iterations = atol(argv[a + 2]), warmup = atol(argv[a + 3]);
    char *buf = calloc(1, size ? size : 1);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short) port)};
    int fd;
    if (client) {
        if (inet_pton(AF_INET, argv[2], &addr.sin_addr) != 1) die("address");
        fd = socket(AF_INET, SOCK_STREAM, 0);
        for (int tries = 0; connect(fd, (struct sockaddr *) &addr, sizeof addr) < 0; tries++) {
            if (tries == 100) die("connect");
            usleep(50000);
        }
    } else {
        int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (bind(listener, (struct sockaddr *) &addr, sizeof addr) < 0) die("bind");
        if (listen(listener, 1) < 0) die("listen");
        fd = accept(listener, NULL, NULL);
        if (fd < 0) die("accept");
        close(listener);
    }
    setup(fd);
    long total = iterations + warmup;
    double *rtt = client ? malloc(sizeof(double) * (size_t) iterations) : NULL;
    for (long i = 0; i < total; i++) {
        if (client) {
            double start = now_us();
            spin_io(fd, buf, size, 1);
            spin_io(fd, buf, size, 0);
            if (i >= warmup) rtt[i - warmup] = now_us() - start;
        } else {
            spin_io(fd, buf, size, 0);
            spin_io(fd, buf, size, 1);
        }
    }
    if (client) {
        double sum = 0;
        for (long i = 0; i < iterations; i++) sum += rtt[i];
        qsort(rtt, (size_t) iterations, sizeof(double), compare);
        printf("{\"anchor\":\"tcp_pingpong\",\"size\":%zu,\"round_trips\":%ld,\"p50_us\":%.2f,\"p99_us\":%.2f,"
               "\"mean_us\":%.2f}\n", size, iterations, rtt[iterations / 2], rtt[iterations * 99 / 100],
               sum / iterations);
    }
    close(fd);
    return 0;
}
