/*
 * offline_question.c — attnd grade --question DIR (offline_internal.h):
 * a question folder read and added to the batch.
 *
 * A question folder (docs/offline.md) holds question.json, the members of
 * a grading request that every submission of the question shares, and
 * request.json, the request the students answer. Each submission of stdin
 * then gives only what is its own ({"id", "answer"}; other members too),
 * and the batch's body is stdin with question.json's members and
 * "request": request.json added before the closing '}' of each
 * submission (api_question_batch, api/question.h, which says why nothing
 * else moves).
 *
 * Both files are read whole, each its buffer reserved from the memory
 * budget here and its JSON tree by the api (the tree bounded as a
 * body's), checked, and kept as text: the members to add (question.json's
 * re-written compactly, request.json's as it is, its line ends made
 * spaces, which JSON allows only as white space, so that a submission
 * stays on one line). The body so built is reserved from the budget
 * before it is made.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api.h"
#include "offline_internal.h"
#include "offline_variants.h"
#include "question.h"
#include "variants.h"

/* the files of a question folder */
#define QUESTION_FILE "question.json"
#define REQUEST_FILE "request.json"
/* what joins question.json's members and request.json's text */
#define REQUEST_MEMBER "\"request\":"

/* dir/name in a malloc'd string, or NULL when memory runs out. */
static char *folder_file(const char *dir, const char *name) {
    size_t n = strlen(dir);
    char *path = malloc(n + 1 + strlen(name) + 1);
    if (path != NULL)
        sprintf(path, "%s%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/",
                name);
    return path;
}

