/*
 * numbers_bench.c — nanoseconds per JSON number for attnd's parser
 * (api_num_parse) and printer (api_num_format, shortest) against the record
 * implementations (tests/bench/numbers_anchor.cc), interleaved in one
 * process on the same numbers:
 *   parse: the number texts of a request body, each read in place (the
 *          rest of the body after it, as the fast path reads it) by
 *          api_num_parse, fast_float::from_chars and strtod;
 *   print: the doubles of that body, and those of attnd's answer to it
 *          (api_handle in process: weights in [0, 1], outputs), printed by
 *          api_num_format, fmt (Dragonbox), std::to_chars (Ryu) and
 *          snprintf("%.17g");
 *   digits: the digit search alone on those doubles' nonzero magnitudes,
 *          attnd's Schubfach (api_num_shortest) against Dragonbox's
 *          (fmt's to_decimal), no text: the two methods without the
 *          layouts around them (fmt's formatting layer costs more than
 *          its digits).
 *   usage: numbers_bench [--samples N] NAME ROUTE BODY.json [NAME ROUTE ...]
 * Every sample times each method once over the whole set (repeated to at
 * least ~200,000 numbers), the methods taking turns, so that a change in the
 * machine's load hits them alike; the figures are the best and the median
 * sample (thread CPU time). Before timing, the doubles of every method are
 * compared: any parse that differs from strtod's bits, or any printed text
 * that is not the shortest (to_chars's digits) or does not read back, is
 * reported and makes the exit status 1.
 * Output: one "row ..." line of key=value figures per set and operation
 * (read by tests/bench/run.py), then a table.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "bench_io.h"
#include "numfmt.h"
#include "numfmt_shortest.h"
#include "numparse.h"

/* tests/bench/numbers_anchor.cc */
size_t anchor_fast_float(double *out, const char *s, const char *end);
size_t anchor_fmt(char *buf, double x);
size_t anchor_to_chars(char *buf, double x);
uint64_t anchor_dragonbox_digits(int *exponent, double x);

#define SAMPLES_DEFAULT 21
#define SLOW_SAMPLES 3        /* strtod and snprintf: context, not targets */
#define SAMPLE_NUMBERS 200000 /* numbers per sample at least */

static volatile double sink_double;
static volatile size_t sink_size;

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The offsets of the numbers in the JSON text s[0 .. len) (outside
 * strings), into *offs; returns their count. */
static size_t find_numbers(const char *s, size_t len, size_t **offs) {
    size_t n = 0, cap = 1024;
    size_t *o = malloc(cap * sizeof *o);
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            if (n == cap)
                o = realloc(o, (cap *= 2) * sizeof *o);
            o[n++] = i;
            while (i + 1 < len && strchr("0123456789+-.eE", s[i + 1]) &&
                   s[i + 1] != '\0')
                i++;
        }
    }
    *offs = o;
    return n;
}

/* ---------------------------------------------------------------- sets */

typedef struct {
    const char *s;
    size_t len;
    const size_t *offs;
    size_t n;
} text_set;

typedef struct {
    const double *xs;
    size_t n;
} double_set;

typedef double (*parse_pass)(const text_set *t);
typedef size_t (*print_pass)(const double_set *d, char *buf);

static double parse_attnd(const text_set *t) {
    double sum = 0;
    for (size_t i = 0; i < t->n; i++) {
        double x = 0;
        size_t used;
        size_t o = t->offs[i];
        api_num_parse(&x, &used, t->s + o, t->len - o);
        sum += x;
    }
    return sum;
}

static double parse_fast_float(const text_set *t) {
    double sum = 0;
    for (size_t i = 0; i < t->n; i++) {
        double x = 0;
        size_t o = t->offs[i];
        anchor_fast_float(&x, t->s + o, t->s + t->len);
        sum += x;
    }
    return sum;
}

/* strtod needs no copy: the body is NUL-terminated and a JSON number is
 * followed by a byte strtod stops at. */
