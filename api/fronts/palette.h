/*
 * palette.h — the colour maps of the weight heatmaps (svg.h; the lab draws
 * the same tables in api/fronts/lab/lab.js), as lookup tables of anchors
 * with linear interpolation between them:
 *
 *   reds     matplotlib's "Reds", 9 anchors: d2l's show_heatmaps (d2l
 *            11.1.4); white at 0, dark red at the top. The default.
 *   viridis  matplotlib's "viridis" (van der Walt and Smith, 2015), 33 of
 *            its 256 entries: perceptually uniform and readable with every
 *            common colour-vision deficiency and in greyscale; dark purple
 *            at 0, yellow at the top.
 *   rdbu     ColorBrewer's diverging "RdBu", 11 classes (Brewer, colour-
 *            blind safe): blue below 0, near-white at 0, red above, for
 *            signed values such as scores; the scale is symmetric,
 *            [-m, m] with m the largest magnitude, so 0 is always the
 *            centre.
 */
#ifndef API_PALETTE_H
#define API_PALETTE_H

#include <stddef.h>

typedef enum {
    API_PALETTE_REDS = 0, /* the default */
    API_PALETTE_VIRIDIS,
    API_PALETTE_RDBU,
    API_PALETTE_COUNT
} api_palette;

/* The palette's name as a request gives it ("reds", "viridis", "rdbu"). */
const char *api_palette_name(api_palette p);

/* The palette named by the len bytes at name (exact, lower case), or -1. */
int api_palette_find(const char *name, size_t len);

/* 1 for diverging palettes (rdbu), whose scale is centred at 0. */
int api_palette_diverging(api_palette p);

/* "#rrggbb" (7 characters and a NUL into hex) for t in [0, 1], clamped
 * (NaN as 0): 0 is the scale's bottom (0, or -m when diverging), 1 its top,
 * linear between the palette's anchors. */
void api_palette_colour(api_palette p, double t, char hex[8]);

/* 1 when text on the colour at t should be white, else 0 (black):
 * whichever has the higher WCAG 2 contrast with it, at least 4.58:1 on
 * any colour (white when the relative luminance is below 0.1791). The lab
 * chooses its cell text the same way. */
int api_palette_dark(api_palette p, double t);

#endif /* API_PALETTE_H */
