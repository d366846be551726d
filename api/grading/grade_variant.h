/*
 * grade_variant.h — grading a student's own variant (contract section
 * 13b, docs/variants.md): a grading request whose "request" marks members
 * to be drawn ({"draw": {...}}, variant.h) is graded against the request
 * drawn for its student, never against numbers the request carries.
 *
 *   {"id": "s017", "problem": "dot", "version": "1", "group"?: "g3",
 *    "endpoint", "request": {marked}, "answer"}
 *
 * The variant is the student's: drawn from the server's secret and the
 * submission's "id" (or "group", which stands for it), "problem" and
 * "version" (default "1"), so a submission cannot be graded against
 * another student's numbers. With the class's roster (api_request.roster)
 * the id must be on it, and the roster says the student's group. Only a
 * grader may ask (api_request.grader).
 */
#ifndef API_GRADE_VARIANT_H
#define API_GRADE_VARIANT_H

#include <jansson.h>

#include "call.h"
#include "fastpath.h"

/* A drawn variant, while it is graded. Zeroed: none. */
typedef struct {
    json_t *request;  /* the student's request, or NULL: not a variant */
    api_fastpath doc; /* resolves its tensors and the outer document's */
    double *numbers;  /* its drawn numbers, which doc points into */
    char *student;    /* the id it was drawn for (student or group) */
} api_grade_variant;

/* The members a grading request takes for a variant. */
#define API_GRADE_VARIANT_MEMBERS "problem", "version", "group"

/* Draw the variant body asks for into *v (zeroed), its tensors resolved
 * through a document built on call->doc. A body whose request marks
 * nothing is no variant (v->request NULL), and then "problem", "version"
 * and "group" are refused. Returns 0, or -1 with call->problem set:
 *   wrong_type      problem, version, group not a string (version: or an
 *                   integer)
 *   missing_field   /problem, /id (a variant is a student's)
 *   invalid_value   a member given without a marked request; an id that
 *                   is not printable text; an id not on the roster, or a
 *                   group that is not the roster's; the server draws no
 *                   variants (no --variant-secret-file)
 *   unauthorized    the request is not a grader's (a grading token)
 *   the errors of api_variant_check at /request/<member>/draw/...
 * The caller frees v with api_grade_variant_free. */
int api_grade_variant_draw(api_call *call, const json_t *body,
                           api_grade_variant *v);

void api_grade_variant_free(api_grade_variant *v);

/* The roster's entry for id: 0 with *group its group (NULL: none), or -1
 * when id is not on it. */
int api_roster_find(const api_roster *roster, const char *id,
                    const char **group);

#endif /* API_GRADE_VARIANT_H */
