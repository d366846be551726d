/*
 * test_json_suite.c — JSON parser conformance through api_handle(): every
 * file of nst/JSONTestSuite (tests/json/json-test-suite, test_parsing/
 * files) is posted as the body of every POST route.
 *   y_ (valid JSON): never 400 invalid_json — a valid document that is not
 *      a valid request is 422 — except y_object_escaped_null_in_key, whose
 *      key holds \u0000, which docs/contract.md section 1 makes 400
 * invalid_json; n_ (invalid JSON): always 400 invalid_json; i_ (either): 400
 * invalid_json or a 422 problem, never anything else. Every answer must be a
 * well-formed problem+json document whose "status" member equals the HTTP
 * status, and after each batch the NW worked example (docs/contract.md section
 * 4) must still give its golden prediction: no file may disturb a later
 * request. A second pass wraps each y_ document as the value of every tensor
 * field ({"queries": Y, "keys": Y, "values": Y} and the NW names), which must
 * also never be 400 invalid_json (some of those are valid NW requests: 200 with
 * a JSON object, which jansson's strict parser proves has no NaN or Infinity).
 * Run from the repository root (tests/run.sh does).
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "api.h"
#include "testfs.h"

#define SUITE_DIR "tests/json/json-test-suite"
#define NUL_KEY_FILE "y_object_escaped_null_in_key.json"
#define MAX_REPORTED 8 /* failing files named per test */

typedef struct {
    char *name;
    char *body;
    size_t len;
} suite_file;

static suite_file *files;
static size_t n_files;

typedef struct {
    const char *path;   /* POST route */
    const char *fields; /* the route's tensor fields, for the wrapped pass */
    char prefix;        /* 'y', 'n' or 'i' */
    int wrapped;        /* 1: each y_ document as every tensor field */
    char name[96];
} suite_group;

static int by_name(const void *a, const void *b) {
    return strcmp(((const suite_file *)a)->name, ((const suite_file *)b)->name);
}

/* Every *.json file of the suite, sorted by name. */
static size_t load_suite(void) {
    DIR *d = opendir(SUITE_DIR);
    size_t cap = 512;
    files = calloc(cap, sizeof *files);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t nl = strlen(e->d_name);
        if (nl < 6 || strcmp(e->d_name + nl - 5, ".json") != 0)
            continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", SUITE_DIR, e->d_name);
        size_t len;
        char *body = test_slurp(path, &len);
        if (!body)
            continue;
        if (n_files == cap)
            files = realloc(files, (cap *= 2) * sizeof *files);
        files[n_files].name = strdup(e->d_name);
        files[n_files].body = body;
        files[n_files].len = len;
        n_files++;
    }
    if (d)
        closedir(d);
    qsort(files, n_files, sizeof *files, by_name);
    return n_files;
}

static void post(api_response *res, const char *path, const char *body,
                 size_t len) {
    api_request req;
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.path = path;
    req.content_type = "application/json";
    req.body = len ? body : NULL;
    req.body_len = len;
    api_handle(&req, res);
}

/* The answer is a problem+json document with a consistent status; its code
 * goes to code (cap bytes). Returns 0, or 1 with why filled. */
static int check_problem(const api_response *res, char *code, size_t cap,
                         char *why, size_t why_cap) {
    code[0] = '\0';
    if (res->status < 400 || res->status >= 500) {
        snprintf(why, why_cap, "status %d", res->status);
        return 1;
    }
    if (!res->content_type ||
        strcmp(res->content_type, "application/problem+json") != 0) {
        snprintf(why, why_cap, "content type %s",
                 res->content_type ? res->content_type : "(none)");
        return 1;
    }
    json_error_t err;
    json_t *doc = json_loadb(res->body, res->body_len, 0, &err);
    const json_t *status = json_object_get(doc, "status");
    const json_t *c = json_object_get(doc, "code");
    const json_t *type = json_object_get(doc, "type");
    int bad = !json_is_integer(status) ||
              json_integer_value(status) != res->status || !json_is_string(c) ||
              !json_is_string(type) ||
              strcmp(json_string_value(type), "about:blank") != 0;
    if (!bad)
        snprintf(code, cap, "%s", json_string_value(c));
    else
        snprintf(why, why_cap, "not a problem document: %.120s",
                 res->body ? res->body : "(no body)");
    json_decref(doc);
    return bad;
}

/* A 200 answer (a wrapped y_ document can be a valid request): JSON
 * without NaN or Infinity. Returns 0, or 1 with why filled. */
static int check_result(const api_response *res, char *why, size_t why_cap) {
    json_error_t err;
    json_t *doc = json_loadb(res->body, res->body_len, 0, &err);
    int bad = !json_is_object(doc) || !res->content_type ||
              strcmp(res->content_type, "application/json") != 0;
    if (bad)
        snprintf(why, why_cap, "200 but not a JSON object: %.120s",
                 res->body ? res->body : "(no body)");
    json_decref(doc);
    return bad;
}

/* The NW worked example still answers its golden prediction. */
static void assert_still_serving(void) {
    static const char nw[] = "{\"x_train\":[1,2,4],\"y_train\":[0,3,1],"
                             "\"x_query\":[2.5],\"w\":0.5,\"y_query\":[3]}";
    api_response res;
    post(&res, "/regression/nw", nw, sizeof nw - 1);
    assert_int_equal(res.status, 200);
    json_error_t err;
    json_t *doc = json_loadb(res.body, res.body_len, 0, &err);
    json_t *pred = json_array_get(json_object_get(doc, "predictions"), 0);
    assert_true(json_is_number(pred));
    assert_true(fabs(json_number_value(pred) - 1.4774782878985795) <= 1e-12);
    json_decref(doc);
    api_response_free(&res);
}

