/*
 * svg.c — the SVG 1.1 weight heatmap (see svg.h). Layout, in user units
 * (CSS pixels at the natural size; the viewBox lets any viewer scale it):
 *
 *   title
 *   panel panel ... (H per row for multi-head, else up to 4 per row)   colour
 *   panel panel ...                                                    bar
 *
 * Each panel: its label on top, the grid of cells (cell side 384 / the
 * longer axis, at most 36), tick labels with the original indices (or the
 * request's token labels: the keys' written upwards, the margins grown to
 * fit them), "Keys" under the grid and "Queries" rotated on its left.
 * Colours: palette.h; a diverging palette's scale runs from -m to m.
 */
#include "svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "accept.h"
#include "flow_svg.h"
#include "query.h"
#include "svg_text.h"

#define put_text api_svg_put_text
#define put_num api_svg_put_num
#define put_fmt api_svg_put_fmt
#define put_num_attr api_svg_put_num_attr

/* Layout constants, user units. */
#define GRID_MAX 384.0    /* the grid's longer side */
#define CELL_MAX 36.0     /* largest cell side */
#define PANEL_LEFT 70.0   /* y tick labels and "Queries" (index ticks) */
#define PANEL_TOP 30.0    /* panel label */
#define PANEL_BOTTOM 56.0 /* x tick labels and "Keys" (index ticks) */
#define LABEL_CHARS 10    /* characters of a token label drawn at a tick */
#define CHAR_W 7.6        /* about one character at 13 units */
#define LABEL_PITCH 15.0  /* least room along an axis per token label */
#define PANEL_RIGHT 24.0
#define PANEL_MIN_W 112.0 /* room for the labels around a narrow grid */
#define PANEL_MIN_H 84.0
#define TITLE_H 44.0
#define MARGIN 16.0
#define BAR_W 22.0
#define BAR_AREA 112.0 /* colour bar, its tick labels and its title */
#define BAR_MIN_H 160.0
#define PANELS_PER_ROW 4 /* for single-head pictures */
#define MAX_TICKS 8
#define VALUE_TEXT_MAX 256    /* print each weight in its cell up to this */
#define CELL_TOOLTIP_MAX 1024 /* a <title> per cell up to this many */

/* Characters (UTF-8 sequences) in s[0 .. len). */
static size_t utf8_chars(const char *s, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

/* Bytes of the first `chars` characters of s[0 .. len). */
static size_t utf8_prefix(const char *s, size_t len, size_t chars) {
    size_t i = 0, n = 0;
    for (; i < len; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80 && n++ == chars)
            break;
    }
    return i;
}

/* A token label as a tick label: at most LABEL_CHARS characters, else
 * LABEL_CHARS - 1 and "…"; the whole label in a <title>. */
static void put_tick_label(api_buf *out, const char *s, size_t len) {
    size_t chars = utf8_chars(s, len);
    api_buf_puts(out, "<title>");
    put_text(out, s, len);
    api_buf_puts(out, "</title>");
    if (chars <= LABEL_CHARS) {
        put_text(out, s, len);
        return;
    }
    put_text(out, s, utf8_prefix(s, len, LABEL_CHARS - 1));
    api_buf_puts(out, "…");
}

/* Characters a tick label of one axis takes at most (0: no labels). */
static size_t longest_label(const json_t *axis) {
    size_t most = 0;
    for (size_t i = 0; i < json_array_size(axis); i++) {
        size_t len;
        const char *s = api_label_at(axis, i, &len);
        size_t c = utf8_chars(s, len);
        if (c > LABEL_CHARS)
            c = LABEL_CHARS;
        if (c > most)
            most = c;
    }
    return most;
}

/* The most SVG text a panel's frame and a cell take (measured: 1.1 to
 * 1.8 KB per panel of one to four cells, 72 to 122 bytes per cell of
 * grids with values and tooltips). */
#define SVG_PANEL_BYTES 2048
#define SVG_CELL_BYTES 160

