/*
 * batch_submission.c — one submission of POST /grade/batch
 * (batch_internal.h, docs/batch.md): its text parsed on its own with
 * /grade's fast path (its tensors read straight into doubles, its tree
 * charged to the memory budget before it is built), its id checked, and
 * it graded by api_grade_body (grade.h) with the batch's shared
 * references; a malformed submission fails alone, with a problem that
 * says where it is in the body.
 *
 * A request whose bytes were seen before, with every answer it will need
 * already computed, is not parsed again: it is read as {} (known_request).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "batch_internal.h"
#include "fastpath.h"
#include "route.h"

extern const api_route api_route_grade;

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
    return api_ledger_admit_tree(
        &t->tree, bytes, t->call->limits->max_tree_bytes, "this submission's",
        "", "the JSON tree of a submission", t->p);
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

/* The submission's request: its raw bytes and their hash (the scanner's
 * hint's when it found the hint's bytes), kept as the next hint when they
 * are new; and its complete entry, held, when those bytes were seen
 * before (known_request). */
static void take_request(batch *b, const api_batch_item *it) {
    b->raw = it->request_len ? b->call->req->body + it->request_start : NULL;
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
        b->counted.requests_elided++;
    }
}

/* The submission's text parsed with "request": {} in place of its
 * request (b->elided's), or NULL: then the entry is let go and *p
 * cleared, for the whole text to be parsed and its error to be where
 * the client's text has it. */
static json_t *load_elided(batch *b, const api_batch_item *it, const char *text,
                           api_fastpath *fast, const api_tree_gate *gate,
                           json_error_t *error, api_problem *p) {
    json_t *root = NULL;
    size_t at = it->request_start - it->start;
    b->text.len = 0;
    api_buf_append(&b->text, text, at);
    api_buf_puts(&b->text, "{}");
    api_buf_append(&b->text, text + at + it->request_len,
                   it->len - at - it->request_len);
    /* the request's bytes held no NUL when they were first parsed */
    if (!b->text.failed && !memchr(b->text.data, '\0', b->text.len))
        root = api_fastpath_load(fast, api_route_fast_fields(&api_route_grade),
                                 b->text.data, b->text.len,
                                 JSON_DECODE_ANY | JSON_ALLOW_NUL |
                                     JSON_REJECT_DUPLICATES,
                                 gate, error);
    if (!root) {
        api_fastpath_release(fast);
        memset(p, 0, sizeof *p);
        api_reference_cache_drop(b->elided);
        b->elided = NULL;
    }
    return root;
}

/* The submission parsed into *root with /grade's fast path, its tree
 * gated by tree (--max-tree-bytes). Returns 0 for an object, or -1 with
 * *tree->p set and located; *root is then NULL or the value that is not
 * an object (the caller frees it). */
static int parse_submission(batch *b, const api_batch_item *it,
                            api_fastpath *fast, tree_check *tree,
                            json_t **root) {
    const char *text = b->call->req->body + it->start;
    api_problem *p = tree->p;
    json_error_t error;
    api_tree_gate gate = {admit_tree, tree};
    if (b->elided)
        *root = load_elided(b, it, text, fast, &gate, &error, p);
    const char *nul = *root ? NULL : memchr(text, '\0', it->len);
    if (nul) {
        api_fail(p, API_E_INVALID_JSON, NULL,
                 "not valid JSON: a raw NUL byte at byte %zu of the "
                 "submission (%s)",
                 (size_t)(nul - text),
                 api_json_nul_hint(text, (size_t)(nul - text)));
        locate(p, it);
        return -1;
    }
    if (!*root && !p->code)
        *root = api_fastpath_load(
            fast, api_route_fast_fields(&api_route_grade), text, it->len,
            JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &gate,
            &error);
    if (!*root) {
        if (!fast->refused)
            api_problem_from_json_error(p, &error, text, it->len);
        locate(p, it);
        return -1;
    }
    if (!json_is_object(*root)) {
        api_fail(p, API_E_WRONG_TYPE, "",
                 "each submission is an object {\"id\", \"endpoint\", "
                 "\"request\", \"answer\"}; got %s",
                 api_json_kind(*root));
        locate(p, it);
        return -1;
    }
    return 0;
}

/* The submission's "id" into *id. Returns 0, or -1 with *p set (and *id
 * none) when it is missing or neither a string nor an integer. */
static int read_id(const json_t *root, batch_id *id, api_problem *p) {
    const json_t *idv = json_object_get(root, "id");
    if (!idv || json_is_null(idv)) {
        api_fail(p, API_E_MISSING_FIELD, "/id",
                 "each submission needs an `id` (a string or an integer) "
                 "that its line of the answer repeats");
        set_id(id, NULL);
        return -1;
    }
    if (!json_is_string(idv) && !json_is_integer(idv)) {
        api_fail(p, API_E_WRONG_TYPE, "/id",
                 "id must be a string or an integer; got %s",
                 api_json_kind(idv));
        set_id(id, NULL);
        return -1;
    }
    set_id(id, idv); /* /grade writes it first in its answer */
    return 0;
}

