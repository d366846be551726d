/*
 * svg_text.h — writing SVG text: XML-escaped strings, coordinates and
 * formatted attributes, shared by the weight heatmap (svg.c) and the flow
 * figure (flow_svg.c).
 */
#ifndef API_SVG_TEXT_H
#define API_SVG_TEXT_H

#include <stddef.h>

#include "buf.h"

/* s[0 .. len) as XML character data or an attribute value: &, <, >, "
 * and ' escaped (labels are the request's own strings). */
void api_svg_put_text(api_buf *out, const char *s, size_t len);

/* A coordinate: at most 2 decimals, trailing zeros dropped, -0 as 0 (what
 * JavaScript prints for Math.round(x * 100) / 100, so that the lab draws
 * the same numbers). */
void api_svg_put_num(api_buf *out, double x);

/* printf into out, at most 255 bytes. */
void api_svg_put_fmt(api_buf *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ` name="x"`, x a coordinate (api_svg_put_num). */
void api_svg_put_num_attr(api_buf *out, const char *name, double x);

#endif /* API_SVG_TEXT_H */