static size_t min_z(size_t a, size_t b) {
    return a < b ? a : b;
}

size_t api_svg_cell_count(const api_svg_heatmap *h) {
    size_t f[4] = {h->B, h->H, min_z(h->Nq, API_SVG_MAX_SIDE),
                   min_z(h->Nk, API_SVG_MAX_SIDE)};
    size_t n = 1;
    for (int i = 0; i < 4; i++) {
        if (f[i] && n > SIZE_MAX / f[i])
            return SIZE_MAX;
        n *= f[i];
    }
    return n;
}

/* Tick step over n indices: 1, 2, 5, 10, 20, 50, ... with at most
 * max_ticks labels. */
static size_t tick_step(size_t n, size_t max_ticks) {
    size_t step = 1;
    for (int k = 0;; k++) {
        size_t s = step * (k % 3 == 1 ? 2 : k % 3 == 2 ? 5 : 1);
        if ((n + s - 1) / s <= max_ticks)
            return s;
        if (k % 3 == 2)
            step *= 10;
    }
}

/* Geometry shared by every panel. */
typedef struct {
    size_t rows, cols;   /* cells drawn: min(Nq, 256), min(Nk, 256) */
    double cell;         /* cell side */
    double gw, gh;       /* grid size */
    double pw, ph;       /* panel size */
    double left, bottom; /* room for the y and x tick labels and titles */
    size_t per_row, panel_rows;
    double width, height;
    double vmax; /* the colour scale's top (its bottom: -vmax if diverging) */
    double lo;   /* the colour scale's bottom, 0 or -vmax */
} layout;

/* Ticks an axis of n entries over a grid side of g units carries: token
 * labels as many as fit LABEL_PITCH apart (every one when they fit), else
 * MAX_TICKS. */
static size_t max_ticks(const json_t *labels, double g) {
    size_t fit = (size_t)(g / LABEL_PITCH);
    return labels && fit > MAX_TICKS ? fit : MAX_TICKS;
}

/* The colour scale's position of v: 0 at its bottom, 1 at its top. */
static double scale_pos(const layout *L, double v) {
    return (v - L->lo) / (L->vmax - L->lo);
}

static void plan(layout *L, const api_svg_heatmap *h) {
    L->rows = min_z(h->Nq, API_SVG_MAX_SIDE);
    L->cols = min_z(h->Nk, API_SVG_MAX_SIDE);
    size_t longer = L->rows > L->cols ? L->rows : L->cols;
    L->cell = GRID_MAX / (double)longer;
    if (L->cell > CELL_MAX)
        L->cell = CELL_MAX;
    L->gw = L->cell * (double)L->cols;
    L->gh = L->cell * (double)L->rows;
    /* token labels: the queries' right-aligned left of the grid, the keys'
     * written upwards under it */
    double ql = CHAR_W * (double)longest_label(h->labels.queries) + 44;
    double kl = CHAR_W * (double)longest_label(h->labels.keys) + 50;
    L->left = ql > PANEL_LEFT ? ql : PANEL_LEFT;
    L->bottom = kl > PANEL_BOTTOM ? kl : PANEL_BOTTOM;
    L->pw = L->left + (L->gw > PANEL_MIN_W ? L->gw : PANEL_MIN_W) + PANEL_RIGHT;
    L->ph = PANEL_TOP + (L->gh > PANEL_MIN_H ? L->gh : PANEL_MIN_H) + L->bottom;
    size_t panels = h->B * h->H;
    L->per_row = h->H > 1 ? h->H : min_z(panels, PANELS_PER_ROW);
    L->panel_rows = (panels + L->per_row - 1) / L->per_row;
    double bar_h = L->gh > BAR_MIN_H ? L->gh : BAR_MIN_H;
    double panels_h = (double)L->panel_rows * L->ph;
    L->width = MARGIN + (double)L->per_row * L->pw + BAR_AREA;
    /* the title, bold at 20 units: about 12.5 units per character */
    size_t chars = 0;
    for (const char *c = h->title; *c; c++)
        chars += ((unsigned char)*c & 0xC0) != 0x80;
    if (L->width < 2 * MARGIN + 12.5 * (double)chars)
        L->width = 2 * MARGIN + 12.5 * (double)chars;
    L->height = TITLE_H +
                (panels_h > PANEL_TOP + bar_h + L->bottom
                     ? panels_h
                     : PANEL_TOP + bar_h + L->bottom) +
                MARGIN;
    size_t total = panels * h->Nq * h->Nk;
    double vmax = 0;
    for (size_t i = 0; i < total; i++)
        if (h->weights[i] > vmax)
            vmax = h->weights[i];
    L->vmax = vmax > 0 ? vmax : 1;
    L->lo = api_palette_diverging(h->palette) ? -L->vmax : 0;
}

