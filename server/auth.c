/*
 * auth.c — the token file and the Authorization check (see auth.h).
 * SHA-256 comes from GnuTLS, which libmicrohttpd already links for TLS.
 */
#include "auth.h"

#include <ctype.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DIGEST_BYTES 32 /* SHA-256 */

struct srv_auth {
    size_t n;
    unsigned char (*digest)[DIGEST_BYTES];
    char (*label)[SRV_AUTH_LABEL_MAX + 1]; /* each token's, for the log */
};

/* A label's characters: letters, digits, '-', '.', '_', '@'. */
static int is_label(const char *s, size_t n) {
    if (n == 0 || n > SRV_AUTH_LABEL_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("-._@", s[i]))
            return 0;
    return 1;
}

static int is_blank(int c) {
    return c == ' ' || c == '\t';
}

/* RFC 6750 section 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" /
 * "~" / "+" / "/" ) *"=" */
static int is_b64token(const char *s, size_t n) {
    size_t i = 0;
    while (i < n &&
           ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
            (s[i] >= '0' && s[i] <= '9') ||
            (s[i] != '\0' && strchr("-._~+/", s[i]) != NULL)))
        i++;
    if (i == 0)
        return 0;
    while (i < n && s[i] == '=')
        i++;
    return i == n;
}

static int sha256(unsigned char out[DIGEST_BYTES], const char *s, size_t n) {
    return gnutls_hash_fast(GNUTLS_DIG_SHA256, s, n, out) == 0 ? 0 : -1;
}

static int has_blank(const char *s, size_t n) {
    for (size_t k = 0; k < n; k++)
        if (is_blank(s[k]))
            return 1;
    return 0;
}

/* Append the digest of s[0 .. n) to auth, with its label (label_n bytes;
 * none: "token<k>", k counting from 1). Returns 0, -1 out of memory. */
static int add_token(srv_auth *auth, size_t *cap, const char *s, size_t n,
                     const char *label, size_t label_n) {
    if (auth->n == *cap) {
        size_t grown = *cap ? *cap * 2 : 8;
        void *p = realloc(auth->digest, grown * DIGEST_BYTES);
        if (p == NULL)
            return -1;
        auth->digest = p;
        p = realloc(auth->label, grown * sizeof *auth->label);
        if (p == NULL)
            return -1;
        auth->label = p;
        *cap = grown;
    }
    if (sha256(auth->digest[auth->n], s, n) != 0)
        return -1;
    if (label_n > 0)
        snprintf(auth->label[auth->n], sizeof auth->label[0], "%.*s",
                 (int)label_n, label);
    else
        snprintf(auth->label[auth->n], sizeof auth->label[0], "token%zu",
                 auth->n + 1);
    auth->n++;
    return 0;
}

/* 1 when the last token's label is an earlier token's too. */
static int label_taken(const srv_auth *auth) {
    for (size_t k = 0; k + 1 < auth->n; k++)
        if (strcmp(auth->label[k], auth->label[auth->n - 1]) == 0)
            return 1;
    return 0;
}