/* Grade the parsed submission root with the shared references, as a
 * call of its own inside the batch's: into line, or into doc. Returns 1
 * with *p set when it is answered with a problem, 0 for a grade. */
static int grade_parsed(batch *b, const json_t *root, const api_fastpath *fast,
                        api_buf *line, api_buf *graded, batch_doc_entry *doc,
                        api_problem *p) {
    api_call *call = b->call;
    b->request = json_object_get(root, "request");
    b->entry = NULL;
    api_call sub;
    api_ledger ledger;
    api_batch_sub_call(b, &sub, &ledger);
    sub.body = root;
    sub.doc = fast;
    api_grade_references refs = api_batch_references(b);
    refs.sample = 1; /* for the copy check (batch_copies.c) */
    int was_going = b->stopped == GOING;
    graded->len = 0;
    api_grade own;
    api_grade *grade = doc ? &doc->grade : &own;
    int rc = api_grade_run(&sub, root, &refs, grade);
    if (rc == 0 && !doc) {
        rc = api_grade_write_body(&sub, grade, root, graded);
        if (rc)
            api_grade_free(grade);
    }
    if (sub.compute_ms > 0)
        call->compute_ms =
            (call->compute_ms > 0 ? call->compute_ms : 0) + sub.compute_ms;
    api_ledger_settle(&ledger, 0);
    b->deferred |= ledger.deferred;
    int problem = 1;
    if (was_going && b->stopped != GOING) {
        api_batch_stopped_problem(b, p); /* it may lack what did not fit */
    } else if (b->lost) {
        api_fail(p, API_E_INTERNAL, NULL,
                 "the batch lost the shared reference of this submission's "
                 "request; send it again");
    } else if (rc != 0) {
        *p = sub.problem;
    } else if (doc) {
        doc->graded = 1;
        problem = 0;
    } else if (graded->failed || graded->len < 2) {
        api_fail(p, API_E_INTERNAL, NULL, "out of memory while grading");
    } else {
        api_buf_append(line, graded->data, graded->len);
        problem = 0;
    }
    if (problem == 0 && grade->sample &&
        api_batch_keep_variant(b, grade, doc ? b->doc_at : SIZE_MAX, root)) {
        *p = call->problem; /* the ledger's refusal is this submission's */
        memset(&call->problem, 0, sizeof call->problem);
        line->len = 0;
        problem = 1;
    }
    if (!doc && rc == 0)
        api_grade_free(grade);
    if (doc && problem && rc == 0)
        api_grade_free(&doc->grade); /* graded, but thrown away */
    if (doc && problem) {
        doc->points = api_grade_body_points(root);
        doc->visibility = api_grade_body_visibility(root);
    }
    return problem;
}

/* A submission answered with problem p: into doc with its id and what it
 * would have been worth (1 point at least), or as its line. */
static void put_problem(api_buf *line, batch_doc_entry *doc, const batch_id *id,
                        const api_problem *p) {
    if (doc) {
        doc->problem = *p;
        if (id->has)
            api_buf_append(&doc->id, id->text.data ? id->text.data : "",
                           id->text.len);
        doc->has_id = id->has;
        if (doc->points <= 0)
            doc->points = 1;
    } else {
        api_batch_put_problem_line(line, id->json.data ? id->json.data : "null",
                                   p);
    }
}

int api_batch_grade_one(batch *b, const api_batch_item *it, api_buf *line,
                        api_buf *graded, batch_doc_entry *doc) {
    api_call *call = b->call;
    api_problem p = {0};
    batch_id id = {0};
    int problem = 1;
    json_t *root = NULL;
    api_fastpath fast = {0};
    tree_check tree = {call, {0, call->ledger->may_wait, 0}, &p};
    if (b->stopped == GOING && call->limits->compute_timeout_s > 0 &&
        api_batch_elapsed_s(b) >= call->limits->compute_timeout_s)
        b->stopped = OUT_OF_TIME;
    if (b->stopped != GOING) {
        set_raw_id(&id, call->req->body, it);
        api_batch_stopped_problem(b, &p);
    } else {
        take_request(b, it);
        if (parse_submission(b, it, &fast, &tree, &root))
            set_id(&id, NULL);
        else if (read_id(root, &id, &p) == 0)
            problem = grade_parsed(b, root, &fast, line, graded, doc, &p);
    }
    if (b->elided)
        api_reference_cache_drop(b->elided);
    b->elided = NULL;
    b->lost = 0;
    b->deferred |= tree.tree.deferred;
    if (problem)
        put_problem(line, doc, &id, &p);
    api_buf_free(&id.json);
    api_buf_free(&id.text);
    json_decref(root);
    api_fastpath_release(&fast);
    api_ledger_settle(&tree.tree, 0);
    return problem;
}