/* Mean of weights[q0 … q1) × [k0 … k1) of one (Nq, Nk) panel. */
static double block_mean(const double *panel, size_t Nk, size_t q0, size_t q1,
                         size_t k0, size_t k1) {
    double sum = 0;
    for (size_t q = q0; q < q1; q++)
        for (size_t k = k0; k < k1; k++)
            sum += panel[q * Nk + k];
    return sum / ((double)(q1 - q0) * (double)(k1 - k0));
}

/* The panel's label and <title>: which example and head, its size, and
 * block averaging when it applies. */
static void panel_titles(api_buf *out, const api_svg_heatmap *h,
                         const layout *L, size_t b, size_t hd) {
    char label[64] = "";
    if (h->B > 1 && h->H > 1)
        snprintf(label, sizeof label, "example %zu, head %zu", b, hd);
    else if (h->B > 1)
        snprintf(label, sizeof label, "example %zu", b);
    else if (h->H > 1)
        snprintf(label, sizeof label, "head %zu", hd);
    api_buf_puts(out, "<title>");
    api_buf_puts(out, label[0] ? label : "weights");
    put_fmt(out, ": %zu %s × %zu %s", h->Nq, h->Nq == 1 ? "query" : "queries",
            h->Nk, h->Nk == 1 ? "key" : "keys");
    if (L->rows < h->Nq || L->cols < h->Nk)
        put_fmt(out,
                ", block-averaged to %zu × %zu cells (each cell the mean of "
                "a block of about %.3g × %.3g weights)",
                L->rows, L->cols, (double)h->Nq / (double)L->rows,
                (double)h->Nk / (double)L->cols);
    api_buf_puts(out, "</title>\n");
    if (label[0]) {
        api_buf_puts(out, "<text class=\"panel-label\" x=\"");
        put_num(out, L->left);
        api_buf_puts(out, "\" y=\"20\" font-size=\"16\" font-weight=\"bold\">");
        api_buf_puts(out, label);
        api_buf_puts(out, "</text>\n");
    }
}

/* The label of query (key) i, or NULL; only when that axis is drawn one
 * cell per entry (block-averaged cells span several). */
static const char *cell_label(const json_t *axis, size_t i, int sampled,
                              size_t *len) {
    return sampled ? NULL : api_label_at(axis, i, len);
}

