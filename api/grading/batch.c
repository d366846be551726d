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
 * malformed submission fails alone.
 *
 * References come from a provider that shares them (reference_cache.h):
 * a request seen before, byte for byte or by its canonical form
 * (request_key.h), gets the reference and the mistakes' answers computed
 * for it then.
 *
 * The batch is one request: the operations its references and mistakes
 * count are held to its --max-work together, and its wall time to
 * --compute-timeout. Each computation runs with the limits of what is
 * left; once one does not fit, it and every later submission are
 * answered with a problem line (413 / 503) instead of being graded.
 */
#include "batch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "batch_scan.h"
#include "call.h"
#include "fastpath.h"
#include "grade.h"
#include "grade_lms.h"
#include "invoke.h"
#include "limit.h"
#include "misconceptions.h"
#include "query.h"
#include "request_key.h"

extern const api_route api_route_grade;

#define CT_NDJSON "application/x-ndjson"

static const char *const body_types[] = {API_CT_JSON, CT_NDJSON,
                                         "application/jsonl",
                                         "application/x-jsonlines", NULL};

/* Why the batch stopped grading. */
enum { GOING = 0, OUT_OF_WORK, OUT_OF_TIME };

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
    api_batch_stats stats;
} batch;

static _Thread_local api_batch_stats last_stats;

void api_batch_last_stats(api_batch_stats *s) {
    *s = last_stats;
}

/* ------------------------------------------------------------ limits */

static double elapsed_s(const batch *b) {
    return (api_clock_ms() - b->start_ms) / 1e3;
}

/* The limits a computation gets: the work not yet counted, the seconds
 * not yet spent (whole seconds, rounded up: the library's deadline), and
 * in a try on an HTTP thread the inline work not yet counted. */
static void limit_to_what_is_left(batch *b) {
    const api_limits *all = b->call->limits;
    b->left.max_work = all->max_work - b->work;
    if (all->compute_timeout_s > 0) {
        double rest = all->compute_timeout_s - elapsed_s(b);
        b->left.compute_timeout_s = rest < 1 ? 1 : (unsigned)ceil(rest);
    }
    if (b->call->req->inline_work_max > 0)
        b->sub_req.inline_work_max =
            b->call->req->inline_work_max > b->work
                ? b->call->req->inline_work_max - b->work
                : 1;
}

/* After a computation that counted ops operations: count them when it
 * ran, or tell whether it failed for the batch's limits (not its own: a
 * request beyond --max-work by itself fails alone, as on /grade). */
static void count_work(batch *b, uint64_t ops, int failed) {
    const api_limits *all = b->call->limits;
    if (!failed) {
        b->work = api_work_add(b->work, ops);
        if (b->work > all->max_work) /* cannot happen: each fit what was left */
            b->work = all->max_work;
        return;
    }
    double needs_s = (double)ops / API_OPS_PER_SECOND_MAX;
    if (ops > b->left.max_work && ops <= all->max_work)
        b->stopped = OUT_OF_WORK;
    else if (all->compute_timeout_s > 0 &&
             (elapsed_s(b) >= all->compute_timeout_s ||
              (needs_s > b->left.compute_timeout_s &&
               needs_s <= all->compute_timeout_s)))
        b->stopped = OUT_OF_TIME;
}

/* The problem of a submission left ungraded when the batch stopped. */
static void stopped_problem(const batch *b, api_problem *p) {
    const api_limits *all = b->call->limits;
    if (b->stopped == OUT_OF_WORK)
        api_fail(p, API_E_PAYLOAD_TOO_LARGE, NULL,
                 "not graded: the batch's references and mistakes together "
                 "need more than the %llu multiply-adds one request may "
                 "count (--max-work), which a batch shares; send this "
                 "submission and the ones after it in another batch",
                 (unsigned long long)all->max_work);
    else
        api_fail(p, API_E_OVERLOADED, NULL,
                 "not graded: the batch ran past the server's time limit "
                 "of %u s per request (--compute-timeout), which a batch "
                 "shares; send this submission and the ones after it in "
                 "another batch",
                 all->compute_timeout_s);
}

/* ------------------------------------------------- shared references */

/* Lend e's result r to api_grade_body as *dst (a shallow copy: its arena
 * stays the entry's). Returns 0, or -1 when no more can be lent. */
