/*
 * fastpath_array.c — the fast path's reading (see fastpath.h): one plain
 * numeric array read into an api_fastpath with api_num_parse, and any
 * other value skipped by bracket matching, its strings tokenised exactly
 * as jansson reads them, so that the scan agrees with jansson on where
 * every value ends.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fastpath.h"
#include "fastpath_internal.h"
#include "numparse.h"

/* Past the string that starts at the cursor's '"'. *escaped is set when it
 * holds a backslash. Returns 0, or -1 when it does not end, or when it
 * holds \u0000 (a client string that could pass for a placeholder). */
int api_fastpath_skip_string(cursor *c, int *escaped) {
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
int api_fastpath_skip_value(cursor *c) {
    size_t depth = 0;
    int escaped;
    while (c->pos < c->len) {
        char ch = c->s[c->pos];
        if (ch == '"') {
            if (api_fastpath_skip_string(c, &escaped))
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
int api_fastpath_read_array(api_fastpath *fp, cursor *c) {
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
