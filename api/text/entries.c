/*
 * entries.c — a tensor's entries printed as JSON text (see entries.h).
 */
#include "entries.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "numfmt.h"
#include "tensor_bytes.h"

/* The text of a tensor is position-local: entry i (i > 0) is preceded by
 * "," inside a row, or by "]"·c + "," + "["·c when it starts a new row and c
 * levels close (c = how many of the inner-block sizes divide i). So any run
 * of entries can be printed on its own, and a large tensor is printed by
 * several threads into separate buffers that are then joined. */

enum {
    CHUNK = 4096,           /* entries per buffer reservation */
    PARALLEL_MIN = 1 << 15, /* entries worth a second thread */
    PRINT_THREADS_MAX = 4
};

typedef struct {
    const api_tensor_entries *e;
    size_t begin, end; /* entries [begin, end) */
    api_buf out;       /* a helper thread's own buffer */
    int rc;
} span;

static int put_span(api_buf *out, const span *s) {
    const api_tensor_entries *e = s->e;
    size_t row = e->depth ? e->inner[e->depth - 1] : (size_t)-1;
    size_t next = s->begin == 0 ? row : (s->begin + row - 1) / row * row;
    if (!e->depth)
        next = (size_t)-1;
    size_t per = API_NUM_MAX + 1 + 2 * e->depth;
    for (size_t start = s->begin; start < s->end; start += CHUNK) {
        size_t end = s->end - start > CHUNK ? start + CHUNK : s->end;
        if (api_buf_reserve(out, (end - start) * per) != 0)
            return 0; /* out->failed tells the caller */
        char *w = out->data + out->len;
        for (size_t i = start; i < end; i++) {
            if (i == next) {
                size_t levels = 1;
                while (levels < e->depth &&
                       i % e->inner[e->depth - 1 - levels] == 0)
                    levels++;
                memset(w, ']', levels);
                w += levels;
                *w++ = ',';
                memset(w, '[', levels);
                w += levels;
                next += row;
            } else if (i) {
                *w++ = ',';
            }
            double v = e->fp32 ? (double)(float)e->data[i] : e->data[i];
            if (!isfinite(v)) {
                if (e->nan_as_null && isnan(v)) {
                    memcpy(w, "null", 4);
                    w += 4;
                    continue;
                }
                out->len = (size_t)(w - out->data);
                out->data[out->len] = '\0';
                return -1;
            }
            size_t len = api_num_format(w, v, e->precision);
            if (*w == 'n') { /* rounding to `precision` digits overflowed */
                out->len = (size_t)(w - out->data);
                out->data[out->len] = '\0';
                return -1;
            }
            w += len;
        }
        out->len = (size_t)(w - out->data);
        out->data[out->len] = '\0';
    }
    return 0;
}

static void *put_span_thread(void *arg) {
    span *s = arg;
    s->rc = put_span(&s->out, s);
    return NULL;
}

/* Entries [begin, end) as raw bytes: a copy, or a conversion to float,
 * well under the cost of sending them. */
static int put_bytes(api_buf *out, const api_tensor_entries *e, size_t begin,
                     size_t end) {
    api_datatype dt = (api_datatype)e->bytes_type;
    size_t n = (end - begin) * api_datatype_size(dt);
    if (api_buf_reserve(out, n) != 0)
        return 0; /* out->failed tells the caller */
    api_bytes_write((unsigned char *)out->data + out->len, e->data + begin,
                    end - begin, dt);
    out->len += n;
    out->data[out->len] = '\0';
    return 0;
}

int api_tensor_print(api_buf *out, const api_tensor_entries *e, size_t begin,
                     size_t end) {
    if (e->bytes_type)
        return put_bytes(out, e, begin, end);
    span parts[PRINT_THREADS_MAX];
    size_t n = 1, count = end - begin;
    if (count >= PARALLEL_MIN) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus > PRINT_THREADS_MAX ? PRINT_THREADS_MAX
            : cpus > 1               ? (size_t)cpus
                                     : 1;
    }
    for (size_t t = 0; t < n; t++) {
        span *s = &parts[t];
        memset(s, 0, sizeof *s);
        s->e = e;
        s->begin = begin + count / n * t;
        s->end = t + 1 == n ? end : begin + count / n * (t + 1);
    }
    /* The helpers' buffers come from this thread, so that their memory
     * returns to this thread's heap instead of each helper's own (the
     * heap keeps freed memory, server/main.c); put_span then finds room
     * and allocates nothing. */
    size_t per = API_NUM_MAX + 1 + 2 * e->depth;
    for (size_t t = 1; t < n; t++)
        api_buf_reserve(&parts[t].out, (parts[t].end - parts[t].begin) * per);
    pthread_t threads[PRINT_THREADS_MAX];
    int started[PRINT_THREADS_MAX] = {0};
    for (size_t t = 1; t < n; t++)
        started[t] =
            pthread_create(&threads[t], NULL, put_span_thread, &parts[t]) == 0;
    int rc = put_span(out, &parts[0]);
    for (size_t t = 1; t < n; t++) {
        if (started[t])
            pthread_join(threads[t], NULL);
        else
            parts[t].rc = put_span(&parts[t].out, &parts[t]);
        if (parts[t].out.failed)
            out->failed = 1;
        if (rc == 0 && parts[t].rc != 0)
            rc = -1;
        if (rc == 0)
            api_buf_append(out, parts[t].out.data, parts[t].out.len);
        api_buf_free(&parts[t].out);
    }
    return rc;
}