/* JSON's white space. */
static int json_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Print why (the api's message, freed here; NULL: memory ran out). */
static void say(const char *who, char *why) {
    fprintf(stderr, "%s: %s\n", who, why != NULL ? why : "out of memory");
    free(why);
}

/* Print that bytes for what (a file's path, or the folder) find no room
 * in the memory budget (room: API_BUDGET_NEVER or _BUSY). */
static void say_no_room(const char *who, int room, const char *what,
                        uint64_t bytes) {
    char detail[512];
    api_budget_refusal(detail, sizeof detail, room, what, bytes);
    fprintf(stderr, "%s: %s\n", who, detail);
}

/* Reserve len bytes of the memory budget for what: 0, or -1 after
 * printing why not. */
static int reserve(const char *who, const char *what, size_t len) {
    int room = api_budget_take(len, 0);
    if (room == API_BUDGET_OK)
        return 0;
    say_no_room(who, room, what, len);
    return -1;
}

/* The most bytes a question's file may hold: a request's body limit,
 * for the file goes into every submission's body; without one (the
 * offline default), the bound of a body's JSON tree, which a file larger
 * than that hardly keeps. A file without end (a FIFO, /dev/zero) is
 * refused there instead of read forever. */
static uint64_t folder_file_max(const api_limits *limits) {
    uint64_t max = limits->max_body_bytes;
    if (limits->max_tree_bytes > 0 && limits->max_tree_bytes < max)
        max = limits->max_tree_bytes;
    return max;
}

/* The file at path into *file, its buffer reserved from the memory budget
 * and kept for the whole batch. Returns 0, or -1 after printing why
 * (naming the file) with nothing held. */
static int read_folder_file(const char *who, const char *path,
                            const api_limits *limits, offline_body *file) {
    memset(file, 0, sizeof *file);
    FILE *in = fopen(path, "rb");
    if (in == NULL) {
        fprintf(stderr, "%s: cannot read %s: %s\n", who, path, strerror(errno));
        return -1;
    }
    uint64_t max = folder_file_max(limits);
    int rc = srv_offline_read(in, file, max);
    int saved = errno;
    fclose(in);
    if (rc != 0) {
        fprintf(stderr, "%s: cannot read %s: %s\n", who, path, strerror(saved));
        return -1;
    }
    if (file->over_max) {
        fprintf(stderr,
                "%s: %s is over %llu bytes, the most a question's file may "
                "hold (--max-body-bytes, or without it the bound of a "
                "body's JSON tree)\n",
                who, path, (unsigned long long)max);
        return -1;
    }
    if (file->refused) {
        say_no_room(who, file->refused, path, file->len);
        return -1;
    }
    if (file->text != NULL && file->charged > file->len) {
        /* kept for the whole batch: its room beyond the text is given back */
        char *fit = realloc(file->text, file->len);
        if (fit != NULL) {
            file->text = fit;
            api_budget_give(file->charged - file->len);
            file->charged = file->len;
        }
    }
    return 0;
}

/* The text added to each submission into *settings: members (question.json
 * written compactly) without its '{' and '}', a ',' unless it is empty,
 * "request": and request's text from its '{' to its '}' on one line;
 * reserved from the memory budget (a refusal names r_path). Returns 0, or
 * -1 after printing why. */
static int join_settings(const char *who, const char *members,
                         const offline_body *request, const char *r_path,
                         offline_body *settings) {
    size_t m_len = strlen(members) - 2;
    const char *r = request->text;
    size_t r_start = 0, r_end = request->len;
    while (json_space(r[r_start]))
        r_start++;
    while (json_space(r[r_end - 1]))
        r_end--;
    size_t len =
        m_len + (m_len > 0) + strlen(REQUEST_MEMBER) + (r_end - r_start);
    if (reserve(who, r_path, len) != 0)
        return -1;
    settings->charged = len;
    settings->text = malloc(len);
    if (settings->text == NULL) {
        fprintf(stderr, "%s: out of memory\n", who);
        srv_offline_body_release(settings);
        return -1;
    }
    char *out = settings->text;
    memcpy(out, members + 1, m_len);
    out += m_len;
    if (m_len > 0)
        *out++ = ',';
    memcpy(out, REQUEST_MEMBER, strlen(REQUEST_MEMBER));
    out += strlen(REQUEST_MEMBER);
    for (size_t i = r_start; i < r_end; i++) /* one line */
        *out++ = r[i] == '\n' || r[i] == '\r' ? ' ' : r[i];
    settings->len = len;
    return 0;
}

/* members (a JSON object's text, malloc'd) with "problem": dir's own
 * name first when it has no "problem" (as attnd variants names a
 * problem). Returns the text to use (members itself, or a new one with
 * members freed), or NULL when memory runs out (members freed). */
static char *with_problem(char *members, const char *dir) {
    json_t *m = json_loads(members, 0, NULL);
    if (m != NULL && json_object_get(m, "problem") != NULL) {
        json_decref(m);
        return members;
    }
    char problem[256];
    json_t *name =
        json_string(srv_problem_of_folder(dir, problem, sizeof problem));
    json_t *out = json_object();
    char *text = NULL;
    if (m != NULL && name != NULL && out != NULL &&
        json_object_set(out, "problem", name) == 0 &&
        json_object_update(out, m) == 0)
        text = json_dumps(out, JSON_COMPACT);
    json_decref(name);
    json_decref(out);
    json_decref(m);
    free(members);
    return text;
}

/* Read dir's question.json and request.json into *settings (see
 * join_settings). Returns 0, or -1 after printing why. */
static int load_question(const char *who, const char *dir,
                         const api_limits *limits,
                         const api_variant_secret *secret,
                         offline_body *settings, int *marked) {
    memset(settings, 0, sizeof *settings);
    int rc = -1;
    char *members = NULL, *why;
    const char *route;
    char *q_path = folder_file(dir, QUESTION_FILE);
    char *r_path = folder_file(dir, REQUEST_FILE);
    offline_body q_file, r_file;
    memset(&q_file, 0, sizeof q_file);
    memset(&r_file, 0, sizeof r_file);
    if (q_path == NULL || r_path == NULL) {
        fprintf(stderr, "%s: out of memory\n", who);
        goto done;
    }
    /* question.json: its members, written compactly */
    if (read_folder_file(who, q_path, limits, &q_file) != 0)
        goto done;
    int checked = api_question_settings(q_file.text, q_file.len, q_path, limits,
                                        &members, &route, &why);
    srv_offline_body_release(&q_file);
    if (checked != 0) {
        say(who, why);
        goto done;
    }
    /* request.json: checked as JSON, its text kept */
    if (read_folder_file(who, r_path, limits, &r_file) != 0)
        goto done;
    if (api_question_request(r_file.text, r_file.len, r_path, route, limits,
                             &why) != 0) {
        say(who, why);
        goto done;
    }
    /* a problem: each student's variant is drawn (docs/variants.md) */
    *marked = api_variants_marked(r_file.text, r_file.len, r_path, &why);
    if (*marked < 0) {
        say(who, why);
        goto done;
    }
    if (*marked && secret == NULL) {
        fprintf(stderr,
                "%s: %s marks members to draw, so each student's variant "
                "is graded: give the course secret with --secret-file FILE "
                "or ATTND_VARIANT_SECRET\n",
                who, r_path);
        goto done;
    }
    if (*marked && (members = with_problem(members, dir)) == NULL) {
        fprintf(stderr, "%s: out of memory\n", who);
        goto done;
    }
    rc = join_settings(who, members, &r_file, r_path, settings);
done:
    srv_offline_body_release(&r_file);
    free(members);
    free(q_path);
    free(r_path);
    return rc;
}

/* Grade an empty answer with the question's settings and request, once,
 * before any student's: a setting the grader refuses (a misspelt field in
 * "fields", an unknown comparison, points naming no field) or a request
 * the endpoint refuses would otherwise fail every submission alike, each
 * a 0 the student reads. Only "nothing to grade" (422 at /answer) may come
 * back, or, when question.json leaves the endpoint to each submission,
 * its absence (422 at /endpoint). Returns 0, or -1 after printing the problem
 * and the file it is in. */
static int try_question(const char *who, const char *dir,
                        const api_limits *limits,
                        const api_variant_secret *secret,
                        const offline_body *settings, int marked) {
    /* a problem's is tried on a variant of its own */
    const char *empty = marked ? ",\"id\":\"question check\",\"answer\":{}}"
                               : ",\"answer\":{}}";
    size_t len = 1 + settings->len + strlen(empty);
    if (reserve(who, dir, len) != 0)
        return -1;
    char *body = malloc(len);
    if (body == NULL) {
        api_budget_give(len);
        fprintf(stderr, "%s: out of memory\n", who);
        return -1;
    }
    body[0] = '{';
    memcpy(body + 1, settings->text, settings->len);
    memcpy(body + 1 + settings->len, empty, strlen(empty));
    api_request req;
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.path = "/grade";
    req.content_type = "application/json";
    req.body = body;
    req.body_len = len;
    req.limits = limits;
    req.may_wait = 1;
    req.grader = 1;
    req.variant_secret = secret;
    api_response res;
    memset(&res, 0, sizeof res);
    api_handle(&req, &res);
    free(body);
    api_budget_give(len);
    json_t *problem = res.status >= 400 && res.body != NULL
                          ? json_loadb(res.body, res.body_len, 0, NULL)
                          : NULL;
    const char *pointer =
        json_string_value(json_object_get(problem, "pointer"));
    const char *code = json_string_value(json_object_get(problem, "code"));
    /* a question.json without "endpoint" leaves it to each submission:
     * then nothing past it can be tried before one arrives */
    int fine = res.status < 400 ||
               (res.status == 422 && pointer != NULL &&
                (strcmp(pointer, "/answer") == 0 ||
                 (strcmp(pointer, "/endpoint") == 0 && code != NULL &&
                  strcmp(code, "missing_field") == 0)));
    if (!fine) {
        /* a pointer into the request names its place in request.json */
        int in_request =
            pointer != NULL && strncmp(pointer, "/request", 8) == 0;
        const char *file = in_request ? REQUEST_FILE : QUESTION_FILE;
        if (in_request)
            pointer = pointer[8] != '\0' ? pointer + 8 : NULL;
        const char *detail =
            json_string_value(json_object_get(problem, "detail"));
        fprintf(stderr, "%s: %s/%s: %s%s%s: %s\n", who, dir, file,
                code != NULL ? code : "error", pointer != NULL ? " at " : "",
                pointer != NULL ? pointer : "",
                detail != NULL ? detail : "the question cannot be graded");
    }
    json_decref(problem);
    api_response_free(&res);
    return fine ? 0 : -1;
}

int srv_offline_question_load(const char *who, const char *dir,
                              const api_limits *limits,
                              const api_variant_secret *secret,
                              offline_body *settings) {
    int marked = 0;
    if (load_question(who, dir, limits, secret, settings, &marked) != 0)
        return -1;
    if (try_question(who, dir, limits, secret, settings, marked) != 0) {
        srv_offline_body_release(settings);
        return -1;
    }
    return 0;
}

int srv_offline_question_batch(offline_body *body, const char *content_type,
                               const offline_body *settings,
                               const char **what) {
    if (body->refused || body->text == NULL)
        return 0;
    offline_body built;
    memset(&built, 0, sizeof built);
    int rc = api_question_batch(NULL, &built.len, body->text, body->len,
                                content_type, settings->text, settings->len);
    if (rc > 0)
        return 0; /* a type the batch does not take: it says so */
    if (rc < 0)
        built.len = SIZE_MAX;
    int room = api_budget_take(built.len, 0);
    *what = "the body built with the question's settings and request";
    if (room != API_BUDGET_OK) {
        srv_offline_body_release(body);
        body->refused = room;
        body->len = built.len;
        return 0;
    }
    built.charged = built.len;
    built.text = malloc(built.len > 0 ? built.len : 1);
    if (built.text == NULL) {
        srv_offline_body_release(&built);
        return -1;
    }
    api_question_batch(built.text, &built.len, body->text, body->len,
                       content_type, settings->text, settings->len);
    srv_offline_body_release(body);
    *body = built;
    return 0;
}
