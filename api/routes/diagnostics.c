/*
 * diagnostics.c — per-row entropy, peak weight and warnings, and the
 * request's score statistics (see diagnostics.h).
 */
#include "diagnostics.h"

#include <math.h>
#include <string.h>

/* Rows per 8-byte slot of the warning bytes. */
#define WARNINGS_PER_SLOT 8

size_t api_diagnostics_slots(size_t rows) {
    /* entropy, max_weight, argmax: one slot per row each; warnings: bytes */
    size_t warn = rows / WARNINGS_PER_SLOT + 1;
    if (rows > (SIZE_MAX - warn) / 3)
        return SIZE_MAX;
    return 3 * rows + warn;
}

void api_diagnostics_take(api_diagnostics *d, api_arena *arena, size_t B,
                          size_t H, size_t Nq, size_t Nk) {
    memset(d, 0, sizeof *d);
    d->B = B;
    d->H = H;
    d->Nq = Nq;
    d->Nk = Nk;
    d->rows = B * H * Nq;
    d->entropy = api_arena_take(arena, d->rows);
    d->max_weight = api_arena_take(arena, d->rows);
    d->argmax = api_arena_take(arena, d->rows);
    d->warning = api_arena_take(arena, d->rows / WARNINGS_PER_SLOT + 1);
}

/* The row's warning from its visible count, entropy and peak (section 8). */
static api_diag_warning row_warning(size_t visible, double entropy,
                                    double max_weight) {
    if (visible == 0)
        return API_DIAG_FULLY_MASKED;
    if (max_weight > 0.99)
        return API_DIAG_SATURATED;
    if (visible >= 2 && entropy >= 0.99 * log((double)visible))
        return API_DIAG_NEAR_UNIFORM;
    return API_DIAG_NONE;
}

void api_diagnostics_compute(api_diagnostics *d, const double *scores,
                             const double *weights, const attn_mask *mask) {
    size_t Nq = d->Nq, Nk = d->Nk, per_example = d->H * Nq;
    double sum = 0.0;
    d->n_scores = 0;
    d->min = INFINITY;
    d->max = -INFINITY;

    /* 1. per row: visible keys, entropy, peak; scores' min, max, sum */
    for (size_t r = 0; r < d->rows; r++) {
        size_t b = r / per_example, t = r / Nq % d->H, i = r % Nq;
        const double *s = scores + r * Nk, *w = weights + r * Nk;
        size_t visible = 0, arg = 0;
        double entropy = 0.0, peak = -1.0;
        for (size_t j = 0; j < Nk; j++) {
            if (!attn_mask_visible_head(mask, b, t, d->H, i, j, Nq, Nk))
                continue;
            visible++;
            d->min = fmin(d->min, s[j]);
            d->max = fmax(d->max, s[j]);
            sum += s[j];
            if (w[j] > peak) { /* strict: ties keep the lowest index */
                peak = w[j];
                arg = j;
            }
            if (w[j] > 0.0)
                entropy -= w[j] * log(w[j]);
        }
        d->n_scores += visible;
        if (visible == 0) {
            d->entropy[r] = 0.0;
            d->max_weight[r] = 0.0;
            d->argmax[r] = -1.0;
        } else {
            d->entropy[r] = entropy + 0.0; /* -0 → 0 */
            d->max_weight[r] = peak;
            d->argmax[r] = (double)arg;
        }
        d->warning[r] =
            (unsigned char)row_warning(visible, entropy, d->max_weight[r]);
    }
    if (d->n_scores == 0)
        return;

    /* 2. population standard deviation about the mean (two passes) */
    d->mean = sum / (double)d->n_scores;
    double ss = 0.0;
    for (size_t r = 0; r < d->rows; r++) {
        size_t b = r / per_example, t = r / Nq % d->H, i = r % Nq;
        const double *s = scores + r * Nk;
        for (size_t j = 0; j < Nk; j++)
            if (attn_mask_visible_head(mask, b, t, d->H, i, j, Nq, Nk))
                ss += (s[j] - d->mean) * (s[j] - d->mean);
    }
    d->std = sqrt(ss / (double)d->n_scores);
}

static const char *warning_code(api_diag_warning w) {
    switch (w) {
    case API_DIAG_SATURATED:
        return "saturated";
    case API_DIAG_NEAR_UNIFORM:
        return "near_uniform";
    case API_DIAG_FULLY_MASKED:
        return "fully_masked";
    default:
        return "";
    }
}

/* diagnostics.warnings from the item's rows (the per-row warning codes)
 * and args: rows, H, Nq, heads | batched << 1. */
static void write_warnings(api_buf *out, const api_result_item *it) {
    const unsigned char *warning = it->rows;
    size_t rows = it->args[0], H = it->args[1], Nq = it->args[2];
    int heads = (it->args[3] & 1) != 0, batched = (it->args[3] & 2) != 0;
    size_t listed = 0, left_out = 0;
    api_buf_putc(out, '[');
    for (size_t r = 0; r < rows; r++) {
        api_diag_warning w = (api_diag_warning)warning[r];
        if (w == API_DIAG_NONE)
            continue;
        if (listed == API_DIAG_MAX_WARNINGS) {
            left_out++;
            continue;
        }
        size_t b = r / (H * Nq), t = r / Nq % H, i = r % Nq;
        api_buf_puts(out, listed ? ",{\"code\":\"" : "{\"code\":\"");
        api_buf_puts(out, warning_code(w));
        api_buf_puts(out, "\",\"row\":[");
        if (batched) {
            api_buf_uint(out, b);
            api_buf_putc(out, ',');
        }
        if (heads) {
            api_buf_uint(out, t);
            api_buf_putc(out, ',');
        }
        api_buf_uint(out, i);
        api_buf_puts(out, "]}");
        listed++;
    }
    if (left_out) {
        api_buf_puts(out, ",{\"code\":\"truncated\",\"count\":");
        api_buf_uint(out, left_out);
        api_buf_putc(out, '}');
    }
    api_buf_putc(out, ']');
}

static void add_stat(api_result *r, const char *name, double x, int present) {
    if (present)
        api_result_number(r, name, x);
    else
        api_result_null(r, name);
}

void api_diagnostics_result(api_result *r, const api_diagnostics *d, int heads,
                            int batched) {
    int present = d->n_scores > 0;
    add_stat(r, "diagnostics.scores.min", d->min, present);
    add_stat(r, "diagnostics.scores.max", d->max, present);
    add_stat(r, "diagnostics.scores.mean", d->mean, present);
    add_stat(r, "diagnostics.scores.std", d->std, present);

    /* (B, H, Nq) or (B, Nq); unbatched drops B */
    size_t full[3] = {d->B, d->H, d->Nq}, shape[3], rank = 0;
    for (size_t a = 0; a < 3; a++)
        if ((a != 0 || batched) && (a != 1 || heads))
            shape[rank++] = full[a];
    api_result_tensor(r, "diagnostics.entropy", d->entropy, shape, rank);
    api_result_tensor(r, "diagnostics.max_weight", d->max_weight, shape, rank);
    /* indices are integers, printed as they are */
    api_result_tensor(r, "diagnostics.argmax", d->argmax, shape, rank)->exact =
        1;
    const size_t args[4] = {d->rows, d->H, d->Nq,
                            (size_t)(heads ? 1 : 0) | (batched ? 2u : 0u)};
    api_result_events(r, "diagnostics.warnings", write_warnings, d->warning,
                      args);
}
