/*
 * variants_route.c — POST /variants: the handouts of a problem, for a
 * grader (contract section 13b, docs/variants.md): what attnd variants
 * writes from a roster, asked of the server that holds the secret.
 *
 *   {"problem": "dot", "version"?: "1", "request": {marked},
 *    "students": ["ada", {"id": "alan", "group": "grp1"}, ...]}
 *   -> application/x-ndjson, one line per student, in order:
 *   {"student": "ada", "request": {the variant}}
 *   {"student": "alan", "group": "grp1", "request": {grp1's variant}}
 *
 * Only a grader may ask (a token of --grading-token-file), and only of a
 * server started with the secret (--variant-secret-file): a student who
 * could ask would read every other student's problem. With the class's
 * roster (--roster), each student must be on it, and the roster says the
 * student's group. The drawn entries
 * of all the handouts together are held to --max-elements, and the
 * answer is reserved from the memory budget before a number is drawn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "budget.h"
#include "fields.h"
#include "grade.h"
#include "grade_variant.h"
#include "invoke.h"
#include "route.h"
#include "variant.h"

#define CT_NDJSON "application/x-ndjson"
/* the most bytes one drawn number takes in a handout, with its comma */
#define NUMBER_BYTES 26

static const char *const members[] = {"problem", "version", "request",
                                      "students"};

static int check_members(const json_t *body, api_problem *p) {
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)body, key, v) {
        size_t i = 0;
        while (i < 4 && strcmp(key, members[i]))
            i++;
        if (i == 4) {
            char ptr[API_POINTER_MAX];
            snprintf(ptr, sizeof ptr, "/%.200s", key);
            return api_fail(p, API_E_UNKNOWN_FIELD, ptr,
                            "unknown field `%.200s` in /variants. Known "
                            "fields: problem, version, request, students",
                            key);
        }
    }
    return 0;
}

/* Student i of students: its id and group (NULL: none). Returns 0, or -1
 * with p set. */
static int student_at(const json_t *students, size_t i, const char **id,
                      const char **group, api_problem *p) {
    const json_t *s = json_array_get(students, i);
    char ptr[64];
    snprintf(ptr, sizeof ptr, "/students/%zu", i);
    *group = NULL;
    if (json_is_object(s)) {
        const json_t *g = json_object_get(s, "group");
        if (g && !json_is_string(g))
            return api_fail(p, API_E_WRONG_TYPE, ptr,
                            "a student's group must be a string");
        *group = json_string_value(g);
        s = json_object_get(s, "id");
    }
    if (!json_is_string(s))
        return api_fail(p, API_E_WRONG_TYPE, ptr,
                        "each student is an id (a string) or {\"id\", "
                        "\"group\"?}");
    *id = json_string_value(s);
    size_t n = json_string_length(s);
    if (n == 0 || n > API_GRADE_ID_MAX || strlen(*id) != n ||
        (*group && (**group == '\0' || strlen(*group) > API_GRADE_ID_MAX)))
        return api_fail(p, API_E_INVALID_VALUE, ptr,
                        "a student's id and group are 1 to %d bytes of "
                        "printable text",
                        API_GRADE_ID_MAX);
    return 0;
}

