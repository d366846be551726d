/*
 * flow_svg.c — note 2's self-attention figure as SVG (see flow_svg.h).
 * Every constant and rule of the layout is lab.js's drawFlow's, so that
 * the page, its download and this answer draw the same picture.
 */
#include "flow_svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accept.h"
#include "fields.h"
#include "numfmt.h"
#include "palette.h"
#include "svg_text.h"

/* Layout, user units (lab.js drawFlow) */
#define CAPTION_H 46.0
#define GAP_X 54.0
#define GAP_Y 26.0
#define PAD 12.0
#define NODE_MIN_W 64.0
#define CELL_MAX 30.0
#define CELL_MIN 6.0
#define NUMBERS_MIN_CELL 28.0 /* cells this large print their value */
#define MASKED_FILL "#bdbdbd"
#define FIGURE_BYTES 16384 /* the figure's text but its cells */
#define CELL_BYTES 256     /* a cell: its rect, title and number */

typedef enum { FROM_REQUEST, FROM_PARAMS, FROM_TRACE } source;

#define PER_HEAD 1u /* the node shows one head */
#define WEIGHTS 2u  /* attention weights: the weights' palette, 0 … 1 */
#define COLUMN 4u   /* a vector is drawn as a column */
#define ROW 8u      /* a vector is drawn as a row */

typedef struct {
    const char *id;    /* the node's name, and its tensor's unless key */
    const char *key;   /* the request field or trace member, when not id */
    const char *title; /* the caption, when not id */
    source from;
    int col, row;
    const char *what; /* the formula under the caption */
    unsigned flags;
    const char *fallback; /* the node drawn when this request field is absent */
} flow_node;

typedef struct {
    const char *path;
    const char *batch_field; /* a rank of 3 or more: batched */
    const flow_node *nodes;
    size_t n_nodes;
    const char *const (*edges)[2];
    size_t n_edges;
} flow_spec;

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static const flow_node self_nodes[] = {
    {"X", "x", NULL, FROM_REQUEST, 0, 1, "the input, one row per token", 0,
     NULL},
    {"W_Q", NULL, NULL, FROM_PARAMS, 1, 0, "weights (d_model, d_k)", 0, NULL},
    {"W_K", NULL, NULL, FROM_PARAMS, 1, 1, "weights (d_model, d_k)", 0, NULL},
    {"W_V", NULL, NULL, FROM_PARAMS, 1, 2, "weights (d_model, d_k)", 0, NULL},
    {"Q", NULL, NULL, FROM_TRACE, 2, 0, "X · W_Q", 0, NULL},
    {"K", NULL, NULL, FROM_TRACE, 2, 1, "X · W_K", 0, NULL},
    {"V", NULL, NULL, FROM_TRACE, 2, 2, "X · W_V", 0, NULL},
    {"QK", NULL, "QKᵀ", FROM_TRACE, 3, 0, "Q · Kᵀ", 0, NULL},
    {"scaled", NULL, NULL, FROM_TRACE, 4, 0, "÷ √d_k", 0, NULL},
    {"masked", NULL, NULL, FROM_TRACE, 5, 0, "mask: −∞", 0, NULL},
    {"weights", NULL, NULL, FROM_TRACE, 6, 0, "softmax per row", WEIGHTS, NULL},
    {"output", "weighted_values", NULL, FROM_TRACE, 7, 1, "weights · V", 0,
     NULL},
};
static const char *const self_edges[][2] = {
    {"X", "W_Q"},         {"X", "W_K"},          {"X", "W_V"},
    {"W_Q", "Q"},         {"W_K", "K"},          {"W_V", "V"},
    {"Q", "QK"},          {"K", "QK"},           {"QK", "scaled"},
    {"scaled", "masked"}, {"masked", "weights"}, {"weights", "output"},
    {"V", "output"},
};

