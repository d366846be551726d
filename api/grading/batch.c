/*
 * batch.c — POST /grade/batch (see batch.h; docs/batch.md).
 *
 *   [{"id": "ada", "endpoint": "/attention/dot", "request": {...},
 *     "answer": {...}}, ...]                      (application/json)
 *   {"id": "ada", ...}\n{"id": "bob", ...}\n      (application/x-ndjson)
 *   -> one line per submission, in order:
 *   {"id": "ada", "pass": true, "fields": {...}}
 *   {"id": "bob", "problem": {problem+json, pointer into the submission}}
 *
 * The body is cut into submissions by a cheap pass (batch_scan.h), and
 * each submission is parsed on its own with /grade's fast path (its
 * tensors read straight into doubles, its tree charged to the memory
 * budget before it is built) and graded by api_grade_body (grade.h) with
 * every member but "id"; so the body never becomes one tree, and a
 * malformed submission fails alone (batch_submission.c).
 *
 * References come from a provider that shares them (reference_cache.h):
 * a request seen before, byte for byte or by its canonical form
 * (request_key.h), gets the reference and the mistakes' answers computed
 * for it then (batch_share.c).
 *
 * The batch is one request: the operations its references and mistakes
 * count are held to its --max-work together, and its wall time to
 * --compute-timeout. Each computation runs with the limits of what is
 * left; once one does not fit, it and every later submission are
 * answered with a problem line (413 / 503) instead of being graded.
 *
 * This file reads the body, in order, and puts each submission's answer
 * as it comes (batch_answer.c writes a problem line, and the one LMS
 * document of ?format=gradescope or prairielearn); batch_internal.h holds
 * the state the files share.
 */
#include "batch.h"

#include <stdlib.h>
#include <string.h>

#include "batch_internal.h"
#include "query.h"

#define CT_NDJSON "application/x-ndjson"

static const char *const body_types[] = {API_CT_JSON, CT_NDJSON,
                                         "application/jsonl",
                                         "application/x-jsonlines", NULL};

static _Thread_local api_batch_stats last_stats;

void api_batch_last_stats(api_batch_stats *s) {
    *s = last_stats;
}

/* The answer being written as the body is read. */
typedef struct {
    batch *b;
    api_grade_format fmt;
    api_batch_form form;
    api_batch_scanner scan;
    api_buf line;         /* the submission's line (no newline) */
    api_buf graded;       /* its /grade answer */
    batch_doc_entry *doc; /* an LMS format's submissions */
    size_t doc_cap, n_doc;
    uint64_t charged; /* of the answer, api_batch_reserve_answer */
    api_batch_stats stats;
} batch_run;

/* ------------------------------------------------------------ handler */

/* The batch-level problem of a body that is not an array at all. */
static int not_an_array(api_call *call, size_t at) {
    const char *s = call->req->body ? call->req->body + at : "";
    size_t rest = call->req->body_len - at;
    const char *kind = NULL;
    if (rest == 0)
        kind = NULL;
    else if (*s == '{')
        kind = "an object";
    else if (*s == '"')
        kind = "a string";
    else if (*s == '-' || (*s >= '0' && *s <= '9'))
        kind = "a number";
    else if (rest >= 4 && (!memcmp(s, "true", 4) || !memcmp(s, "null", 4)))
        kind = *s == 't' ? "a boolean" : "null";
    else if (rest >= 5 && !memcmp(s, "false", 5))
        kind = "a boolean";
    if (kind)
        return api_fail(
            &call->problem, API_E_WRONG_TYPE, "",
            "the body must be a JSON array of submissions [{\"id\", "
            "\"endpoint\", \"request\", \"answer\"}, ...], or one "
            "submission per line as Content-Type: "
            "application/x-ndjson; got %s",
            kind);
    return api_fail(&call->problem, API_E_INVALID_JSON, NULL,
                    "the body is not a JSON array (byte %zu): send [{\"id\", "
                    "\"endpoint\", \"request\", \"answer\"}, ...], or one "
                    "submission per line as Content-Type: "
                    "application/x-ndjson",
                    at);
}

static int empty_batch(api_call *call, api_batch_form form) {
    return api_fail(&call->problem, API_E_INVALID_VALUE, "",
                    form == API_BATCH_LINES
                        ? "the batch is empty: send one submission per line, "
                          "each {\"id\", \"endpoint\", \"request\", "
                          "\"answer\"} as POST /grade takes it, with an id"
                        : "the batch is empty: send a JSON array of "
                          "submissions [{\"id\", \"endpoint\", \"request\", "
                          "\"answer\"}, ...], each as POST /grade takes it, "
                          "with an id");
}

/* The answer's format: ?format=attnd (the default: one line per
 * submission), gradescope or prairielearn (one LMS document of the whole
 * batch, grade_lms.h). Returns 0, or -1 with call->problem set. */
