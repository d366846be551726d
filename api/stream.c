/*
 * stream.c — holes in a response buffer, filled as the body is read (see
 * stream.h).
 */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

/* Entries printed per refill: enough for api_tensor_print to use every
 * core, little enough (about 3 MB of text) to stay small beside the
 * tensors. */
#define REFILL_ENTRIES ((size_t)1 << 17)

typedef struct {
    size_t at; /* offset in the text where the entries go */
    api_tensor_entries e;
} hole;

struct api_holes {
    const unsigned char *lo, *hi; /* holes may point into [lo, hi) */
    hole *v;
    size_t n, cap;
    void *kept; /* the arena allocation the holes point into */
};

struct api_stream {
    api_buf text;            /* the answer without the holes' entries */
    struct api_holes *holes; /* taken from the buffer */
    size_t text_pos;         /* next text byte to send */
    size_t hole_i;           /* next hole */
    size_t entry;            /* next entry of that hole */
    api_buf pending;         /* printed, not yet sent */
    size_t pending_pos;
};

void api_stream_allow(api_buf *out, const api_arena *arena,
                      const api_request *req) {
    if (!req || !req->stream_ok || !arena->base || out->holes)
        return;
    struct api_holes *h = calloc(1, sizeof *h);
    if (!h)
        return; /* then everything is printed at once */
    h->lo = arena->base;
    h->hi = arena->base + arena->slots * 8;
    out->holes = h;
}

int api_stream_may_defer(const api_buf *out, const double *data, size_t count) {
    const struct api_holes *h = out->holes;
    if (!h || out->failed)
        return 0;
    const unsigned char *p = (const unsigned char *)data;
    return p >= h->lo && p < h->hi &&
           count <= (size_t)(h->hi - p) / sizeof(double);
}

int api_stream_defer(api_buf *out, const api_tensor_entries *e) {
    struct api_holes *h = out->holes;
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 8;
        hole *v = realloc(h->v, cap * sizeof *v);
        if (!v) {
            out->failed = 1;
            return -1;
        }
        h->v = v;
        h->cap = cap;
    }
    h->v[h->n++] = (hole){out->len, *e};
    return 0;
}

int api_stream_has_holes(const api_buf *out) {
    return out->holes && out->holes->n > 0;
}

void api_stream_hand_over(api_buf *out, api_arena *arena) {
    if (api_stream_has_holes(out) && !out->holes->kept) {
        out->holes->kept = arena->base;
        memset(arena, 0, sizeof *arena);
        return;
    }
    api_arena_free(arena);
}

static void holes_free(struct api_holes *h) {
    if (!h)
        return;
    free(h->v);
    free(h->kept);
    free(h);
}

void api_stream_holes_free(api_buf *out) {
    holes_free(out->holes);
    out->holes = NULL;
}

int api_stream_flatten(api_buf *out) {
    struct api_holes *h = out->holes;
    out->holes = NULL;
    if (!h || h->n == 0) {
        holes_free(h);
        return 0;
    }
    api_buf flat = {0};
    size_t pos = 0;
    for (size_t i = 0; i < h->n && !out->failed; i++) {
        api_buf_append(&flat, out->data + pos, h->v[i].at - pos);
        pos = h->v[i].at;
        if (api_tensor_print(&flat, &h->v[i].e, 0, h->v[i].e.count) != 0)
            flat.failed = 1; /* checked when the hole was made */
    }
    if (!out->failed)
        api_buf_append(&flat, out->data + pos, out->len - pos);
    int failed = out->failed || flat.failed;
    holes_free(h);
    free(out->data);
    *out = flat;
    if (failed) {
        api_buf_free(out);
        out->failed = 1;
        return -1;
    }
    return 0;
}

api_stream *api_stream_take(api_buf *out) {
    api_stream *s = calloc(1, sizeof *s);
    if (!s) {
        api_buf_free(out);
        return NULL;
    }
    s->holes = out->holes;
    out->holes = NULL;
    s->text = *out;
    memset(out, 0, sizeof *out);
    return s;
}

/* Fill s->pending with the next piece: text up to the next hole, or the
 * next range of that hole's entries. Returns 0, 1 at the end, -1 when
 * memory runs out. */
static int refill(api_stream *s) {
    s->pending.len = 0;
    s->pending_pos = 0;
    const struct api_holes *h = s->holes;
    while (s->hole_i < h->n) {
        const hole *o = &h->v[s->hole_i];
        if (s->text_pos < o->at)
            return 0; /* text comes first; read straight from s->text */
        if (s->entry < o->e.count) {
            size_t end = o->e.count - s->entry > REFILL_ENTRIES
                             ? s->entry + REFILL_ENTRIES
                             : o->e.count;
            if (api_tensor_print(&s->pending, &o->e, s->entry, end) != 0 ||
                s->pending.failed)
                return -1; /* entries were checked when the hole was made */
            s->entry = end;
            return 0;
        }
        s->hole_i++;
        s->entry = 0;
    }
    return s->text_pos < s->text.len ? 0 : 1;
}

ssize_t api_stream_read(api_stream *s, char *dst, size_t max) {
    size_t done = 0;
    while (done < max) {
        if (s->pending_pos < s->pending.len) {
            size_t n = s->pending.len - s->pending_pos;
            n = n < max - done ? n : max - done;
            memcpy(dst + done, s->pending.data + s->pending_pos, n);
            s->pending_pos += n;
            done += n;
            continue;
        }
        /* text up to the next hole (or the end) */
        size_t stop = s->text.len;
        if (s->hole_i < s->holes->n)
            stop = s->holes->v[s->hole_i].at;
        if (s->text_pos < stop) {
            size_t n = stop - s->text_pos;
            n = n < max - done ? n : max - done;
            memcpy(dst + done, s->text.data + s->text_pos, n);
            s->text_pos += n;
            done += n;
            continue;
        }
        int rc = refill(s);
        if (rc < 0)
            return -1;
        if (rc > 0)
            break;
    }
    return (ssize_t)done;
}

void api_stream_free(api_stream *s) {
    if (!s)
        return;
    api_buf_free(&s->text);
    holes_free(s->holes);
    api_buf_free(&s->pending);
    free(s);
}
