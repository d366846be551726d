/*
 * copies.c — copied answers across variants (see copies.h).
 */
#include "copies.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One indexed sum: a field of entries[at]'s reference or answer. */
typedef struct {
    const char *name;
    double sum;
    size_t at;
    int of_reference;
} indexed;

static int by_name_then_sum(const void *a, const void *b) {
    const indexed *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return (x->sum > y->sum) - (x->sum < y->sum);
}

/* The farthest an expected value may be from got and c still match them
 * (compare.h), or INFINITY when c reaches too far to bound. */
static double reach(const api_compare *c, double got) {
    double size = fabs(got);
    switch (c->mode) {
    case API_COMPARE_RELABS:
    case API_COMPARE_RELABS_OR_ROUNDED: {
        double r = c->rtol < 0.5 ? (c->atol + c->rtol * size) / (1 - c->rtol)
                                 : INFINITY;
        if (c->mode == API_COMPARE_RELABS_OR_ROUNDED && c->rounded_reach > r)
            r = c->rounded_reach;
        return r;
    }
    case API_COMPARE_DECDIG:
        return 0.51 * pow(10, -c->digits);
    case API_COMPARE_SIGFIG: {
        double a = 0.51 * pow(10, 1 - c->digits);
        return a < 0.5 ? a * (size + 1) / (1 - a) : INFINITY;
    }
    case API_COMPARE_ULP:
        return (double)c->ulps * (size * 4.5e-16 + 1e-300);
    }
    return INFINITY;
}

/* Σ of a field's sampled answer entries, and the window around it that
 * holds every sum that could match; 0 when an entry is not a number. */
static int answer_window(const api_grade_sample_field *f, double *sum,
                         double *window) {
    double s = 0, w = 0, size = 0;
    for (size_t k = 0; k < f->taken; k++) {
        if (!isfinite(f->got[k]))
            return 0;
        s += f->got[k];
        size += fabs(f->got[k]);
        w += reach(&f->compare, f->got[k]);
    }
    *sum = s;
    *window = w + 1e-9 * (size + 1); /* the sums' own rounding, and more */
    return 1;
}

static double sum_of(const double *x, size_t n) {
    double s = 0;
    for (size_t k = 0; k < n; k++)
        s += x[k];
    return s;
}

/* The field of s named name with count entries, or NULL. */
static const api_grade_sample_field *field_of(const api_grade_sample *s,
                                              const char *name, size_t count) {
    for (size_t i = 0; i < s->n_fields; i++)
        if (s->fields[i].count == count && !strcmp(s->fields[i].name, name))
            return &s->fields[i];
    return NULL;
}

/* Whether every sampled entry of a's answer matches b's reference
 * (of_reference) or b's answer under a's comparisons; *max_abs and
 * *entries what was compared. */
static int matches(const api_grade_sample *a, const api_grade_sample *b,
                   int of_reference, double *max_abs, size_t *entries) {
    *max_abs = 0;
    *entries = 0;
    for (size_t i = 0; i < a->n_fields; i++) {
        const api_grade_sample_field *fa = &a->fields[i];
        const api_grade_sample_field *fb = field_of(b, fa->name, fa->count);
        if (!fb)
            return 0;
        const double *want = of_reference ? fb->expected : fb->got;
        for (size_t k = 0; k < fa->taken; k++) {
            int decimals;
            if (!isfinite(want[k]) ||
                api_compare_entry(&fa->compare, want[k], fa->got[k],
                                  &decimals) == API_MATCH_NO)
                return 0;
            double d = fabs(want[k] - fa->got[k]);
            if (d > *max_abs)
                *max_abs = d;
        }
        *entries += fa->taken;
    }
    return *entries > 0;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether s's answer holds enough distinct numbers to be one variant's:
 * at least 16, or half of its sampled entries when it has fewer than 32.
 * Zeros everywhere, or the same weight in every row, are answers two
 * students reach apart. */
static int distinctive(const api_grade_sample *s) {
    size_t n = 0;
    for (size_t i = 0; i < s->n_fields; i++)
        n += s->fields[i].taken;
    double *x = malloc((n ? n : 1) * sizeof *x);
    if (!x)
        return 0;
    size_t at = 0;
    for (size_t i = 0; i < s->n_fields; i++)
        for (size_t k = 0; k < s->fields[i].taken; k++)
            x[at++] = s->fields[i].got[k];
    qsort(x, n, sizeof *x, by_value);
    size_t distinct = n > 0;
    for (size_t k = 1; k < n; k++)
        distinct += x[k] != x[k - 1];
    free(x);
    size_t need = n < 32 ? (n + 1) / 2 : 16;
    return n > 0 && distinct >= need;
}

/* The index: every field's reference sum and (when its entries are
 * numbers) answer sum, sorted. */
static indexed *build_index(const api_copy_entry *e, size_t n, size_t *count) {
    size_t cap = 0;
    for (size_t i = 0; i < n; i++)
        if (e[i].sample)
            cap += 2 * e[i].sample->n_fields;
    indexed *ix = malloc((cap ? cap : 1) * sizeof *ix);
    if (!ix)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const api_grade_sample *s = e[i].sample;
        for (size_t f = 0; s && f < s->n_fields; f++) {
            const api_grade_sample_field *fl = &s->fields[f];
            double r = sum_of(fl->expected, fl->taken);
            double a = sum_of(fl->got, fl->taken);
            if (isfinite(r))
                ix[m++] = (indexed){fl->name, r, i, 1};
            if (isfinite(a))
                ix[m++] = (indexed){fl->name, a, i, 0};
        }
    }
    qsort(ix, m, sizeof *ix, by_name_then_sum);
    *count = m;
    return ix;
}

