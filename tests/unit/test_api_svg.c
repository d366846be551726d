/*
 * test_api_svg.c — Accept negotiation (RFC 9110 section 12.5.1 cases) and
 * the SVG weight heatmap (docs/contract.md section 11), checked without an XML
 * parser: the number of <rect class="cell"> elements, the viewBox against
 * width and height, cell colours at known weights (white for 0, the darkest
 * red for the largest weight, the middle anchor for a block mean of one
 * half), the <title> of block-averaged panels, panel labels, and the hook
 * through api_handle (content types, JSON for * / *, errors stay
 * problem+json, 413 for too many cells).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "accept.h"
#include "api.h"
#include "palette.h"
#include "problem.h"
#include "svg.h"

/* Occurrences of needle in the first n bytes of s. */
static size_t count(const char *s, size_t n, const char *needle) {
    size_t hits = 0, k = strlen(needle);
    for (const char *p = s; (p = memmem(p, n - (size_t)(p - s), needle, k));
         p += k)
        hits++;
    return hits;
}

static char *render(const api_svg_heatmap *h, size_t *len) {
    api_buf out = {0};
    assert_int_equal(api_svg_heatmap_write(&out, h), 0);
    return api_buf_release(&out, len);
}

/* --- Accept -------------------------------------------------------------- */

static void test_accept_quality(void **state) {
    (void)state;
    static const struct {
        const char *accept, *type;
        int q;
    } cases[] = {
        {"*/*", "image/svg+xml", 1000},
        {"image/svg+xml", "image/svg+xml", 1000},
        {"image/svg+xml", "application/json", 0},
        {"IMAGE/SVG+XML", "image/svg+xml", 1000},
        {"image/svg+xml;q=0.5", "image/svg+xml", 500},
        {"image/svg+xml; Q=0.25", "image/svg+xml", 250},
        {"image/svg+xml;q=0.123", "image/svg+xml", 123},
        {"image/svg+xml;q=1.000", "image/svg+xml", 1000},
        {"image/svg+xml;q=0", "image/svg+xml", 0},
        {"text/html;q=0.8, */*;q=0.25", "image/svg+xml", 250},
        {"image/*;q=0.4, */*;q=0.1", "image/svg+xml", 400},
        /* the most specific range wins, not the highest q */
        {"application/json;q=0.3, application/*;q=0.9, */*", "application/json",
         300},
        {"image/svg+xml;charset=utf-8;q=0.2, image/svg+xml;q=0.9",
         "image/svg+xml", 200},
        /* equally specific: the highest q */
        {"image/svg+xml;q=0.2, image/svg+xml;q=0.7", "image/svg+xml", 700},
        /* malformed ranges are ignored */
        {"image/svg+xml;q=1.5", "image/svg+xml", 0},
        {"image/svg+xml;q=1.001", "image/svg+xml", 0},
        {"image/svg+xml;q=0.5000", "image/svg+xml", 0},
        {"image/svg+xml;q=", "image/svg+xml", 0},
        {"image/svg+xml;q=abc, */*;q=0.3", "image/svg+xml", 300},
        {"image/svg+xml;;q=0.5", "image/svg+xml", 0},
        {"*/svg+xml", "image/svg+xml", 0},
        {"image", "image/svg+xml", 0},
        {"", "image/svg+xml", 0},
        {",,, ,", "image/svg+xml", 0},
        /* a quoted parameter may hold commas and semicolons */
        {"image/svg+xml;x=\"a,b;q=0\";q=0.6", "image/svg+xml", 600},
        {"image/svg+xml;x=\"unterminated, application/json", "application/json",
         0},
        /* accept-ext after q does not change the range */
        {"image/svg+xml;q=0.5;ext=1", "image/svg+xml", 500},
        {" \timage/svg+xml \t; q=0.7 \t, text/plain", "image/svg+xml", 700},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int q = api_accept_quality(cases[i].accept, cases[i].type);
        if (q != cases[i].q)
            fail_msg("Accept \"%s\" gives %s q=%d, expected %d",
                     cases[i].accept, cases[i].type, q, cases[i].q);
    }
    assert_int_equal(api_accept_quality(NULL, "image/svg+xml"), 1000);
}

