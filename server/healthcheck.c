/*
 * healthcheck.c — the probe behind `attnd --healthcheck`: non-blocking
 * connect, one request, read the status line (RFC 9112 section 4); when
 * the answer is not HTTP (a server started with --tls-cert drops a plain
 * request), once more over TLS.
 */
#include "healthcheck.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tls.h"

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until fd is ready for events or the deadline passes; 0 when ready. */
static int wait_for(int fd, short events, long long deadline) {
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0)
            return -1;
        struct pollfd p = {.fd = fd, .events = events};
        int rc = poll(&p, 1, (int)left);
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return -1;
    }
}

/* Connect to ss, send req[0 .. n) (over TLS when tls), read up to 12
 * bytes into status. Returns the bytes read, or -1 when the connection or
 * the transfer failed (the deadline included). */
static long exchange(const struct sockaddr_storage *ss, socklen_t sslen,
                     int tls, const char *req, size_t n, char *status,
                     long long deadline) {
    int fd =
        socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    long got = -1;
    if (connect(fd, (const struct sockaddr *)ss, sslen) != 0) {
        int err = 0;
        socklen_t errlen = sizeof err;
        if (errno != EINPROGRESS || wait_for(fd, POLLOUT, deadline) != 0 ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) != 0 ||
            err != 0)
            goto done;
    }
    if (tls) {
        got = srv_tls_probe(fd, req, n, status, 12, deadline);
        goto done;
    }
    for (size_t sent = 0; sent < n;) {
        if (wait_for(fd, POLLOUT, deadline) != 0)
            goto done;
        ssize_t w = send(fd, req + sent, n - sent, MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN && errno != EINTR)
            goto done;
        if (w > 0)
            sent += (size_t)w;
    }
    size_t have = 0;
    while (have < 12) {
        if (wait_for(fd, POLLIN, deadline) != 0)
            goto done;
        ssize_t r = recv(fd, status + have, 12 - have, 0);
        if (r == 0 || (r < 0 && errno == ECONNRESET))
            break; /* closed: what came so far is the answer */
        if (r < 0 && errno != EAGAIN && errno != EINTR)
            goto done;
        if (r > 0)
            have += (size_t)r;
    }
    got = (long)have;
done:
    close(fd);
    return got;
}

int srv_healthcheck(const char *bind, unsigned port, int timeout_ms) {
    long long deadline = now_ms() + timeout_ms;
    struct sockaddr_storage ss;
    socklen_t sslen;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, bind, &v4->sin_addr) == 1) {
        if (v4->sin_addr.s_addr == htonl(INADDR_ANY))
            v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        sslen = sizeof *v4;
    } else if (inet_pton(AF_INET6, bind, &v6->sin6_addr) == 1) {
        if (IN6_IS_ADDR_UNSPECIFIED(&v6->sin6_addr))
            v6->sin6_addr = in6addr_loopback;
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        sslen = sizeof *v6;
    } else {
        return 1;
    }
    char req[128];
    int n = snprintf(req, sizeof req,
                     "GET /healthz HTTP/1.0\r\nHost: localhost:%u\r\n"
                     "Connection: close\r\n\r\n",
                     port);
    /* "HTTP/1.1 200" is all we need: 12 bytes */
    char status[13];
    long got = exchange(&ss, sslen, 0, req, (size_t)n, status, deadline);
    if (got >= 0 && (got < 5 || strncmp(status, "HTTP/", 5) != 0))
        got = exchange(&ss, sslen, 1, req, (size_t)n, status, deadline);
    if (got != 12)
        return 1;
    status[12] = '\0';
    int ok =
        strncmp(status, "HTTP/1.", 7) == 0 && strcmp(status + 8, " 200") == 0;
    return ok ? 0 : 1;
}
