/*
 * csp.c — hash the lab page's inline scripts and styles into its
 * Content-Security-Policy (see csp.h).
 */
#include "csp.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"

#define HASH_B64_MAX 45 /* base64 of 32 bytes, with the NUL */

static char lab_policy[SRV_CSP_MAX];
static int lab_ready;

/* RFC 4648 section 4 base64, with padding. */
static void base64(char *out, const unsigned char *in, size_t n) {
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[o++] = alphabet[(v >> 18) & 63];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
    }
    out[o] = '\0';
}

/* 'sha256-<base64>' of text[0 .. n) after newline normalisation. */
static int hash_source(char *out, const char *text, size_t n) {
    char *norm = malloc(n + 1);
    if (norm == NULL)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '\r') {
            norm[m++] = '\n';
            if (i + 1 < n && text[i + 1] == '\n')
                i++;
        } else {
            norm[m++] = text[i];
        }
    }
    unsigned char digest[32];
    int rc = gnutls_hash_fast(GNUTLS_DIG_SHA256, norm, m, digest);
    free(norm);
    if (rc < 0)
        return -1;
    base64(out, digest, sizeof digest);
    return 0;
}

/* First case-insensitive occurrence of needle in s[0 .. n), or NULL. */
static const char *find_ci(const char *s, size_t n, const char *needle) {
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (strncasecmp(s + i, needle, k) == 0)
            return s + i;
    return NULL;
}

/* Append " 'sha256-…'" for every inline <tag> element of html to out (at
 * *len, cap bytes). Returns 0, -1 when out is full or hashing fails. */
static int add_hashes(char *out, size_t cap, size_t *len, const char *html,
                      size_t n, const char *tag) {
    char open[16], close[16];
    snprintf(open, sizeof open, "<%s", tag);
    snprintf(close, sizeof close, "</%s", tag);
    const char *p = html, *end = html + n;
    const char *at;
    while ((at = find_ci(p, (size_t)(end - p), open)) != NULL) {
        const char *after = at + strlen(open);
        p = after;
        if (after >= end || !(*after == '>' || *after == ' ' ||
                              *after == '\t' || *after == '\n'))
            continue; /* <scripts>, <styled>: another tag */
        const char *gt = memchr(after, '>', (size_t)(end - after));
        if (gt == NULL)
            return 0;
        const char *body = gt + 1;
        const char *stop = find_ci(body, (size_t)(end - body), close);
        if (stop == NULL)
            return 0;
        p = stop;
        if (find_ci(after, (size_t)(gt - after), "src=") != NULL)
            continue; /* an external script: 'self' covers it */
        char b64[HASH_B64_MAX];
        if (hash_source(b64, body, (size_t)(stop - body)) != 0)
            return -1;
        int w = snprintf(out + *len, cap - *len, " 'sha256-%s'", b64);
        if (w < 0 || (size_t)w >= cap - *len)
            return -1;
        *len += (size_t)w;
    }
    return 0;
}

/* Append the text s to out at *len. Returns 0, -1 when it does not fit. */
static int add(char *out, size_t cap, size_t *len, const char *s) {
    size_t k = strlen(s);
    if (k >= cap - *len)
        return -1;
    memcpy(out + *len, s, k + 1);
    *len += k;
    return 0;
}

int srv_csp_build(char *out, size_t cap, const char *html, size_t len) {
    size_t n = 0;
    if (cap == 0)
        return -1;
    out[0] = '\0';
    if (add(out, cap, &n, "default-src 'self'; script-src 'self'") != 0 ||
        add_hashes(out, cap, &n, html, len, "script") != 0 ||
        add(out, cap, &n, "; style-src 'self'") != 0 ||
        add_hashes(out, cap, &n, html, len, "style") != 0 ||
        add(out, cap, &n,
            "; style-src-attr 'unsafe-inline'; img-src 'self' data: blob:; "
            "connect-src 'self'; object-src 'none'; base-uri 'none'; "
            "form-action 'self'; frame-ancestors 'self'") != 0)
        return -1;
    return 0;
}

int srv_csp_init(void) {
    api_request req;
    api_response res;
    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.path = "/";
    api_handle(&req, &res);
    int rc = -1;
    if (res.status == 200 && res.body != NULL)
        rc = srv_csp_build(lab_policy, sizeof lab_policy, res.body,
                           res.body_len);
    api_response_free(&res);
    lab_ready = rc == 0;
    return rc;
}

const char *srv_csp_lab(void) {
    return lab_ready ? lab_policy : NULL;
}
