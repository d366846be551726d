/*
 * batch_internal.h — the state of one batch and the steps of
 * POST /grade/batch that its files share (grading/ alone includes this):
 * batch_share.c holds the batch to its limits and shares the references
 * of equal requests, batch_submission.c grades one submission,
 * batch_answer.c writes the answer (its lines, or one LMS document of
 * them all), and batch.c reads the body and runs them in order (batch.c's
 * comment).
 */
#ifndef API_BATCH_INTERNAL_H
#define API_BATCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "batch_scan.h"
#include "buf.h"
#include "call.h"
#include "grade.h"
#include "grade_lms.h"
#include "grade_result.h"
#include "problem.h"
#include "reference_cache.h"

/* Why the batch stopped grading. */
enum { GOING = 0, OUT_OF_WORK, OUT_OF_TIME };

/* The problems one batch draws variants of that the copy check adds the
 * roster's references for (more are graded, and checked among the
 * batch's own). */
#define BATCH_PROBLEMS_MAX 16

/* Results lent to api_grade_body at once: the reference and one
 * mistake's answer (grade.h releases each before asking the next). */
#define LENT_MAX 8

typedef struct {
    api_call *call; /* the batch's own */
    api_reference_cache *cache;
    api_limits left;     /* the limits of what is left, for each computation */
    api_request sub_req; /* the batch's request, inline bound of what is left */
    uint64_t work;       /* operations counted by computations that ran */
    double start_ms;
    int stopped; /* GOING, OUT_OF_WORK, OUT_OF_TIME */
    int deferred;
    /* the submission being graded */
    const char *raw; /* its request member's bytes (raw_len 0: unknown) */
    size_t raw_len;
    uint64_t raw_hash;
    const json_t *request;      /* its request member */
    api_reference_entry *entry; /* its request's entry, or NULL */
    /* its request's complete entry, held, when the request was parsed as
     * {} (known_request); then lost = 1 if the entry fails to give what
     * it holds, and the grade is thrown away */
    api_reference_entry *elided;
    int lost;
    api_buf text; /* the submission's text with its request elided */
    /* the scanner's hint: the last request bytes that were not it, and
     * their api_batch_hash */
    const char *hint;
    size_t hint_len;
    uint64_t hint_hash;
    struct {
        const api_result *at;
        api_reference_entry *entry;
    } lent[LENT_MAX];
    size_t n_lent;
    /* the submissions graded against their student's own variant, for
     * the copy check once all are graded (copies.h) */
    struct batch_variant {
        api_grade_sample *sample; /* owned (lines), or the document's */
        int suspect;              /* failed, and no named mistake explains it */
        size_t doc;     /* its entry of the LMS document, or SIZE_MAX */
        size_t problem; /* its problem in problems[], or SIZE_MAX */
        api_buf id_json, id_text;
    } * variants;
    size_t n_variants, cap_variants;
    /* the problems the variants answer, for the roster's references
     * (batch_copies.c): the request's bytes in the body, the problem,
     * version and route, and the fields a grade of it samples */
    struct batch_problem {
        const char *raw;
        size_t raw_len;
        char *problem, *version;
        const api_route *route;
        const api_grade_sample *layout; /* the first variant's sample */
    } problems[BATCH_PROBLEMS_MAX];
    size_t n_problems;
    size_t doc_at;             /* the LMS document's entry being graded */
    uint64_t variants_charged; /* of the ledger, for what they hold */
    /* what api_batch_last_stats (batch.h) reports of the batch's sharing */
    struct {
        size_t references_computed; /* the route run for a reference */
        size_t mistakes_computed;   /* a mistake's answer computed */
        size_t requests_elided; /* submissions whose request was not parsed */
    } counted;
} batch;

/* One submission of a document of the whole batch (?format=gradescope,
 * prairielearn: grade_lms.h): its grade, or its problem with its id and
 * what it would have been worth. */
typedef struct {
    int graded;
    api_grade grade;
    api_problem problem;
    int has_id;
    api_buf id;
    double points;
    api_grade_visibility visibility;
} batch_doc_entry;