static double parse_strtod(const text_set *t) {
    double sum = 0;
    for (size_t i = 0; i < t->n; i++)
        sum += strtod(t->s + t->offs[i], NULL);
    return sum;
}

static size_t print_attnd(const double_set *d, char *buf) {
    size_t total = 0;
    for (size_t i = 0; i < d->n; i++)
        total += api_num_format(buf, d->xs[i], 0);
    return total;
}

static size_t print_fmt(const double_set *d, char *buf) {
    size_t total = 0;
    for (size_t i = 0; i < d->n; i++)
        total += anchor_fmt(buf, d->xs[i]);
    return total;
}

static size_t print_to_chars(const double_set *d, char *buf) {
    size_t total = 0;
    for (size_t i = 0; i < d->n; i++)
        total += anchor_to_chars(buf, d->xs[i]);
    return total;
}

/* The digit search alone, on positive doubles. */
static size_t digits_attnd(const double_set *d, char *buf) {
    size_t total = 0;
    (void)buf;
    for (size_t i = 0; i < d->n; i++) {
        api_num_decimal dec = api_num_shortest(d->xs[i]);
        total += dec.digits + (size_t)dec.exponent;
    }
    return total;
}

static size_t digits_dragonbox(const double_set *d, char *buf) {
    size_t total = 0;
    (void)buf;
    for (size_t i = 0; i < d->n; i++) {
        int e;
        total += anchor_dragonbox_digits(&e, d->xs[i]) + (size_t)e;
    }
    return total;
}

static size_t print_17g(const double_set *d, char *buf) {
    size_t total = 0;
    for (size_t i = 0; i < d->n; i++)
        total += (size_t)snprintf(buf, 32, "%.17g", d->xs[i]);
    return total;
}

/* ------------------------------------------------------------- timing */

#define METHODS_MAX 4

typedef struct {
    const char *name;
    parse_pass parse;
    print_pass print;
    int slow;
    double ns[64]; /* one per sample */
    int taken;
} method;

static size_t repeats(size_t n) {
    size_t k = (SAMPLE_NUMBERS + n - 1) / n;
    return k ? k : 1;
}

/* One sample of m: ns per number over k passes of the set. */
static double sample(method *m, const text_set *t, const double_set *d,
                     size_t k) {
    char buf[64];
    size_t n = m->parse ? t->n : d->n;
    double t0 = now_ns();
    for (size_t r = 0; r < k; r++) {
        if (m->parse)
            sink_double = m->parse(t);
        else
            sink_size = m->print(d, buf);
    }
    return (now_ns() - t0) / (double)(n * k);
}

static void run_samples(method *ms, int count, const text_set *t,
                        const double_set *d, int samples) {
    size_t n = ms[0].parse ? t->n : d->n;
    size_t k = repeats(n);
    for (int i = 0; i < count; i++) { /* warm-up */
        sample(&ms[i], t, d, 1);
        ms[i].taken = 0;
    }
    for (int s = 0; s < samples; s++)
        for (int j = 0; j < count; j++) {
            int i = (j + s) % count; /* the order turns too */
            if (ms[i].slow && ms[i].taken >= SLOW_SAMPLES)
                continue;
            ms[i].ns[ms[i].taken++] = sample(&ms[i], t, d, ms[i].slow ? 1 : k);
        }
}

static double best(method *m) {
    qsort(m->ns, (size_t)m->taken, sizeof m->ns[0], cmp_double);
    return m->ns[0];
}

static double median(method *m) {
    qsort(m->ns, (size_t)m->taken, sizeof m->ns[0], cmp_double);
    return m->ns[m->taken / 2];
}

/* ------------------------------------------------------------- checks */

/* The significant digits of a printed number (no sign, point, leading or
 * trailing zeros, nor exponent) into out. */
static void significant(char *out, const char *text) {
    const char *p = text;
    char *o = out;
    for (; *p && *p != 'e' && *p != 'E'; p++)
        if (*p >= '0' && *p <= '9' && !(o == out && *p == '0'))
            *o++ = *p;
    while (o > out && o[-1] == '0')
        o--;
    *o = '\0';
}