static int lend(batch *b, api_reference_entry *e, const api_result *r,
                api_result *dst) {
    if (b->n_lent == LENT_MAX)
        return -1;
    memcpy(dst, r, sizeof *dst);
    api_reference_cache_hold(b->cache, e);
    b->lent[b->n_lent].at = dst;
    b->lent[b->n_lent].entry = e;
    b->n_lent++;
    return 0;
}

static void share_release(void *ctx, api_result *result) {
    batch *b = ctx;
    for (size_t i = 0; i < b->n_lent; i++)
        if (b->lent[i].at == result) {
            api_reference_cache_drop(b->lent[i].entry);
            b->lent[i] = b->lent[--b->n_lent];
            memset(result, 0, sizeof *result);
            return;
        }
    api_result_free(result); /* computed for this submission alone */
}

/* The reference of the submission's request: its entry's when the
 * request was seen before (raw bytes first, then the canonical form),
 * else computed and kept. */
static int share_answer(void *ctx, api_call *call, const api_route *route,
                        const json_t *request, const char *query,
                        api_result *reference) {
    batch *b = ctx;
    b->entry = NULL;
    api_reference_entry *e = NULL;
    if (b->raw_len > 0)
        e = api_reference_cache_find_raw(b->cache, route, b->raw_hash, b->raw,
                                         b->raw_len);
    api_buf key = {0};
    int keyed = 0;
    if (!e && b->request) {
        keyed = api_request_key(&key, b->request) == 0 && key.data;
        if (keyed)
            e = api_reference_cache_find_key(
                b->cache, route, (unsigned char *)key.data, key.len);
        if (e)
            api_reference_cache_alias(b->cache, e, b->raw_hash, b->raw,
                                      b->raw_len);
    }
    if (e && lend(b, e, e->reference, reference) == 0) {
        b->entry = e;
        api_buf_free(&key);
        return 0;
    }
    if (b->elided) { /* its request is {}: nothing to compute it from */
        b->lost = 1;
        api_buf_free(&key);
        return api_fail(&call->problem, API_E_INTERNAL, NULL,
                        "the shared reference is lost");
    }
    limit_to_what_is_left(b);
    uint64_t before = call->cost.ops;
    int rc = api_invoke_result(call, route, request, query, reference);
    count_work(b, call->cost.ops - before, rc != 0);
    if (rc == 0) {
        b->stats.references_computed++;
        size_t n_mistakes = 0;
        api_misconceptions_of(route, &n_mistakes);
        e = keyed && !e && b->n_lent < LENT_MAX
                ? api_reference_cache_add(
                      b->cache, route, (unsigned char *)key.data, key.len,
                      b->raw_hash, b->raw, b->raw_len, reference, n_mistakes)
                : NULL;
        if (e) {
            lend(b, e, e->reference, reference); /* none is lent yet */
            b->entry = e;
        }
    }
    api_buf_free(&key);
    return rc;
}

/* A mistake's answer to the submission's request: its entry's when known,
 * else computed (and kept when the entry is). */
static int share_mistake(void *ctx, api_call *call, const api_misconception *m,
                         const json_t *request, const api_result *reference,
                         api_result *wrong) {
    batch *b = ctx;
    api_reference_entry *e = b->entry;
    size_t n = 0, i = 0;
    if (e) {
        const api_misconception *list = api_misconceptions_of(e->route, &n);
        i = (size_t)(m - list);
        if (m < list || i >= n)
            e = NULL; /* not this route's: computed alone */
    }
    if (e && e->mistakes[i].state == API_CACHED_NOT_APPLICABLE)
        return API_MISTAKE_NOT_APPLICABLE;
    if (e && e->mistakes[i].state == API_CACHED_ANSWERED &&
        lend(b, e, e->mistakes[i].wrong, wrong) == 0)
        return API_MISTAKE_ANSWERED;
    if (b->elided) { /* its request is {}: nothing to compute it from */
        b->lost = 1;
        return API_MISTAKE_FAILED;
    }
    limit_to_what_is_left(b);
    uint64_t before = call->cost.ops;
    int rc = m->answer(call, request, reference, wrong);
    count_work(b, call->cost.ops - before, rc == API_MISTAKE_FAILED);
    if (rc == API_MISTAKE_ANSWERED)
        b->stats.mistakes_computed++;
    if (e && rc == API_MISTAKE_NOT_APPLICABLE)
        api_reference_cache_set_mistake(b->cache, e, i,
                                        API_CACHED_NOT_APPLICABLE, NULL);
    if (e && rc == API_MISTAKE_ANSWERED && b->n_lent < LENT_MAX &&
        api_reference_cache_set_mistake(b->cache, e, i, API_CACHED_ANSWERED,
                                        wrong) == 0)
        lend(b, e, e->mistakes[i].wrong, wrong);
    return rc;
}