static void test_accept_prefers_svg(void **state) {
    (void)state;
    static const struct {
        const char *accept;
        int svg;
    } cases[] = {
        {"image/svg+xml", 1},
        {"image/*", 1},
        {"image/svg+xml;q=0.9, application/json;q=0.8", 1},
        {"application/json;q=0.5, image/svg+xml", 1},
        {"*/*;q=0.1, image/svg+xml;q=0.2", 1},
        {"application/*;q=0.2, image/svg+xml;q=0.3", 1},
        {"*/*", 0},                             /* alone means JSON */
        {"image/svg+xml, application/json", 0}, /* a tie means JSON */
        {"image/svg+xml;q=0.5, application/json", 0},
        {"image/svg+xml;q=0.5, */*", 0},
        {"application/json", 0},
        {"text/html", 0}, /* neither: JSON, never 406 */
        {"image/svg+xml;q=0", 0},
        {"image/png", 0},
        {"", 0},
        {NULL, 0},
        {"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,"
         "image/webp,image/apng,*/*;q=0.8",
         0}, /* a browser's navigation */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (api_accept_prefers_svg(cases[i].accept) != cases[i].svg)
            fail_msg("Accept \"%s\": expected %s", cases[i].accept,
                     cases[i].svg ? "SVG" : "JSON");
}

/* --- the picture --------------------------------------------------------- */

/* The viewBox is "0 0 width height" with the width and height attributes. */
static void check_viewbox(const char *svg) {
    double w, h, vw, vh;
    const char *p = strstr(svg, "<svg ");
    assert_non_null(p);
    assert_non_null(strstr(p, "xmlns=\"http://www.w3.org/2000/svg\""));
    assert_non_null(strstr(p, "version=\"1.1\""));
    const char *pw = strstr(p, " width=\""), *ph = strstr(p, " height=\"");
    const char *pv = strstr(p, "viewBox=\"");
    assert_non_null(pw);
    assert_non_null(ph);
    assert_non_null(pv);
    assert_int_equal(sscanf(pw, " width=\"%lf\"", &w), 1);
    assert_int_equal(sscanf(ph, " height=\"%lf\"", &h), 1);
    assert_int_equal(sscanf(pv, "viewBox=\"0 0 %lf %lf\"", &vw, &vh), 2);
    assert_true(w > 0 && h > 0);
    assert_true(vw == w && vh == h);
    assert_true(strstr(svg, "</svg>") != NULL);
}

/* d2l's toy: valid_lens [2, 6] over 10 keys, one query per example. */
static void test_toy_picture(void **state) {
    (void)state;
    double w[20] = {0};
    w[0] = w[1] = 0.5;
    for (int k = 0; k < 6; k++)
        w[10 + k] = 1.0 / 6;
    api_svg_heatmap h = {"Scaled dot-product attention weights",
                         w,
                         2,
                         1,
                         1,
                         10,
                         {NULL, NULL},
                         API_PALETTE_REDS};
    size_t len;
    char *svg = render(&h, &len);
    check_viewbox(svg);
    assert_int_equal(count(svg, len, "<rect class=\"cell\""), 20);
    assert_int_equal(count(svg, len, "<g class=\"panel\""), 2);
    assert_int_equal(count(svg, len, ">Keys</text>"), 2);
    assert_int_equal(count(svg, len, ">Queries</text>"), 2);
    assert_int_equal(count(svg, len, ">example 0</text>"), 1);
    assert_int_equal(count(svg, len, ">example 1</text>"), 1);
    assert_int_equal(count(svg, len, "class=\"colorbar\""), 1);
    assert_int_equal(count(svg, len, "<linearGradient"), 1);
    assert_int_equal(count(svg, len, "block-averaged"), 0);
    /* the largest weight is the darkest red, zero is the lightest */
    assert_int_equal(count(svg, len,
                           "<rect class=\"cell\" x=\"0\" y=\"0\" width=\"1\" "
                           "height=\"1\" fill=\"#67000d\""),
                     1);
    assert_int_equal(count(svg, len,
                           "<rect class=\"cell\" x=\"1\" y=\"0\" width=\"1\" "
                           "height=\"1\" fill=\"#67000d\""),
                     1);
    assert_int_equal(count(svg, len, "fill=\"#fff5f0\""), 8 + 4);
    /* small panels print the weights and give each cell a tooltip */
    assert_int_equal(count(svg, len, ">0.50</text>"), 2);
    assert_int_equal(count(svg, len, ">0.17</text>"), 6);
    assert_int_equal(count(svg, len, "<title>query 0, key 1: 0.5</title>"), 1);
    /* the colour bar's top tick is a round value at or under 0.5 */
    assert_int_equal(count(svg, len, ">0.5</text>"), 1);
    free(svg);
}

/* 512 queries × 1 key alternating 0 and 1: every 2 × 1 block averages to
 * 0.5, the middle of the colour map (#fb6a4a), and the title says so. */
static void test_block_average(void **state) {
    (void)state;
    size_t Nq = 512;
    double *w = malloc(Nq * sizeof *w);
    assert_non_null(w);
    for (size_t q = 0; q < Nq; q++)
        w[q] = (double)(q % 2);
    api_svg_heatmap h = {"Alternating weights", w, 1, 1, Nq, 1, {NULL, NULL},
                         API_PALETTE_REDS};
    size_t len;
    char *svg = render(&h, &len);
    check_viewbox(svg);
    assert_int_equal(count(svg, len, "<rect class=\"cell\""), 256);
    assert_int_equal(count(svg, len, "fill=\"#fb6a4a\""), 256);
    assert_int_equal(count(svg, len, "block-averaged to 256 × 1 cells"), 2);
    free(svg);
    free(w);
}

/* 300 × 260 per panel, 2 examples: 256 × 256 cells each, both panel titles
 * and the document title say block-averaged; exactly 256 × 256 is drawn
 * one cell per weight. */
static void test_large_panels(void **state) {
    (void)state;
    size_t Nq = 300, Nk = 260, n = 2 * Nq * Nk;
    double *w = calloc(n, sizeof *w);
    assert_non_null(w);
    for (size_t i = 0; i < n; i += 7)
        w[i] = 1.0 / (double)(1 + i % 13);
    api_svg_heatmap h = {"Big",           w, 2, 1, Nq, Nk, {NULL, NULL},
                         API_PALETTE_REDS};
    assert_int_equal(api_svg_cell_count(&h), 2 * 256 * 256);
    size_t len;
    char *svg = render(&h, &len);
    check_viewbox(svg);
    assert_int_equal(count(svg, len, "<rect class=\"cell\""), 2 * 256 * 256);
    assert_int_equal(count(svg, len,
                           "<title>example 0: 300 queries × 260 "
                           "keys, block-averaged to 256 × 256"),
                     1);
    assert_int_equal(count(svg, len,
                           "<title>example 1: 300 queries × 260 "
                           "keys, block-averaged to 256 × 256"),
                     1);
    assert_int_equal(count(svg, len,
                           "<title>Big: 2 panels of 300 queries × "
                           "260 keys, block-averaged to 256 × 256 "
                           "cells per panel</title>"),
                     1);
    /* no per-cell tooltips or printed values at this size */
    assert_int_equal(count(svg, len, "<title>query"), 0);
    free(svg);

    h.B = 1;
    h.Nq = h.Nk = 256;
    svg = render(&h, &len);
    assert_int_equal(count(svg, len, "<rect class=\"cell\""), 256 * 256);
    assert_int_equal(count(svg, len, "block-averaged"), 0);
    free(svg);
    free(w);
}

/* Multi-head weights (B, H, Nq, Nk): one panel per example and head, in
 * row-major order, labelled with both. */
static void test_heads(void **state) {
    (void)state;
    double w[2 * 3 * 2 * 4];
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        w[i] = 0.25;
    api_svg_heatmap h = {"Multi-head attention weights",
                         w,
                         2,
                         3,
                         2,
                         4,
                         {NULL, NULL},
                         API_PALETTE_REDS};
    size_t len;
    char *svg = render(&h, &len);
    check_viewbox(svg);
    assert_int_equal(count(svg, len, "<rect class=\"cell\""), 48);
    assert_int_equal(count(svg, len, "<g class=\"panel\""), 6);
    assert_int_equal(count(svg, len, ">example 1, head 2</text>"), 1);
    assert_int_equal(count(svg, len, ">example 0, head 0</text>"), 1);
    /* all weights equal: every cell is the largest, the darkest red */
    assert_int_equal(count(svg, len, "fill=\"#67000d\""), 48);
    free(svg);

    h.B = 1; /* unbatched (H, Nq, Nk) */
    svg = render(&h, &len);
    assert_int_equal(count(svg, len, ">head 2</text>"), 1);
    assert_int_equal(count(svg, len, "example"), 0);
    free(svg);
}

/* 1 × 1 is still a readable picture: one cell, axis titles, colour bar,
 * and the title fits in the width. All-zero weights (fully masked rows
 * under "zero") draw white with a scale to 1. */
static void test_one_by_one(void **state) {
    (void)state;
    double w[1] = {0};
    api_svg_heatmap h = {"A rather long title for a tiny single-cell picture",
                         w,
                         1,
                         1,
                         1,
                         1,
                         {NULL, NULL},
                         API_PALETTE_REDS};
    size_t len;
    char *svg = render(&h, &len);
    check_viewbox(svg);
    double width;
    assert_int_equal(sscanf(strstr(svg, " width=\""), " width=\"%lf\"", &width),
                     1);
    assert_true(width >= 12 * strlen(h.title));
    assert_int_equal(count(svg, len, "<rect class=\"cell\""), 1);
    assert_int_equal(count(svg, len, "fill=\"#fff5f0\""), 1);
    assert_int_equal(count(svg, len, ">Keys</text>"), 1);
    assert_int_equal(count(svg, len, ">Queries</text>"), 1);
    assert_int_equal(count(svg, len, ">1</text>"), 1); /* colour bar top */
    free(svg);
}

static void test_cell_count_saturates(void **state) {
    (void)state;
    api_svg_heatmap h = {"x",  NULL, SIZE_MAX / 2, 3,
                         1000, 1000, {NULL, NULL}, API_PALETTE_REDS};
    assert_int_equal(api_svg_cell_count(&h), SIZE_MAX);
    api_svg_heatmap g = {
        "x", NULL, 3, 5, 100, 1000, {NULL, NULL}, API_PALETTE_REDS};
    assert_int_equal(api_svg_cell_count(&g), 3 * 5 * 100 * 256);
}

/* --- palettes and labels ------------------------------------------------ */

/* The palettes' ends and middles (palette.h): viridis is matplotlib's
 * entries 0, 128 and 255; rdbu is ColorBrewer's, near white at 0. */
static void test_palettes(void **state) {
    (void)state;
    static const struct {
        api_palette p;
        double t;
        const char *hex;
    } cases[] = {
        {API_PALETTE_REDS, 0, "#fff5f0"},
        {API_PALETTE_REDS, 1, "#67000d"},
        {API_PALETTE_REDS, 0.5, "#fb6a4a"},
        {API_PALETTE_VIRIDIS, 0, "#440154"},
        {API_PALETTE_VIRIDIS, 1, "#fde725"},
        {API_PALETTE_VIRIDIS, 0.5, "#21918c"},
        {API_PALETTE_RDBU, 0, "#053061"},
        {API_PALETTE_RDBU, 0.5, "#f7f7f7"},
        {API_PALETTE_RDBU, 1, "#67001f"},
        {API_PALETTE_VIRIDIS, -3, "#440154"},
        {API_PALETTE_VIRIDIS, 7, "#fde725"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char hex[8];
        api_palette_colour(cases[i].p, cases[i].t, hex);
        if (strcmp(hex, cases[i].hex))
            fail_msg("%s at %g: %s, expected %s", api_palette_name(cases[i].p),
                     cases[i].t, hex, cases[i].hex);
    }
    assert_int_equal(api_palette_find("viridis", 7), API_PALETTE_VIRIDIS);
    assert_int_equal(api_palette_find("rdbu", 4), API_PALETTE_RDBU);
    assert_int_equal(api_palette_find("Viridis", 7), -1);
    assert_int_equal(api_palette_find("rd", 2), -1);
    /* text on the ends: white on viridis' purple, black on its yellow */
    assert_int_equal(api_palette_dark(API_PALETTE_VIRIDIS, 0), 1);
    assert_int_equal(api_palette_dark(API_PALETTE_VIRIDIS, 1), 0);
    assert_int_equal(api_palette_dark(API_PALETTE_RDBU, 0.5), 0);
    /* the text chosen has at least 4.5:1 contrast (WCAG 2) on every colour
     * of every palette */
    for (int pal = 0; pal < 3; pal++)
        for (int k = 0; k <= 1000; k++) {
            char hex[8];
            api_palette_colour((api_palette)pal, k / 1000.0, hex);
            double lin[3];
            for (int c = 0; c < 3; c++) {
                char two[3] = {hex[1 + 2 * c], hex[2 + 2 * c], 0};
                double v = strtol(two, NULL, 16) / 255.0;
                lin[c] =
                    v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
            }
            double y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
            double contrast = api_palette_dark((api_palette)pal, k / 1000.0)
                                  ? 1.05 / (y + 0.05)
                                  : (y + 0.05) / 0.05;
            if (contrast < 4.5)
                fail_msg("%s at %g (%s): text contrast %.2f",
                         api_palette_name((api_palette)pal), k / 1000.0, hex,
                         contrast);
        }

    api_palette pal;
    api_problem p = {0};
    assert_int_equal(api_svg_palette_of(NULL, &pal, &p), 0);
    assert_int_equal(pal, API_PALETTE_REDS);
    assert_int_equal(api_svg_palette_of("x=1&palette=rdbu&y", &pal, &p), 0);
    assert_int_equal(pal, API_PALETTE_RDBU);
    assert_int_equal(
        api_svg_palette_of("palette=rdbu&palette=viridis", &pal, &p), 0);
    assert_int_equal(pal, API_PALETTE_VIRIDIS);
    assert_int_equal(api_svg_palette_of("palette=jet", &pal, &p), -1);
    assert_int_equal(p.code, API_E_INVALID_VALUE);
    assert_string_equal(p.pointer, "/palette");
}

/* A diverging picture: the weights' scale runs from -max to max, so 0 is
 * the near-white middle and the largest weight the darkest red. */
static void test_diverging_picture(void **state) {
    (void)state;
    double w[2] = {0, 0.5};
    api_svg_heatmap h = {"w", w, 1, 1, 1, 2, {NULL, NULL}, API_PALETTE_RDBU};
    size_t len;
    char *svg = render(&h, &len);
    assert_int_equal(count(svg, len, "fill=\"#f7f7f7\""), 1);
    assert_int_equal(count(svg, len, "fill=\"#67001f\""), 1);
    assert_int_equal(count(svg, len, ">-0.5</text>"), 1); /* bar bottom */
    assert_non_null(strstr(svg, "centred at 0"));
    free(svg);
}

/* Token labels: tick labels and tooltips carry them, escaped; a long one
 * is cut at its tenth character with its whole text in a <title>. */
static void test_labels_picture(void **state) {
    (void)state;
    double w[6] = {0.5, 0.25, 0.25, 0.1, 0.2, 0.7};
    json_t *q = json_pack("[ss]", "<script>", "a&b");
    json_t *k = json_pack("[sss]", "x", "y\"'", "ünïcödé-long-word");
    api_svg_heatmap h = {"w", w, 1, 1, 2, 3, {q, k}, API_PALETTE_REDS};
    size_t len;
    char *svg = render(&h, &len);
    assert_null(strstr(svg, "<script>"));
    assert_null(strstr(svg, "a&b"));
    assert_int_equal(count(svg, len, "class=\"tick-label\""), 5);
    assert_non_null(strstr(svg, "<title>&lt;script&gt;</title>&lt;script&gt;"));
    assert_non_null(strstr(svg, ">a&amp;b</text>"));
    assert_non_null(strstr(svg, ">y&quot;&#39;</text>"));
    assert_non_null(strstr(svg, "<title>ünïcödé-long-word</title>ünïcödé-l…"));
    assert_non_null(strstr(
        svg,
        "<title>query 1 “a&amp;b”, key 2 “ünïcödé-long-word”: 0.7</title>"));
    free(svg);
    json_decref(q);
    json_decref(k);
}

/* --- the hook, through api_handle ---------------------------------------- */

static const char *NW_BODY = "{\"x_train\":[1,2,4],\"y_train\":[0,3,1],"
                             "\"x_query\":[2.5],\"w\":0.5,\"y_query\":[3]}";

static api_response post(const char *path, const char *accept,
                         const char *body) {
    api_request req = {.method = "POST",
                       .path = path,
                       .content_type = "application/json",
                       .accept = accept,
                       .body = body,
                       .body_len = strlen(body)};
    api_response res;
    api_handle(&req, &res);
    return res;
}

static void test_hook(void **state) {
    (void)state;
    api_response res = post("/regression/nw", "image/svg+xml", NW_BODY);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.content_type, "image/svg+xml");
    assert_int_equal(res.vary_accept, 1);
    assert_int_equal(count(res.body, res.body_len, "<rect class=\"cell\""), 3);
    /* weights [0.3045, 0.3910, 0.3045]: the middle one is the darkest */
    assert_int_equal(count(res.body, res.body_len,
                           "x=\"1\" y=\"0\" width=\"1\" height=\"1\" "
                           "fill=\"#67000d\""),
                     1);
    assert_non_null(
        strstr(res.body, "<title>query 0, key 0: 0.304504</title>"));
    api_response_free(&res);

    const char *json_accepts[] = {"*/*", NULL, "text/html",
                                  "image/svg+xml, application/json"};
    for (size_t i = 0; i < 4; i++) {
        res = post("/regression/nw", json_accepts[i], NW_BODY);
        assert_int_equal(res.status, 200);
        assert_string_equal(res.content_type, "application/json");
        assert_int_equal(res.vary_accept, 1);
        assert_non_null(
            strstr(res.body, "\"predictions\":[1.4774782878985795]"));
        api_response_free(&res);
    }

    /* d2l's toy through dot and additive: 2 panels of 1 × 10 */
    char body[2048];
    char keys[512] = "", values[1024] = "";
    size_t kl = 0, vl = 0;
    for (int b = 0; b < 2; b++) {
        kl +=
            (size_t)snprintf(keys + kl, sizeof keys - kl, "%s[", b ? "," : "");
        vl += (size_t)snprintf(values + vl, sizeof values - vl, "%s[",
                               b ? "," : "");
        for (int i = 0; i < 10; i++) {
            kl += (size_t)snprintf(keys + kl, sizeof keys - kl, "%s[1,1]",
                                   i ? "," : "");
            vl += (size_t)snprintf(values + vl, sizeof values - vl,
                                   "%s[%d,%d,%d,%d]", i ? "," : "", 4 * i,
                                   4 * i + 1, 4 * i + 2, 4 * i + 3);
        }
        kl += (size_t)snprintf(keys + kl, sizeof keys - kl, "]");
        vl += (size_t)snprintf(values + vl, sizeof values - vl, "]");
    }
    snprintf(body, sizeof body,
             "{\"queries\":[[[0.5,-1]],[[2,0.25]]],\"keys\":[%s],"
             "\"values\":[%s],\"valid_lens\":[2,6]}",
             keys, values);
    res = post("/attention/dot", "image/svg+xml", body);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.content_type, "image/svg+xml");
    assert_int_equal(count(res.body, res.body_len, "<rect class=\"cell\""), 20);
    assert_int_equal(count(res.body, res.body_len, "<g class=\"panel\""), 2);
    api_response_free(&res);
    snprintf(body, sizeof body,
             "{\"queries\":[[[0.5,-1]],[[2,0.25]]],\"keys\":[%s],"
             "\"values\":[%s],\"valid_lens\":[2,6],\"num_hiddens\":8}",
             keys, values);
    res = post("/attention/additive", "image/*", body);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.content_type, "image/svg+xml");
    assert_int_equal(count(res.body, res.body_len, "<rect class=\"cell\""), 20);
    /* additive toy: the visible keys are all ones, so equal weights */
    assert_int_equal(count(res.body, res.body_len, ">0.50</text>"), 2);
    api_response_free(&res);

    /* errors stay problem+json */
    res = post("/regression/nw", "image/svg+xml", "{\"x_train\":[1]}");
    assert_int_equal(res.status, 422);
    assert_string_equal(res.content_type, "application/problem+json");
    api_response_free(&res);
    res = post("/regression/nw", "image/svg+xml", "{");
    assert_int_equal(res.status, 400);
    assert_string_equal(res.content_type, "application/problem+json");
    api_response_free(&res);
}