/* Every parse of t against strtod's bits; every print of d against the
 * shortest digits (to_chars) and strtod's reading. Returns the failures. */
static size_t check(const char *name, const text_set *t, const double_set *d) {
    size_t bad = 0;
    for (size_t i = 0; t && i < t->n; i++) {
        const char *s = t->s + t->offs[i];
        double a = 0, f = 0, r = strtod(s, NULL);
        size_t used;
        api_num_parse(&a, &used, s, t->len - t->offs[i]);
        anchor_fast_float(&f, s, t->s + t->len);
        if (memcmp(&a, &r, sizeof a) || memcmp(&f, &r, sizeof f)) {
            if (bad++ < 5)
                fprintf(stderr,
                        "%s: parse of %.30s: attnd %.17g, fast_float "
                        "%.17g, strtod %.17g\n",
                        name, s, a, f, r);
        }
    }
    for (size_t i = 0; d && i < d->n; i++) {
        char text[API_NUM_MAX + 8], ref[40], da[40], dr[40];
        size_t len = api_num_format(text, d->xs[i], 0);
        text[len] = '\0';
        ref[anchor_to_chars(ref, d->xs[i])] = '\0';
        significant(da, text);
        significant(dr, ref);
        if (strtod(text, NULL) != d->xs[i] || strcmp(da, dr)) {
            if (bad++ < 5)
                fprintf(stderr, "%s: print of %.17g: attnd %s, to_chars %s\n",
                        name, d->xs[i], text, ref);
        }
    }
    return bad;
}

/* -------------------------------------------------------------- report */

typedef struct {
    char set[64];
    const char *op;
    size_t n;
    method ms[METHODS_MAX]; /* [0] attnd, [1] the anchor, then context */
    int count;
} row;

/* One "row" line of key=value figures (best and median ns per number of
 * each method), and the row kept for the table. */
static void report(row *out, const char *set, const char *op, size_t n,
                   method *ms, int count) {
    printf("row op=%s set=%s numbers=%zu", op, set, n);
    for (int i = 0; i < count; i++)
        printf(" %s_best=%.2f %s_median=%.2f", ms[i].name, best(&ms[i]),
               ms[i].name, median(&ms[i]));
    printf("\n");
    fflush(stdout);
    snprintf(out->set, sizeof out->set, "%s", set);
    out->op = op;
    out->n = n;
    memcpy(out->ms, ms, (size_t)count * sizeof *ms);
    out->count = count;
}

static void print_table(row *rows, int nrows, int samples) {
    printf("\n%-6s %-18s %8s  %-13s  %-24s %6s  %s\n", "op", "numbers of",
           "count", "attnd ns", "anchor ns", "ratio", "context ns");
    for (int i = 0; i < nrows; i++) {
        row *r = &rows[i];
        char attnd[32], anchor[48], context[96] = "";
        snprintf(attnd, sizeof attnd, "%.1f (%.1f)", best(&r->ms[0]),
                 median(&r->ms[0]));
        snprintf(anchor, sizeof anchor, "%s %.1f (%.1f)", r->ms[1].name,
                 best(&r->ms[1]), median(&r->ms[1]));
        for (int m = 2; m < r->count; m++) {
            size_t used = strlen(context);
            snprintf(context + used, sizeof context - used, "%s%s %.1f",
                     m > 2 ? ", " : "", r->ms[m].name, best(&r->ms[m]));
        }
        printf("%-6s %-18s %8zu  %-13s  %-24s %6.2f  %s\n", r->op, r->set, r->n,
               attnd, anchor, best(&r->ms[0]) / best(&r->ms[1]), context);
    }
    printf("(ns per number: best of %d samples, median in parentheses, "
           "thread CPU time; ratio = attnd / anchor, best against best)\n",
           samples);
}

