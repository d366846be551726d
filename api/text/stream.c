/*
 * stream.c — holes in a response buffer, filled as the body is read (see
 * stream.h).
 */
#include "stream.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numfmt.h"
#include "tensor_bytes.h"

/* Entries per block, the unit one thread prints at a time: about 600 KB
 * of text at most, so the first bytes leave soon and the blocks printed
 * ahead stay small beside the tensors. Below api_tensor_print's threshold
 * for a second thread: the stream's own printer is that second thread. */
#define BLOCK_ENTRIES ((size_t)1 << 14)
/* Blocks a printer may be ahead of the block being sent. */
#define AHEAD 6

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

enum { SLOT_FREE, SLOT_PRINTING, SLOT_DONE };

typedef struct {
    api_buf text;
    int state; /* SLOT_* */
    int rc;    /* print_block's */
} slot;

/* A second thread that prints blocks ahead while the reader sends, so that
 * printing (most of a large answer's cost) overlaps sending and uses two
 * cores. Blocks are taken in order by whichever thread comes first: the
 * reader prints the block it needs itself when the printer has not taken
 * it, and while the printer is still at that block the reader prints a
 * later one. At most AHEAD blocks wait, each in its slot. On the large dot
 * answer (25.6 MB) this took the request from 98 to 77 ms (best of 20,
 * the whole refill printed on two threads, then sent, before).
 *
 * Holes of raw bytes (the binary tensor data extension) are not printed
 * in blocks: their entries are written straight into the reader's buffer,
 * a copy (FP64) or a conversion (FP32) that costs less than handing a
 * block over, so blocks count the holes of text only. */
typedef struct {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a slot is done, or the reader took a block */
    size_t claimed;    /* blocks [0, claimed) are taken by a printer */
    size_t taken;      /* blocks [0, taken) are taken by the reader */
    int stop;          /* the stream is being freed */
    slot ring[AHEAD];  /* the printer prints block b into ring[b % AHEAD] */
} printer;

struct api_stream {
    api_buf text;            /* the answer without the holes' entries */
    struct api_holes *holes; /* taken from the buffer */
    size_t blocks;           /* blocks over the holes of text, in order */
    size_t text_pos;         /* next text byte to send */
    size_t hole_i;           /* next hole */
    size_t entry;            /* next entry of that hole */
    size_t entry_byte;       /* bytes of that entry sent (raw bytes) */
    size_t block;            /* index of the next block */
    api_buf pending;         /* printed, not yet sent */
    size_t pending_pos;
    printer *printer; /* NULL: the reader prints every block */
    int printer_tried;
};

/* How the buffer itself releases or frees its holes (buf.h). */
static const api_holes_ops holes_ops = {api_stream_flatten,
                                        api_stream_holes_free};

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
    out->holes_ops = &holes_ops;
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
    for (size_t i = 0; s->holes && i < s->holes->n; i++)
        if (!s->holes->v[i].e.bytes_type)
            s->blocks +=
                (s->holes->v[i].e.count + BLOCK_ENTRIES - 1) / BLOCK_ENTRIES;
    return s;
}

long long api_stream_length(const api_stream *s) {
    if (s == NULL)
        return -1;
    unsigned long long len = s->text.len;
    for (size_t i = 0; s->holes && i < s->holes->n; i++) {
        const api_tensor_entries *e = &s->holes->v[i].e;
        if (!e->bytes_type) /* text: its length is known once printed */
            return -1;
        len += e->count * api_datatype_size((api_datatype)e->bytes_type);
    }
    return (long long)len;
}

size_t api_stream_held_bytes(const api_stream *s) {
    if (s == NULL)
        return 0;
    size_t bytes = s->text.cap + sizeof *s;
    if (s->holes != NULL)
        bytes += (size_t)(s->holes->hi - s->holes->lo) +
                 s->holes->cap * sizeof *s->holes->v;
    if (s->blocks == 0) /* raw bytes only: nothing printed ahead */
        return bytes;
    /* the blocks printed ahead and the one being sent, at their largest */
    return bytes + (AHEAD + 1) * BLOCK_ENTRIES * (API_NUM_MAX + 1 + 2 * 8);
}