static void panel_cells(api_buf *out, const api_svg_heatmap *h, const layout *L,
                        const double *panel) {
    int tooltips = L->rows * L->cols <= CELL_TOOLTIP_MAX;
    int rows_sampled = L->rows < h->Nq, cols_sampled = L->cols < h->Nk;
    api_buf_puts(out, "<g class=\"cells\" transform=\"translate(");
    put_num(out, L->left);
    api_buf_putc(out, ',');
    put_num(out, PANEL_TOP);
    api_buf_puts(out, ") scale(");
    put_num(out, L->cell);
    api_buf_puts(out, ")\" shape-rendering=\"crispEdges\">\n");
    for (size_t r = 0; r < L->rows && !out->failed; r++) {
        size_t q0 = r * h->Nq / L->rows, q1 = (r + 1) * h->Nq / L->rows;
        for (size_t c = 0; c < L->cols; c++) {
            size_t k0 = c * h->Nk / L->cols, k1 = (c + 1) * h->Nk / L->cols;
            double v = block_mean(panel, h->Nk, q0, q1, k0, k1);
            char hex[8];
            api_palette_colour(h->palette, scale_pos(L, v), hex);
            put_fmt(out,
                    "<rect class=\"cell\" x=\"%zu\" y=\"%zu\" width=\"1\" "
                    "height=\"1\" fill=\"%s\"",
                    c, r, hex);
            if (!tooltips) {
                api_buf_puts(out, "/>\n");
                continue;
            }
            size_t ql = 0, kl = 0;
            const char *qs =
                cell_label(h->labels.queries, r, rows_sampled, &ql);
            const char *ks = cell_label(h->labels.keys, c, cols_sampled, &kl);
            put_fmt(out, "><title>query %zu", r);
            if (qs) {
                api_buf_puts(out, " “");
                put_text(out, qs, ql);
                api_buf_puts(out, "”");
            }
            put_fmt(out, ", key %zu", c);
            if (ks) {
                api_buf_puts(out, " “");
                put_text(out, ks, kl);
                api_buf_puts(out, "”");
            }
            put_fmt(out, ": %.6g</title></rect>\n", v);
        }
    }
    api_buf_puts(out, "</g>\n");
    if (L->rows * L->cols > VALUE_TEXT_MAX || L->cell < 30)
        return;
    /* each weight printed in its cell, light text on dark cells */
    api_buf_puts(out, "<g class=\"values\" font-size=\"12\" "
                      "text-anchor=\"middle\">\n");
    for (size_t r = 0; r < L->rows; r++)
        for (size_t c = 0; c < L->cols; c++) {
            double v = panel[r * h->Nk + c];
            api_buf_puts(out, "<text x=\"");
            put_num(out, L->left + ((double)c + 0.5) * L->cell);
            api_buf_puts(out, "\" y=\"");
            put_num(out, PANEL_TOP + ((double)r + 0.5) * L->cell + 4);
            put_fmt(out, "\" fill=\"%s\">%.2f</text>\n",
                    api_palette_dark(h->palette, scale_pos(L, v)) ? "#ffffff"
                                                                  : "#000000",
                    v);
        }
    api_buf_puts(out, "</g>\n");
}

/* The keys' ticks under the panel: the key's index, or its label written
 * upwards. */
static void key_ticks(api_buf *out, const api_svg_heatmap *h, const layout *L) {
    const json_t *kls = h->labels.keys;
    size_t step = tick_step(h->Nk, max_ticks(kls, L->gw));
    double bottom = PANEL_TOP + L->gh;
    for (size_t k = 0; k < h->Nk; k += step) {
        double x = L->left + ((double)k + 0.5) * L->gw / (double)h->Nk;
        api_buf_puts(out, "<line x1=\"");
        put_num(out, x);
        api_buf_puts(out, "\" y1=\"");
        put_num(out, bottom);
        api_buf_puts(out, "\" x2=\"");
        put_num(out, x);
        api_buf_puts(out, "\" y2=\"");
        put_num(out, bottom + 5);
        size_t len;
        const char *s = api_label_at(kls, k, &len);
        if (s) {
            /* written upwards, ending under its tick */
            api_buf_puts(out, "\" stroke=\"#000000\"/><text "
                              "class=\"tick-label\" x=\"0\" y=\"0\" "
                              "text-anchor=\"end\" transform=\"translate(");
            put_num(out, x + 4.5);
            api_buf_putc(out, ',');
            put_num(out, bottom + 8);
            api_buf_puts(out, ") rotate(-90)\">");
            put_tick_label(out, s, len);
            api_buf_puts(out, "</text>\n");
            continue;
        }
        api_buf_puts(out, "\" stroke=\"#000000\"/><text x=\"");
        put_num(out, x);
        api_buf_puts(out, "\" y=\"");
        put_num(out, bottom + 19);
        put_fmt(out, "\" text-anchor=\"middle\">%zu</text>\n", k);
    }
}