srv_auth *srv_auth_load(const char *path, char *err, size_t cap) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, cap, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    srv_auth *auth = calloc(1, sizeof *auth);
    size_t digests_cap = 0;
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t len;
    unsigned long lineno = 0;
    int failed = auth == NULL;
    if (failed)
        snprintf(err, cap, "out of memory");
    while (!failed && (len = getline(&line, &line_cap, f)) >= 0) {
        lineno++;
        size_t n = (size_t)len;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' ||
                         is_blank(line[n - 1])))
            n--;
        size_t i = 0;
        while (i < n && is_blank(line[i]))
            i++;
        if (i == n || line[i] == '#')
            continue;
        /* "label token", or the token alone */
        size_t label_n = 0, label_at = i;
        size_t blank = i;
        while (blank < n && !is_blank(line[blank]))
            blank++;
        if (blank < n) {
            label_n = blank - i;
            for (i = blank; i < n && is_blank(line[i]); i++)
                ;
        }
        if (label_n > 0 && has_blank(line + i, n - i)) {
            snprintf(err, cap,
                     "%s line %lu: more than a label then a token (a label "
                     "has no blanks: write Ada.Lovelace, not Ada Lovelace)",
                     path, lineno);
            failed = 1;
        } else if (label_n > 0 && !is_label(line + label_at, label_n)) {
            snprintf(err, cap,
                     "%s line %lu: not a label then a token (a label is 1 "
                     "to %d characters of A-Z a-z 0-9 - . _ @)",
                     path, lineno, SRV_AUTH_LABEL_MAX);
            failed = 1;
        } else if (n - i > SRV_AUTH_TOKEN_MAX ||
                   !is_b64token(line + i, n - i)) {
            snprintf(err, cap,
                     "%s line %lu: not a token (1 to %d characters of "
                     "A-Z a-z 0-9 - . _ ~ + / with = padding at the end)",
                     path, lineno, SRV_AUTH_TOKEN_MAX);
            failed = 1;
        } else if (add_token(auth, &digests_cap, line + i, n - i,
                             line + label_at, label_n) != 0) {
            snprintf(err, cap, "out of memory");
            failed = 1;
        } else if (label_taken(auth)) {
            /* a label is one client to the limits and one name in the log */
            snprintf(err, cap,
                     "%s line %lu: the label %s is an earlier line's too "
                     "(a line without a label is token<N>, N its token's "
                     "place in the file); each label names one student",
                     path, lineno, auth->label[auth->n - 1]);
            failed = 1;
        }
    }
    if (!failed && ferror(f)) {
        snprintf(err, cap, "cannot read %s: %s", path, strerror(errno));
        failed = 1;
    }
    if (!failed && auth->n == 0) {
        snprintf(err, cap,
                 "%s has no token (one per line; blank lines and # comments "
                 "are ignored)",
                 path);
        failed = 1;
    }
    if (line != NULL)
        gnutls_memset(line, 0, line_cap);
    free(line);
    fclose(f);
    if (failed) {
        srv_auth_free(auth);
        return NULL;
    }
    return auth;
}

size_t srv_auth_count(const srv_auth *auth) {
    return auth->n;
}

srv_auth_result srv_auth_check(const srv_auth *auth, const char *authorization,
                               const char **label) {
    static const char scheme[] = "Bearer";
    if (label != NULL)
        *label = NULL;
    const size_t slen = sizeof scheme - 1;
    if (authorization == NULL)
        return SRV_AUTH_MISSING;
    const char *p = authorization;
    while (is_blank(*p))
        p++;
    if (strncasecmp(p, scheme, slen) != 0 || !is_blank(p[slen]))
        return SRV_AUTH_MISSING;
    p += slen;
    while (is_blank(*p))
        p++;
    size_t n = strlen(p);
    while (n > 0 && is_blank(p[n - 1]))
        n--;
    if (n == 0)
        return SRV_AUTH_MISSING;
    unsigned char presented[DIGEST_BYTES];
    if (!is_b64token(p, n) || sha256(presented, p, n) != 0)
        return SRV_AUTH_INVALID_TOKEN;
    /* every digest, every byte, no early exit; the matching index is
     * selected by mask, not by branch */
    unsigned match = 0;
    size_t which = 0;
    for (size_t t = 0; t < auth->n; t++) {
        unsigned diff = 0;
        for (size_t j = 0; j < DIGEST_BYTES; j++)
            diff |= (unsigned)(auth->digest[t][j] ^ presented[j]);
        unsigned hit = ((diff - 1u) >> 8) & 1u; /* 1 exactly when diff == 0 */
        unsigned first = hit & (match ^ 1u);    /* a token listed twice: its
                                                   first line names it */
        match |= hit;
        which |= t & ((size_t)0 - (size_t)first);
    }
    gnutls_memset(presented, 0, sizeof presented);
    if (match && label != NULL)
        *label = auth->label[which];
    return match ? SRV_AUTH_OK : SRV_AUTH_INVALID_TOKEN;
}

void srv_auth_free(srv_auth *auth) {
    if (auth == NULL)
        return;
    if (auth->digest != NULL)
        gnutls_memset(auth->digest, 0, auth->n * DIGEST_BYTES);
    free(auth->digest);
    free(auth->label);
    free(auth);
}