/* {"f1": Y, "f2": Y, ...} for the comma-separated field names. */
static char *wrap(const char *fields, const suite_file *f, size_t *len) {
    size_t n_fields = 1;
    for (const char *s = fields; *s; s++)
        n_fields += *s == ',';
    size_t cap = 2 + n_fields * (f->len + 32) + strlen(fields);
    char *out = malloc(cap);
    size_t n = 0;
    out[n++] = '{';
    const char *name = fields;
    while (*name) {
        size_t nl = strcspn(name, ",");
        n += (size_t)snprintf(out + n, cap - n,
                              "%s\"%.*s\":", name == fields ? "" : ",", (int)nl,
                              name);
        memcpy(out + n, f->body, f->len);
        n += f->len;
        name += nl + (name[nl] == ',');
    }
    out[n++] = '}';
    *len = n;
    return out;
}

static void run_group(void **state) {
    const suite_group *g = *state;
    size_t seen = 0, failed = 0, n200 = 0, n400 = 0, n422 = 0;
    char report[MAX_REPORTED * 200 + 1] = "";
    size_t rlen = 0;
    for (size_t i = 0; i < n_files; i++) {
        const suite_file *f = &files[i];
        if (f->name[0] != g->prefix)
            continue;
        seen++;
        size_t len = f->len;
        char *body = g->wrapped ? wrap(g->fields, f, &len) : NULL;
        api_response res;
        post(&res, g->path, body ? body : f->body, len);
        char code[64], why[200] = "";
        int bad = g->wrapped && res.status == 200
                      ? check_result(&res, why, sizeof why)
                      : check_problem(&res, code, sizeof code, why, sizeof why);
        int invalid_json = !bad && !strcmp(code, "invalid_json");
        if (invalid_json && res.status != 400) {
            snprintf(why, sizeof why, "invalid_json with status %d",
                     res.status);
            bad = 1;
        }
        if (!bad && res.status == 200) {
            n200++;
        } else if (!bad) {
            n400 += res.status == 400;
            n422 += res.status == 422;
            int nul_key = !strcmp(f->name, NUL_KEY_FILE);
            if (g->prefix == 'n' && !invalid_json)
                snprintf(why, sizeof why, "%d %s, expected 400 invalid_json",
                         res.status, code);
            else if (g->prefix == 'y' && nul_key && !invalid_json)
                snprintf(why, sizeof why,
                         "%d %s: a key holding \\u0000 is invalid_json",
                         res.status, code);
            else if (g->prefix == 'y' && !nul_key && invalid_json)
                snprintf(why, sizeof why, "valid JSON answered invalid_json");
            else if (g->prefix == 'i' && !invalid_json && res.status != 422)
                snprintf(why, sizeof why, "%d %s, expected 400 or 422",
                         res.status, code);
            bad = why[0] != '\0';
        }
        if (bad) {
            failed++;
            if (failed <= MAX_REPORTED)
                rlen += (size_t)snprintf(report + rlen, sizeof report - rlen,
                                         "\n  %s: %s", f->name, why);
        }
        api_response_free(&res);
        free(body);
    }
    printf("# %s: %zu files, %zu answered 200, %zu 400, %zu 422\n", g->name,
           seen, n200, n400, n422);
    if (seen == 0)
        fail_msg("no %c_ files under %s (run from the repository root)",
                 g->prefix, SUITE_DIR);
    if (failed)
        fail_msg("%zu of %zu files answered wrongly:%s", failed, seen, report);
    assert_still_serving();
}

int main(void) {
    if (load_suite() == 0) {
        fprintf(stderr, "no files under %s (run from the repository root)\n",
                SUITE_DIR);
        return 1;
    }
    static const struct {
        const char *path, *fields;
    } routes[] = {
        {"/attention/dot", "queries,keys,values"},
        {"/attention/additive", "queries,keys,values"},
        {"/regression/nw", "x_train,y_train,x_query"},
    };
    static const char prefixes[] = {'y', 'n', 'i'};
    enum { N_ROUTES = sizeof routes / sizeof routes[0] };
    static suite_group groups[N_ROUTES * 4];
    struct CMUnitTest tests[N_ROUTES * 4];
    size_t n = 0;
    for (size_t r = 0; r < N_ROUTES; r++) {
        for (size_t k = 0; k < 4; k++) {
            suite_group *g = &groups[n];
            g->path = routes[r].path;
            g->fields = routes[r].fields;
            g->prefix = k < 3 ? prefixes[k] : 'y';
            g->wrapped = k == 3;
            snprintf(g->name, sizeof g->name, "%s %c_ files%s", g->path,
                     g->prefix, g->wrapped ? " as every tensor field" : "");
            tests[n].name = g->name;
            tests[n].test_func = run_group;
            tests[n].initial_state = g;
            tests[n].setup_func = NULL;
            tests[n].teardown_func = NULL;
            n++;
        }
    }
    int rc = _cmocka_run_group_tests("json_suite", tests, n, NULL, NULL);
    for (size_t i = 0; i < n_files; i++) {
        free(files[i].name);
        free(files[i].body);
    }
    free(files);
    return rc;
}