/* ------------------------------------------------------ one submission */

/* The complete entry (reference_cache.h) of the submission's request
 * when its raw bytes were seen before, or NULL. Such a request is parsed
 * as {}: api_grade_body reads the request only through the provider
 * (grade.h), which has every answer it will ask for, so its tensors
 * (half of a class's text) are not read again. The route comes from the
 * endpoint's raw bytes, a string without escapes, as /grade resolves
 * the decoded string. */
static api_reference_entry *known_request(batch *b, const api_batch_item *it) {
    const char *body = b->call->req->body;
    const char *ep = body + it->endpoint_start;
    size_t n = it->endpoint_len;
    char path[128];
    if (it->request_len == 0 || n < 2 || n - 2 >= sizeof path || ep[0] != '"' ||
        ep[n - 1] != '"' || memchr(ep, '\\', n))
        return NULL;
    memcpy(path, ep + 1, n - 2);
    path[n - 2] = '\0';
    const api_route *route = api_route_find(path);
    if (!route || !route->answer)
        return NULL;
    api_reference_entry *e = api_reference_cache_find_raw(
        b->cache, route, b->raw_hash, b->raw, b->raw_len);
    return e && api_reference_entry_complete(e) ? e : NULL;
}

/* The tree gate of one submission (as dispatch.c's for a body): bounded
 * by --max-tree-bytes and reserved before jansson builds it. */
typedef struct {
    api_call *call;
    api_ledger tree;
    api_problem *p;
} tree_check;

static int admit_tree(void *ctx, uint64_t bytes) {
    tree_check *t = ctx;
    api_ledger_settle(&t->tree, 0); /* a second text replaces the first */
    size_t max = t->call->limits->max_tree_bytes;
    if (max > 0 && bytes > max)
        return api_fail(t->p, API_E_PAYLOAD_TOO_LARGE, NULL,
                        "this submission's JSON would take about %llu MiB of "
                        "memory as a tree of values, over the limit of %zu "
                        "MiB: it holds too many values outside arrays of "
                        "numbers; send each tensor as (nested) arrays of "
                        "numbers or as {\"shape\", \"data\"}",
                        (unsigned long long)(bytes >> 20), max >> 20);
    return api_ledger_reserve(&t->tree, bytes, "the JSON tree of a submission",
                              t->p);
}

/* The submission's id (a string or an integer; anything else is none)
 * as JSON text into id->json ("null" for none) and as plain text into
 * id->text (LMS test names; id->has 0 for none). */
typedef struct {
    int has;
    api_buf json, text;
} batch_id;

static void set_id(batch_id *id, const json_t *v) {
    id->json.len = id->text.len = 0;
    id->has = json_is_string(v) || json_is_integer(v);
    if (json_is_string(v)) {
        api_buf_json_string(&id->json, json_string_value(v),
                            json_string_length(v));
        api_buf_append(&id->text, json_string_value(v), json_string_length(v));
    } else if (json_is_integer(v)) {
        api_buf_int(&id->json, (long long)json_integer_value(v));
        api_buf_int(&id->text, (long long)json_integer_value(v));
    } else {
        api_buf_puts(&id->json, "null");
    }
}

/* The id of a submission answered without being parsed, from its raw
 * bytes (a small value, parsed alone), or none. */
static void set_raw_id(batch_id *id, const char *body,
                       const api_batch_item *it) {
    json_t *v = NULL;
    if (it->id_len > 0 && it->id_len <= 1024)
        v = json_loadb(body + it->id_start, it->id_len, JSON_DECODE_ANY, NULL);
    set_id(id, v);
    json_decref(v);
}

