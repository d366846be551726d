/*
 * fastpath.c — numeric arrays of tensor fields read without jansson (see
 * fastpath.h). One pass over the root object's members: each value is
 * either read as a numeric array (a listed field) or skipped by bracket
 * matching; then the body minus those arrays goes to jansson.
 *
 * Why the answer cannot differ from jansson's on the original body: every
 * replaced region is a complete, valid JSON array sitting where jansson
 * expects a value (strings are tokenised exactly, so the scan agrees with
 * jansson on every valid prefix), and a string is a valid value there too;
 * the text around it is unchanged. So the new text parses iff the
 * original does, to the same document except those values. When it does
 * not parse, the original body is parsed again for jansson's own error.
 * A placeholder is a string: NUL, the load's serial number, '.', the
 * array's index. The fast path is not taken when any string of the body
 * holds \u0000, so no client string can pass for one; the serial keeps
 * the placeholders of nested loads (a request inside a request) apart.
 */
#include "fastpath.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "big_integers.h"
#include "json_tree.h"
#include "numparse.h"
#include "tensor_bytes.h"

static atomic_int enabled = 1;
static atomic_ullong serials;

/* The innermost active api_fastpath of this thread. */
static _Thread_local const api_fastpath *current;

void api_fastpath_enable(int on) {
    atomic_store(&enabled, on != 0);
}

/* ------------------------------------------------------------ scanning */

typedef struct {
    const char *s;
    size_t len, pos;
} cursor;

/* RFC 8259 whitespace: space, tab, line feed, carriage return. */
static void skip_ws_run(cursor *c) {
    while (c->pos < c->len) {
        char ch = c->s[c->pos];
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
            break;
        c->pos++;
    }
}

/* Past any whitespace; inline for the usual case of none (compact JSON,
 * between every two numbers). */
static inline void skip_ws(cursor *c) {
    if (c->pos < c->len && (unsigned char)c->s[c->pos] > ' ')
        return;
    skip_ws_run(c);
}

static int at(const cursor *c, char ch) {
    return c->pos < c->len && c->s[c->pos] == ch;
}

/* Past the string that starts at the cursor's '"'. *escaped is set when it
 * holds a backslash. Returns 0, or -1 when it does not end, or when it
 * holds \u0000 (a client string that could pass for a placeholder). */
static int skip_string(cursor *c, int *escaped) {
    const char *s = c->s;
    *escaped = 0;
    for (size_t i = c->pos + 1; i < c->len; i++) {
        if (s[i] == '"') {
            c->pos = i + 1;
            return 0;
        }
        if (s[i] != '\\')
            continue;
        *escaped = 1;
        if (i + 6 <= c->len && !memcmp(s + i + 1, "u0000", 5))
            return -1;
        i++; /* the escaped character: never the closing quote */
    }
    return -1;
}

/* Past one value of any kind, by bracket matching; no validation (jansson
 * does that). Returns 0, or -1 at the end of the text or on \u0000. */
static int skip_value(cursor *c) {
    size_t depth = 0;
    int escaped;
    while (c->pos < c->len) {
        char ch = c->s[c->pos];
        if (ch == '"') {
            if (skip_string(c, &escaped))
                return -1;
            if (depth == 0)
                return 0;
        } else if (ch == '[' || ch == '{') {
            depth++;
            c->pos++;
        } else if (ch == ']' || ch == '}') {
            if (depth == 0)
                return 0; /* an empty value: jansson reports it */
            c->pos++;
            if (--depth == 0)
                return 0;
        } else if (depth == 0 && (ch == ',' || ch == ' ' || ch == '\t' ||
                                  ch == '\n' || ch == '\r')) {
            return 0; /* the end of a number, true, false or null */
        } else {
            c->pos++;
        }
    }
    return -1;
}