static const flow_node dot_nodes[] = {
    {"Q", "queries", NULL, FROM_REQUEST, 0, 0, "queries", 0, NULL},
    {"K", "keys", NULL, FROM_REQUEST, 0, 1, "keys", 0, NULL},
    {"V", "values", NULL, FROM_REQUEST, 0, 2, "values", 0, NULL},
    {"QK", NULL, "QKᵀ", FROM_TRACE, 1, 0, "Q · Kᵀ", 0, NULL},
    {"scaled", NULL, NULL, FROM_TRACE, 2, 0, "× scale (÷ √d)", 0, NULL},
    {"masked", NULL, NULL, FROM_TRACE, 3, 0, "mask: −∞", 0, NULL},
    {"weights", NULL, NULL, FROM_TRACE, 4, 0, "softmax per row", WEIGHTS, NULL},
    {"output", "weighted_values", NULL, FROM_TRACE, 5, 1, "weights · V", 0,
     NULL},
};
static const char *const dot_edges[][2] = {
    {"Q", "QK"},          {"K", "QK"},           {"QK", "scaled"},
    {"scaled", "masked"}, {"masked", "weights"}, {"weights", "output"},
    {"V", "output"},
};

static const flow_node multihead_nodes[] = {
    {"queries", NULL, NULL, FROM_REQUEST, 0, 0, "queries", 0, NULL},
    {"keys", NULL, NULL, FROM_REQUEST, 0, 1, "keys (queries when left out)", 0,
     "queries"},
    {"values", NULL, NULL, FROM_REQUEST, 0, 2, "values (keys when left out)", 0,
     "keys"},
    {"W_q", NULL, NULL, FROM_PARAMS, 1, 0, "Linear weight (h, dq)", 0, NULL},
    {"W_k", NULL, NULL, FROM_PARAMS, 1, 1, "Linear weight (h, dk)", 0, NULL},
    {"W_v", NULL, NULL, FROM_PARAMS, 1, 2, "Linear weight (h, dv)", 0, NULL},
    {"Q", NULL, NULL, FROM_TRACE, 2, 0, "queries · W_qᵀ + b_q", 0, NULL},
    {"K", NULL, NULL, FROM_TRACE, 2, 1, "keys · W_kᵀ + b_k", 0, NULL},
    {"V", NULL, NULL, FROM_TRACE, 2, 2, "values · W_vᵀ + b_v", 0, NULL},
    {"Q_heads", NULL, "Q, head", FROM_TRACE, 3, 0, "the head's columns of Q",
     PER_HEAD, NULL},
    {"K_heads", NULL, "K, head", FROM_TRACE, 3, 1, "the head's columns of K",
     PER_HEAD, NULL},
    {"V_heads", NULL, "V, head", FROM_TRACE, 3, 2, "the head's columns of V",
     PER_HEAD, NULL},
    {"QK", NULL, "QKᵀ", FROM_TRACE, 4, 0, "per head", PER_HEAD, NULL},
    {"scaled", NULL, NULL, FROM_TRACE, 5, 0, "÷ √(h/H)", PER_HEAD, NULL},
    {"masked", NULL, NULL, FROM_TRACE, 6, 0, "mask: −∞", PER_HEAD, NULL},
    {"weights", NULL, NULL, FROM_TRACE, 7, 0, "softmax per row",
     PER_HEAD | WEIGHTS, NULL},
    {"weighted_values", NULL, "weights · V", FROM_TRACE, 8, 1, "per head",
     PER_HEAD, NULL},
    {"concat", NULL, NULL, FROM_TRACE, 9, 1, "the heads side by side", 0, NULL},
    {"W_o", NULL, NULL, FROM_PARAMS, 10, 2, "Linear weight (d_out, h)", 0,
     NULL},
    {"output", NULL, NULL, FROM_TRACE, 11, 1, "concat · W_oᵀ + b_o", 0, NULL},
};
static const char *const multihead_edges[][2] = {
    {"queries", "W_q"},
    {"keys", "W_k"},
    {"values", "W_v"},
    {"W_q", "Q"},
    {"W_k", "K"},
    {"W_v", "V"},
    {"Q", "Q_heads"},
    {"K", "K_heads"},
    {"V", "V_heads"},
    {"Q_heads", "QK"},
    {"K_heads", "QK"},
    {"QK", "scaled"},
    {"scaled", "masked"},
    {"masked", "weights"},
    {"weights", "weighted_values"},
    {"V_heads", "weighted_values"},
    {"weighted_values", "concat"},
    {"concat", "output"},
    {"W_o", "output"},
};

