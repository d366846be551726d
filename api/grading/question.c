/*
 * question.c — a question folder's files checked, and its settings added
 * to a batch's submissions (see question.h).
 *
 * Each submission of stdin gives only what is its own ({"id", "answer"};
 * other members too), and the batch's body is stdin with, before the
 * closing '}' of each submission, question.json's members and "request":
 * request.json:
 *
 *   {"id": "ada", "answer": {...}}
 *   -> {"id": "ada", "answer": {...},"endpoint":...,"request":{...}}
 *
 * Nothing else in the body moves: blank lines, line numbers, array
 * elements and a submission's own bytes stay where they were, so the
 * batch's problems (a line that is not JSON, not an object) read as for
 * the body without --question. A submission that gives a member the
 * question gives too has it twice, which the batch refuses as that
 * submission's problem (invalid_json, "an object gives a member twice"):
 * the question's settings are never replaced by a line's, nor the
 * reverse. The submissions are not parsed here; the batch parses each
 * one, as it would parse it without --question.
 */
#include "question.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "batch.h"
#include "batch_scan.h"
#include "fastpath.h"
#include "problem.h"
#include "route.h"
#include "suggest.h"

/* question.json's members: those of a grading request (grade.c) but the
 * ones each submission gives (id, answer), request.json's (request) and
 * the command line's (format: --format). */
static const char *const question_members[] = {
    "endpoint",      "fields", "compare", "points",  "credit", "visibility",
    "show_expected", "rtol",   "atol",    "problem", "version"};
#define N_QUESTION_MEMBERS                                                     \
    (sizeof question_members / sizeof question_members[0])

/* What a question folder's file holds of the budget for its JSON tree
 * (an api_tree_gate): the tree is bounded as a body's. */
typedef struct {
    size_t max;       /* limits.max_tree_bytes (0: none) */
    uint64_t bytes;   /* the last tree asked for */
    uint64_t charged; /* of the budget */
    int over;         /* bytes > max */
    int room;         /* API_BUDGET_* of the last reservation */
} file_tree;

static int admit_file_tree(void *ctx, uint64_t bytes) {
    file_tree *t = ctx;
    api_budget_give(t->charged); /* a second text replaces the first */
    t->charged = 0;
    t->bytes = bytes;
    if (t->max > 0 && bytes > t->max) {
        t->over = 1;
        return -1;
    }
    t->room = api_budget_take(bytes, 0);
    if (t->room != API_BUDGET_OK)
        return -1;
    t->charged = bytes;
    return 0;
}

/* A message printed from fmt, malloc'd; NULL when memory runs out. */
static char *message(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static char *message(const char *fmt, ...) {
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) < 0)
        text = NULL;
    va_end(ap);
    return text;
}

/* Why the file name could not be parsed (api_fastpath_load gave NULL). */
static char *parse_failure(const char *name, const file_tree *tree,
                           const api_fastpath *fast,
                           const json_error_t *error) {
    if (tree->over)
        return message("%s would take about %llu MiB of memory as a tree of "
                       "values, over the limit of %zu MiB (four times "
                       "--max-body-bytes)",
                       name, (unsigned long long)(tree->bytes >> 20),
                       tree->max >> 20);
    if (fast->refused) {
        char detail[512];
        api_budget_refusal(detail, sizeof detail, tree->room, name,
                           tree->bytes);
        return message("%s (its JSON tree)", detail);
    }
    return message("%s is not valid JSON: %s (line %d, column %d)", name,
                   error->text, error->line, error->column);
}

/* The JSON object text[0 .. len) of the file name, parsed as a body is:
 * its tree admitted by *tree (bounded by limits, reserved from the memory
 * budget), the tensors of route's fields read by *fast when route is
 * given. Returns the object, or NULL with *why set and nothing held. The
 * caller releases the object, *fast and tree->charged. */
static json_t *parse_file(const char *text, size_t len, const char *name,
                          const api_limits *limits, const api_route *route,
                          api_fastpath *fast, file_tree *tree, char **why) {
    const char *nul = text != NULL ? memchr(text, '\0', len) : NULL;
    if (nul != NULL) {
        *why = message("%s is not valid JSON: a raw NUL byte at byte %zu (%s)",
                       name, (size_t)(nul - text),
                       api_json_nul_hint(text, (size_t)(nul - text)));
        return NULL;
    }
    memset(tree, 0, sizeof *tree);
    tree->max = limits->max_tree_bytes;
    api_tree_gate gate = {admit_file_tree, tree};
    json_error_t error;
    json_t *root = api_fastpath_load(
        fast, route != NULL ? api_route_fast_fields(route) : NULL,
        text != NULL ? text : "", len,
        JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &gate,
        &error);
    if (root == NULL) {
        *why = parse_failure(name, tree, fast, &error);
    } else if (!json_is_object(root)) {
        *why = message("%s holds %s, not a JSON object {...}", name,
                       api_json_kind(root));
        json_decref(root);
        root = NULL;
    }
    if (root == NULL) {
        api_fastpath_release(fast);
        api_budget_give(tree->charged);
        tree->charged = 0;
    }
    return root;
}

