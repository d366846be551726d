/*
 * grade_variant.c — a grading request for a student's own variant (see
 * grade_variant.h).
 */
#include "grade_variant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "fields.h"
#include "invoke.h"
#include "variant.h"

/* v's text (a string's, or an integer's digits) into buf, or -1 with p
 * set: wrong_type at /name unless a string (or, with integers, an
 * integer). Absent or null: *out NULL. */
static int text_of(const json_t *body, const char *name, int integers,
                   char *buf, size_t cap, const char **out, api_problem *p) {
    const json_t *v = api_field_value(body, name);
    char pointer[16];
    snprintf(pointer, sizeof pointer, "/%s", name);
    *out = NULL;
    if (!v)
        return 0;
    if (json_is_string(v)) {
        *out = json_string_value(v);
        if (strlen(*out) != json_string_length(v))
            return api_fail(p, API_E_INVALID_VALUE, pointer,
                            "%s holds a NUL character; ids are printable "
                            "text",
                            name);
        return 0;
    }
    if (integers && json_is_integer(v)) {
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
        *out = buf;
        return 0;
    }
    return api_fail(p, API_E_WRONG_TYPE, pointer, "%s must be %s; got %s", name,
                    integers ? "a string or an integer" : "a string",
                    api_json_kind(v));
}

static int by_id(const void *key, const void *entry) {
    return strcmp(key, *(const char *const *)entry);
}

int api_roster_find(const api_roster *roster, const char *id,
                    const char **group) {
    const char *const *at =
        bsearch(id, roster->ids, roster->n, sizeof *roster->ids, by_id);
    if (!at)
        return -1;
    *group = roster->groups[at - roster->ids];
    return 0;
}

/* With the class's roster: id must be on it, and its group is the
 * roster's (a "group" given must be that one). Returns 0 with *group
 * set, or -1 with p set. */
static int on_roster(const api_roster *roster, const char *id,
                     const char **group, api_problem *p) {
    if (!id)
        return api_fail(p, API_E_MISSING_FIELD, "/id",
                        "a variant is a student's: \"id\" names the student "
                        "on the class's roster");
    const char *theirs;
    if (api_roster_find(roster, id, &theirs))
        return api_fail(p, API_E_INVALID_VALUE, "/id",
                        "%.256s is not on the class's roster (--roster): its "
                        "variant is no student's",
                        id);
    if (*group && !theirs)
        return api_fail(p, API_E_INVALID_VALUE, "/group",
                        "the roster puts %.256s in no group, not in %.256s", id,
                        *group);
    if (*group && strcmp(*group, theirs))
        return api_fail(p, API_E_INVALID_VALUE, "/group",
                        "the roster puts %.256s in the group %.256s, not in "
                        "%.256s",
                        id, theirs, *group);
    *group = theirs;
    return 0;
}

/* The problem of a variant member given with a request that marks
 * nothing, or 0. */
static int no_marks(const json_t *body, api_problem *p) {
    static const char *const members[] = {API_GRADE_VARIANT_MEMBERS};
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++)
        if (api_field_value(body, members[i])) {
            char pointer[16];
            snprintf(pointer, sizeof pointer, "/%s", members[i]);
            return api_fail(p, API_E_INVALID_VALUE, pointer,
                            "%s names a student's variant, but request "
                            "marks no member to draw ({\"queries\": "
                            "{\"draw\": {\"shape\", \"distribution\"}}}): "
                            "send the problem's request.json as it is",
                            members[i]);
        }
    return 0;
}

int api_grade_variant_draw(api_call *call, const json_t *body,
                           api_grade_variant *v) {
    memset(v, 0, sizeof *v);
    api_problem *p = &call->problem;
    const json_t *request = json_object_get(body, "request");
    if (!json_is_object(request) || !api_variant_marked(request))
        return no_marks(body, p);
    char id_buf[32], version_buf[32];
    const char *problem, *version, *group, *id;
    if (text_of(body, "problem", 0, NULL, 0, &problem, p) ||
        text_of(body, "version", 1, version_buf, sizeof version_buf, &version,
                p) ||
        text_of(body, "group", 0, NULL, 0, &group, p) ||
        text_of(body, "id", 1, id_buf, sizeof id_buf, &id, p))
        return -1;
    if (api_variant_check(request, p)) {
        api_invoke_prefix_pointer(p, "/request");
        return -1;
    }
    if (!problem)
        return api_fail(p, API_E_MISSING_FIELD, "/problem",
                        "request marks members to draw, so it is a "
                        "problem whose variant is each student's: give its "
                        "id as \"problem\" (and \"version\", default "
                        "\"1\"), as attnd variants drew the handouts");
    if (!id && !group)
        return api_fail(p, API_E_MISSING_FIELD, "/id",
                        "a variant is a student's: \"id\" names the student "
                        "(or \"group\" the group) whose variant is graded");
    const api_variant_secret *secret = call->req->variant_secret;
    if (!secret)
        return api_fail(p, API_E_INVALID_VALUE, "/request",
                        "request marks members to draw, and this server "
                        "draws no variants: it is started without "
                        "--variant-secret-file (or ATTND_VARIANT_SECRET_FILE; "
                        "docs/variants.md)");
    if (!call->req->grader)
        return api_fail(p, API_E_UNAUTHORIZED, "/request",
                        "a student's variant is graded only for a grader: "
                        "send a token of --grading-token-file as "
                        "Authorization: Bearer <token>");
    /* after the grader's token: who is on the roster is a grader's to know */
    if (call->req->roster && on_roster(call->req->roster, id, &group, p))
        return -1;
    api_variant_id vid = {group ? group : id, problem, version ? version : "1"};
    unsigned char key[API_VARIANT_KEY_BYTES];
    if (api_variant_key(secret->bytes, secret->len, &vid, key, p)) {
        char detail[API_DETAIL_MAX]; /* "the student id is empty", ... */
        snprintf(detail, sizeof detail, "%s", p->detail);
        const char *at = strstr(detail, "student") ? (group ? "/group" : "/id")
                         : strstr(detail, "problem") ? "/problem"
                                                     : "/version";
        memset(p, 0, sizeof *p);
        return api_fail(p, API_E_INVALID_VALUE, at, "%s", detail);
    }
    /* the drawn numbers, held while the variant is graded */
    if (api_ledger_reserve(call->ledger,
                           api_variant_entries(request) * sizeof(double),
                           "the student's variant", p)) {
        memset(key, 0, sizeof key);
        return -1;
    }
    api_fastpath_begin(&v->doc, call->doc);
    v->student = strdup(vid.student);
    int rc = v->student ? api_variant_request(request, key, &v->doc,
                                              &v->request, &v->numbers, p)
                        : api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    memset(key, 0, sizeof key);
    if (rc)
        api_grade_variant_free(v);
    return rc;
}

void api_grade_variant_free(api_grade_variant *v) {
    json_decref(v->request);
    api_fastpath_release(&v->doc);
    free(v->numbers);
    free(v->student);
    memset(v, 0, sizeof *v);
}
