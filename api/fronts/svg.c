/*
 * svg.c — the SVG 1.1 weight heatmap (see svg.h). Layout, in user units
 * (CSS pixels at the natural size; the viewBox lets any viewer scale it):
 *
 *   title
 *   panel panel ... (H per row for multi-head, else up to 4 per row)   colour
 *   panel panel ...                                                    bar
 *
 * Each panel: its label on top, the grid of cells (cell side 384 / the
 * longer axis, at most 36), tick labels with the original indices, "Keys"
 * under the grid and "Queries" rotated on its left.
 */
#include "svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "accept.h"

/* Layout constants, user units. */
#define GRID_MAX 384.0    /* the grid's longer side */
#define CELL_MAX 36.0     /* largest cell side */
#define PANEL_LEFT 70.0   /* y tick labels and "Queries" */
#define PANEL_TOP 30.0    /* panel label */
#define PANEL_BOTTOM 56.0 /* x tick labels and "Keys" */
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

/* matplotlib's "Reds" colour map (d2l's show_heatmaps), 9 anchors. */
static const unsigned char reds[9][3] = {
    {0xff, 0xf5, 0xf0}, {0xfe, 0xe0, 0xd2}, {0xfc, 0xbb, 0xa1},
    {0xfc, 0x92, 0x72}, {0xfb, 0x6a, 0x4a}, {0xef, 0x3b, 0x2c},
    {0xcb, 0x18, 0x1d}, {0xa5, 0x0f, 0x15}, {0x67, 0x00, 0x0d}};