int main(int argc, char **argv) {
    int samples = SAMPLES_DEFAULT, a = 1;
    if (argc > 2 && !strcmp(argv[1], "--samples")) {
        samples = atoi(argv[2]);
        a = 3;
    }
    if (samples < 1 || samples > 64)
        samples = SAMPLES_DEFAULT;
    if (argc - a < 3 || (argc - a) % 3) {
        fprintf(stderr, "usage: numbers_bench [--samples N] NAME ROUTE "
                        "BODY.json [NAME ROUTE BODY.json ...]\n");
        return 2;
    }
    api_limits limits;
    api_limits_default(&limits);
    limits.max_tree_bytes = 0;
    row rows[64];
    int nrows = 0;
    size_t failures = 0;
    for (; a + 2 < argc; a += 3) {
        const char *name = argv[a], *route = argv[a + 1];
        size_t len;
        char *body = read_file(argv[a + 2], &len);
        if (body == NULL) {
            perror(argv[a + 2]);
            return 2;
        }
        size_t *offs;
        size_t n = find_numbers(body, len, &offs);
        text_set t = {body, len, offs, n};
        double *xs = malloc(n * sizeof *xs);
        for (size_t i = 0; i < n; i++) {
            size_t used;
            api_num_parse(&xs[i], &used, body + offs[i], len - offs[i]);
        }
        double_set d_body = {xs, n};

        /* attnd's answer to the body, and its numbers */
        api_request req = {.method = "POST",
                           .path = route,
                           .content_type = "application/json",
                           .body = body,
                           .body_len = len,
                           .limits = &limits};
        api_response res;
        api_handle(&req, &res);
        if (res.status != 200 || res.body == NULL) {
            fprintf(stderr, "%s: answer %d\n", name, res.status);
            return 2;
        }
        char *answer = malloc(res.body_len + 1);
        memcpy(answer, res.body, res.body_len);
        answer[res.body_len] = '\0';
        size_t *aoffs;
        size_t an = find_numbers(answer, res.body_len, &aoffs);
        double *axs = malloc(an * sizeof *axs);
        for (size_t i = 0; i < an; i++)
            axs[i] = strtod(answer + aoffs[i], NULL);
        double_set d_answer = {axs, an};
        api_response_free(&res);

        failures += check(name, &t, &d_body) + check(name, NULL, &d_answer);

        method parse[] = {{.name = "attnd", .parse = parse_attnd},
                          {.name = "fast_float", .parse = parse_fast_float},
                          {.name = "strtod", .parse = parse_strtod, .slow = 1}};
        char set[64];
        snprintf(set, sizeof set, "%s/body", name);
        run_samples(parse, 3, &t, NULL, samples);
        report(&rows[nrows++], set, "parse", n, parse, 3);

        const double_set *prints[2] = {&d_body, &d_answer};
        const char *what[2] = {"body", "answer"};
        for (int p = 0; p < 2; p++) {
            method print[] = {
                {.name = "attnd", .print = print_attnd},
                {.name = "fmt", .print = print_fmt},
                {.name = "to_chars", .print = print_to_chars},
                {.name = "printf17g", .print = print_17g, .slow = 1}};
            snprintf(set, sizeof set, "%s/%s", name, what[p]);
            run_samples(print, 4, NULL, prints[p], samples);
            report(&rows[nrows++], set, "print", prints[p]->n, print, 4);
            /* the digit search alone: the nonzero magnitudes */
            double *pos = malloc(prints[p]->n * sizeof *pos);
            size_t np = 0;
            for (size_t i = 0; i < prints[p]->n; i++)
                if (prints[p]->xs[i] != 0)
                    pos[np++] = fabs(prints[p]->xs[i]);
            double_set d_pos = {pos, np};
            method digits[] = {
                {.name = "attnd", .print = digits_attnd},
                {.name = "dragonbox", .print = digits_dragonbox}};
            run_samples(digits, 2, NULL, &d_pos, samples);
            report(&rows[nrows++], set, "digits", np, digits, 2);
            free(pos);
        }
        free(axs);
        free(aoffs);
        free(answer);
        free(xs);
        free(offs);
        free(body);
    }

    print_table(rows, nrows, samples);
    if (failures)
        printf("CHECK FAILED: %zu numbers differ (see stderr)\n", failures);
    return failures ? 1 : 0;
}