static int read_format(api_call *call, api_grade_format *fmt) {
    api_query_param params[] = {{"format", NULL}};
    char *storage = NULL;
    *fmt = API_GRADE_FORMAT_ATTND;
    int rc =
        api_query_parse(&storage, call->req->query, params, 1, &call->problem);
    if (rc == 0 && params[0].value &&
        api_grade_format_parse(params[0].value, strlen(params[0].value), fmt))
        rc = api_fail(&call->problem, API_E_INVALID_VALUE, "/format",
                      "format is attnd (the default: one line per "
                      "submission), gradescope (one Gradescope results.json "
                      "of the whole batch) or prairielearn (one PrairieLearn "
                      "results document); got \"%.40s\"",
                      params[0].value);
    free(storage);
    return rc;
}

/* The number of submissions in the body, counted before any is graded;
 * stops past max. JSON Lines hold at most one per line, so when the
 * lines are few enough their count (memchr, far cheaper than the scan)
 * says so; otherwise, and for an array, a scan of the frame alone
 * (batch_scan.h) counts them. */
static size_t count_submissions(const char *body, size_t len,
                                api_batch_form form, size_t max) {
    if (form == API_BATCH_LINES) {
        size_t lines = 1;
        for (const char *at = body, *end = body + len;
             lines <= max && (at = memchr(at, '\n', (size_t)(end - at))); at++)
            lines++;
        if (lines <= max)
            return lines;
    }
    api_batch_scanner scan;
    api_batch_scan_start(&scan, body, len, form);
    size_t n = 0;
    api_batch_item it;
    size_t where;
    const char *why;
    while (n <= max && api_batch_scan_next(&scan, &it, NULL, 0, &where, &why) ==
                           API_BATCH_ITEM)
        n++;
    return n;
}

/* b (zeroed) made the batch of call, with its cache. Returns 0, or -1
 * with call->problem set when memory runs out or the body holds more
 * than API_BATCH_SUBMISSIONS_MAX submissions. */
static int start_batch(batch *b, api_call *call, api_batch_form form) {
    const api_request *req = call->req;
    b->call = call;
    b->left = *call->limits;
    b->sub_req = *req;
    b->start_ms = api_clock_ms();
    b->cache = api_reference_cache_new(API_REFERENCE_CACHE_MAX, 0);
    int rc = b->cache ? 0
                      : api_fail(&call->problem, API_E_INTERNAL, NULL,
                                 "out of memory");
    size_t count = count_submissions(req->body ? req->body : "", req->body_len,
                                     form, API_BATCH_SUBMISSIONS_MAX);
    if (rc == 0 && count > API_BATCH_SUBMISSIONS_MAX)
        rc = api_fail(&call->problem, API_E_PAYLOAD_TOO_LARGE, NULL,
                      "a batch holds at most %d submissions, and this one "
                      "has more: send the class in several batches",
                      API_BATCH_SUBMISSIONS_MAX);
    return rc;
}

/* The batch-level problem of a body whose first submission cannot be
 * found (at byte where, for why): an empty batch, a body that is not an
 * array at all, or an array broken before it. */
static int refuse_body(api_call *call, api_batch_form form,
                       const api_batch_scanner *scan, size_t where,
                       const char *why) {
    if (!scan->started)
        return where >= call->req->body_len ? empty_batch(call, form)
                                            : not_an_array(call, where);
    return api_fail(&call->problem, API_E_INVALID_JSON, NULL,
                    "the body is not a JSON array of submissions: %s "
                    "(byte %zu)",
                    why, where);
}

/* A new entry (zeroed) of the LMS document, or NULL when memory runs
 * out. */
static batch_doc_entry *new_doc_entry(batch_run *r) {
    if (r->n_doc == r->doc_cap) {
        size_t cap = r->doc_cap ? 2 * r->doc_cap : 64;
        batch_doc_entry *more = realloc(r->doc, cap * sizeof *r->doc);
        if (!more)
            return NULL;
        r->doc = more;
        r->doc_cap = cap;
    }
    batch_doc_entry *entry = &r->doc[r->n_doc++];
    memset(entry, 0, sizeof *entry);
    return entry;
}

/* The problem of an array broken at byte where (for why), after which no
 * submission can be found: into entry, or as a line. */
static void put_broken(api_buf *line, batch_doc_entry *entry, size_t where,
                       const char *why) {
    api_problem p = {0};
    api_fail(&p, API_E_INVALID_JSON, NULL,
             "the batch's array breaks at byte %zu of the body: %s; "
             "no submission after it can be found",
             where, why);
    if (entry) {
        entry->problem = p;
        entry->points = 1;
    } else {
        api_batch_put_problem_line(line, "null", &p);
    }
}

/* The submission's answer put: for the LMS document, what its entry
 * holds reserved; else its line appended to the answer, and the answer's
 * growth reserved. Returns 0, or -1 with call->problem set. */
static int put_answer(batch_run *r, const batch_doc_entry *entry) {
    api_call *call = r->b->call;
    if (entry) /* the entry, its grade's fields and its id, as held */
        return api_batch_reserve_answer(
            call, &r->charged,
            r->charged + sizeof *entry + entry->id.cap +
                entry->grade.n_fields * sizeof *entry->grade.fields);
    if (r->form == API_BATCH_ARRAY)
        api_buf_puts(&call->out, r->stats.submissions > 1 ? ",\n" : "[\n");
    api_buf_append(&call->out, r->line.data, r->line.len);
    if (r->form == API_BATCH_LINES)
        api_buf_putc(&call->out, '\n');
    return api_batch_reserve_answer(call, &r->charged, call->out.cap);
}

