/*
 * flow_svg.h — note 2's self-attention figure (section 4.5) as one SVG
 * document: the picture of a traced request ("trace": true) whose Accept
 * header asks for image/svg+xml, on /attention/self, /attention/dot,
 * /attention/multihead, /attention/additive and /regression/nw
 * (docs/pictures.md "The flow figure").
 *
 * The figure is a connected diagram: each tensor of the computation is a
 * node (a grid of cells, its name, shape and formula above it), placed on
 * a grid of columns and rows, with arrows from the tensors each is made of
 * (for self-attention: X → W_Q, W_K, W_V → Q, K, V; Q and K → QKᵀ →
 * scaled → masked → weights; weights and V → output). Its nodes come from
 * the request (X, queries, keys, values; the weights when given), the
 * answer's params (the weights drawn from the seed) and its trace. The
 * first example and head are drawn (a trace's other examples and heads are
 * in its JSON). It has the same layout, colours and cells as the lab's Flow
 * tab (api/fronts/lab/lab.js, FLOWS and drawFlow) and its download: the
 * browser test compares them node by node and cell by cell.
 */
#ifndef API_FLOW_SVG_H
#define API_FLOW_SVG_H

#include "call.h"
#include "palette.h"
#include "result.h"

/* Most cells a figure draws (every node's together), and most cells along
 * either side of one node. */
#define API_FLOW_MAX_CELLS ((size_t)1 << 16)
#define API_FLOW_MAX_SIDE 256

/* 1 when a picture of r is the figure: a traced request ("trace": true, r
 * holding trace.* items) to a route that has a figure; else 0 (the svg
 * front asks, once the Accept header wants a picture: svg.h). */
int api_flow_svg_wanted(const api_call *call, const api_result *r);

/* Replace call->out with the figure of r and set call->content_type to
 * image/svg+xml. pal colours the weights (the query's `palette`: signed
 * tensors always use rdbu, centred at 0). Returns 0, or -1 with
 * call->problem set: payload_too_large (413) when the figure would draw more
 * than API_FLOW_MAX_CELLS cells or a node more than API_FLOW_MAX_SIDE along a
 * side, the memory budget's refusals (budget.h), internal (500) when
 * memory runs out. */
int api_flow_svg_respond(api_call *call, const api_result *r, api_palette pal);

#endif /* API_FLOW_SVG_H */
