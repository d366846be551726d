/*
 * svg.h — attention weights as an SVG 1.1 heatmap (docs/contract.md section
 * 11): keys on x, queries on y, one panel per batch example and head, axis
 * titles, a colour bar, one <rect class="cell"> per weight up to 256 × 256 per
 * panel; larger panels are block-averaged down to that and say so in their
 * <title>. Colours run from near white (weight 0) to dark red (the largest
 * weight in the picture), as d2l's show_heatmaps draws them (cmap "Reds",
 * d2l 11.1.4): the darker the cell, the more that query attends to that key.
 *
 * How a route answers SVG: its handler names the weights in its typed
 * result (result.h),
 *
 *     api_result_heatmap(res, "Masked softmax weights", weights,
 *                        B, 1, Nq, Nk);
 *
 * and its route entry has API_ROUTE_VARY_ACCEPT, so every answer, JSON or
 * SVG, carries "Vary: Accept". The dispatcher checks the whole result
 * first (api_result_check: a non-finite result is the same error as in
 * JSON) and then calls api_svg_respond. Shapes: (B, Nq, Nk) is B examples
 * of one head, H = 1; multi-head weights (B, H, Nq, Nk) pass H; unbatched
 * input passes B = 1 (rank-2 weights (Nq, Nk), or (H, Nq, Nk)). Errors
 * never become pictures.
 */
#ifndef API_SVG_H
#define API_SVG_H

#include <stddef.h>

#include "buf.h"
#include "call.h"
#include "front.h"
#include "labels.h"
#include "palette.h"

/* Most cells drawn per panel axis; longer axes are block-averaged. */
#define API_SVG_MAX_SIDE 256

/* Most cells drawn in one picture (all panels together, 16 full 256 × 256
 * panels): the SVG then stays below about 80 MB. More → 413. */
#define API_SVG_MAX_CELLS ((size_t)1 << 20)
/* Most panels (examples × heads) a picture draws. */
#define API_SVG_MAX_PANELS 1024

/* One picture: B × H panels of Nq × Nk weights.
 * weights: (B, H, Nq, Nk), row-major, outermost axis first; values ≥ 0 and
 * finite (attention weights). title: plain text without markup characters
 * (<, &), e.g. "Scaled dot-product attention weights".
 * labels: token labels for the axes (labels.h; both NULL: indices), any
 * text, escaped here; drawn as tick labels (cut to 10 characters and "…",
 * the whole label in the tick's <title>) and named in the cells' tooltips.
 * palette: the colour map (palette.h; 0 = reds, d2l's). */
typedef struct {
    const char *title;
    const double *weights;
    size_t B, H, Nq, Nk;
    api_labels labels;
    api_palette palette;
} api_svg_heatmap;

/* Cells drawn for the picture: B·H·min(Nq, 256)·min(Nk, 256), saturating
 * at SIZE_MAX. */
size_t api_svg_cell_count(const api_svg_heatmap *h);

/* Append the SVG document for h to out (an XML declaration, then one <svg>
 * element with version="1.1", width, height and a viewBox). Every
 * dimension must be ≥ 1. Returns 0, or -1 when out ran out of memory
 * (out->failed). Does not check API_SVG_MAX_CELLS; api_svg_respond does. */
int api_svg_heatmap_write(api_buf *out, const api_svg_heatmap *h);

/* 1 when the request's Accept header ranks image/svg+xml above
 * application/json (api_accept_prefers_svg), else 0. */
int api_svg_wanted(const api_call *call);

/* The palette an SVG answer asks for with the query parameter
 * `palette` (POST /attention/dot?palette=viridis; the last occurrence
 * wins; other parameters are ignored, as POST routes ignore them): *out
 * is reds when absent. Returns 0, or -1 with p set: invalid_value at
 * /palette for a name that is not reds, viridis or rdbu. */
int api_svg_palette_of(const char *query, api_palette *out, api_problem *p);

/* The SVG encoder (see above). When api_svg_wanted, replaces call->out
 * with the heatmap of weights
 * (B, H, Nq, Nk) and sets call->content_type to image/svg+xml; otherwise
 * leaves call untouched. The body's `labels` (labels.h, checked here too)
 * name the axes' ticks; the query's `palette` picks the colours. Returns
 * 0, or -1 with call->problem set: the errors of api_labels_read and
 * api_svg_palette_of (422), payload_too_large (413) when the picture would
 * draw more than API_SVG_MAX_CELLS cells, internal (500) when memory runs
 * out. */
int api_svg_respond(api_call *call, const char *title, const double *weights,
                    size_t B, size_t H, size_t Nq, size_t Nk);

/* The front (front.h): a result's heatmap as image/svg+xml when Accept asks for
 * it. */
extern const api_front api_front_svg;

#endif /* API_SVG_H */