/* labels and palette through api_handle: checked for JSON and SVG */
static void test_labels_hook(void **state) {
    (void)state;
    const char *base =
        "{\"queries\":[[1,0],[0,1]],\"keys\":[[1,0],[0,1],[1,1]],"
        "\"values\":[[1],[2],[3]],\"labels\":";
    static const struct {
        const char *labels, *code, *pointer;
    } cases[] = {
        {"{\"queries\":[\"a\"]}", "shape_mismatch", "/labels/queries"},
        {"{\"keys\":[\"a\",\"b\",\"c\",\"d\"]}", "shape_mismatch",
         "/labels/keys"},
        {"{\"queries\":[\"a\",1]}", "wrong_type", "/labels/queries/1"},
        {"{\"queries\":\"ab\"}", "wrong_type", "/labels/queries"},
        {"[]", "wrong_type", "/labels"},
        {"{\"query\":[\"a\",\"b\"]}", "unknown_field", "/labels/query"},
        {"{\"queries\":[\"a\",\"b\\u0007\"]}", "invalid_value",
         "/labels/queries/1"},
        {"{\"keys\":[\"a\",\"b\",\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"]}",
         "invalid_value", "/labels/keys/2"},
    };
    const char *accepts[2] = {"application/json", "image/svg+xml"};
    char body[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int a = 0; a < 2; a++) {
            snprintf(body, sizeof body, "%s%s}", base, cases[i].labels);
            api_response res = post("/attention/dot", accepts[a], body);
            char want[160];
            snprintf(want, sizeof want, "\"code\":\"%s\",\"pointer\":\"%s\"",
                     cases[i].code, cases[i].pointer);
            if (res.status != 422 || !strstr(res.body, want))
                fail_msg("labels %s (%s): %d %s", cases[i].labels, accepts[a],
                         res.status, res.body);
            api_response_free(&res);
        }
    /* 64 bytes is allowed; JSON answers do not echo labels */
    snprintf(
        body, sizeof body,
        "%s{\"queries\":[\"<q>\",\"&\"],\"keys\":[\"a\",\"b\",\"%s\"]}}", base,
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    api_response res = post("/attention/dot", "application/json", body);
    assert_int_equal(res.status, 200);
    assert_null(strstr(res.body, "labels"));
    api_response_free(&res);
    res = post("/attention/dot", "image/svg+xml", body);
    assert_int_equal(res.status, 200);
    assert_non_null(strstr(res.body, ">&lt;q&gt;</text>"));
    api_response_free(&res);
    /* every route with a heatmap and the field */
    res = post("/softmax/masked", "image/svg+xml",
               "{\"scores\":[[1,2],[3,4]],\"labels\":{\"queries\":[\"p\","
               "\"q\"],\"keys\":[\"r\",\"s\"]}}");
    assert_int_equal(res.status, 200);
    assert_int_equal(count(res.body, res.body_len, "class=\"tick-label\""), 4);
    api_response_free(&res);
    res = post("/attention/multihead", "application/json",
               "{\"queries\":[[1,0],[0,1]],\"keys\":[[1,0]],\"num_heads\":2,"
               "\"num_hiddens\":4,\"seed\":0,\"labels\":{\"keys\":[\"a\","
               "\"b\"]}}");
    assert_int_equal(res.status, 422);
    assert_non_null(strstr(res.body, "\"pointer\":\"/labels/keys\""));
    api_response_free(&res);
    res = post("/attention/additive", "image/svg+xml",
               "{\"queries\":[[1,0]],\"keys\":[[1,0],[0,1]],\"values\":[[1],"
               "[2]],\"num_hiddens\":4,\"labels\":{\"keys\":[\"k0\",\"k1\"]}}");
    assert_int_equal(res.status, 200);
    assert_int_equal(count(res.body, res.body_len, "class=\"tick-label\""), 2);
    api_response_free(&res);
    /* a palette from the query */
    api_request req = {.method = "POST",
                       .path = "/attention/dot",
                       .query = "palette=viridis",
                       .content_type = "application/json",
                       .accept = "image/svg+xml",
                       .body = body,
                       .body_len = strlen(body)};
    api_handle(&req, &res);
    assert_int_equal(res.status, 200);
    assert_non_null(strstr(res.body, "fill=\"#fde725\""));
    api_response_free(&res);
    req.query = "palette=hot";
    api_handle(&req, &res);
    assert_int_equal(res.status, 422);
    assert_non_null(strstr(res.body, "\"pointer\":\"/palette\""));
    api_response_free(&res);
}