/* The queries' ticks left of the panel: the query's index, or its label. */
static void query_ticks(api_buf *out, const api_svg_heatmap *h,
                        const layout *L) {
    const json_t *qls = h->labels.queries;
    size_t step = tick_step(h->Nq, max_ticks(qls, L->gh));
    for (size_t q = 0; q < h->Nq; q += step) {
        double y = PANEL_TOP + ((double)q + 0.5) * L->gh / (double)h->Nq;
        api_buf_puts(out, "<line x1=\"");
        put_num(out, L->left - 5);
        api_buf_puts(out, "\" y1=\"");
        put_num(out, y);
        api_buf_puts(out, "\" x2=\"");
        put_num(out, L->left);
        api_buf_puts(out, "\" y2=\"");
        put_num(out, y);
        size_t len;
        const char *s = api_label_at(qls, q, &len);
        api_buf_puts(out, "\" stroke=\"#000000\"/><text ");
        if (s)
            api_buf_puts(out, "class=\"tick-label\" ");
        api_buf_puts(out, "x=\"");
        put_num(out, L->left - 8);
        api_buf_puts(out, "\" y=\"");
        put_num(out, y + 4.5);
        api_buf_puts(out, "\" text-anchor=\"end\">");
        if (s)
            put_tick_label(out, s, len);
        else
            put_fmt(out, "%zu", q);
        api_buf_puts(out, "</text>\n");
    }
}

/* "Keys" under the panel and "Queries" left of it, centred on the panel
 * as shown (at least its minimum size). */
static void axis_titles(api_buf *out, const layout *L) {
    double bottom = PANEL_TOP + L->gh;
    double gw_shown = L->gw > PANEL_MIN_W ? L->gw : PANEL_MIN_W;
    double gh_shown = L->gh > PANEL_MIN_H ? L->gh : PANEL_MIN_H;
    api_buf_puts(out, "<text class=\"axis-title\" x=\"");
    put_num(out, L->left + gw_shown / 2);
    api_buf_puts(out, "\" y=\"");
    put_num(out, bottom + L->bottom - 14);
    api_buf_puts(out,
                 "\" font-size=\"16\" text-anchor=\"middle\">Keys</text>\n");
    double cy = PANEL_TOP + gh_shown / 2;
    api_buf_puts(out, "<text class=\"axis-title\" x=\"0\" y=\"0\" "
                      "font-size=\"16\" text-anchor=\"middle\" "
                      "transform=\"translate(");
    put_num(out, 20);
    api_buf_putc(out, ',');
    put_num(out, cy);
    api_buf_puts(out, ") rotate(-90)\">Queries</text>\n");
}

/* Frame, ticks with the original indices (or the token labels), and the
 * axis titles. */
static void panel_axes(api_buf *out, const api_svg_heatmap *h,
                       const layout *L) {
    api_buf_puts(out, "<rect class=\"frame\"");
    put_num_attr(out, "x", L->left);
    put_num_attr(out, "y", PANEL_TOP);
    put_num_attr(out, "width", L->gw);
    put_num_attr(out, "height", L->gh);
    api_buf_puts(out,
                 " fill=\"none\" stroke=\"#000000\" stroke-width=\"1\"/>\n");
    api_buf_puts(out,
                 "<g class=\"ticks\" font-size=\"13\" fill=\"#000000\">\n");
    key_ticks(out, h, L);
    query_ticks(out, h, L);
    api_buf_puts(out, "</g>\n");
    axis_titles(out, L);
}

/* A round step (1, 2, 2.5 or 5 times a power of ten) giving 3 to 6 ticks
 * from 0 to vmax > 0. */