static int push_number(api_fastpath *fp, double x) {
    if (fp->n_numbers == fp->cap_numbers) {
        size_t cap = fp->cap_numbers ? 2 * fp->cap_numbers : 64;
        double *grown = realloc(fp->numbers, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        fp->numbers = grown;
        fp->cap_numbers = cap;
    }
    fp->numbers[fp->n_numbers++] = x;
    return 0;
}

/* Read the array at the cursor ('[') when it is a plain numeric array:
 * numbers (those jansson accepts: within int64 or a finite double) at one
 * depth, no empty rows, every row as long as the first at its depth.
 * Integers within 2^53 only, so that each is exactly its double.
 * Returns 0 with the cursor past ']' and the array appended to fp, or -1
 * (cursor anywhere, fp unchanged) for anything else. */
static int read_array(api_fastpath *fp, cursor *c) {
    size_t shape[API_FASTPATH_RANK_MAX] = {0}, count[API_FASTPATH_RANK_MAX];
    size_t depth = 0, rank = 0, first = fp->n_numbers;
    int reals = 0;
    for (;;) {
        /* an element: '[' or a number */
        if (at(c, '[')) {
            if (depth == API_FASTPATH_RANK_MAX || (rank && depth >= rank))
                goto fail;
            count[depth++] = 0;
            c->pos++;
            skip_ws(c);
            continue;
        }
        if (rank == 0)
            rank = depth;
        else if (depth != rank)
            goto fail;
        double x;
        size_t used;
        api_num_kind kind =
            api_num_parse(&x, &used, c->s + c->pos, c->len - c->pos);
        /* an integer of 2^53 or more is left to jansson, which keeps it exact
         * (json_integer): every integer read here is its double */
        if ((kind != API_NUM_INTEGER && kind != API_NUM_REAL) ||
            (kind == API_NUM_INTEGER && fabs(x) >= 9007199254740992.0) ||
            push_number(fp, x))
            goto fail;
        if (kind == API_NUM_REAL)
            reals = 1;
        c->pos += used;
        count[depth - 1]++;
        /* after an element: ',' or the ends of rows */
        for (;;) {
            skip_ws(c);
            if (at(c, ',')) {
                c->pos++;
                skip_ws(c);
                break;
            }
            if (!at(c, ']'))
                goto fail;
            size_t level = depth - 1, n = count[level];
            if (shape[level] == 0)
                shape[level] = n; /* the first row at this depth */
            else if (n != shape[level])
                goto fail;
            c->pos++;
            if (--depth == 0) {
                api_fastpath_array a = {.rank = rank, .integers = !reals};
                memcpy(a.shape, shape, sizeof shape);
                a.count = fp->n_numbers - first;
                if (fp->n_arrays == fp->cap_arrays) {
                    size_t cap = fp->cap_arrays ? 2 * fp->cap_arrays : 8;
                    api_fastpath_array *grown =
                        realloc(fp->arrays, cap * sizeof *grown);
                    if (grown == NULL)
                        goto fail;
                    fp->arrays = grown;
                    fp->cap_arrays = cap;
                }
                a.first = first; /* data is set when all are in */
                fp->arrays[fp->n_arrays++] = a;
                return 0;
            }
            count[depth - 1]++;
        }
    }
fail:
    fp->n_numbers = first;
    return -1;
}

/* ------------------------------------------------------------- loading */

/* The fields as paths: up to PATHS_MAX of them, each up to PATH_MAX_DEPTH
 * segments of raw (unescaped) member names, "*" for any member or index. */
#define PATH_MAX_DEPTH 4
#define PATHS_MAX 256

typedef struct {
    const char *segment[PATH_MAX_DEPTH];
    size_t length[PATH_MAX_DEPTH];
    size_t depth;
} path;

typedef struct {
    path paths[PATHS_MAX];
    size_t n;
} path_set;

/* Split fields into set; a path too deep, or beyond PATHS_MAX, is left out
 * (its arrays go to jansson). */
static void parse_paths(path_set *set, const char *const *fields) {
    set->n = 0;
    for (; *fields && set->n < PATHS_MAX; fields++) {
        path *p = &set->paths[set->n];
        const char *s = *fields;
        p->depth = 0;
        for (;;) {
            size_t n = strcspn(s, "/");
            if (p->depth == PATH_MAX_DEPTH) {
                p->depth = 0;
                break;
            }
            p->segment[p->depth] = s;
            p->length[p->depth++] = n;
            if (s[n] == '\0')
                break;
            s += n + 1;
        }
        if (p->depth > 0)
            set->n++;
    }
}

/* bit i: paths[i] matches so far */
#define MASK_WORDS (PATHS_MAX / 64)
typedef struct {
    uint64_t w[MASK_WORDS];
} path_mask;

static int mask_any(const path_mask *m) {
    for (size_t k = 0; k < MASK_WORDS; k++)
        if (m->w[k])
            return 1;
    return 0;
}

/* The paths of live whose segment at level matches the member name
 * key[0 .. n) (raw text; an escaped name matches only "*"), or, key NULL,
 * an array index (only "*"). */
static path_mask step(const path_set *set, path_mask live, size_t level,
                      const char *key, size_t n, int escaped) {
    path_mask next = {{0}};
    for (size_t k = 0; k < MASK_WORDS; k++)
        for (uint64_t bits = live.w[k]; bits; bits &= bits - 1) {
            size_t i = 64 * k + (size_t)__builtin_ctzll(bits);
            const path *p = &set->paths[i];
            if (level >= p->depth)
                continue;
            const char *seg = p->segment[level];
            size_t len = p->length[level];
            if ((len == 1 && seg[0] == '*') ||
                (key && !escaped && len == n && !memcmp(seg, key, n)))
                next.w[k] |= (uint64_t)1 << (i % 64);
        }
    return next;
}

/* The paths of live that end at level (full) or go on below it (deeper). */
static void split(const path_set *set, path_mask live, size_t level,
                  path_mask *full, path_mask *deeper) {
    memset(full, 0, sizeof *full);
    memset(deeper, 0, sizeof *deeper);
    for (size_t k = 0; k < MASK_WORDS; k++)
        for (uint64_t bits = live.w[k]; bits; bits &= bits - 1) {
            size_t i = 64 * k + (size_t)__builtin_ctzll(bits);
            uint64_t bit = (uint64_t)1 << (i % 64);
            if (set->paths[i].depth == level)
                full->w[k] |= bit;
            else
                deeper->w[k] |= bit;
        }
}

typedef struct {
    size_t start, end; /* the array's bytes in the body */
    size_t id;         /* the order it was read in */
    int dead;          /* a later member of its object has the same name */
} region;

typedef struct {
    api_fastpath *fp;
    const path_set *set;
    region *regions; /* in document order; regions[i] is fp->arrays[i] */
    size_t n, cap;
    size_t reads; /* arrays read so far: the next region's id */
    size_t dead;  /* regions marked dead, not yet dropped */
} scanner;

/* A repeated member name: jansson keeps the last value of each name, so an
 * earlier array of that name is never seen, and reading it would only hold
 * memory the tree estimate (json_tree.h) does not count — a body of one
 * small array repeated a million times would hold a million arrays here.
 * Such an array is dropped from what was read, and its text is left to
 * jansson, as any value that is not read: counted by the tree estimate
 * and discarded by jansson exactly as without the fast path. */

/* Drop the dead regions and their arrays and numbers, keeping the order
 * of the rest (their numbers move down, never up). */
static void drop_dead(scanner *sc) {
    api_fastpath *fp = sc->fp;
    size_t w = 0, numbers = 0;
    for (size_t i = 0; i < sc->n; i++) {
        if (sc->regions[i].dead)
            continue;
        api_fastpath_array a = fp->arrays[i];
        if (a.first != numbers)
            memmove(fp->numbers + numbers, fp->numbers + a.first,
                    a.count * sizeof *fp->numbers);
        a.first = numbers;
        numbers += a.count;
        fp->arrays[w] = a;
        sc->regions[w++] = sc->regions[i];
    }
    sc->n = fp->n_arrays = w;
    fp->n_numbers = numbers;
    sc->dead = 0;
}

/* Mark the region read as id dead: the last one is dropped at once (the
 * usual repetition, one member after another), others once they are as
 * many as the live ones, so that dropping costs O(1) per array read. */
static void mark_dead(scanner *sc, size_t id) {
    size_t lo = 0, hi = sc->n; /* ids ascend in document order */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sc->regions[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == sc->n || sc->regions[lo].id != id || sc->regions[lo].dead)
        return;
    if (lo == sc->n - 1) {
        sc->n--;
        sc->fp->n_arrays--;
        sc->fp->n_numbers = sc->fp->arrays[lo].first;
        return;
    }
    sc->regions[lo].dead = 1;
    sc->dead++;
    if (sc->dead > sc->n - sc->dead + 64)
        drop_dead(sc);
}

/* The members of one object that were read, by name, to find repeats. */
#define READ_MEMBERS_MAX 64
typedef struct {
    struct {
        size_t key, key_len; /* the raw name in the body */
        size_t id;           /* its array's region */
    } m[READ_MEMBERS_MAX];
    size_t n;
} read_members;

/* A member named key[0 .. key_len) of the object whose read members are
 * rm: when an earlier member of that name was read, it is dead (the
 * last value wins). Names compare as raw text: an escaped spelling of the
 * same name is not found, and then that array stays read (correct, only
 * not dropped). */
static void member_repeats(scanner *sc, read_members *rm, const char *s,
                           size_t key, size_t key_len) {
    for (size_t i = 0; i < rm->n; i++)
        if (rm->m[i].key_len == key_len &&
            !memcmp(s + rm->m[i].key, s + key, key_len)) {
            mark_dead(sc, rm->m[i].id);
            rm->m[i] = rm->m[--rm->n];
            return;
        }
}

static int scan_value(scanner *sc, cursor *c, path_mask live, size_t level);

/* The arrays one body may have read. Each costs about 160 bytes here (its
 * api_fastpath_array and region), twice that as capacity grows, and up to
 * 56 more in the placeholder text: more than jansson's own tree of "[1]".
 * So a body of a million tiny arrays (v2's inputs[*].data) would take
 * hundreds of MB before the tree gate could refuse it. A body's tensors
 * are far fewer (a 64-layer decoder's state_dict has 1,152, and /grade
 * with its gradients twice that), so past this many the fast path gives
 * up, and the body is jansson's alone, its tree counted and refused as
 * without the fast path: the answer is the same, and what reading held
 * is at most about 14 MiB (the capacities double up to the bound itself;
 * a 15.6 MB body of 1.2 million arrays now peaks 13 MB above its text). */
#define READS_MAX ((size_t)1 << 16)

/* The members of the object at the cursor ('{'), each value with the
 * paths its name continues. */
static int scan_object(scanner *sc, cursor *c, path_mask live, size_t level) {
    read_members rm;
    rm.n = 0;
    c->pos++;
    skip_ws(c);
    if (at(c, '}')) {
        c->pos++;
        return 0;
    }
    for (;;) {
        if (!at(c, '"'))
            return -1;
        size_t key = c->pos + 1;
        int escaped;
        if (skip_string(c, &escaped))
            return -1;
        size_t key_len = c->pos - 1 - key;
        skip_ws(c);
        if (!at(c, ':'))
            return -1;
        c->pos++;
        skip_ws(c);
        path_mask next =
            step(sc->set, live, level, c->s + key, key_len, escaped);
        member_repeats(sc, &rm, c->s, key, key_len);
        size_t reads = sc->reads, value = c->pos;
        if (scan_value(sc, c, next, level + 1))
            return -1;
        /* the value itself was read (not arrays inside it, and not an
         * array inside it that a repeated name there has dropped again) */
        if (sc->reads == reads + 1 && sc->n > 0 &&
            sc->regions[sc->n - 1].id == reads &&
            sc->regions[sc->n - 1].start == value && rm.n < READ_MEMBERS_MAX) {
            rm.m[rm.n].key = key;
            rm.m[rm.n].key_len = key_len;
            rm.m[rm.n++].id = reads; /* the array just read */
        }
        skip_ws(c);
        if (at(c, ',')) {
            c->pos++;
            skip_ws(c);
            continue;
        }
        if (!at(c, '}'))
            return -1;
        c->pos++;
        return 0;
    }
}

/* The elements of the array at the cursor ('['), each with the paths whose
 * segment at level is "*". */
static int scan_array(scanner *sc, cursor *c, path_mask live, size_t level) {
    path_mask next = step(sc->set, live, level, NULL, 0, 0);
    c->pos++;
    skip_ws(c);
    if (at(c, ']')) {
        c->pos++;
        return 0;
    }
    for (;;) {
        if (scan_value(sc, c, next, level + 1))
            return -1;
        skip_ws(c);
        if (at(c, ',')) {
            c->pos++;
            skip_ws(c);
            continue;
        }
        if (!at(c, ']'))
            return -1;
        c->pos++;
        return 0;
    }
}

/* The value at the cursor, where the paths live have matched level
 * segments: read it when a path ends here and it is a numeric array; scan
 * its members or elements when a path goes deeper; else skip it. Returns
 * 0 with the cursor past the value, or -1 when the fast path does not
 * apply. The recursion is at most PATH_MAX_DEPTH deep: below every path,
 * values are skipped by bracket matching. */
static int scan_value(scanner *sc, cursor *c, path_mask live, size_t level) {
    path_mask full, deeper;
    split(sc->set, live, level, &full, &deeper);
    size_t start = c->pos;
    if (mask_any(&full) && at(c, '[') && sc->reads == READS_MAX)
        return -1;
    if (mask_any(&full) && at(c, '[') && read_array(sc->fp, c) == 0) {
        if (sc->n == sc->cap) {
            size_t cap = sc->cap ? 2 * sc->cap : 8;
            region *grown = realloc(sc->regions, cap * sizeof *grown);
            if (grown == NULL)
                return -1;
            sc->regions = grown;
            sc->cap = cap;
        }
        sc->regions[sc->n++] = (region){start, c->pos, sc->reads++, 0};
        return 0;
    }
    c->pos = start;
    if (mask_any(&deeper) && at(c, '{'))
        return scan_object(sc, c, deeper, level);
    if (mask_any(&deeper) && at(c, '['))
        return scan_array(sc, c, deeper, level);
    return skip_value(c);
}

/* Scan the body (an object) for the arrays at the paths of set, reading
 * them into fp and noting where they were. Returns the number of regions,
 * or -1 when the fast path does not apply (jansson gets the original
 * body). */
static long scan(api_fastpath *fp, const path_set *set, const char *body,
                 size_t len, region **regions) {
    cursor c = {body, len, 0};
    scanner sc = {fp, set, NULL, 0, 0, 0, 0};
    path_mask all = {{0}};
    for (size_t i = 0; i < set->n; i++)
        all.w[i / 64] |= (uint64_t)1 << (i % 64);
    skip_ws(&c);
    int rc = at(&c, '{') ? scan_object(&sc, &c, all, 0) : -1;
    if (sc.dead > 0)
        drop_dead(&sc);
    *regions = sc.regions;
    return rc ? -1 : (long)sc.n;
}

/* v in decimal at p; returns the end. */
static char *put_decimal(char *p, unsigned long long v) {
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    while (n > 0)
        *p++ = tmp[--n];
    return p;
}

/* The body with each region replaced by "\u0000<serial>.<index>". */
static char *substitute(const char *body, size_t len, const region *regions,
                        size_t n, unsigned long long serial, size_t *text_len) {
    size_t cap = len + 56 * n + 1, w = 0, from = 0;
    char *text = malloc(cap);
    if (text == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        memcpy(text + w, body + from, regions[i].start - from);
        w += regions[i].start - from;
        /* "\"\\u0000%llu.%zu\"" without snprintf's cost (a fifth of
         * the fast path's instructions on a small body) */
        char *p = text + w;
        memcpy(p, "\"\\u0000", 7);
        p = put_decimal(p + 7, serial);
        *p++ = '.';
        p = put_decimal(p, i);
        *p++ = '"';
        w = (size_t)(p - text);
        from = regions[i].end;
    }
    memcpy(text + w, body + from, len - from);
    w += len - from;
    *text_len = w;
    return text;
}

/* ------------------------------------------------- flat objects */

/* A small body is mostly jansson's lexer, about 150 instructions a byte:
 * half of a small request's time in the api. A text that is one object
 * whose members are strings, numbers, true, false, null or arrays of those
 * (so a small request once its arrays are placeholders, valid_lens
 * included) is built here instead, with the values jansson makes of it;
 * anything else is left to jansson. */

/* The string at c (its '"') when it holds printable ASCII and the escape
 * \u0000 alone (a placeholder's): its bytes, \u0000 as NUL, into out
 * (cap bytes). Returns the length, or -1 (jansson reads it). */
static long flat_string(cursor *c, char *out, size_t cap) {
    size_t n = 0;
    for (size_t i = c->pos + 1; i < c->len; i++) {
        unsigned char ch = (unsigned char)c->s[i];
        if (ch == '"') {
            c->pos = i + 1;
            return (long)n;
        }
        if (n == cap)
            return -1;
        if (ch == '\\') {
            if (i + 6 > c->len || memcmp(c->s + i + 1, "u0000", 5) != 0)
                return -1;
            out[n++] = '\0';
            i += 5;
        } else if (ch >= 0x20 && ch < 0x7F) {
            out[n++] = (char)ch;
        } else {
            return -1;
        }
    }
    return -1;
}

/* The number at c as jansson's lexer reads it: an integer literal (no
 * fraction, no exponent) is json_integer of strtoll, unless beyond int64;
 * any other is json_real of strtod, unless it overflows. NULL: jansson
 * reads it (and says what is wrong). */
static json_t *flat_number(cursor *c) {
    const char *s = c->s;
    size_t i = c->pos, n = c->len;
    int integer = 1;
    if (i < n && s[i] == '-')
        i++;
    if (i < n && s[i] == '0') {
        i++;
        if (i < n && s[i] >= '0' && s[i] <= '9')
            return NULL;
    } else if (i < n && s[i] >= '1' && s[i] <= '9') {
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    } else {
        return NULL;
    }
    if (i < n && s[i] == '.') {
        integer = 0;
        if (++i >= n || s[i] < '0' || s[i] > '9')
            return NULL;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        integer = 0;
        if (++i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || s[i] < '0' || s[i] > '9')
            return NULL;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    char text[64];
    size_t len = i - c->pos;
    if (len >= sizeof text)
        return NULL;
    memcpy(text, s + c->pos, len);
    text[len] = '\0';
    char *end;
    errno = 0;
    json_t *v;
    if (integer) {
        long long x = strtoll(text, &end, 10);
        v = errno == ERANGE ? NULL : json_integer(x);
    } else {
        double x = strtod(text, &end);
        v = (x == HUGE_VAL || x == -HUGE_VAL) && errno == ERANGE ? NULL
                                                                 : json_real(x);
    }
    if (v != NULL && end != text + len) { /* another locale's strtod */
        json_decref(v);
        v = NULL;
    }
    c->pos = i;
    return v;
}

/* The value at c: a string, number, true, false or null; NULL for
 * anything else (an object, an array, what jansson would refuse). */
static json_t *flat_value(cursor *c) {
    static const struct {
        const char *word;
        size_t len;
    } words[] = {{"true", 4}, {"false", 5}, {"null", 4}};
    if (c->pos >= c->len)
        return NULL;
    char ch = c->s[c->pos];
    if (ch == '"') {
        char buf[256];
        long n = flat_string(c, buf, sizeof buf);
        return n < 0 ? NULL : json_stringn(buf, (size_t)n);
    }
    if (ch == '-' || (ch >= '0' && ch <= '9'))
        return flat_number(c);
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        size_t n = words[w].len;
        if (c->len - c->pos < n || memcmp(c->s + c->pos, words[w].word, n))
            continue;
        /* jansson reads a whole run of letters as one word */
        if (c->pos + n < c->len && ((c->s[c->pos + n] | 0x20) >= 'a' &&
                                    (c->s[c->pos + n] | 0x20) <= 'z'))
            return NULL;
        c->pos += n;
        return w == 0 ? json_true() : w == 1 ? json_false() : json_null();
    }
    return NULL;
}

/* The array at c ('[') when its entries are such values (valid_lens):
 * json_array of them, as jansson makes it; else NULL. */
static json_t *flat_array(cursor *c) {
    json_t *a = json_array();
    if (a == NULL)
        return NULL;
    c->pos++;
    skip_ws(c);
    if (at(c, ']')) {
        c->pos++;
        return a;
    }
    for (;;) {
        json_t *v = flat_value(c);
        if (v == NULL || json_array_append_new(a, v) != 0)
            break;
        skip_ws(c);
        if (at(c, ']')) {
            c->pos++;
            return a;
        }
        if (!at(c, ','))
            break;
        c->pos++;
        skip_ws(c);
    }
    json_decref(a);
    return NULL;
}

/* text as jansson would parse it when it is such a flat object (flags:
 * JSON_DECODE_ANY and JSON_ALLOW_NUL at most), else NULL: the same
 * members in the same order, a repeated key's last value in its first
 * place, a key holding NUL refused. */
static json_t *load_flat(const char *text, size_t len, size_t flags) {
    if ((flags & ~(size_t)(JSON_DECODE_ANY | JSON_ALLOW_NUL)) != 0)
        return NULL;
    cursor c = {text, len, 0};
    skip_ws(&c);
    if (!at(&c, '{'))
        return NULL;
    c.pos++;
    json_t *obj = json_object();
    if (obj == NULL)
        return NULL;
    skip_ws(&c);
    if (at(&c, '}')) {
        c.pos++;
    } else {
        for (;;) {
            char key[256];
            long n = at(&c, '"') ? flat_string(&c, key, sizeof key - 1) : -1;
            if (n < 0 || memchr(key, '\0', (size_t)n) != NULL)
                goto give_up;
            key[n] = '\0';
            skip_ws(&c);
            if (!at(&c, ':'))
                goto give_up;
            c.pos++;
            skip_ws(&c);
            json_t *v = at(&c, '[') ? flat_array(&c) : flat_value(&c);
            if (v == NULL ||
                json_object_setn_new_nocheck(obj, key, (size_t)n, v) != 0)
                goto give_up;
            skip_ws(&c);
            if (at(&c, ',')) {
                c.pos++;
                skip_ws(&c);
                continue;
            }
            if (!at(&c, '}'))
                goto give_up;
            c.pos++;
            break;
        }
    }
    skip_ws(&c);
    if (c.pos == c.len)
        return obj;
give_up:
    json_decref(obj);
    return NULL;
}

/* json_loadb, once the gate admits the tree it would build; flat: a flat
 * object may be built without jansson's lexer (load_flat). */
static json_t *load_gated(api_fastpath *fp, const char *text, size_t len,
                          size_t flags, const api_tree_gate *gate,
                          json_error_t *error, int flat) {
    if (gate != NULL &&
        gate->admit(gate->ctx, api_json_tree_bytes(text, len)) != 0) {
        fp->refused = 1;
        memset(error, 0, sizeof *error);
        return NULL;
    }
    json_t *root = flat ? load_flat(text, len, flags) : NULL;
    if (root != NULL)
        return root;
    root = json_loadb(text, len, flags, error);
    if (root == NULL && api_json_error_is_big_integer(error)) {
        /* rare: read those literals as reals, as the contract asks */
        api_widening map;
        size_t wide_len;
        char *wide = api_json_widen_big_integers(text, len, &wide_len, &map);
        if (wide != NULL) {
            root = json_loadb(wide, wide_len, flags, error);
            if (root == NULL)
                api_widening_map_error(&map, error);
            api_widening_free(&map);
            free(wide);
        }
    }
    return root;
}

json_t *api_fastpath_load(api_fastpath *fp, const char *const *fields,
                          const char *body, size_t len, size_t flags,
                          const api_tree_gate *gate, json_error_t *error) {
    memset(fp, 0, sizeof *fp);
    if (!atomic_load(&enabled) || fields == NULL || !fields[0] ||
        !(flags & JSON_ALLOW_NUL) || body == NULL)
        return load_gated(fp, body ? body : "", len, flags, gate, error, 0);

    path_set set;
    parse_paths(&set, fields);
    region *regions = NULL;
    fp->cap_numbers = len / 16 + 16; /* most numbers take 16+ bytes */
    fp->numbers = malloc(fp->cap_numbers * sizeof *fp->numbers);
    long n = fp->numbers ? scan(fp, &set, body, len, &regions) : -1;
    json_t *root = NULL;
    if (n > 0) {
        size_t text_len;
        fp->serial = atomic_fetch_add(&serials, 1);
        fp->text =
            substitute(body, len, regions, (size_t)n, fp->serial, &text_len);
        if (fp->text)
            root = load_gated(fp, fp->text, text_len, flags, gate, error, 1);
    }
    free(regions);
    if (root == NULL && fp->refused) {
        api_fastpath_release(fp);
        fp->refused = 1;
        return NULL;
    }
    if (root == NULL) {
        api_fastpath_release(fp);
        return load_gated(fp, body, len, flags, gate, error, 1);
    }
    for (size_t i = 0; i < fp->n_arrays; i++)
        fp->arrays[i].data = fp->numbers + fp->arrays[i].first;
    free(fp->text); /* jansson copied what it kept */
    fp->text = NULL;
    fp->outer = current;
    fp->active = 1;
    current = fp;
    return root;
}

void api_fastpath_release(api_fastpath *fp) {
    if (fp->active)
        current = fp->outer;
    for (size_t i = 0; fp->adopted && i < fp->n_arrays; i++)
        json_decref((json_t *)fp->arrays[i].placeholder);
    free(fp->numbers);
    free(fp->arrays);
    free(fp->text);
    memset(fp, 0, sizeof *fp);
}

/* Decimal digits of s[*i ..) up to a byte that is not one; -1 when there
 * are none or too many. */
static int read_decimal(unsigned long long *v, const char *s, size_t n,
                        size_t *i) {
    size_t start = *i;
    *v = 0;
    for (; *i < n && s[*i] >= '0' && s[*i] <= '9'; (*i)++)
        *v = *v * 10 + (unsigned long long)(s[*i] - '0');
    return *i == start || *i - start > 19 ? -1 : 0;
}

size_t api_json_object_end(const char *body, size_t len) {
    cursor c = {body, len, 0};
    skip_ws(&c);
    if (c.pos >= len || body[c.pos] != '{' || skip_value(&c) != 0)
        return 0;
    return c.pos;
}

void api_fastpath_begin(api_fastpath *fp) {
    memset(fp, 0, sizeof *fp);
    fp->serial = atomic_fetch_add(&serials, 1);
    fp->outer = current;
    fp->active = 1;
    fp->adopted = 1;
    current = fp;
}

json_t *api_fastpath_adopt_bytes(api_fastpath *fp, const unsigned char *bytes,
                                 int bytes_type, size_t count) {
    if (fp->n_arrays == fp->cap_arrays) {
        size_t cap = fp->cap_arrays ? 2 * fp->cap_arrays : 8;
        api_fastpath_array *grown =
            realloc(fp->arrays, cap * sizeof *fp->arrays);
        if (grown == NULL)
            return NULL;
        fp->arrays = grown;
        fp->cap_arrays = cap;
    }
    /* the text says what it is to a reader that prints it; find() goes by
     * the value's address */
    json_t *placeholder = json_string("(binary tensor data)");
    if (placeholder == NULL)
        return NULL;
    api_fastpath_array *a = &fp->arrays[fp->n_arrays++];
    memset(a, 0, sizeof *a);
    a->rank = 1;
    a->shape[0] = count;
    a->count = count;
    a->integers = bytes_type == API_DT_INT64 || bytes_type == API_DT_INT32 ||
                  bytes_type == API_DT_BOOL;
    a->bytes = bytes;
    a->bytes_type = bytes_type;
    /* fp keeps a reference until it is released, so that no other value
     * takes the address while it resolves */
    a->placeholder = json_incref(placeholder);
    return placeholder;
}

double api_fastpath_at(const api_fastpath_array *fa, size_t i) {
    return fa->bytes ? api_bytes_at(fa->bytes, i, (api_datatype)fa->bytes_type)
                     : fa->data[i];
}

void api_fastpath_read(double *dst, const api_fastpath_array *fa) {
    if (fa->bytes)
        api_bytes_read(dst, fa->bytes, fa->count, (api_datatype)fa->bytes_type);
    else
        memcpy(dst, fa->data, fa->count * sizeof *dst);
}

const api_fastpath_array *api_fastpath_find(const json_t *v) {
    if (current == NULL || !json_is_string(v))
        return NULL;
    for (const api_fastpath *fp = current; fp != NULL; fp = fp->outer)
        for (size_t i = 0; fp->adopted && i < fp->n_arrays; i++)
            if (fp->arrays[i].placeholder == v)
                return &fp->arrays[i];
    const char *s = json_string_value(v);
    size_t n = json_string_length(v), i = 1;
    unsigned long long serial, index;
    if (n < 4 || s[0] != '\0' || read_decimal(&serial, s, n, &i) || i == n ||
        s[i++] != '.' || read_decimal(&index, s, n, &i) || i != n)
        return NULL;
    for (const api_fastpath *fp = current; fp != NULL; fp = fp->outer)
        if (fp->serial == serial)
            return index < fp->n_arrays ? &fp->arrays[index] : NULL;
    return NULL;
}
