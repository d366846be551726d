/*
 * fastpath_scan.c — the fast path's scan of a body (see fastpath.h): the
 * listed paths ("request/queries", "inputs/<any>/data") matched against
 * the members and elements met on the way, the numeric arrays at their
 * ends read (fastpath_array.c), an array that a repeated member name
 * hides from jansson dropped again, and the text jansson gets written
 * with a placeholder string in place of each array read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fastpath.h"
#include "fastpath_internal.h"

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

typedef struct fastpath_region {
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
        if (api_fastpath_skip_string(c, &escaped))
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
    if (mask_any(&full) && at(c, '[') &&
        api_fastpath_read_array(sc->fp, c) == 0) {
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
    return api_fastpath_skip_value(c);
}

long api_fastpath_scan(api_fastpath *fp, const char *const *fields,
                       const char *body, size_t len, region **regions) {
    path_set set;
    parse_paths(&set, fields);
    cursor c = {body, len, 0};
    scanner sc = {fp, &set, NULL, 0, 0, 0, 0};
    path_mask all = {{0}};
    for (size_t i = 0; i < set.n; i++)
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

char *api_fastpath_substitute(const char *body, size_t len,
                              const region *regions, size_t n,
                              unsigned long long serial, size_t *text_len) {
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