static double tick_value_step(double vmax) {
    static const double mult[4] = {1, 2, 2.5, 5};
    double p = pow(10, floor(log10(vmax / 5)));
    for (;; p *= 10)
        for (int i = 0; i < 4; i++)
            if (vmax / (mult[i] * p) < 5.5)
                return mult[i] * p;
}

/* The colours at the scale's two ends and its middle, for the titles. */
static const char *const palette_words[API_PALETTE_COUNT][2] = {
    {"white", "dark red"},
    {"dark purple", "yellow"},
    {"dark blue", "dark red"},
};

/* The colour bar right of the panels: the gradient from the scale's
 * bottom (0, or -vmax for a diverging palette) to the largest weight
 * (top), round ticks, and its title. */
static void colour_bar(api_buf *out, const api_svg_heatmap *h,
                       const layout *L) {
    double x = MARGIN + (double)L->per_row * L->pw + 8;
    double y = TITLE_H + PANEL_TOP;
    double hgt = L->gh > BAR_MIN_H ? L->gh : BAR_MIN_H;
    api_buf_puts(out, "<g class=\"colorbar\">\n<title>colour scale: weight ");
    put_fmt(out, "%.6g (%s) to %.6g (%s)", L->lo, palette_words[h->palette][0],
            L->vmax, palette_words[h->palette][1]);
    if (api_palette_diverging(h->palette))
        api_buf_puts(out, ", centred at 0 (near white)");
    api_buf_puts(out, ", the largest weight shown</title>\n<rect x=\"");
    put_num(out, x);
    api_buf_puts(out, "\" y=\"");
    put_num(out, y);
    api_buf_puts(out, "\" width=\"");
    put_num(out, BAR_W);
    api_buf_puts(out, "\" height=\"");
    put_num(out, hgt);
    api_buf_puts(out, "\" fill=\"url(#attnd-scale)\" stroke=\"#000000\" "
                      "stroke-width=\"1\"/>\n");
    double step = tick_value_step(L->vmax);
    int first = api_palette_diverging(h->palette)
                    ? -(int)floor(L->vmax / step * (1 + 1e-9))
                    : 0;
    for (int i = first; i * step <= L->vmax * (1 + 1e-9); i++) {
        double ty = y + hgt - hgt * scale_pos(L, i * step);
        api_buf_puts(out, "<line x1=\"");
        put_num(out, x + BAR_W);
        api_buf_puts(out, "\" y1=\"");
        put_num(out, ty);
        api_buf_puts(out, "\" x2=\"");
        put_num(out, x + BAR_W + 5);
        api_buf_puts(out, "\" y2=\"");
        put_num(out, ty);
        api_buf_puts(out, "\" stroke=\"#000000\"/><text x=\"");
        put_num(out, x + BAR_W + 8);
        api_buf_puts(out, "\" y=\"");
        put_num(out, ty + 4.5);
        put_fmt(out, "\" font-size=\"13\">%.3g</text>\n", i * step);
    }
    api_buf_puts(out, "<text x=\"0\" y=\"0\" font-size=\"16\" "
                      "text-anchor=\"middle\" transform=\"translate(");
    put_num(out, x + BAR_W + 74);
    api_buf_putc(out, ',');
    put_num(out, y + hgt / 2);
    api_buf_puts(out, ") rotate(-90)\">weight</text>\n</g>\n");
}

