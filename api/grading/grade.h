/*
 * grade.h — grading one answer, for POST /grade and for each submission
 * of a batch (docs/grading.md).
 */
#ifndef API_GRADE_H
#define API_GRADE_H

#include <jansson.h>

#include "buf.h"
#include "call.h"
#include "grade_lms.h"
#include "grade_result.h"
#include "result.h"
#include "route.h"

/* The longest string id a grading request may give (bytes): an LMS
 * document repeats it in the name of every test. */
#define API_GRADE_ID_MAX 256

/* The most names a request's "fields" may list. */
#define API_GRADE_FIELDS_MAX 4096
/* A name in "fields" has at most this many dots (the deepest field,
 * grads.state_dict.layers.0.self_attn.out_proj.weight, has 6), and the
 * names at most API_GRADE_FIELDS_BYTES bytes in all: the sets built from
 * them stay a few megabytes, whatever a request lists. */
#define API_GRADE_NAME_DOTS 8
#define API_GRADE_FIELDS_BYTES (256 * 1024)

struct api_misconception;

/* Where the references come from: answer(ctx, call, route, request,
 * query, reference) fills *reference (zeroed) exactly as
 * api_invoke_result(call, route, request, query, reference) would, and
 * returns its 0 or -1 (call->problem set); mistake(ctx, call, m, request,
 * reference, wrong) fills *wrong (zeroed) exactly as m->answer(call,
 * request, reference, wrong) would, and returns its API_MISTAKE_* value
 * (misconceptions.h). A batch gives functions that share the answers of
 * equal requests; release(ctx, result) is then called instead of
 * api_result_free when the grade is done with a result either gave.
 * With a provider, the body's "request" is read only to check that it is
 * an object and through these functions (for a GET endpoint, as the query
 * built from it): a batch that holds every answer of a request hands {}
 * in its place (batch_submission.c). */
typedef struct api_grade_references {
    int (*answer)(void *ctx, api_call *call, const api_route *route,
                  const json_t *request, const char *query,
                  api_result *reference);
    int (*mistake)(void *ctx, api_call *call, const struct api_misconception *m,
                   const json_t *request, const api_result *reference,
                   api_result *wrong);
    void (*release)(void *ctx, api_result *result);
    void *ctx;
    /* 1: a grade of a student's variant keeps a sample of its fields
     * (api_grade.sample), for the batch's copy check (copies.h) */
    int sample;
} api_grade_references;

/* Grade body, a grading request object ({"endpoint", "request", "answer",
 * "rtol"?, "atol"?, "id"?, "points"?, "credit"?, "format"?},
 * docs/grading.md) and a value of call->doc (its fast-path arrays are
 * read from there: call.h), appending its answer in the format it asks
 * for to out. references NULL: each reference is computed here. Returns
 * 0, or -1 with call->problem set (its pointer into body) and out as it
 * was. */
int api_grade_body(api_call *call, const json_t *body,
                   const api_grade_references *references, api_buf *out);

/* Grade body as api_grade_body does, into *out (overwritten; the caller
 * frees it with api_grade_free): fields, misconception, points and
 * scores, id. Returns 0, or -1 with call->problem set and *out empty.
 * A batch keeps the grades of its submissions and writes one document
 * of them all (api_grade_write_lms, grade_lms.h). */
int api_grade_run(api_call *call, const json_t *body,
                  const api_grade_references *references, api_grade *out);

/* The "format" body asks for: attnd when absent (or not one of the
 * formats, which api_grade_run refuses). */
api_grade_format api_grade_requested_format(const json_t *body);

/* Append grade in the format body asks for (api_grade_requested_format)
 * to out. Returns 0, or -1 with call->problem set: payload_too_large when
 * its LMS document cannot be held in API_LMS_DOC_MAX bytes. */
int api_grade_write_body(api_call *call, const api_grade *grade,
                         const json_t *body, api_buf *out);

/* Append grade in format: attnd's own answer (api_grade_write), or the
 * LMS document of this one submission (api_grade_write_lms). Returns 0,
 * or -1 when the LMS document cannot be held in API_LMS_DOC_MAX bytes
 * (out as it was). */
int api_grade_write_as(const api_grade *grade, api_grade_format format,
                       api_buf *out);

#endif /* API_GRADE_H */