static const flow_node additive_nodes[] = {
    {"queries", NULL, NULL, FROM_REQUEST, 0, 0, "queries", 0, NULL},
    {"keys", NULL, NULL, FROM_REQUEST, 0, 1, "keys", 0, NULL},
    {"values", NULL, NULL, FROM_REQUEST, 0, 2, "values", 0, NULL},
    {"W_q", NULL, NULL, FROM_PARAMS, 1, 0, "(h, dq)", 0, NULL},
    {"W_k", NULL, NULL, FROM_PARAMS, 1, 1, "(h, dk)", 0, NULL},
    {"Q", NULL, NULL, FROM_TRACE, 2, 0, "queries · W_qᵀ", 0, NULL},
    {"K", NULL, NULL, FROM_TRACE, 2, 1, "keys · W_kᵀ", 0, NULL},
    {"w_v", NULL, NULL, FROM_PARAMS, 3, 1, "(h)", 0, NULL},
    {"scores", NULL, NULL, FROM_TRACE, 4, 0, "w_vᵀ tanh(Q_i + K_j)", 0, NULL},
    {"masked", NULL, NULL, FROM_TRACE, 5, 0, "mask: −∞", 0, NULL},
    {"weights", NULL, NULL, FROM_TRACE, 6, 0, "softmax per row", WEIGHTS, NULL},
    {"output", "weighted_values", NULL, FROM_TRACE, 7, 1, "weights · values", 0,
     NULL},
};
static const char *const additive_edges[][2] = {
    {"queries", "W_q"},    {"keys", "W_k"},      {"W_q", "Q"},
    {"W_k", "K"},          {"Q", "scores"},      {"K", "scores"},
    {"w_v", "scores"},     {"scores", "masked"}, {"masked", "weights"},
    {"weights", "output"}, {"values", "output"},
};

static const flow_node nw_nodes[] = {
    {"x_query", NULL, NULL, FROM_REQUEST, 0, 0, "the queries", COLUMN, NULL},
    {"x_train", NULL, NULL, FROM_REQUEST, 0, 1, "the keys", ROW, NULL},
    {"distances", NULL, NULL, FROM_TRACE, 1, 0, "x_query − x_train", 0, NULL},
    {"scores", NULL, NULL, FROM_TRACE, 2, 0, "the kernel", 0, NULL},
    {"weights", NULL, NULL, FROM_TRACE, 3, 0, "normalised per row", WEIGHTS,
     NULL},
    {"y_train", NULL, NULL, FROM_REQUEST, 3, 1, "the values", COLUMN, NULL},
    {"predictions", NULL, NULL, FROM_TRACE, 4, 0, "weights · y_train", COLUMN,
     NULL},
};
static const char *const nw_edges[][2] = {
    {"x_query", "distances"},   {"x_train", "distances"},
    {"distances", "scores"},    {"scores", "weights"},
    {"weights", "predictions"}, {"y_train", "predictions"},
};