/* Print block b: entries of one hole of text, BLOCK_ENTRIES of them but
 * the last. */
static int print_block(api_buf *out, const struct api_holes *h, size_t b) {
    for (size_t i = 0; i < h->n; i++) {
        const api_tensor_entries *e = &h->v[i].e;
        if (e->bytes_type)
            continue;
        size_t n = (e->count + BLOCK_ENTRIES - 1) / BLOCK_ENTRIES;
        if (b < n) {
            size_t begin = b * BLOCK_ENTRIES;
            size_t end = e->count - begin > BLOCK_ENTRIES
                             ? begin + BLOCK_ENTRIES
                             : e->count;
            out->len = 0;
            int rc = api_tensor_print(out, e, begin, end);
            return rc != 0 || out->failed ? -1 : 0;
        }
        b -= n;
    }
    return -1;
}

/* Room for one block's text, so that printing allocates nothing. */
static size_t block_bytes(const struct api_holes *h) {
    size_t depth = 0;
    for (size_t i = 0; i < h->n; i++)
        if (h->v[i].e.depth > depth)
            depth = h->v[i].e.depth;
    return BLOCK_ENTRIES * (API_NUM_MAX + 1 + 2 * depth);
}

/* Print block c (claimed) into its slot and mark it done; p->mu is held
 * on entry and on return. */
static void print_slot(api_stream *s, printer *p, size_t c) {
    slot *sl = &p->ring[c % AHEAD];
    sl->state = SLOT_PRINTING;
    pthread_mutex_unlock(&p->mu);
    int rc = print_block(&sl->text, s->holes, c);
    pthread_mutex_lock(&p->mu);
    sl->rc = rc;
    sl->state = SLOT_DONE;
    pthread_cond_broadcast(&p->cv);
}