/* 17 examples of 256 × 256: 1114112 cells, over API_SVG_MAX_CELLS → 413
 * (the same request as JSON is fine). */
static void test_too_many_cells(void **state) {
    (void)state;
    size_t n = 17 * 256;
    api_buf b = {0};
    api_buf_puts(&b, "{\"queries\":{\"shape\":[17,256,1],\"data\":[");
    for (size_t i = 0; i < n; i++)
        api_buf_puts(&b, i ? ",1" : "1");
    api_buf_puts(&b, "]},\"keys\":{\"shape\":[17,256,1],\"data\":[");
    for (size_t i = 0; i < n; i++)
        api_buf_puts(&b, i ? ",1" : "1");
    api_buf_puts(&b, "]},\"values\":{\"shape\":[17,256,1],\"data\":[");
    for (size_t i = 0; i < n; i++)
        api_buf_puts(&b, i ? ",1" : "1");
    api_buf_puts(&b, "]},\"return_weights\":false}");
    assert_false(b.failed);
    api_response res = post("/attention/dot", "image/svg+xml", b.data);
    assert_int_equal(res.status, 413);
    assert_string_equal(res.content_type, "application/problem+json");
    assert_non_null(strstr(res.body, "\"code\":\"payload_too_large\""));
    assert_non_null(strstr(res.body, "1114112 cells"));
    api_response_free(&res);
    res = post("/attention/dot", "application/json", b.data);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.content_type, "application/json");
    api_response_free(&res);
    api_buf_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accept_quality),
        cmocka_unit_test(test_accept_prefers_svg),
        cmocka_unit_test(test_toy_picture),
        cmocka_unit_test(test_block_average),
        cmocka_unit_test(test_large_panels),
        cmocka_unit_test(test_heads),
        cmocka_unit_test(test_one_by_one),
        cmocka_unit_test(test_cell_count_saturates),
        cmocka_unit_test(test_palettes),
        cmocka_unit_test(test_diverging_picture),
        cmocka_unit_test(test_labels_picture),
        cmocka_unit_test(test_hook),
        cmocka_unit_test(test_labels_hook),
        cmocka_unit_test(test_too_many_cells),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