/* The first index entry not before (name, sum). */
static size_t lower_bound(const indexed *ix, size_t m, const char *name,
                          double sum) {
    size_t lo = 0, hi = m;
    indexed probe = {name, sum, 0, 0};
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (by_name_then_sum(&ix[mid], &probe) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The best match of suspect i among the candidates the index gives (at
 * most API_COPY_CANDIDATES_MAX, *crowded set when there were more):
 * 1 with *best set, or 0. */
static int best_match(const api_copy_entry *e, size_t i, const indexed *ix,
                      size_t m, api_copy_match *best, int *crowded) {
    const api_grade_sample *s = e[i].sample;
    const api_grade_sample_field *key = &s->fields[0];
    double sum, window;
    if (!answer_window(key, &sum, &window) || !isfinite(window))
        return 0;
    int found = 0;
    size_t candidates = 0;
    for (size_t at = lower_bound(ix, m, key->name, sum - window);
         at < m && !strcmp(ix[at].name, key->name) &&
         ix[at].sum <= sum + window;
         at++) {
        size_t j = ix[at].at;
        if (j == i || e[j].problem != e[i].problem ||
            !strcmp(e[j].sample->variant, s->variant))
            continue;
        if (candidates++ == API_COPY_CANDIDATES_MAX) {
            *crowded = 1;
            break;
        }
        double max_abs;
        size_t entries;
        if (!matches(s, e[j].sample, ix[at].of_reference, &max_abs, &entries))
            continue;
        /* a variant's right answer first; then an answer its own grade
         * stands by (passed, or a named mistake) before a suspect's, which
         * may be a copy of it; then the closest */
        int rank = 2 * ix[at].of_reference + !e[j].suspect;
        int best_rank =
            found ? 2 * best->of_reference + !e[best->source].suspect : -1;
        int better =
            rank > best_rank || (rank == best_rank && max_abs < best->max_abs);
        if (better)
            *best =
                (api_copy_match){i, j, ix[at].of_reference, max_abs, entries};
        found = 1;
    }
    return found;
}

int api_copy_checkable(const api_copy_entry *e) {
    const api_grade_sample *s = e->sample;
    double max_abs;
    size_t compared;
    /* its own reference matching on the sample: the error is elsewhere */
    return s && e->suspect && s->n_fields > 0 &&
           !matches(s, s, 1, &max_abs, &compared) && distinctive(s);
}

int api_copies_find(const api_copy_entry *entries, size_t n,
                    int (*stop)(void *ctx), void *ctx,
                    api_copy_match **matches_out, size_t *n_matches,
                    size_t *checked, api_copy_cut *cut) {
    *matches_out = NULL;
    *n_matches = *checked = 0;
    *cut = API_COPY_WHOLE;
    size_t m = 0;
    indexed *ix = build_index(entries, n, &m);
    api_copy_match *found = malloc((n ? n : 1) * sizeof *found);
    if (!ix || !found) {
        free(ix);
        free(found);
        return -1;
    }
    size_t k = 0;
    int crowded = 0;
    for (size_t i = 0; i < n; i++) {
        if (!api_copy_checkable(&entries[i]))
            continue;
        if (stop && stop(ctx)) {
            *cut = API_COPY_STOPPED;
            break;
        }
        (*checked)++;
        if (best_match(entries, i, ix, m, &found[k], &crowded))
            k++;
    }
    if (*cut == API_COPY_WHOLE && crowded)
        *cut = API_COPY_CROWDED;
    free(ix);
    *matches_out = found;
    *n_matches = k;
    return 0;
}

void api_copy_note(api_buf *out, const api_copy_match *m,
                   const char *source_variant, const char *source_id) {
    api_buf_puts(out, "copy: the answer matches ");
    api_buf_puts(out, m->of_reference ? "the right answer of "
                                      : "the answer "
                                        "handed in "
                                        "for ");
    api_buf_puts(out, "the variant of ");
    api_buf_puts(out, source_variant);
    if (source_id && strcmp(source_id, source_variant)) {
        api_buf_puts(out, " (submission ");
        api_buf_puts(out, source_id);
        api_buf_putc(out, ')');
    }
    api_buf_puts(out, ", not its own: max abs difference ");
    api_buf_number(out, m->max_abs, 3);
    api_buf_puts(out, " over ");
    api_buf_int(out, (long long)m->entries);
    api_buf_puts(out, " sampled entries");
}