static void *printer_main(void *arg) {
    api_stream *s = arg;
    printer *p = s->printer;
    pthread_mutex_lock(&p->mu);
    while (!p->stop && p->claimed < s->blocks) {
        size_t b = p->claimed;
        if (b >= p->taken + AHEAD) { /* its slot still holds block b − AHEAD */
            pthread_cond_wait(&p->cv, &p->mu);
            continue;
        }
        p->claimed++;
        print_slot(s, p, b);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void printer_free(printer *p) {
    for (int i = 0; i < AHEAD; i++)
        api_buf_free(&p->ring[i].text);
    free(p);
}

/* Start s's printer when there are blocks to share and a core to share
 * them with. The buffers are allocated here, on the reader's thread, so
 * that their memory returns to its heap (the heap keeps freed memory,
 * server/main.c). Without a printer the reader prints every block. */
static void printer_start(api_stream *s) {
    s->printer_tried = 1;
    size_t bytes = block_bytes(s->holes);
    if (api_buf_reserve(&s->pending, bytes) != 0)
        return;
    if (s->blocks < 2 || sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return;
    printer *p = calloc(1, sizeof *p);
    if (!p)
        return;
    for (int i = 0; i < AHEAD; i++)
        if (api_buf_reserve(&p->ring[i].text, bytes) != 0) {
            printer_free(p);
            return;
        }
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        printer_free(p);
        return;
    }
    if (pthread_cond_init(&p->cv, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        printer_free(p);
        return;
    }
    s->printer = p;
    if (pthread_create(&p->thread, NULL, printer_main, s) != 0) {
        s->printer = NULL;
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        printer_free(p);
    }
}

static void printer_stop(api_stream *s) {
    printer *p = s->printer;
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    printer_free(p);
    s->printer = NULL;
}

/* Block b (the next in order) into s->pending: printed here when no
 * printer has taken it, else the printer's text once it is done; while
 * the printer is still at it, the reader prints a later block if the
 * window has room, so that both threads print. */
static int take_block(api_stream *s, size_t b) {
    printer *p = s->printer;
    if (!p)
        return print_block(&s->pending, s->holes, b);
    int rc;
    pthread_mutex_lock(&p->mu);
    if (p->claimed == b) {
        p->claimed++;
        pthread_mutex_unlock(&p->mu);
        rc = print_block(&s->pending, s->holes, b);
        pthread_mutex_lock(&p->mu);
    } else {
        slot *sl = &p->ring[b % AHEAD];
        while (sl->state != SLOT_DONE) {
            if (p->claimed < s->blocks && p->claimed < b + AHEAD)
                print_slot(s, p, p->claimed++);
            else
                pthread_cond_wait(&p->cv, &p->mu);
        }
        api_buf sent = s->pending; /* its room goes back to the slot */
        s->pending = sl->text;
        sl->text = sent;
        sl->state = SLOT_FREE;
        rc = sl->rc;
    }
    p->taken = b + 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return rc;
}

/* Fill s->pending with the next piece: text up to the next hole, or the
 * next range of that hole's entries. Returns 0, 1 at the end, -1 when
 * memory runs out. A hole of raw bytes leaves pending empty: the reader
 * writes its entries itself (put_raw). */
static int refill(api_stream *s) {
    s->pending.len = 0;
    s->pending_pos = 0;
    const struct api_holes *h = s->holes;
    while (s->hole_i < h->n) {
        const hole *o = &h->v[s->hole_i];
        if (s->text_pos < o->at)
            return 0; /* text comes first; read straight from s->text */
        if (s->entry < o->e.count && o->e.bytes_type)
            return 0;
        if (s->entry < o->e.count) {
            if (!s->printer_tried)
                printer_start(s);
            if (take_block(s, s->block++) != 0)
                return -1; /* entries were checked when the hole was made */
            s->entry = o->e.count - s->entry > BLOCK_ENTRIES
                           ? s->entry + BLOCK_ENTRIES
                           : o->e.count;
            return 0;
        }
        s->hole_i++;
        s->entry = 0;
    }
    return s->text_pos < s->text.len ? 0 : 1;
}

/* The next at most room bytes of the raw-bytes hole e into dst, from
 * entry s->entry (s->entry_byte of it sent): whole entries written in
 * place, an entry cut by either end of dst through a copy of its bytes.
 * Returns the bytes written (> 0 while entries are left). */
static size_t put_raw(api_stream *s, const api_tensor_entries *e, char *dst,
                      size_t room) {
    api_datatype dt = (api_datatype)e->bytes_type;
    size_t size = api_datatype_size(dt), done = 0;
    unsigned char one[8];
    if (s->entry_byte > 0) { /* the rest of an entry begun before */
        api_bytes_write(one, e->data + s->entry, 1, dt);
        size_t n = size - s->entry_byte < room ? size - s->entry_byte : room;
        memcpy(dst, one + s->entry_byte, n);
        done = n;
        s->entry_byte += n;
        if (s->entry_byte < size)
            return done;
        s->entry++;
        s->entry_byte = 0;
    }
    size_t whole = (room - done) / size;
    if (whole > e->count - s->entry)
        whole = e->count - s->entry;
    api_bytes_write((unsigned char *)dst + done, e->data + s->entry, whole, dt);
    s->entry += whole;
    done += whole * size;
    if (done < room && s->entry < e->count) { /* the start of the next */
        api_bytes_write(one, e->data + s->entry, 1, dt);
        s->entry_byte = room - done;
        memcpy(dst + done, one, s->entry_byte);
        done = room;
    }
    return done;
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
        if (s->hole_i < s->holes->n) {
            const api_tensor_entries *e = &s->holes->v[s->hole_i].e;
            if (e->bytes_type && s->entry < e->count) {
                done += put_raw(s, e, dst + done, max - done);
                continue;
            }
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
    printer_stop(s);
    api_buf_free(&s->text);
    holes_free(s->holes);
    api_buf_free(&s->pending);
    free(s);
}
