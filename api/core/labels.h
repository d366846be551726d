/*
 * labels.h — the request field `labels`, token labels for the axes of a
 * weights heatmap (docs/pictures.md):
 *
 *     "labels": {"queries": ["the", "cat", "sat"], "keys": [...]}
 *
 * Either member may be left out. A route takes the field with one line in
 * its field table,
 *
 *     {"labels", API_FIELD_OBJECT, 0, NULL, &api_labels_schema},
 *
 * and the dispatcher checks it against the heatmap its result names
 * (api_labels_read, for JSON and SVG answers alike); the SVG encoder
 * (svg.h) writes the labels as the axes' tick labels and in the cells'
 * tooltips. JSON answers do not echo them.
 */
#ifndef API_LABELS_H
#define API_LABELS_H

#include <jansson.h>
#include <stddef.h>

#include "fields.h"
#include "problem.h"

/* Most bytes of UTF-8 in one label. */
#define API_LABEL_MAX_BYTES 64

/* The nested schema of `labels`: queries and keys, arrays of strings. */
extern const api_schema api_labels_schema;

/* The labels of one request, pointing into the request's JSON (valid while
 * the body lives). queries NULL: none given (the axis shows indices). */
typedef struct {
    const json_t *queries; /* a JSON array of Nq strings, or NULL */
    const json_t *keys;    /* a JSON array of Nk strings, or NULL */
} api_labels;

/* Read and check body's `labels` (the type phase has run: each member
 * absent, null or an array of strings) against the heatmap's Nq queries
 * and Nk keys. Errors, in member order (queries, then keys):
 *   shape_mismatch at /labels/queries (/labels/keys): not Nq (Nk) labels;
 *   invalid_value at /labels/queries/i: label i has more than
 *     API_LABEL_MAX_BYTES bytes, or a control character (U+0000 to U+001F,
 *     U+007F), which XML 1.0 cannot carry.
 * Returns 0 with *out set (both NULL when the field is absent), or -1 with
 * p set. */
int api_labels_read(api_labels *out, const json_t *body, size_t Nq, size_t Nk,
                    api_problem *p);

/* Label i of one axis (a JSON array of strings, or NULL), with its length;
 * NULL when the axis has no labels. */
const char *api_label_at(const json_t *axis, size_t i, size_t *len);

#endif /* API_LABELS_H */