/* Grade the next submission the scan finds and put its answer. Returns
 * 1 to go on, 0 when the body is read to its end or the batch stops
 * (*rc: 0, or -1 with call->problem set). */
static int take_next(batch_run *r, int *rc) {
    batch *b = r->b;
    api_batch_item it;
    size_t where = 0;
    const char *why = NULL;
    int got =
        api_batch_scan_next(&r->scan, &it, b->hint, b->hint_len, &where, &why);
    if (got == API_BATCH_END)
        return 0;
    if (got == API_BATCH_BROKEN && r->stats.submissions == 0) {
        *rc = refuse_body(b->call, r->form, &r->scan, where, why);
        return 0;
    }
    r->line.len = 0;
    batch_doc_entry *entry = NULL;
    if (r->fmt != API_GRADE_FORMAT_ATTND && !(entry = new_doc_entry(r))) {
        *rc =
            api_fail(&b->call->problem, API_E_INTERNAL, NULL, "out of memory");
        return 0;
    }
    b->doc_at = r->n_doc - 1;
    int problem = 1;
    if (got == API_BATCH_BROKEN)
        put_broken(&r->line, entry, where, why);
    else
        problem = api_batch_grade_one(b, &it, &r->line, &r->graded, entry);
    if (b->deferred)
        return 0;
    r->stats.submissions++;
    r->stats.problems += (size_t)problem;
    *rc = put_answer(r, entry);
    return *rc == 0 && got != API_BATCH_BROKEN;
}

/* The answer closed once the body is read: an empty batch's problem, the
 * LMS document, or the array's end. Returns rc, or -1 with call->problem
 * set (or the ledger deferred, when the batch must wait). */
static int finish_answer(batch_run *r, int rc) {
    batch *b = r->b;
    api_call *call = b->call;
    if (rc == 0 && !b->deferred && r->stats.submissions == 0)
        rc = empty_batch(call, r->form);
    if (rc == 0 && !b->deferred)
        rc = api_batch_check_copies(
            b, r->fmt != API_GRADE_FORMAT_ATTND ? r->doc : NULL,
            r->form == API_BATCH_ARRAY, &r->charged);
    if (rc == 0 && !b->deferred && r->fmt != API_GRADE_FORMAT_ATTND)
        rc = api_batch_write_document(call, &r->charged, r->fmt, r->doc,
                                      r->n_doc);
    else if (rc == 0 && r->form == API_BATCH_ARRAY)
        api_buf_puts(&call->out, "\n]\n");
    if (rc == 0 && call->out.failed)
        rc = api_fail(&call->problem, API_E_INTERNAL, NULL,
                      "out of memory while writing the answer");
    if (b->deferred) {
        call->ledger->deferred = 1;
        rc = -1;
    }
    return rc;
}

/* The batch's statistics kept for api_batch_last_stats, and what it
 * holds freed (b too). */
static void end_batch(batch_run *r) {
    batch *b = r->b;
    r->stats.references_computed = b->counted.references_computed;
    r->stats.mistakes_computed = b->counted.mistakes_computed;
    r->stats.requests_elided = b->counted.requests_elided;
    r->stats.work = b->work;
    if (b->cache)
        api_reference_cache_stats_of(b->cache, &r->stats.cache);
    last_stats = r->stats;
    api_buf_free(&r->line);
    api_buf_free(&r->graded);
    api_buf_free(&b->text);
    api_batch_free_variants(b);
    api_batch_free_document(r->doc, r->n_doc);
    api_reference_cache_free(b->cache);
    free(b);
}

static int handle_batch(api_call *call) {
    const api_request *req = call->req;
    batch_run r = {0};
    if (read_format(call, &r.fmt))
        return -1;
    const char *type = api_route_body_type(call->route, req->content_type);
    r.form =
        type && !strcmp(type, API_CT_JSON) ? API_BATCH_ARRAY : API_BATCH_LINES;
    batch *b = r.b = calloc(1, sizeof *b);
    if (!b)
        return api_fail(&call->problem, API_E_INTERNAL, NULL, "out of memory");
    int rc = start_batch(b, call, r.form);
    api_batch_scan_start(&r.scan, req->body ? req->body : "", req->body_len,
                         r.form);
    while (rc == 0 && !b->deferred && take_next(&r, &rc))
        ;
    rc = finish_answer(&r, rc);
    call->item_problems = r.stats.problems;
    call->content_type =
        r.form == API_BATCH_LINES && r.fmt == API_GRADE_FORMAT_ATTND
            ? CT_NDJSON
            : API_CT_JSON;
    end_batch(&r);
    return rc;
}

/* The route table's entry (route.h). */
const api_route api_route_grade_batch = {
    .method = "POST",
    .path = "/grade/batch",
    .handler = handle_batch,
    .flags = API_ROUTE_RAW_BODY | API_ROUTE_COMPUTES | API_ROUTE_LANE_BULK,
    .body_types = body_types,
};
