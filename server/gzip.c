/*
 * gzip.c — Accept-Encoding parsing and one-shot gzip compression.
 */
#include "gzip.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "api.h"

static size_t min_bytes = SRV_GZIP_MIN_BYTES; /* 0: never compress */

void srv_gzip_set_min_bytes(size_t n) {
    min_bytes = n;
}

int srv_gzip_eligible(size_t len) {
    return min_bytes > 0 && len >= min_bytes;
}

static int is_blank(char c) {
    return c == ' ' || c == '\t';
}

int srv_gzip_accepted(const char *ae) {
    if (ae == NULL)
        return 0;
    int gzip_q = -1, star_q = -1;
    const char *p = ae;
    while (*p != '\0') {
        /* one member: coding *( OWS ";" OWS param ) up to ',' */
        const char *end = strchr(p, ',');
        if (end == NULL)
            end = p + strlen(p);
        while (p < end && is_blank(*p))
            p++;
        const char *name = p;
        while (p < end && *p != ';' && !is_blank(*p))
            p++;
        size_t name_len = (size_t)(p - name);
        int q = 1000;
        while (p < end) {
            if (*p == ';' || is_blank(*p)) {
                p++;
                continue;
            }
            const char *param = p;
            while (p < end && *p != ';' && !is_blank(*p))
                p++;
            if ((param[0] == 'q' || param[0] == 'Q') && p - param >= 2 &&
                param[1] == '=')
                q = api_qvalue_parse(param + 2, (size_t)(p - param - 2));
        }
        if (q >= 0) {
            if ((name_len == 4 && strncasecmp(name, "gzip", 4) == 0) ||
                (name_len == 6 && strncasecmp(name, "x-gzip", 6) == 0))
                gzip_q = q;
            else if (name_len == 1 && name[0] == '*')
                star_q = q;
        }
        p = *end == ',' ? end + 1 : end;
    }
    if (gzip_q >= 0)
        return gzip_q > 0;
    return star_q > 0;
}

int srv_gzip_compress(char **out, size_t *out_len, const char *in, size_t len) {
    if (len > UINT32_MAX / 2)
        return -1; /* beyond one zlib call; such bodies go out as they are */
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    /* windowBits 15 + 16 selects the gzip wrapper */
    if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK)
        return -1;
    /* room for no more than the input: a result that does not shrink is
     * not worth sending, and deflate then stops with Z_OK */
    char *buf = malloc(len > 0 ? len : 1);
    if (buf == NULL) {
        deflateEnd(&zs);
        return -1;
    }
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)len;
    zs.next_out = (Bytef *)buf;
    zs.avail_out = (uInt)len;
    int rc = deflate(&zs, Z_FINISH);
    size_t produced = len - zs.avail_out;
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) {
        free(buf);
        return -1;
    }
    *out = buf;
    *out_len = produced;
    return 0;
}

/* The documents kept compressed (srv_gzip_kept): the lab page,
 * /openapi.json and /version, with room to spare. */
#define KEPT_MAX 8

static struct {
    const char *key;  /* its route's name, a static string; NULL: free */
    char *plain, *gz; /* the bytes compressed, and their gzip */
    size_t plain_len, gz_len;
} kept[KEPT_MAX];
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

/* A malloc'd copy of bytes[0 .. len) into *out. */
static int copy_of(char **out, const char *bytes, size_t len) {
    *out = malloc(len > 0 ? len : 1);
    if (*out == NULL)
        return -1;
    memcpy(*out, bytes, len);
    return 0;
}

int srv_gzip_kept(const char *key, char **out, size_t *out_len, const char *in,
                  size_t len) {
    pthread_mutex_lock(&kept_lock);
    int slot = -1;
    for (int i = 0; i < KEPT_MAX && slot < 0; i++)
        if (kept[i].key == key || kept[i].key == NULL)
            slot = i;
    if (slot >= 0 && kept[slot].key == key && kept[slot].plain_len == len &&
        memcmp(kept[slot].plain, in, len) == 0) {
        int rc = copy_of(out, kept[slot].gz, kept[slot].gz_len);
        *out_len = kept[slot].gz_len;
        pthread_mutex_unlock(&kept_lock);
        return rc;
    }
    pthread_mutex_unlock(&kept_lock);
    if (srv_gzip_compress(out, out_len, in, len) != 0)
        return -1;
    /* kept once, by the first answer that finds its place free; another
     * document under the same key is compressed each time, never kept */
    char *plain = NULL, *gz = NULL;
    if (slot >= 0 && copy_of(&plain, in, len) == 0 &&
        copy_of(&gz, *out, *out_len) == 0) {
        pthread_mutex_lock(&kept_lock);
        if (kept[slot].key == NULL) {
            kept[slot].key = key;
            kept[slot].plain = plain;
            kept[slot].plain_len = len;
            kept[slot].gz = gz;
            kept[slot].gz_len = *out_len;
            plain = gz = NULL;
        }
        pthread_mutex_unlock(&kept_lock);
    }
    free(plain);
    free(gz);
    return 0;
}

/* Plain bytes read from the source at a time, and at most in one call of
 * srv_gzip_stream_read: an answer that compresses well (every weight
 * 1/N) would otherwise be read and deflated megabytes at a time to fill
 * one piece of output, on an HTTP thread. 64 KiB is about a millisecond
 * of printing and deflating. */
#define GZIP_IN_BYTES (64u * 1024)

struct srv_gzip_stream {
    z_stream zs;
    srv_gzip_source source;
    void *ctx;
    int at_end; /* the source has ended: finishing */
    int done;   /* Z_STREAM_END given */
    char in[GZIP_IN_BYTES];
};

srv_gzip_stream *srv_gzip_stream_new(srv_gzip_source source, void *ctx) {
    srv_gzip_stream *z = calloc(1, sizeof *z);
    if (z == NULL)
        return NULL;
    if (deflateInit2(&z->zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK) {
        free(z);
        return NULL;
    }
    z->source = source;
    z->ctx = ctx;
    return z;
}

ssize_t srv_gzip_stream_read(srv_gzip_stream *z, char *dst, size_t max) {
    if (z->done)
        return 0;
    if (max > UINT32_MAX)
        max = UINT32_MAX;
    z->zs.next_out = (Bytef *)dst;
    z->zs.avail_out = (uInt)max;
    int read = 0; /* a source read in this call: the next one flushes */
    /* until some output is ready: deflate keeps what it can, and a flush
     * makes it give what it has once GZIP_IN_BYTES went in */
    while (z->zs.avail_out == max) {
        int flush = Z_NO_FLUSH;
        if (z->zs.avail_in == 0 && !z->at_end) {
            if (read) {
                flush = Z_SYNC_FLUSH;
            } else {
                ssize_t n = z->source(z->ctx, z->in, sizeof z->in);
                if (n < 0)
                    return -1;
                read = 1;
                z->at_end = n == 0;
                z->zs.next_in = (Bytef *)z->in;
                z->zs.avail_in = (uInt)n;
            }
        }
        if (z->at_end)
            flush = Z_FINISH;
        int rc = deflate(&z->zs, flush);
        if (rc == Z_STREAM_END) {
            z->done = 1;
            break;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            return -1;
    }
    return (ssize_t)(max - z->zs.avail_out);
}

void srv_gzip_stream_free(srv_gzip_stream *z) {
    if (z == NULL)
        return;
    deflateEnd(&z->zs);
    free(z);
}