int api_svg_heatmap_write(api_buf *out, const api_svg_heatmap *h) {
    layout L;
    plan(&L, h);
    int sampled = L.rows < h->Nq || L.cols < h->Nk;
    /* 1. the document element, its title and the gradient */
    api_buf_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "version=\"1.1\" width=\"");
    put_num(out, L.width);
    api_buf_puts(out, "\" height=\"");
    put_num(out, L.height);
    api_buf_puts(out, "\" viewBox=\"0 0 ");
    put_num(out, L.width);
    api_buf_putc(out, ' ');
    put_num(out, L.height);
    api_buf_puts(out, "\" font-family=\"DejaVu Sans, Arial, Helvetica, "
                      "sans-serif\">\n<title>");
    api_buf_puts(out, h->title);
    put_fmt(out, ": %zu panel%s of %zu %s × %zu %s", h->B * h->H,
            h->B * h->H == 1 ? "" : "s", h->Nq,
            h->Nq == 1 ? "query" : "queries", h->Nk,
            h->Nk == 1 ? "key" : "keys");
    if (sampled)
        put_fmt(out, ", block-averaged to %zu × %zu cells per panel", L.rows,
                L.cols);
    api_buf_puts(out, "</title>\n<desc>Keys on x, queries on y; ");
    if (h->palette == API_PALETTE_REDS)
        api_buf_puts(out, "darker cells are larger weights");
    else
        put_fmt(out,
                "palette %s: %s cells are the smallest weights, %s the "
                "largest",
                api_palette_name(h->palette),
                api_palette_diverging(h->palette)
                    ? "near-white"
                    : palette_words[h->palette][0],
                palette_words[h->palette][1]);
    api_buf_puts(out, " (colour bar on the right).</desc>\n<defs>"
                      "<linearGradient id=\"attnd-scale\" x1=\"0\" y1=\"1\" "
                      "x2=\"0\" y2=\"0\">\n");
    int stops = h->palette == API_PALETTE_REDS ? 8 : 16;
    for (int i = 0; i <= stops; i++) {
        char hex[8];
        api_palette_colour(h->palette, (double)i / stops, hex);
        put_fmt(out, "<stop offset=\"%g\" stop-color=\"%s\"/>\n",
                (double)i / stops, hex);
    }
    api_buf_puts(out, "</linearGradient></defs>\n<rect x=\"0\" y=\"0\" "
                      "width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
                      "<text class=\"title\" x=\"");
    put_num(out, MARGIN);
    api_buf_puts(out, "\" y=\"28\" font-size=\"20\" font-weight=\"bold\">");
    api_buf_puts(out, h->title);
    api_buf_puts(out, "</text>\n");

    /* 2. one panel per (example, head), row-major as the weights */
    size_t panel_size = h->Nq * h->Nk;
    for (size_t b = 0; b < h->B; b++)
        for (size_t hd = 0; hd < h->H; hd++) {
            size_t i = b * h->H + hd;
            double px = MARGIN + (double)(i % L.per_row) * L.pw;
            double py = TITLE_H + (double)(i / L.per_row) * L.ph;
            api_buf_puts(out, "<g class=\"panel\" transform=\"translate(");
            put_num(out, px);
            api_buf_putc(out, ',');
            put_num(out, py);
            api_buf_puts(out, ")\">\n");
            panel_titles(out, h, &L, b, hd);
            panel_cells(out, h, &L, h->weights + i * panel_size);
            panel_axes(out, h, &L);
            api_buf_puts(out, "</g>\n");
        }

    /* 3. the colour bar */
    colour_bar(out, h, &L);
    api_buf_puts(out, "</svg>\n");
    return out->failed ? -1 : 0;
}

int api_svg_wanted(const api_call *call) {
    return call->req && api_accept_prefers_svg(call->req->accept);
}

int api_svg_palette_of(const char *query, api_palette *out, api_problem *p) {
    *out = API_PALETTE_REDS;
    const char *value = NULL;
    size_t len = 0;
    /* the last palette=...; names and values are plain ASCII, so a
     * percent-encoded value is not one of them */
    for (const char *s = query; s && *s;) {
        size_t n = strcspn(s, "&");
        if (n >= 8 && !memcmp(s, "palette=", 8)) {
            value = s + 8;
            len = n - 8;
        } else if (n == 7 && !memcmp(s, "palette", 7)) {
            value = s + 7;
            len = 0;
        }
        s += n + (s[n] == '&');
    }
    if (!value)
        return 0;
    int found = api_palette_find(value, len);
    if (found < 0)
        return api_fail(p, API_E_INVALID_VALUE, "/palette",
                        "palette must be reds (d2l's, the default), viridis "
                        "(sequential, colour-blind safe) or rdbu (diverging, "
                        "centred at 0); got \"%.*s\"",
                        len > 40 ? 40 : (int)len, value);
    *out = (api_palette)found;
    return 0;
}