/* "#rrggbb" for t in [0, 1] (clamped), linear between anchors. */
static void colour(char hex[8], double t) {
    if (!(t > 0))
        t = 0;
    if (t > 1)
        t = 1;
    double pos = t * 8;
    int i = (int)pos;
    if (i > 7)
        i = 7;
    double f = pos - i;
    int rgb[3];
    for (int c = 0; c < 3; c++)
        rgb[c] = (int)(reds[i][c] + f * (reds[i + 1][c] - reds[i][c]) + 0.5);
    snprintf(hex, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

/* A coordinate: at most 2 decimals, trailing zeros dropped. */
static void put_num(api_buf *out, double x) {
    char s[32];
    snprintf(s, sizeof s, "%.2f", x);
    char *dot = strchr(s, '.');
    if (dot) {
        char *end = s + strlen(s);
        while (end > dot && (end[-1] == '0' || end[-1] == '.'))
            *--end = '\0';
    }
    if (!strcmp(s, "-0"))
        strcpy(s, "0");
    api_buf_puts(out, s);
}

static void put_fmt(api_buf *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void put_fmt(api_buf *out, const char *fmt, ...) {
    char s[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    if (n > 0)
        api_buf_append(out, s, (size_t)n < sizeof s ? (size_t)n : sizeof s - 1);
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
 * MAX_TICKS labels. */
static size_t tick_step(size_t n) {
    size_t step = 1;
    for (int k = 0;; k++) {
        size_t s = step * (k % 3 == 1 ? 2 : k % 3 == 2 ? 5 : 1);
        if ((n + s - 1) / s <= MAX_TICKS)
            return s;
        if (k % 3 == 2)
            step *= 10;
    }
}

/* Geometry shared by every panel. */
typedef struct {
    size_t rows, cols; /* cells drawn: min(Nq, 256), min(Nk, 256) */
    double cell;       /* cell side */
    double gw, gh;     /* grid size */
    double pw, ph;     /* panel size */
    size_t per_row, panel_rows;
    double width, height;
    double vmax; /* the colour scale's top */
} layout;

static void plan(layout *L, const api_svg_heatmap *h) {
    L->rows = min_z(h->Nq, API_SVG_MAX_SIDE);
    L->cols = min_z(h->Nk, API_SVG_MAX_SIDE);
    size_t longer = L->rows > L->cols ? L->rows : L->cols;
    L->cell = GRID_MAX / (double)longer;
    if (L->cell > CELL_MAX)
        L->cell = CELL_MAX;
    L->gw = L->cell * (double)L->cols;
    L->gh = L->cell * (double)L->rows;
    L->pw =
        PANEL_LEFT + (L->gw > PANEL_MIN_W ? L->gw : PANEL_MIN_W) + PANEL_RIGHT;
    L->ph =
        PANEL_TOP + (L->gh > PANEL_MIN_H ? L->gh : PANEL_MIN_H) + PANEL_BOTTOM;
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
                (panels_h > PANEL_TOP + bar_h + PANEL_BOTTOM
                     ? panels_h
                     : PANEL_TOP + bar_h + PANEL_BOTTOM) +
                MARGIN;
    size_t total = panels * h->Nq * h->Nk;
    double vmax = 0;
    for (size_t i = 0; i < total; i++)
        if (h->weights[i] > vmax)
            vmax = h->weights[i];
    L->vmax = vmax > 0 ? vmax : 1;
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
        put_num(out, PANEL_LEFT);
        api_buf_puts(out, "\" y=\"20\" font-size=\"16\" font-weight=\"bold\">");
        api_buf_puts(out, label);
        api_buf_puts(out, "</text>\n");
    }
}

static void panel_cells(api_buf *out, const api_svg_heatmap *h, const layout *L,
                        const double *panel) {
    int tooltips = L->rows * L->cols <= CELL_TOOLTIP_MAX;
    api_buf_puts(out, "<g class=\"cells\" transform=\"translate(");
    put_num(out, PANEL_LEFT);
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
            colour(hex, v / L->vmax);
            put_fmt(out,
                    "<rect class=\"cell\" x=\"%zu\" y=\"%zu\" width=\"1\" "
                    "height=\"1\" fill=\"%s\"",
                    c, r, hex);
            if (tooltips)
                put_fmt(out,
                        "><title>query %zu, key %zu: %.6g</title></rect>\n", r,
                        c, v);
            else
                api_buf_puts(out, "/>\n");
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
            put_num(out, PANEL_LEFT + ((double)c + 0.5) * L->cell);
            api_buf_puts(out, "\" y=\"");
            put_num(out, PANEL_TOP + ((double)r + 0.5) * L->cell + 4);
            put_fmt(out, "\" fill=\"%s\">%.2f</text>\n",
                    v / L->vmax > 0.5 ? "#ffffff" : "#000000", v);
        }
    api_buf_puts(out, "</g>\n");
}

/* Frame, ticks with the original indices, and the axis titles. */
static void panel_axes(api_buf *out, const api_svg_heatmap *h,
                       const layout *L) {
    api_buf_puts(out, "<rect class=\"frame\" x=\"");
    put_num(out, PANEL_LEFT);
    api_buf_puts(out, "\" y=\"");
    put_num(out, PANEL_TOP);
    api_buf_puts(out, "\" width=\"");
    put_num(out, L->gw);
    api_buf_puts(out, "\" height=\"");
    put_num(out, L->gh);
    api_buf_puts(out, "\" fill=\"none\" stroke=\"#000000\" "
                      "stroke-width=\"1\"/>\n");
    api_buf_puts(out,
                 "<g class=\"ticks\" font-size=\"13\" fill=\"#000000\">\n");
    size_t step = tick_step(h->Nk);
    double bottom = PANEL_TOP + L->gh;
    for (size_t k = 0; k < h->Nk; k += step) {
        double x = PANEL_LEFT + ((double)k + 0.5) * L->gw / (double)h->Nk;
        api_buf_puts(out, "<line x1=\"");
        put_num(out, x);
        api_buf_puts(out, "\" y1=\"");
        put_num(out, bottom);
        api_buf_puts(out, "\" x2=\"");
        put_num(out, x);
        api_buf_puts(out, "\" y2=\"");
        put_num(out, bottom + 5);
        api_buf_puts(out, "\" stroke=\"#000000\"/><text x=\"");
        put_num(out, x);
        api_buf_puts(out, "\" y=\"");
        put_num(out, bottom + 19);
        put_fmt(out, "\" text-anchor=\"middle\">%zu</text>\n", k);
    }
    step = tick_step(h->Nq);
    for (size_t q = 0; q < h->Nq; q += step) {
        double y = PANEL_TOP + ((double)q + 0.5) * L->gh / (double)h->Nq;
        api_buf_puts(out, "<line x1=\"");
        put_num(out, PANEL_LEFT - 5);
        api_buf_puts(out, "\" y1=\"");
        put_num(out, y);
        api_buf_puts(out, "\" x2=\"");
        put_num(out, PANEL_LEFT);
        api_buf_puts(out, "\" y2=\"");
        put_num(out, y);
        api_buf_puts(out, "\" stroke=\"#000000\"/><text x=\"");
        put_num(out, PANEL_LEFT - 8);
        api_buf_puts(out, "\" y=\"");
        put_num(out, y + 4.5);
        put_fmt(out, "\" text-anchor=\"end\">%zu</text>\n", q);
    }
    api_buf_puts(out, "</g>\n");
    /* axis titles */
    double gw_shown = L->gw > PANEL_MIN_W ? L->gw : PANEL_MIN_W;
    double gh_shown = L->gh > PANEL_MIN_H ? L->gh : PANEL_MIN_H;
    api_buf_puts(out, "<text class=\"axis-title\" x=\"");
    put_num(out, PANEL_LEFT + gw_shown / 2);
    api_buf_puts(out, "\" y=\"");
    put_num(out, bottom + 42);
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

/* The colour bar right of the panels: the gradient from 0 (bottom) to the
 * largest weight (top), round ticks, and its title. */
static void colour_bar(api_buf *out, const layout *L) {
    double x = MARGIN + (double)L->per_row * L->pw + 8;
    double y = TITLE_H + PANEL_TOP;
    double hgt = L->gh > BAR_MIN_H ? L->gh : BAR_MIN_H;
    api_buf_puts(out, "<g class=\"colorbar\">\n<title>colour scale: weight "
                      "0 (white) to ");
    put_fmt(out, "%.6g", L->vmax);
    api_buf_puts(out, " (dark red), the largest weight shown</title>\n<rect "
                      "x=\"");
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
    for (int i = 0; i * step <= L->vmax * (1 + 1e-9); i++) {
        double ty = y + hgt - hgt * (i * step) / L->vmax;
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
    api_buf_puts(out, "</title>\n<desc>Keys on x, queries on y; darker "
                      "cells are larger weights (colour bar on the "
                      "right).</desc>\n<defs><linearGradient "
                      "id=\"attnd-scale\" x1=\"0\" y1=\"1\" x2=\"0\" "
                      "y2=\"0\">\n");
    for (int i = 0; i < 9; i++) {
        char hex[8];
        colour(hex, i / 8.0);
        put_fmt(out, "<stop offset=\"%g\" stop-color=\"%s\"/>\n", i / 8.0, hex);
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
    colour_bar(out, &L);
    api_buf_puts(out, "</svg>\n");
    return out->failed ? -1 : 0;
}

int api_svg_wanted(const api_call *call) {
    return call->req && api_accept_prefers_svg(call->req->accept);
}

int api_svg_respond(api_call *call, const char *title, const double *weights,
                    size_t B, size_t H, size_t Nq, size_t Nk) {
    if (!api_svg_wanted(call))
        return 0;
    api_svg_heatmap h = {title, weights, B, H, Nq, Nk};
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
    if (api_ledger_reserve(call->ledger, bytes, "the heatmap", &call->problem))
        return -1;
    api_buf_free(&call->out);
    if (api_svg_heatmap_write(&call->out, &h))
        return api_fail(&call->problem, API_E_INTERNAL, NULL,
                        "out of memory while drawing the heatmap");
    call->content_type = API_CT_SVG;
    return 0;
}
