/*
 * variant_secret.c — the course secret (see variant_secret.h).
 */
#include "variant_secret.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SECRET_FILE_MAX ((size_t)64 << 10)

static const api_variant_secret *daemon_secret;

const api_variant_secret *srv_variant_secret(void) {
    return daemon_secret;
}

void srv_variant_secret_set(const api_variant_secret *secret) {
    daemon_secret = secret;
}

/* path's bytes into *text (*len), at most SECRET_FILE_MAX. */
static int read_file(const char *path, unsigned char **text, size_t *len,
                     char *err, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    unsigned char *buf = malloc(SECRET_FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, SECRET_FILE_MAX + 1, f) : 0;
    int failed = ferror(f);
    fclose(f);
    if (!buf || failed || n > SECRET_FILE_MAX) {
        snprintf(err, cap, "%s: %s", path,
                 !buf     ? "out of memory"
                 : failed ? "cannot be read"
                          : "longer than 64 KiB, which no secret needs");
        if (buf)
            memset(buf, 0, SECRET_FILE_MAX + 1);
        free(buf);
        return -1;
    }
    *text = buf;
    *len = n;
    return 0;
}

int srv_variant_secret_read(const char *path, api_variant_secret *out,
                            char *err, size_t cap) {
    memset(out, 0, sizeof *out);
    unsigned char *bytes = NULL;
    size_t len = 0;
    const char *where = path;
    if (!path || !*path)
        path = getenv("ATTND_VARIANT_SECRET_FILE");
    if (path && *path) {
        if (read_file(path, &bytes, &len, err, cap))
            return -1;
        while (len && (bytes[len - 1] == '\n' || bytes[len - 1] == '\r'))
            len--;
    } else {
        const char *env = getenv("ATTND_VARIANT_SECRET");
        if (!env)
            return 0;
        where = "ATTND_VARIANT_SECRET";
        len = strlen(env);
        bytes = malloc(len + 1);
        if (!bytes) {
            snprintf(err, cap, "out of memory");
            return -1;
        }
        memcpy(bytes, env, len);
    }
    if (len < SRV_VARIANT_SECRET_MIN) {
        snprintf(err, cap,
                 "%s: the secret has %zu bytes; it needs at least %d (e.g. "
                 "head -c 32 /dev/urandom | base64 > secret)",
                 where, len, SRV_VARIANT_SECRET_MIN);
        memset(bytes, 0, len);
        free(bytes);
        return -1;
    }
    out->bytes = bytes;
    out->len = len;
    return 1;
}

void srv_variant_secret_free(api_variant_secret *out) {
    if (out->bytes) {
        memset((unsigned char *)out->bytes, 0, out->len);
        free((unsigned char *)out->bytes);
    }
    memset(out, 0, sizeof *out);
}