#define SPEC(p, main, name)                                                    \
    {                                                                          \
        p, main, name##_nodes, LEN(name##_nodes), name##_edges,                \
            LEN(name##_edges)                                                  \
    }
static const flow_spec specs[] = {
    SPEC("/attention/self", "x", self),
    SPEC("/attention/dot", "queries", dot),
    SPEC("/attention/multihead", "queries", multihead),
    SPEC("/attention/additive", "queries", additive),
    SPEC("/regression/nw", NULL, nw),
};

static const flow_spec *spec_of(const char *path) {
    for (size_t i = 0; path && i < LEN(specs); i++)
        if (!strcmp(specs[i].path, path))
            return &specs[i];
    return NULL;
}

/* One node's matrix: the first example's (and head's) last two axes, a
 * vector as a column or a row. data points into the result or into
 * owned (a request tensor read here). */
typedef struct {
    const double *data;
    double *owned;
    size_t rows, cols;
    int present;
    double x, y, w, h; /* placed */
} node_matrix;

static void from_shape(node_matrix *m, const size_t *shape, size_t rank,
                       unsigned flags) {
    if (rank >= 2) {
        m->rows = shape[rank - 2];
        m->cols = shape[rank - 1];
    } else if (rank == 1) {
        m->rows = flags & ROW ? 1 : shape[0];
        m->cols = flags & ROW ? shape[0] : 1;
    } else {
        m->rows = m->cols = 1;
    }
    m->present = 1;
}

/* The request field name as the route decoded it (it has passed the
 * route's checks): its numbers, read into m->owned. */
static int read_request(node_matrix *m, const api_call *call, const char *name,
                        unsigned flags) {
    const json_t *v = api_field_value(call->body, name);
    if (!v || json_is_null(v))
        return 0;
    static const api_tensor_spec any = {
        "field",
        API_RANK(0) | API_RANK(1) | API_RANK(2) | API_RANK(3) | API_RANK(4), 0,
        "", 0};
    api_tensor t;
    api_problem ignored = {0};
    if (api_tensor_decode(&t, call->doc, v, &any, "",
                          call->limits->max_elements, &ignored))
        return 0;
    m->owned = malloc(t.count * sizeof(double));
    if (!m->owned)
        return -1;
    api_tensor_read(m->owned, &t);
    m->data = m->owned;
    from_shape(m, t.shape, t.rank, flags);
    return 0;
}

static void read_item(node_matrix *m, const api_result *r, const char *group,
                      const char *key, unsigned flags) {
    char name[64];
    int n = snprintf(name, sizeof name, "%s.%s", group, key);
    const api_result_item *it = api_result_find(r, name, (size_t)n);
    if (!it || it->kind != API_ITEM_TENSOR)
        return;
    m->data = it->data;
    from_shape(m, it->shape, it->rank, flags);
}

/* Node i's matrix: -1 when memory runs out. */
static int read_node(node_matrix *m, const flow_spec *s, size_t i,
                     const api_call *call, const api_result *r) {
    const flow_node *n = &s->nodes[i];
    const char *key = n->key ? n->key : n->id;
    if (n->from == FROM_TRACE)
        read_item(m, r, "trace", key, n->flags);
    else if (read_request(m, call, key, n->flags))
        return -1;
    if (!m->present && n->from == FROM_PARAMS)
        read_item(m, r, "params", key, n->flags);
    for (size_t j = 0; !m->present && n->fallback && j < s->n_nodes; j++)
        if (!strcmp(s->nodes[j].id, n->fallback)) {
            n = &s->nodes[j];
            if (read_request(m, call, n->key ? n->key : n->id, n->flags))
                return -1;
            j = (size_t)-1; /* and its own fallback */
        }
    return 0;
}

static size_t index_of(const flow_spec *s, const char *id) {
    for (size_t i = 0; i < s->n_nodes; i++)
        if (!strcmp(s->nodes[i].id, id))
            return i;
    return s->n_nodes;
}

/* "#rrggbb" → black or white text, whichever contrasts more (WCAG 2). */
static const char *ink_on(const char *hex) {
    double lin[3];
    for (int c = 0; c < 3; c++) {
        char two[3] = {hex[1 + 2 * c], hex[2 + 2 * c], 0};
        double v = strtol(two, NULL, 16) / 255.0;
        lin[c] = v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
    }
    double y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
    return (y + 0.05) / 0.05 >= 1.05 / (y + 0.05) ? "#000000" : "#ffffff";
}

static void put_number(api_buf *out, double v) {
    char s[API_NUM_MAX];
    api_buf_append(out, s, api_num_format(s, v, 0));
}

/* One node: its caption, cells (a <title> with the exact value each) and
 * frame, as drawFlow draws it. */
static void put_node(api_buf *out, const flow_node *n, const node_matrix *m,
                     const node_matrix *masked, double c, api_palette pal,
                     long long num_heads) {
    const char *title = n->title ? n->title : n->id;
    double lo = 0, hi = 0;
    for (size_t k = 0; k < m->rows * m->cols; k++) {
        double v = m->data[k];
        if (isnan(v))
            continue;
        if (v > hi)
            hi = v;
        if (v < lo)
            lo = v;
    }
    double amp = fmax(hi, -lo);
    if (!(amp > 0))
        amp = 1;
    char shape[64];
    snprintf(shape, sizeof shape, "(%zu, %zu)", m->rows, m->cols);
    api_buf_puts(out, "<g class=\"node\"><title>");
    api_svg_put_text(out, title, strlen(title));
    api_svg_put_fmt(out, " %s: ", shape);
    api_svg_put_text(out, n->what, strlen(n->what));
    api_buf_puts(out, "</title><text");
    api_svg_put_num_attr(out, "x", m->x + m->w / 2);
    api_svg_put_num_attr(out, "y", m->y - CAPTION_H + 18);
    api_buf_puts(out, " text-anchor=\"middle\" font-size=\"16\" "
                      "font-weight=\"bold\" fill=\"#000000\">");
    api_svg_put_text(out, title, strlen(title));
    if ((n->flags & PER_HEAD) && num_heads > 1)
        api_buf_puts(out, " 0");
    api_buf_puts(out, " <tspan font-weight=\"normal\" font-size=\"13\">");
    api_buf_puts(out, shape);
    api_buf_puts(out, "</tspan></text><text");
    api_svg_put_num_attr(out, "x", m->x + m->w / 2);
    api_svg_put_num_attr(out, "y", m->y - CAPTION_H + 36);
    api_buf_puts(out, " text-anchor=\"middle\" font-size=\"13\" "
                      "fill=\"#333333\">");
    api_svg_put_text(out, n->what, strlen(n->what));
    api_buf_puts(out,
                 "</text><g class=\"cells\" shape-rendering=\"crispEdges\">");
    int numbers = c >= NUMBERS_MIN_CELL;
    for (size_t i = 0; i < m->rows; i++)
        for (size_t j = 0; j < m->cols; j++) {
            double v = m->data[i * m->cols + j];
            int hidden = isnan(v) ||
                         ((n->flags & WEIGHTS) && masked && masked->present &&
                          masked->rows == m->rows && masked->cols == m->cols &&
                          isnan(masked->data[i * m->cols + j]));
            char hex[8] = "";
            if (!hidden) {
                if (!(n->flags & WEIGHTS))
                    api_palette_colour(API_PALETTE_RDBU, 0.5 + v / amp / 2,
                                       hex);
                else if (api_palette_diverging(pal))
                    api_palette_colour(pal, 0.5 + v / 2, hex);
                else
                    api_palette_colour(pal, v, hex);
            }
            api_buf_puts(out, "<rect class=\"cell\"");
            api_svg_put_num_attr(out, "x", m->x + (double)j * c);
            api_svg_put_num_attr(out, "y", m->y + (double)i * c);
            api_svg_put_num_attr(out, "width", c);
            api_svg_put_num_attr(out, "height", c);
            api_buf_puts(out, " fill=\"");
            api_buf_puts(out, hidden ? "url(#flow-masked)" : hex);
            api_buf_puts(out, "\"><title>");
            api_svg_put_text(out, title, strlen(title));
            api_svg_put_fmt(out, "[%zu][%zu] = ", i, j);
            put_number(out, v);
            api_buf_puts(out, "</title></rect>");
            if (numbers) {
                api_buf_puts(out, "<text");
                api_svg_put_num_attr(out, "x", m->x + ((double)j + 0.5) * c);
                api_svg_put_num_attr(out, "y",
                                     m->y + ((double)i + 0.5) * c + 3.5);
                api_svg_put_fmt(
                    out,
                    " font-size=\"10\" text-anchor=\"middle\" fill=\"%s\">",
                    hidden ? "#000000" : ink_on(hex));
                if (isnan(v))
                    api_buf_puts(out, "−∞");
                else
                    api_svg_put_fmt(out, "%.2f", v == 0 ? 0.0 : v);
                api_buf_puts(out, "</text>");
            }
        }
    api_buf_puts(out, "</g><rect");
    api_svg_put_num_attr(out, "x", m->x);
    api_svg_put_num_attr(out, "y", m->y);
    api_svg_put_num_attr(out, "width", m->w);
    api_svg_put_num_attr(out, "height", m->h);
    api_buf_puts(
        out, " fill=\"none\" stroke=\"#000000\" stroke-width=\"1\"/></g>\n");
}

/* Code points in the UTF-8 string s. */
static size_t code_points(const char *s) {
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* The width a node's caption needs, as lab.js's captionWidth: its name
 * (bold, 16 units; a head's number after it), shape and formula. */
static double caption_width(const flow_node *n, const node_matrix *m) {
    char shape[64];
    snprintf(shape, sizeof shape, "(%zu, %zu)", m->rows, m->cols);
    size_t name = code_points(n->title ? n->title : n->id) +
                  (n->flags & PER_HEAD ? 3 : 1);
    return fmax(9.6 * (double)name + 7.8 * (double)code_points(shape),
                7.8 * (double)code_points(n->what)) +
           8;
}

/* The figure of spec s from the nodes' matrices m. */
static void put_figure(api_buf *out, const flow_spec *s, node_matrix *m,
                       api_palette pal, long long num_heads) {
    size_t max_dim = 1, ncol = 0, nrow = 0;
    for (size_t i = 0; i < s->n_nodes; i++) {
        if (m[i].present) {
            max_dim = m[i].rows > max_dim ? m[i].rows : max_dim;
            max_dim = m[i].cols > max_dim ? m[i].cols : max_dim;
        }
        ncol = (size_t)s->nodes[i].col + 1 > ncol ? (size_t)s->nodes[i].col + 1
                                                  : ncol;
        nrow = (size_t)s->nodes[i].row + 1 > nrow ? (size_t)s->nodes[i].row + 1
                                                  : nrow;
    }
    double c = fmax(CELL_MIN,
                    fmin(CELL_MAX, CELL_MAX * 10 / fmax(10, (double)max_dim)));
    double col_w[16] = {0}, row_h[16] = {0}, col_x[16], row_y[16];
    for (size_t i = 0; i < s->n_nodes; i++) {
        if (!m[i].present)
            continue;
        const flow_node *n = &s->nodes[i];
        col_w[n->col] =
            fmax(col_w[n->col], fmax(fmax((double)m[i].cols * c, NODE_MIN_W),
                                     caption_width(n, &m[i])));
        row_h[n->row] = fmax(row_h[n->row], (double)m[i].rows * c + CAPTION_H);
    }
    double x = PAD, y = PAD;
    for (size_t k = 0; k < ncol; k++) {
        col_x[k] = x;
        x += col_w[k] + GAP_X;
    }
    for (size_t k = 0; k < nrow; k++) {
        row_y[k] = y;
        y += row_h[k] + GAP_Y;
    }
    double W = x - GAP_X + PAD, H = y - GAP_Y + PAD;
    for (size_t i = 0; i < s->n_nodes; i++) {
        const flow_node *n = &s->nodes[i];
        m[i].w = (double)m[i].cols * c;
        m[i].h = (double)m[i].rows * c;
        m[i].x = col_x[n->col] + (col_w[n->col] - m[i].w) / 2;
        m[i].y = row_y[n->row] + CAPTION_H +
                 (row_h[n->row] - CAPTION_H - m[i].h) / 2;
    }
    api_buf_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "version=\"1.1\" viewBox=\"0 0 ");
    api_svg_put_num(out, W);
    api_buf_putc(out, ' ');
    api_svg_put_num(out, H);
    api_buf_putc(out, '"');
    api_svg_put_num_attr(out, "width", W);
    api_svg_put_num_attr(out, "height", H);
    api_buf_puts(out, " class=\"flow-figure\" font-family=\"DejaVu Sans, "
                      "Arial, sans-serif\">\n<title>The flow of ");
    api_buf_puts(out, s->path);
    api_buf_puts(out,
                 " (note 2 section 4.5), from attnd's trace</title>\n<desc>");
    for (size_t i = 0; i < s->n_nodes; i++) {
        const char *t = s->nodes[i].title ? s->nodes[i].title : s->nodes[i].id;
        if (i)
            api_buf_puts(out, ", ");
        api_svg_put_text(out, t, strlen(t));
    }
    api_buf_puts(
        out,
        "</desc>\n<defs>"
        "<marker id=\"flow-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
        "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
        "<path d=\"M0,0 L10,5 L0,10 z\" fill=\"#444444\"/></marker>"
        "<pattern id=\"flow-masked\" width=\"8\" height=\"8\" "
        "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
        "<rect width=\"8\" height=\"8\" fill=\"" MASKED_FILL "\"/>"
        "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#555555\" "
        "stroke-width=\"2.67\"/></pattern></defs>\n"
        "<g class=\"edges\" fill=\"none\" stroke=\"#444444\" "
        "stroke-width=\"2\">\n");
    for (size_t e = 0; e < s->n_edges; e++) {
        size_t a = index_of(s, s->edges[e][0]), b = index_of(s, s->edges[e][1]);
        if (a >= s->n_nodes || b >= s->n_nodes || !m[a].present ||
            !m[b].present)
            continue;
        double x1 = m[a].x + m[a].w + 3, y1 = m[a].y + m[a].h / 2;
        double x2 = m[b].x - 4, y2 = m[b].y + m[b].h / 2;
        double xm = fmax(x1 + 10, x2 - 18);
        api_buf_puts(out, "<path d=\"M");
        api_svg_put_num(out, x1);
        api_buf_putc(out, ' ');
        api_svg_put_num(out, y1);
        if (fabs(y1 - y2) >= 1) {
            api_buf_puts(out, " H");
            api_svg_put_num(out, xm);
            api_buf_puts(out, " V");
            api_svg_put_num(out, y2);
        }
        api_buf_puts(out, " H");
        api_svg_put_num(out, x2);
        api_svg_put_fmt(out,
                        "\" marker-end=\"url(#flow-arrow)\"><title>%s → "
                        "%s</title></path>\n",
                        s->edges[e][0], s->edges[e][1]);
    }
    api_buf_puts(out, "</g>\n");
    size_t masked = index_of(s, "masked");
    for (size_t i = 0; i < s->n_nodes; i++)
        if (m[i].present)
            put_node(out, &s->nodes[i], &m[i],
                     masked < s->n_nodes ? &m[masked] : NULL, c, pal,
                     num_heads);
    api_buf_puts(out, "</svg>\n");
}

int api_flow_svg_wanted(const api_call *call, const api_result *r) {
    if (!call->body || !spec_of(call->req->path))
        return 0;
    if (!json_is_true(api_field_value(call->body, "trace")))
        return 0;
    for (size_t i = 0; i < r->n; i++)
        if (!strncmp(r->items[i].name, "trace.", 6))
            return 1;
    return 0;
}

int api_flow_svg_respond(api_call *call, const api_result *r, api_palette pal) {
    const flow_spec *s = spec_of(call->req->path);
    node_matrix m[LEN(multihead_nodes)];
    memset(m, 0, sizeof m);
    int rc = -1;
    size_t cells = 0;
    for (size_t i = 0; i < s->n_nodes; i++) {
        if (read_node(&m[i], s, i, call, r)) {
            api_fail(&call->problem, API_E_INTERNAL, NULL,
                     "out of memory while drawing the flow figure");
            goto done;
        }
        if (!m[i].present)
            continue;
        if (m[i].rows > API_FLOW_MAX_SIDE || m[i].cols > API_FLOW_MAX_SIDE) {
            api_fail(&call->problem, API_E_PAYLOAD_TOO_LARGE, NULL,
                     "the flow figure would draw %s as %zu × %zu cells; a "
                     "node has at most %d along a side: ask for JSON "
                     "(Accept: application/json) or trace fewer tokens",
                     s->nodes[i].id, m[i].rows, m[i].cols, API_FLOW_MAX_SIDE);
            goto done;
        }
        cells += m[i].rows * m[i].cols;
    }
    if (cells > API_FLOW_MAX_CELLS) {
        api_fail(&call->problem, API_E_PAYLOAD_TOO_LARGE, NULL,
                 "the flow figure would draw %zu cells; a figure has at most "
                 "%zu: ask for JSON (Accept: application/json) or trace "
                 "fewer tokens",
                 cells, API_FLOW_MAX_CELLS);
        goto done;
    }
    if (api_ledger_reserve(call->ledger,
                           FIGURE_BYTES + (uint64_t)cells * CELL_BYTES,
                           "the flow figure", &call->problem))
        goto done;
    const json_t *heads = api_field_value(call->body, "num_heads");
    api_buf_free(&call->out);
    put_figure(&call->out, s, m, pal,
               json_is_integer(heads) ? json_integer_value(heads) : 1);
    if (call->out.failed) {
        api_fail(&call->problem, API_E_INTERNAL, NULL,
                 "out of memory while drawing the flow figure");
        goto done;
    }
    call->content_type = API_CT_SVG;
    rc = 0;
done:
    for (size_t i = 0; i < LEN(m); i++)
        free(m[i].owned);
    return rc;
}
