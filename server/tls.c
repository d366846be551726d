/*
 * tls.c — certificate loading for the HTTPS server and the health probe's
 * TLS client, both on GnuTLS (see tls.h).
 */
#include "tls.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PEM_MAX_BYTES (1 << 20)

/* Read path into a NUL-terminated malloc'd string. Returns it, or NULL
 * after writing why into err. */
static char *read_pem(const char *path, const char *what, char *err,
                      size_t cap) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, cap, "%s: cannot read %s: %s", what, path,
                 strerror(errno));
        return NULL;
    }
    char *text = malloc(PEM_MAX_BYTES + 1);
    size_t n = text != NULL ? fread(text, 1, PEM_MAX_BYTES + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (text == NULL)
        snprintf(err, cap, "%s: out of memory", what);
    else if (bad)
        snprintf(err, cap, "%s: cannot read %s", what, path);
    else if (n == 0)
        snprintf(err, cap, "%s: %s is empty", what, path);
    else if (n > PEM_MAX_BYTES)
        snprintf(err, cap, "%s: %s is larger than 1 MiB", what, path);
    else {
        text[n] = '\0';
        return text;
    }
    if (text != NULL) {
        gnutls_memset(text, 0, PEM_MAX_BYTES + 1);
        free(text);
    }
    return NULL;
}

/* A warning when the leaf certificate is outside its validity period. */
static void check_validity(const gnutls_datum_t *cert, char *warn, size_t cap) {
    gnutls_x509_crt_t crt;
    if (gnutls_x509_crt_init(&crt) < 0)
        return;
    if (gnutls_x509_crt_import(crt, cert, GNUTLS_X509_FMT_PEM) == 0) {
        time_t now = time(NULL);
        time_t not_after = gnutls_x509_crt_get_expiration_time(crt);
        time_t not_before = gnutls_x509_crt_get_activation_time(crt);
        char when[32];
        struct tm tm;
        if (not_after != (time_t)-1 && not_after < now) {
            gmtime_r(&not_after, &tm);
            strftime(when, sizeof when, "%Y-%m-%d %H:%M:%SZ", &tm);
            snprintf(warn, cap, "--tls-cert: the certificate expired on %s",
                     when);
        } else if (not_before != (time_t)-1 && not_before > now) {
            gmtime_r(&not_before, &tm);
            strftime(when, sizeof when, "%Y-%m-%d %H:%M:%SZ", &tm);
            snprintf(warn, cap,
                     "--tls-cert: the certificate is not valid before %s",
                     when);
        }
    }
    gnutls_x509_crt_deinit(crt);
}

int srv_tls_load(srv_tls_keys *keys, const char *cert_path,
                 const char *key_path, char *err, char *warn, size_t cap) {
    memset(keys, 0, sizeof *keys);
    warn[0] = '\0';
    keys->cert_pem = read_pem(cert_path, "--tls-cert", err, cap);
    if (keys->cert_pem == NULL)
        return -1;
    keys->key_pem = read_pem(key_path, "--tls-key", err, cap);
    if (keys->key_pem == NULL) {
        srv_tls_keys_free(keys);
        return -1;
    }
    gnutls_certificate_credentials_t cred;
    if (gnutls_certificate_allocate_credentials(&cred) < 0) {
        snprintf(err, cap, "--tls-cert: out of memory");
        srv_tls_keys_free(keys);
        return -1;
    }
    gnutls_datum_t cert = {(unsigned char *)keys->cert_pem,
                           (unsigned)strlen(keys->cert_pem)};
    gnutls_datum_t key = {(unsigned char *)keys->key_pem,
                          (unsigned)strlen(keys->key_pem)};
    int rc = gnutls_certificate_set_x509_key_mem(cred, &cert, &key,
                                                 GNUTLS_X509_FMT_PEM);
    gnutls_certificate_free_credentials(cred);
    if (rc < 0) {
        snprintf(err, cap,
                 "--tls-cert %s / --tls-key %s: not a usable PEM certificate "
                 "and unencrypted key that belong together (GnuTLS: %s)",
                 cert_path, key_path, gnutls_strerror(rc));
        srv_tls_keys_free(keys);
        return -1;
    }
    check_validity(&cert, warn, cap);
    return 0;
}

void srv_tls_keys_free(srv_tls_keys *keys) {
    if (keys->key_pem != NULL)
        gnutls_memset(keys->key_pem, 0, strlen(keys->key_pem));
    free(keys->key_pem);
    free(keys->cert_pem);
    keys->key_pem = keys->cert_pem = NULL;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* After GNUTLS_E_AGAIN: wait until fd can go on in the direction GnuTLS
 * was blocked in. Returns 0 when ready, -1 at the deadline. */
static int wait_ready(gnutls_session_t s, int fd, long long deadline_ms) {
    short events = gnutls_record_get_direction(s) ? POLLOUT : POLLIN;
    for (;;) {
        long long left = deadline_ms - now_ms();
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

/* 1 when rc means "try again" (non-blocking I/O or a signal). */
static int again(int rc) {
    return rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED;
}

long srv_tls_probe(int fd, const char *request, size_t n, char *reply,
                   size_t want, long long deadline_ms) {
    gnutls_certificate_credentials_t cred;
    gnutls_session_t s;
    if (gnutls_certificate_allocate_credentials(&cred) < 0)
        return -1;
    if (gnutls_init(&s, GNUTLS_CLIENT | GNUTLS_NONBLOCK) < 0) {
        gnutls_certificate_free_credentials(cred);
        return -1;
    }
    long got = -1;
    if (gnutls_priority_set_direct(s, SRV_TLS_PRIORITIES, NULL) < 0 ||
        gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred) < 0)
        goto done;
    gnutls_transport_set_int(s, fd);
    int rc;
    while ((rc = gnutls_handshake(s)) < 0) {
        if ((!again(rc) && gnutls_error_is_fatal(rc)) ||
            (again(rc) && wait_ready(s, fd, deadline_ms) != 0))
            goto done;
    }
    for (size_t sent = 0; sent < n;) {
        ssize_t w = gnutls_record_send(s, request + sent, n - sent);
        if (w > 0)
            sent += (size_t)w;
        else if (!again((int)w) || wait_ready(s, fd, deadline_ms) != 0)
            goto done;
    }
    size_t have = 0;
    while (have < want) {
        ssize_t r = gnutls_record_recv(s, reply + have, want - have);
        if (r > 0)
            have += (size_t)r;
        else if (r == 0 || r == GNUTLS_E_PREMATURE_TERMINATION)
            break;
        else if (!again((int)r) || wait_ready(s, fd, deadline_ms) != 0)
            goto done;
    }
    got = (long)have;
done:
    gnutls_deinit(s);
    gnutls_certificate_free_credentials(cred);
    return got;
}