int api_svg_respond(api_call *call, const char *title, const double *weights,
                    size_t B, size_t H, size_t Nq, size_t Nk) {
    if (!api_svg_wanted(call))
        return 0;
    api_svg_heatmap h = {title, weights, B, H, Nq, Nk, {NULL, NULL}, 0};
    if (api_labels_read(&h.labels, call->body, Nq, Nk, &call->problem) ||
        api_svg_palette_of(call->req->query, &h.palette, &call->problem))
        return -1;
    size_t cells = api_svg_cell_count(&h);
    if (cells > API_SVG_MAX_CELLS)
        return api_fail(&call->problem, API_E_PAYLOAD_TOO_LARGE, NULL,
                        "the heatmap would draw %zu cells (%zu panels of at "
                        "most %d × %d); a picture has at most %zu: ask for "
                        "JSON (Accept: application/json) or send fewer "
                        "examples or heads",
                        cells, B * H, API_SVG_MAX_SIDE, API_SVG_MAX_SIDE,
                        API_SVG_MAX_CELLS);
    if (B * H > API_SVG_MAX_PANELS) /* cells <= 2^20 bounds B·H */
        return api_fail(&call->problem, API_E_PAYLOAD_TOO_LARGE, NULL,
                        "the heatmap would draw %zu panels (one per example "
                        "and head); a picture has at most %d: ask for JSON "
                        "(Accept: application/json) or send fewer examples "
                        "or heads",
                        B * H, API_SVG_MAX_PANELS);
    /* the picture is text of its own, reserved before it is drawn */
    uint64_t bytes = 4096 + (uint64_t)B * H * SVG_PANEL_BYTES +
                     (uint64_t)cells * SVG_CELL_BYTES;
    if (h.labels.queries || h.labels.keys) {
        /* a label escaped takes at most 6 bytes a byte (&quot;): twice in
         * each tooltip, twice at each tick (its text and its <title>) */
        uint64_t label = 6 * API_LABEL_MAX_BYTES + 8;
        size_t side = min_z(Nq, API_SVG_MAX_SIDE) * min_z(Nk, API_SVG_MAX_SIDE);
        if (side <= CELL_TOOLTIP_MAX)
            bytes += (uint64_t)B * H * side * 2 * label;
        bytes += (uint64_t)B * H *
                 (min_z(Nq, API_SVG_MAX_SIDE) + min_z(Nk, API_SVG_MAX_SIDE)) *
                 2 * label;
    }
    if (api_ledger_reserve(call->ledger, bytes, "the heatmap", &call->problem))
        return -1;
    api_buf_free(&call->out);
    if (api_svg_heatmap_write(&call->out, &h))
        return api_fail(&call->problem, API_E_INTERNAL, NULL,
                        "out of memory while drawing the heatmap");
    call->content_type = API_CT_SVG;
    return 0;
}

static int respond_heatmap(api_call *call, const api_result *r) {
    if (api_svg_wanted(call) && api_flow_svg_wanted(call, r)) {
        api_palette pal;
        if (api_svg_palette_of(call->req->query, &pal, &call->problem))
            return -1;
        return api_flow_svg_respond(call, r, pal);
    }
    return api_svg_respond(call, r->heatmap.title, r->heatmap.weights,
                           r->heatmap.B, r->heatmap.H, r->heatmap.Nq,
                           r->heatmap.Nk);
}

/* The front's place in api/registry.c's list (front.h). */
const api_front api_front_svg = {
    .wants_heatmap = api_svg_wanted,
    .respond_heatmap = respond_heatmap,
};