/* ------------------------------------------------- batch_share.c */

/* The seconds since the batch began (b->start_ms). */
double api_batch_elapsed_s(const batch *b);

/* The problem of a submission left ungraded when the batch stopped:
 * payload_too_large for OUT_OF_WORK (--max-work), overloaded for
 * OUT_OF_TIME (--compute-timeout), into *p. */
void api_batch_stopped_problem(const batch *b, api_problem *p);

/* The provider (grade.h) that grades b's submissions with the references
 * and mistakes' answers of equal requests shared through b->cache, each
 * computation held to what is left of the batch's limits. */
api_grade_references api_batch_references(batch *b);

/* *sub made a call of its own inside the batch's (b->call): the batch's
 * request, the limits of what is left, its own ledger (*ledger, which the
 * caller settles) for what it holds. */
void api_batch_sub_call(batch *b, api_call *sub, api_ledger *ledger);

/* route's answer to request (its tensors resolved through doc) into
 * *out, as a computation of the batch: held to what is left of its
 * limits and counted in its work. Returns 0, or -1 (b->stopped set when
 * the batch's limits were passed). */
int api_batch_compute(batch *b, const api_route *route, const json_t *request,
                      const api_fastpath *doc, api_result *out);

/* ------------------------------------------------- batch_submission.c */

/* Grade the submission it: into line (no newline), or, for a document of
 * the whole batch (doc not NULL), into doc. graded is scratch space for
 * /grade's answer. Returns 1 when it is answered with a problem, 0 for a
 * grade; b->deferred set when the ledger must wait (nothing answered). */
int api_batch_grade_one(batch *b, const api_batch_item *it, api_buf *line,
                        api_buf *graded, batch_doc_entry *doc);

/* ------------------------------------------------- batch_copies.c */

/* Keep what the copy check needs of grade, the submission's (doc: its
 * entry of the LMS document, or SIZE_MAX): its sample, taken from it
 * when doc is SIZE_MAX, its id, and its problem (the submission's
 * problem, version, endpoint and request, b->raw); reserved first from
 * the ledger.
 * Returns 0, or -1 with b->call->problem set. */
int api_batch_keep_variant(batch *b, api_grade *grade, size_t doc,
                           const json_t *submission);

/* The copy check of the variants kept: for the lines, the summary line
 * {"copies": {...}} appended to the answer (form: the body's); for an
 * LMS document, each copy's note on its grade (api_grade.copy_note).
 * Nothing when the batch graded no variant. Returns 0, or -1 with
 * b->call->problem set. */
int api_batch_check_copies(batch *b, batch_doc_entry *doc, int lines_form_array,
                           uint64_t *charged);

/* Free what the kept variants hold. */
void api_batch_free_variants(batch *b);

/* ------------------------------------------------- batch_answer.c */

/* Append the problem line {"id": id, "problem": p} to line (no
 * newline); id is JSON text ("null" for none). */
void api_batch_put_problem_line(api_buf *line, const char *id,
                                const api_problem *p);

/* What the batch's answer holds grows as it is written: each growth is
 * reserved in the request's ledger before the next submission is graded
 * (budget.h), so that many problem lines, or a document of many tests,
 * cannot hold more than the budget allows. *charged is what is reserved
 * so far, now what the answer holds (bytes). Returns 0, or -1 with
 * call->problem set. */
int api_batch_reserve_answer(api_call *call, uint64_t *charged, uint64_t now);

/* The LMS document (format fmt) of the batch's n submissions into
 * call->out, each growth of it reserved (api_batch_reserve_answer) first.
 * Returns 0, or -1 with call->problem set: the budget's refusal, or
 * payload_too_large when the document cannot be held in API_LMS_DOC_MAX
 * bytes. Out of memory is left in call->out.failed. */
int api_batch_write_document(api_call *call, uint64_t *charged,
                             api_grade_format fmt, batch_doc_entry *entries,
                             size_t n);

/* Free the n entries and the array that holds them (NULL: nothing). */
void api_batch_free_document(batch_doc_entry *entries, size_t n);

#endif /* API_BATCH_INTERNAL_H */
