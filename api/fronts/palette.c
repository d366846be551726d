/*
 * palette.c — the heatmaps' colour maps as anchor tables (see palette.h).
 * api/fronts/lab/lab.js holds the same anchors; tests/browser/lab.test.mjs
 * and tests/unit/test_api_svg.c check both against the same colours.
 */
#include "palette.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* sqrt(1.05 · 0.05) − 0.05: below it, white text contrasts more than
 * black; either way the contrast is at least 4.58:1 (WCAG 2). */
#define DARK_LUMINANCE 0.17912878474779200

/* matplotlib's "Reds" (d2l's show_heatmaps). */
static const unsigned char reds[][3] = {
    {0xff, 0xf5, 0xf0}, {0xfe, 0xe0, 0xd2}, {0xfc, 0xbb, 0xa1},
    {0xfc, 0x92, 0x72}, {0xfb, 0x6a, 0x4a}, {0xef, 0x3b, 0x2c},
    {0xcb, 0x18, 0x1d}, {0xa5, 0x0f, 0x15}, {0x67, 0x00, 0x0d}};

/* matplotlib's viridis: entries round(k · 255 / 32), k = 0 … 32, of its
 * 256-entry table. */
static const unsigned char viridis[][3] = {
    {0x44, 0x01, 0x54}, {0x47, 0x0d, 0x60}, {0x48, 0x18, 0x6a},
    {0x48, 0x23, 0x74}, {0x47, 0x2d, 0x7b}, {0x45, 0x37, 0x81},
    {0x42, 0x40, 0x86}, {0x3e, 0x49, 0x89}, {0x3b, 0x52, 0x8b},
    {0x37, 0x5b, 0x8d}, {0x33, 0x63, 0x8d}, {0x2f, 0x6b, 0x8e},
    {0x2c, 0x72, 0x8e}, {0x29, 0x7a, 0x8e}, {0x26, 0x82, 0x8e},
    {0x23, 0x89, 0x8e}, {0x21, 0x91, 0x8c}, {0x1f, 0x97, 0x8b},
    {0x1f, 0x9f, 0x88}, {0x21, 0xa6, 0x85}, {0x27, 0xad, 0x81},
    {0x31, 0xb5, 0x7b}, {0x3d, 0xbc, 0x74}, {0x4c, 0xc2, 0x6c},
    {0x5c, 0xc8, 0x63}, {0x6e, 0xce, 0x58}, {0x81, 0xd3, 0x4d},
    {0x95, 0xd8, 0x40}, {0xaa, 0xdc, 0x32}, {0xc0, 0xdf, 0x25},
    {0xd5, 0xe2, 0x1a}, {0xea, 0xe5, 0x1a}, {0xfd, 0xe7, 0x25}};

/* ColorBrewer's RdBu, 11 classes, from the most negative (blue) to the
 * most positive (red); the middle anchor is 0. */
static const unsigned char rdbu[][3] = {
    {0x05, 0x30, 0x61}, {0x21, 0x66, 0xac}, {0x43, 0x93, 0xc3},
    {0x92, 0xc5, 0xde}, {0xd1, 0xe5, 0xf0}, {0xf7, 0xf7, 0xf7},
    {0xfd, 0xdb, 0xc7}, {0xf4, 0xa5, 0x82}, {0xd6, 0x60, 0x4d},
    {0xb2, 0x18, 0x2b}, {0x67, 0x00, 0x1f}};

static const struct {
    const char *name;
    const unsigned char (*anchors)[3];
    int n;
} table[API_PALETTE_COUNT] = {
    {"reds", reds, (int)(sizeof reds / sizeof reds[0])},
    {"viridis", viridis, (int)(sizeof viridis / sizeof viridis[0])},
    {"rdbu", rdbu, (int)(sizeof rdbu / sizeof rdbu[0])},
};

const char *api_palette_name(api_palette p) {
    return p >= 0 && p < API_PALETTE_COUNT ? table[p].name : "reds";
}

int api_palette_find(const char *name, size_t len) {
    for (int i = 0; i < API_PALETTE_COUNT; i++)
        if (strlen(table[i].name) == len && !memcmp(table[i].name, name, len))
            return i;
    return -1;
}

int api_palette_diverging(api_palette p) {
    return p == API_PALETTE_RDBU;
}

/* The colour at t as three channels 0 … 255. */
static void rgb_at(api_palette p, double t, int rgb[3]) {
    if (p < 0 || p >= API_PALETTE_COUNT)
        p = API_PALETTE_REDS;
    if (!(t > 0))
        t = 0;
    if (t > 1)
        t = 1;
    int last = table[p].n - 1;
    double pos = t * last;
    int i = (int)pos;
    if (i > last - 1)
        i = last - 1;
    double f = pos - i;
    const unsigned char *a = table[p].anchors[i], *b = table[p].anchors[i + 1];
    for (int c = 0; c < 3; c++)
        rgb[c] = (int)(a[c] + f * (b[c] - a[c]) + 0.5);
}

void api_palette_colour(api_palette p, double t, char hex[8]) {
    int rgb[3];
    rgb_at(p, t, rgb);
    snprintf(hex, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

/* sRGB channel 0 … 255 to linear light (IEC 61966-2-1). */
static double linear(int c) {
    double s = c / 255.0;
    return s <= 0.04045 ? s / 12.92 : pow((s + 0.055) / 1.055, 2.4);
}

int api_palette_dark(api_palette p, double t) {
    int rgb[3];
    rgb_at(p, t, rgb);
    /* relative luminance, WCAG 2: white text has the higher contrast below
     * the luminance where both are equal, (y + 0.05)^2 = 1.05 · 0.05 */
    double y = 0.2126 * linear(rgb[0]) + 0.7152 * linear(rgb[1]) +
               0.0722 * linear(rgb[2]);
    return y < DARK_LUMINANCE;
}