static int handle_variants(api_call *call) {
    const json_t *body = call->body;
    api_problem *p = &call->problem;
    const json_t *request = json_object_get(body, "request");
    const json_t *students = json_object_get(body, "students");
    const json_t *problem = json_object_get(body, "problem");
    const json_t *version = api_field_value(body, "version");
    if (check_members(body, p))
        return -1;
    if (!json_is_string(problem))
        return api_fail(p, problem ? API_E_WRONG_TYPE : API_E_MISSING_FIELD,
                        "/problem", "problem names the problem: a string");
    if (version && !json_is_string(version) && !json_is_integer(version))
        return api_fail(p, API_E_WRONG_TYPE, "/version",
                        "version is a string or an integer (default \"1\")");
    if (!json_is_object(request))
        return api_fail(p, request ? API_E_WRONG_TYPE : API_E_MISSING_FIELD,
                        "/request",
                        "request is the problem's request.json, an object "
                        "that marks members to draw");
    if (api_variant_check(request, p)) {
        api_invoke_prefix_pointer(p, "/request");
        return -1;
    }
    if (!api_variant_marked(request))
        return api_fail(p, API_E_INVALID_VALUE, "/request",
                        "request marks no member to draw ({\"queries\": "
                        "{\"draw\": {\"shape\", \"distribution\"}}}): every "
                        "student would get the same problem");
    size_t n = json_array_size(students);
    if (!json_is_array(students) || n == 0)
        return api_fail(p, students ? API_E_WRONG_TYPE : API_E_MISSING_FIELD,
                        "/students",
                        "students is a non-empty array of ids, or of "
                        "{\"id\", \"group\"?}");
    if (n > API_BATCH_SUBMISSIONS_MAX)
        return api_fail(p, API_E_PAYLOAD_TOO_LARGE, "/students",
                        "at most %d students at once; got %zu",
                        API_BATCH_SUBMISSIONS_MAX, n);
    const api_variant_secret *secret = call->req->variant_secret;
    if (!secret)
        return api_fail(p, API_E_INVALID_VALUE, NULL,
                        "this server draws no variants: it is started "
                        "without --variant-secret-file (or "
                        "ATTND_VARIANT_SECRET_FILE; docs/variants.md)");
    if (!call->req->grader)
        return api_fail(p, API_E_UNAUTHORIZED, NULL,
                        "handouts are a grader's: send a token of "
                        "--grading-token-file as Authorization: Bearer "
                        "<token>");
    size_t entries = api_variant_entries(request);
    if (entries > call->limits->max_elements / n)
        return api_fail(p, API_E_PAYLOAD_TOO_LARGE, "/students",
                        "%zu handouts of %zu drawn entries each pass the "
                        "%zu entries one request may draw (--max-elements): "
                        "ask for fewer students at once",
                        n, entries, call->limits->max_elements);
    char version_text[32];
    const char *v = json_string_value(version);
    if (json_is_integer(version)) {
        snprintf(version_text, sizeof version_text, "%lld",
                 (long long)json_integer_value(version));
        v = version_text;
    }
    /* each handout: its drawn numbers, and the members copied as they
     * are, which the body's length bounds */
    if (api_ledger_reserve(
            call->ledger,
            (uint64_t)n * (entries * NUMBER_BYTES + call->req->body_len + 1024),
            "the handouts", p))
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *id = NULL, *group = NULL, *theirs = NULL;
        if (student_at(students, i, &id, &group, p))
            return -1;
        const api_roster *roster = call->req->roster;
        if (roster && (api_roster_find(roster, id, &theirs) ||
                       (group && (!theirs || strcmp(group, theirs))))) {
            char ptr[64];
            snprintf(ptr, sizeof ptr, "/students/%zu", i);
            return api_fail(p, API_E_INVALID_VALUE, ptr,
                            "%.256s%s the class's roster (--roster)", id,
                            api_roster_find(roster, id, &theirs)
                                ? " is not on"
                                : "'s group is not the one on");
        }
        if (roster)
            group = theirs; /* the roster says who shares a variant */
        api_variant_id vid = {group ? group : id, json_string_value(problem),
                              v ? v : "1"};
        unsigned char key[API_VARIANT_KEY_BYTES];
        char *text = NULL;
        int rc = api_variant_key(secret->bytes, secret->len, &vid, key, p) ||
                 api_variant_write(request, key, &text, p);
        memset(key, 0, sizeof key);
        if (rc && p->code == API_E_INVALID_VALUE) { /* an id's fault */
            char ptr[64], detail[API_DETAIL_MAX];
            snprintf(ptr, sizeof ptr, "/students/%zu", i);
            snprintf(detail, sizeof detail, "%s", p->detail);
            memset(p, 0, sizeof *p);
            return api_fail(p, API_E_INVALID_VALUE, ptr, "%s", detail);
        }
        if (rc)
            return -1;
        api_buf_puts(&call->out, "{\"student\":");
        api_buf_json_string(&call->out, id, strlen(id));
        if (group) {
            api_buf_puts(&call->out, ",\"group\":");
            api_buf_json_string(&call->out, group, strlen(group));
        }
        api_buf_puts(&call->out, ",\"request\":");
        api_buf_append(&call->out, text, strlen(text) - 1); /* its newline */
        api_buf_puts(&call->out, "}\n");
        free(text);
    }
    if (call->out.failed)
        return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    call->content_type = CT_NDJSON;
    return 0;
}

/* The route table's entry (route.h). */
const api_route api_route_variants = {
    .method = "POST",
    .path = "/variants",
    .handler = handle_variants,
    .flags = API_ROUTE_JSON_BODY | API_ROUTE_COMPUTES |
             API_ROUTE_UNIQUE_MEMBERS | API_ROUTE_LANE_GRADING,
};