/* Where a submission is, for a detail: "line 7" or "submission 3". */
static void where_of(char *dst, size_t cap, const api_batch_item *it) {
    if (it->line > 0)
        snprintf(dst, cap, "line %zu of the body", it->line);
    else
        snprintf(dst, cap, "submission %zu of the array (0-based)", it->index);
}

/* Prefix p's detail with where the submission is; a parse error's
 * "the body" (problem.c) is this submission. */
static void locate(api_problem *p, const api_batch_item *it) {
    char where[64], detail[API_DETAIL_MAX + sizeof where];
    where_of(where, sizeof where, it);
    static const char body[] = "the body ";
    const char *rest = p->detail;
    int of_body = !strncmp(rest, body, sizeof body - 1);
    if (of_body)
        rest += sizeof body - 1;
    size_t n = (size_t)snprintf(detail, sizeof detail, "%s: %s%s", where,
                                of_body ? "the submission " : "", rest);
    if (n >= API_DETAIL_MAX) { /* cut at a UTF-8 character's start */
        n = API_DETAIL_MAX - 1;
        while (n > 0 && ((unsigned char)detail[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(p->detail, detail, n);
    p->detail[n] = '\0';
}

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

static void put_problem_line(api_buf *line, const char *id,
                             const api_problem *p) {
    api_buf_puts(line, "{\"id\":");
    api_buf_puts(line, id);
    api_buf_puts(line, ",\"problem\":");
    api_problem_write(line, p);
    api_buf_putc(line, '}');
}

/* Grade the submission it: into line (no newline), or, for a document of
 * the whole batch (doc not NULL), into doc. Returns 1 when it is answered
 * with a problem, 0 for a grade. */
static int grade_one(batch *b, const api_batch_item *it, api_buf *line,
                     api_buf *graded, batch_doc_entry *doc) {
    api_call *call = b->call;
    const char *text = call->req->body + it->start;
    api_problem p = {0};
    batch_id id = {0};
    int problem = 1;
    json_t *root = NULL;
    api_fastpath fast = {0};
    tree_check tree = {call, {0, call->ledger->may_wait, 0}, &p};
    if (b->stopped == GOING && call->limits->compute_timeout_s > 0 &&
        elapsed_s(b) >= call->limits->compute_timeout_s)
        b->stopped = OUT_OF_TIME;
    if (b->stopped != GOING) {
        set_raw_id(&id, call->req->body, it);
        stopped_problem(b, &p);
        goto done;
    }
    /* the request's raw bytes, and whether they need parsing at all */
    b->raw = it->request_len ? call->req->body + it->request_start : NULL;
    b->raw_len = it->request_len;
    b->raw_hash = !it->request_len      ? 0
                  : it->request_is_hint ? b->hint_hash
                                        : api_batch_hash(b->raw, b->raw_len);
    if (it->request_len > 0 && !it->request_is_hint) {
        b->hint = b->raw;
        b->hint_len = b->raw_len;
        b->hint_hash = b->raw_hash;
    }
    b->elided = known_request(b, it);
    if (b->elided) {
        api_reference_cache_hold(b->cache, b->elided);
        b->stats.requests_elided++;
    }
    json_error_t error;
    api_tree_gate gate = {admit_tree, &tree};
    if (b->elided) {
        /* the text with "request": {} */
        size_t at = it->request_start - it->start;
        b->text.len = 0;
        api_buf_append(&b->text, text, at);
        api_buf_puts(&b->text, "{}");
        api_buf_append(&b->text, text + at + it->request_len,
                       it->len - at - it->request_len);
        /* the request's bytes held no NUL when they were first parsed */
        if (!b->text.failed && !memchr(b->text.data, '\0', b->text.len))
            root = api_fastpath_load(
                &fast, api_route_fast_fields(&api_route_grade), b->text.data,
                b->text.len,
                JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES,
                &gate, &error);
        if (!root) { /* its error, where the client's text has it */
            api_fastpath_release(&fast);
            memset(&p, 0, sizeof p);
            api_reference_cache_drop(b->elided);
            b->elided = NULL;
        }
    }
    const char *nul = root ? NULL : memchr(text, '\0', it->len);
    if (nul) {
        api_fail(&p, API_E_INVALID_JSON, NULL,
                 "not valid JSON: a raw NUL byte at byte %zu of the "
                 "submission (inside a string write \\u0000)",
                 (size_t)(nul - text));
        locate(&p, it);
        set_id(&id, NULL);
        goto done;
    }
    if (!root && !p.code)
        root = api_fastpath_load(
            &fast, api_route_fast_fields(&api_route_grade), text, it->len,
            JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &gate,
            &error);
    if (!root) {
        if (!fast.refused)
            api_problem_from_json_error(&p, &error, text, it->len);
        locate(&p, it);
        set_id(&id, NULL);
        goto done;
    }
    if (!json_is_object(root)) {
        api_fail(&p, API_E_WRONG_TYPE, "",
                 "each submission is an object {\"id\", \"endpoint\", "
                 "\"request\", \"answer\"}; got %s",
                 api_json_kind(root));
        locate(&p, it);
        set_id(&id, NULL);
        goto done;
    }
    const json_t *idv = json_object_get(root, "id");
    if (!idv || json_is_null(idv)) {
        api_fail(&p, API_E_MISSING_FIELD, "/id",
                 "each submission needs an `id` (a string or an integer) "
                 "that its line of the answer repeats");
        set_id(&id, NULL);
        goto done;
    }
    if (!json_is_string(idv) && !json_is_integer(idv)) {
        api_fail(&p, API_E_WRONG_TYPE, "/id",
                 "id must be a string or an integer; got %s",
                 api_json_kind(idv));
        set_id(&id, NULL);
        goto done;
    }
    set_id(&id, idv); /* /grade writes it first in its answer */

    /* the grade, with the shared references */
    b->request = json_object_get(root, "request");
    b->entry = NULL;
    api_call sub;
    memset(&sub, 0, sizeof sub);
    api_ledger ledger = {0, call->ledger->may_wait, 0};
    sub.req = &b->sub_req;
    sub.route = call->route;
    sub.limits = &b->left;
    sub.ledger = &ledger;
    sub.outer = call;
    sub.status = 200;
    sub.compute_ms = -1;
    sub.body = root;
    api_grade_references refs = {share_answer, share_mistake, share_release, b};
    int was_going = b->stopped == GOING;
    graded->len = 0;
    int rc = doc ? api_grade_run(&sub, root, &refs, &doc->grade)
                 : api_grade_body(&sub, root, &refs, graded);
    if (sub.compute_ms > 0)
        call->compute_ms =
            (call->compute_ms > 0 ? call->compute_ms : 0) + sub.compute_ms;
    api_ledger_settle(&ledger, 0);
    b->deferred |= ledger.deferred;
    if (was_going && b->stopped != GOING) {
        stopped_problem(b, &p); /* it may lack what did not fit */
    } else if (b->lost) {
        api_fail(&p, API_E_INTERNAL, NULL,
                 "the batch lost the shared reference of this submission's "
                 "request; send it again");
    } else if (rc != 0) {
        p = sub.problem;
    } else if (doc) {
        doc->graded = 1;
        problem = 0;
    } else if (graded->failed || graded->len < 2) {
        api_fail(&p, API_E_INTERNAL, NULL, "out of memory while grading");
    } else {
        api_buf_append(line, graded->data, graded->len);
        problem = 0;
    }
    if (doc && problem && rc == 0)
        api_grade_free(&doc->grade); /* graded, but thrown away */
    if (doc && problem) {
        doc->points = api_grade_body_points(root);
        doc->visibility = api_grade_body_visibility(root);
    }
done:
    if (b->elided)
        api_reference_cache_drop(b->elided);
    b->elided = NULL;
    b->lost = 0;
    b->deferred |= tree.tree.deferred;
    if (problem && doc) {
        doc->problem = p;
        if (id.has)
            api_buf_append(&doc->id, id.text.data ? id.text.data : "",
                           id.text.len);
        doc->has_id = id.has;
        if (doc->points <= 0)
            doc->points = 1;
    } else if (problem) {
        put_problem_line(line, id.json.data ? id.json.data : "null", &p);
    }
    api_buf_free(&id.json);
    api_buf_free(&id.text);
    json_decref(root);
    api_fastpath_release(&fast);
    api_ledger_settle(&tree.tree, 0);
    return problem;
}

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

/* The LMS document of the batch's n submissions into out. Returns 0, or
 * -2 when it cannot be held in API_LMS_DOC_MAX bytes (nothing written). */
static int write_document(api_grade_format fmt, batch_doc_entry *entries,
                          size_t n, api_buf *out) {
    api_grade_item *items = calloc(n ? n : 1, sizeof *items);
    if (!items) {
        out->failed = 1;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        batch_doc_entry *e = &entries[i];
        if (e->graded) {
            items[i].grade = &e->grade;
            items[i].id =
                e->grade.has_id
                    ? (e->grade.id_text.data ? e->grade.id_text.data : "")
                    : NULL;
            items[i].id_len = e->grade.id_text.len;
        } else {
            items[i].problem = &e->problem;
            items[i].problem_points = e->points;
            items[i].problem_visibility = e->visibility;
            items[i].id = e->has_id ? (e->id.data ? e->id.data : "") : NULL;
            items[i].id_len = e->id.len;
        }
    }
    int rc = api_grade_write_lms(fmt, items, n, out);
    free(items);
    return rc == -2 ? -2 : 0;
}

static void free_document(batch_doc_entry *entries, size_t n) {
    for (size_t i = 0; i < n; i++) {
        api_grade_free(&entries[i].grade);
        api_buf_free(&entries[i].id);
    }
    free(entries);
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

/* What the batch's answer holds grows as it is written: each growth is
 * reserved in the request's ledger before the next submission is graded
 * (budget.h), so that many problem lines, or a document of many tests,
 * cannot hold more than the budget allows. Returns 0, or -1 with
 * call->problem set. */
static int reserve_answer(api_call *call, uint64_t *charged, uint64_t now) {
    if (now <= *charged)
        return 0;
    if (api_ledger_reserve(call->ledger, now - *charged, "the batch's answer",
                           &call->problem))
        return -1;
    *charged = now;
    return 0;
}

/* An LMS document's buffer growth, reserved before it is made
 * (api_buf.before_grow): the document of a whole class is written at
 * once, after its submissions are graded. */
typedef struct {
    api_call *call;
    uint64_t *charged; /* of the answer, reserve_answer */
    int refused;       /* call->problem says why */
} document_growth;

static int reserve_document(void *ctx, size_t cap, size_t new_cap) {
    document_growth *g = ctx;
    if (reserve_answer(g->call, g->charged, *g->charged + (new_cap - cap))) {
        g->refused = 1;
        return -1;
    }
    return 0;
}

static int handle_batch(api_call *call) {
    const api_request *req = call->req;
    api_grade_format fmt;
    if (read_format(call, &fmt))
        return -1;
    const char *type = api_route_body_type(call->route, req->content_type);
    api_batch_form form =
        type && !strcmp(type, API_CT_JSON) ? API_BATCH_ARRAY : API_BATCH_LINES;
    batch *b = calloc(1, sizeof *b);
    if (!b)
        return api_fail(&call->problem, API_E_INTERNAL, NULL, "out of memory");
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
    uint64_t charged = 0; /* of the answer, reserve_answer */
    api_batch_scanner scan;
    api_batch_scan_start(&scan, req->body ? req->body : "", req->body_len,
                         form);
    api_buf line = {0}, graded = {0};
    batch_doc_entry *doc = NULL; /* an LMS format's submissions */
    size_t doc_cap = 0, n_doc = 0;
    while (rc == 0 && !b->deferred) {
        api_batch_item it;
        size_t where = 0;
        const char *why = NULL;
        int got =
            api_batch_scan_next(&scan, &it, b->hint, b->hint_len, &where, &why);
        if (got == API_BATCH_END)
            break;
        if (got == API_BATCH_BROKEN && b->stats.submissions == 0 &&
            !scan.started) {
            rc = where >= req->body_len ? empty_batch(call, form)
                                        : not_an_array(call, where);
            break;
        }
        if (got == API_BATCH_BROKEN && b->stats.submissions == 0) {
            rc = api_fail(&call->problem, API_E_INVALID_JSON, NULL,
                          "the body is not a JSON array of submissions: %s "
                          "(byte %zu)",
                          why, where);
            break;
        }
        line.len = 0;
        batch_doc_entry *entry = NULL;
        if (fmt != API_GRADE_FORMAT_ATTND) {
            if (n_doc == doc_cap) {
                size_t cap = doc_cap ? 2 * doc_cap : 64;
                batch_doc_entry *more = realloc(doc, cap * sizeof *doc);
                if (!more) {
                    rc = api_fail(&call->problem, API_E_INTERNAL, NULL,
                                  "out of memory");
                    break;
                }
                doc = more;
                doc_cap = cap;
            }
            entry = &doc[n_doc++];
            memset(entry, 0, sizeof *entry);
        }
        int problem;
        if (got == API_BATCH_BROKEN) {
            api_problem p = {0};
            api_fail(&p, API_E_INVALID_JSON, NULL,
                     "the batch's array breaks at byte %zu of the body: %s; "
                     "no submission after it can be found",
                     where, why);
            if (entry) {
                entry->problem = p;
                entry->points = 1;
            } else {
                put_problem_line(&line, "null", &p);
            }
            problem = 1;
        } else {
            problem = grade_one(b, &it, &line, &graded, entry);
        }
        if (b->deferred)
            break;
        b->stats.submissions++;
        b->stats.problems += (size_t)problem;
        if (entry) {
            /* the entry, its grade's fields and its id, as held */
            rc = reserve_answer(call, &charged,
                                charged + sizeof *entry + entry->id.cap +
                                    entry->grade.n_fields *
                                        sizeof *entry->grade.fields);
            if (rc || got == API_BATCH_BROKEN)
                break;
            continue;
        }
        if (form == API_BATCH_ARRAY)
            api_buf_puts(&call->out, b->stats.submissions > 1 ? ",\n" : "[\n");
        api_buf_append(&call->out, line.data, line.len);
        if (form == API_BATCH_LINES)
            api_buf_putc(&call->out, '\n');
        rc = reserve_answer(call, &charged, call->out.cap);
        if (rc || got == API_BATCH_BROKEN)
            break;
    }
    if (rc == 0 && !b->deferred && b->stats.submissions == 0)
        rc = empty_batch(call, form);
    if (rc == 0 && !b->deferred && fmt != API_GRADE_FORMAT_ATTND) {
        document_growth growth = {call, &charged, 0};
        call->out.before_grow = reserve_document;
        call->out.grow_ctx = &growth;
        int too_long = write_document(fmt, doc, n_doc, &call->out);
        call->out.before_grow = NULL;
        call->out.grow_ctx = NULL;
        if (growth.refused)
            rc = -1; /* the budget's 503 or 413, not "out of memory" */
        else if (too_long)
            rc = api_fail(&call->problem, API_E_PAYLOAD_TOO_LARGE, NULL,
                          "the %s document of these %zu submissions would "
                          "pass %d bytes even with every test's text left "
                          "out and its name cut (too many tests): grade "
                          "them in smaller batches",
                          fmt == API_GRADE_FORMAT_GRADESCOPE ? "gradescope"
                                                             : "prairielearn",
                          n_doc, API_LMS_DOC_MAX);
    } else if (rc == 0 && form == API_BATCH_ARRAY)
        api_buf_puts(&call->out, "\n]\n");
    if (rc == 0 && call->out.failed)
        rc = api_fail(&call->problem, API_E_INTERNAL, NULL,
                      "out of memory while writing the answer");
    if (b->deferred) {
        call->ledger->deferred = 1;
        rc = -1;
    }
    call->item_problems = b->stats.problems;
    call->content_type =
        form == API_BATCH_LINES && fmt == API_GRADE_FORMAT_ATTND ? CT_NDJSON
                                                                 : API_CT_JSON;
    b->stats.work = b->work;
    if (b->cache)
        api_reference_cache_stats_of(b->cache, &b->stats.cache);
    last_stats = b->stats;
    api_buf_free(&line);
    api_buf_free(&graded);
    api_buf_free(&b->text);
    free_document(doc, n_doc);
    api_reference_cache_free(b->cache);
    free(b);
    return rc;
}

/* The route table's entry (route.h). */
const api_route api_route_grade_batch = {
    .method = "POST",
    .path = "/grade/batch",
    .handler = handle_batch,
    .flags = API_ROUTE_RAW_BODY | API_ROUTE_COMPUTES,
    .body_types = body_types,
};