/* Check question.json's members: 0, or -1 with *why set. */
static int check_members(const char *name, const json_t *question, char **why) {
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)question, key, value) {
        size_t i = 0;
        while (i < N_QUESTION_MEMBERS && strcmp(key, question_members[i]))
            i++;
        if (i < N_QUESTION_MEMBERS)
            continue;
        const char *because = NULL;
        if (!strcmp(key, "request"))
            because =
                "the request the students answer is request.json, beside it";
        else if (!strcmp(key, "answer") || !strcmp(key, "id"))
            because = "each submission on stdin gives its own";
        else if (!strcmp(key, "format"))
            because = "the answer's form is attnd grade's --format";
        char names[256], hint[API_SUGGEST_TEXT];
        api_join_names(names, sizeof names, question_members,
                       N_QUESTION_MEMBERS);
        if (because != NULL)
            *why = message("%s: `%s` is not a question's setting: %s", name,
                           key, because);
        else
            *why = message(
                "%s: unknown member `%s`%s A question's settings are: %s", name,
                key,
                api_did_you_mean(hint, key, strlen(key), question_members,
                                 N_QUESTION_MEMBERS),
                names);
        return -1;
    }
    return 0;
}

int api_question_settings(const char *text, size_t len, const char *name,
                          const api_limits *limits, char **members,
                          const char **route, char **why) {
    *members = NULL;
    *route = NULL;
    *why = NULL;
    api_fastpath fast;
    file_tree tree;
    json_t *question =
        parse_file(text, len, name, limits, NULL, &fast, &tree, why);
    if (question == NULL)
        return -1;
    const char *endpoint =
        json_string_value(json_object_get(question, "endpoint"));
    *route = endpoint != NULL ? api_route_of_path(endpoint) : NULL;
    if (check_members(name, question, why) == 0)
        *members = json_dumps(question, JSON_COMPACT);
    json_decref(question);
    api_fastpath_release(&fast);
    api_budget_give(tree.charged);
    return *members != NULL ? 0 : -1;
}

int api_question_request(const char *text, size_t len, const char *name,
                         const char *route, const api_limits *limits,
                         char **why) {
    *why = NULL;
    api_fastpath fast;
    file_tree tree;
    json_t *request = parse_file(text, len, name, limits,
                                 api_route_named(route), &fast, &tree, why);
    if (request == NULL)
        return -1;
    json_decref(request);
    api_fastpath_release(&fast);
    api_budget_give(tree.charged);
    return 0;
}

/* JSON's white space. */
static int json_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Where the object text[0 .. len) holds closes: the index of its last
 * '}', with *empty set when only white space lies between its '{' and
 * it; SIZE_MAX when the text, white space aside, does not begin with '{'
 * and end with '}'. Such a submission is passed on as it is, and the
 * batch says what is wrong with it; one that does and still is not an
 * object stays wrong with the settings added (they hold no quote or
 * bracket that could close what the submission left open, and no comma
 * that could mend it). */
static size_t object_close(const char *text, size_t len, int *empty) {
    size_t first = 0, last = len;
    while (first < len && json_space(text[first]))
        first++;
    while (last > first && json_space(text[last - 1]))
        last--;
    if (last - first < 2 || text[first] != '{' || text[last - 1] != '}')
        return SIZE_MAX;
    size_t inner = first + 1;
    while (inner < last - 1 && json_space(text[inner]))
        inner++;
    *empty = inner == last - 1;
    return last - 1;
}

int api_question_batch(char *out, size_t *total, const char *body, size_t len,
                       const char *content_type, const char *settings,
                       size_t settings_len) {
    const char *type =
        api_route_body_type(&api_route_grade_batch, content_type);
    if (type == NULL)
        return 1;
    api_batch_scanner scan;
    api_batch_item item;
    size_t where, copied = 0, at = 0, extra = 0;
    const char *why;
    api_batch_scan_start(&scan, body, len,
                         strcmp(type, "application/json") == 0
                             ? API_BATCH_ARRAY
                             : API_BATCH_LINES);
    while (api_batch_scan_next(&scan, &item, NULL, 0, &where, &why) ==
           API_BATCH_ITEM) {
        int empty;
        size_t close = object_close(body + item.start, item.len, &empty);
        if (close == SIZE_MAX)
            continue;
        close += item.start;
        size_t add = settings_len + (empty ? 0 : 1);
        if (add > SIZE_MAX - len - extra)
            return -1;
        extra += add;
        if (out != NULL) {
            memcpy(out + at, body + copied, close - copied);
            at += close - copied;
            if (!empty)
                out[at++] = ',';
            memcpy(out + at, settings, settings_len);
            at += settings_len;
        }
        copied = close; /* the '}' goes with what follows */
    }
    if (out != NULL)
        memcpy(out + at, body + copied, len - copied);
    *total = len + extra;
    return 0;
}
