/*
 * test_api_kserve.c — the Open Inference Protocol front through
 * api_handle().
 *
 * 1. Every successful data case of the four routes behind the models is
 *    rewritten here as a protocol request (tensor fields -> inputs with
 *    shape and flat data, a scalar valid_lens -> shape [1], fit ->
 *    fit_epochs/fit_lr/fit_data, other fields -> parameters) and must give
 *    exactly the route's own answer: each member (nested ones by dotted
 *    name, diagnostics.warnings left out) is an output with the same shape
 *    and the same numbers, and there is no other output.
 * 2. The models' metadata lists inputs the route knows, and the route has
 *    no field the front cannot carry (every field is an input or a
 *    parameter); server metadata and readiness; the binary extension,
 *    whose body framing the dispatcher reaches through the front table.
 * Run from the repository root (tests/run.sh does).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <float.h>
#include <jansson.h>
#include <math.h>

#include "api.h"
#include "front.h"
#include "kserve.h"
#include "route.h"

#define CASES_DIR "tests/cases"

static const struct {
    const char *model, *route, *cases;
} models[] = {
    {"attention_dot", "/attention/dot", "attention_dot"},
    {"attention_additive", "/attention/additive", "attention_additive"},
    {"attention_multihead", "/attention/multihead", "attention_multihead"},
    {"regression_nw", "/regression/nw", "regression_nw"},
};
#define N_MODELS (sizeof models / sizeof models[0])

static api_response call(const char *method, const char *path,
                         const json_t *body) {
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    api_request req = {.method = method,
                       .path = path,
                       .content_type = "application/json",
                       .body = text,
                       .body_len = text ? strlen(text) : 0};
    api_response res;
    api_handle(&req, &res);
    free(text);
    return res;
}

static json_t *parse(const api_response *res) {
    json_error_t err;
    json_t *j = json_loadb(res->body, res->body_len, 0, &err);
    if (!j)
        fail_msg("not JSON (%s): %.*s", err.text, (int)res->body_len,
                 res->body);
    return j;
}

static json_t *get_json(const char *path, int *status) {
    api_response res = call("GET", path, NULL);
    *status = res.status;
    json_t *j = parse(&res);
    api_response_free(&res);
    return j;
}

static json_t *post_json(const char *path, const json_t *body, int *status) {
    api_response res = call("POST", path, body);
    *status = res.status;
    json_t *j = parse(&res);
    api_response_free(&res);
    return j;
}

/* ---------------------------------------------- tensors as shape + data */

/* Append the numbers of a nested array to data, recording the shape along
 * first elements. */
static void flatten(const json_t *v, json_t *shape, json_t *data,
                    size_t depth) {
    if (!json_is_array(v)) {
        json_array_append(data, (json_t *)v);
        return;
    }
    if (json_array_size(shape) == depth)
        json_array_append_new(shape,
                              json_integer((json_int_t)json_array_size(v)));
    for (size_t i = 0; i < json_array_size(v); i++)
        flatten(json_array_get(v, i), shape, data, depth + 1);
}

/* {"shape", "data"} of a value written as nested arrays, a flat object or
 * one number (shape [1]). New reference. */
static json_t *as_flat(const json_t *v) {
    if (json_is_object(v))
        return json_pack("{s:O,s:O}", "shape", json_object_get(v, "shape"),
                         "data", json_object_get(v, "data"));
    json_t *shape = json_array(), *data = json_array();
    flatten(v, shape, data, 0);
    if (!json_is_array(v))
        json_array_append_new(shape, json_integer(1));
    return json_pack("{s:o,s:o}", "shape", shape, "data", data);
}

/* ----------------------------------------- 1. routes vs the v2 front */

static int is_input(const json_t *metadata, const char *name) {
    const json_t *inputs = json_object_get(metadata, "inputs");
    for (size_t i = 0; i < json_array_size(inputs); i++)
        if (!strcmp(json_string_value(
                        json_object_get(json_array_get(inputs, i), "name")),
                    name))
            return 1;
    return 0;
}

/* The protocol's request for a route's request body. */
static json_t *to_v2(const json_t *body, const json_t *metadata) {
    json_t *inputs = json_array(), *params = json_object();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)body, key, v) {
        if (json_is_null(v) || !strcmp(key, "tensor_format"))
            continue;
        if (is_input(metadata, key)) {
            json_t *f = as_flat(v);
            json_array_append_new(
                inputs, json_pack("{s:s,s:O,s:s,s:O}", "name", key, "shape",
                                  json_object_get(f, "shape"), "datatype",
                                  "FP64", "data", json_object_get(f, "data")));
            json_decref(f);
        } else if (!strcmp(key, "fit") && json_is_object(v)) {
            /* any fit_* parameter turns fit on: "fit": {} (every default)
             * is the default data source named */
            if (json_object_size(v) == 0)
                json_object_set_new(params, "fit_data",
                                    json_string("train_loo"));
            const char *k;
            json_t *x;
            json_object_foreach(v, k, x) {
                char name[64];
                snprintf(name, sizeof name, "fit_%s", k);
                json_object_set(params, name, x);
            }
        } else {
            json_object_set(params, key, v);
        }
    }
    return json_pack("{s:s,s:o,s:o}", "id", "case", "inputs", inputs,
                     "parameters", params);
}

/* Every member of the route's answer (dotted names) with its flat form,
 * into outputs {name: {"shape", "data"}}. */
static void answer_members(const json_t *obj, const char *prefix,
                           json_t *outputs) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        char name[96];
        snprintf(name, sizeof name, "%s%s%s", prefix, *prefix ? "." : "", key);
        if (!strcmp(name, "diagnostics.warnings"))
            continue;
        if (json_is_object(v) && !json_object_get(v, "shape")) {
            answer_members(v, name, outputs);
        } else if (json_is_array(v) && json_is_object(json_array_get(v, 0))) {
            /* NW history: one output per member */
            const char *m;
            json_t *x;
            json_object_foreach(json_array_get(v, 0), m, x) {
                json_t *data = json_array();
                for (size_t i = 0; i < json_array_size(v); i++)
                    json_array_append(data,
                                      json_object_get(json_array_get(v, i), m));
                char full[128];
                snprintf(full, sizeof full, "%s.%s", name, m);
                json_object_set_new(outputs, full,
                                    json_pack("{s:[i],s:o}", "shape",
                                              (json_int_t)json_array_size(v),
                                              "data", data));
            }
        } else {
            json_object_set_new(outputs, name, as_flat(v));
        }
    }
}

static void compare_case(const char *model, const char *route, const char *dir,
                         const json_t *metadata, size_t *checked) {
    char file[1200];
    snprintf(file, sizeof file, "%s/expected.json", dir);
    json_t *expected = json_load_file(file, 0, NULL);
    snprintf(file, sizeof file, "%s/meta.json", dir);
    struct stat st;
    int has_meta = stat(file, &st) == 0;
    snprintf(file, sizeof file, "%s/request.json", dir);
    json_t *body = json_load_file(file, 0, NULL);
    if (has_meta || !json_is_object(body) ||
        json_integer_value(json_object_get(expected, "status")) != 200) {
        json_decref(body);
        json_decref(expected);
        return;
    }
    int status;
    json_t *direct = post_json(route, body, &status);
    assert_int_equal(status, 200);
    json_t *want = json_object();
    answer_members(direct, "", want);

    json_t *v2 = to_v2(body, metadata);
    char path[128];
    snprintf(path, sizeof path, "/v2/models/%s/infer", model);
    json_t *got = post_json(path, v2, &status);
    if (status != 200)
        fail_msg("%s: status %d: %s", dir, status,
                 json_dumps(got, JSON_COMPACT));
    assert_string_equal(json_string_value(json_object_get(got, "model_name")),
                        model);
    assert_string_equal(json_string_value(json_object_get(got, "id")), "case");
    const json_t *outputs = json_object_get(got, "outputs");
    if (json_array_size(outputs) != json_object_size(want))
        fail_msg("%s: %zu outputs for %zu answer members: %s / %s", dir,
                 json_array_size(outputs), json_object_size(want),
                 json_dumps(got, JSON_COMPACT), json_dumps(want, JSON_COMPACT));
    for (size_t i = 0; i < json_array_size(outputs); i++) {
        const json_t *o = json_array_get(outputs, i);
        const char *name = json_string_value(json_object_get(o, "name"));
        const json_t *w = json_object_get(want, name);
        if (!w)
            fail_msg("%s: output %s is not a member of the answer", dir, name);
        const char *dt = json_string_value(json_object_get(o, "datatype"));
        assert_string_equal(dt, strcmp(name, "diagnostics.argmax") ? "FP64"
                                                                   : "INT64");
        /* the same numbers: both are the route's printed doubles */
        json_t *shape = json_object_get(o, "shape");
        json_t *data = json_object_get(o, "data");
        json_t *ws = json_object_get(w, "shape");
        json_t *wd = json_object_get(w, "data");
        int same = json_array_size(shape) == json_array_size(ws) &&
                   json_array_size(data) == json_array_size(wd);
        for (size_t k = 0; same && k < json_array_size(ws); k++)
            same = json_number_value(json_array_get(shape, k)) ==
                   json_number_value(json_array_get(ws, k));
        for (size_t k = 0; same && k < json_array_size(wd); k++) {
            const json_t *a = json_array_get(data, k);
            const json_t *b = json_array_get(wd, k);
            same = json_is_null(b)
                       ? json_is_null(a)
                       : json_number_value(a) == json_number_value(b);
        }
        if (!same)
            fail_msg("%s: output %s differs: %s vs %s", dir, name,
                     json_dumps(o, JSON_COMPACT), json_dumps(w, JSON_COMPACT));
    }
    (*checked)++;
    json_decref(got);
    json_decref(v2);
    json_decref(want);
    json_decref(direct);
    json_decref(body);
    json_decref(expected);
}

static void test_every_case_through_the_front(void **state) {
    (void)state;
    size_t checked = 0;
    for (size_t m = 0; m < N_MODELS; m++) {
        char path[128], edir[256];
        snprintf(path, sizeof path, "/v2/models/%s", models[m].model);
        int status;
        json_t *metadata = get_json(path, &status);
        assert_int_equal(status, 200);
        snprintf(edir, sizeof edir, "%s/%s", CASES_DIR, models[m].cases);
        DIR *d = opendir(edir);
        assert_non_null(d);
        struct dirent *e;
        size_t before = checked;
        while ((e = readdir(d))) {
            char dir[600];
            snprintf(dir, sizeof dir, "%s/%s", edir, e->d_name);
            struct stat st;
            if (e->d_name[0] != '.' && stat(dir, &st) == 0 &&
                S_ISDIR(st.st_mode))
                compare_case(models[m].model, models[m].route, dir, metadata,
                             &checked);
        }
        closedir(d);
        assert_true(checked - before >= 5);
        json_decref(metadata);
    }
    print_message("# %zu route answers matched through the v2 front\n",
                  checked);
}

/* ------------------------------------------------ 2. the model tables */

/* Every metadata input is a field of the route, and every field of the
 * route (its unknown_field detail lists them) is an input or a parameter
 * the front accepts. */
static void test_models_match_routes(void **state) {
    (void)state;
    /* this list covers every route the table gives a model */
    size_t in_table = 0;
    for (size_t i = 0; i < api_route_count(); i++)
        if (api_route_at(i)->model) {
            int listed = 0;
            for (size_t m = 0; m < N_MODELS; m++)
                listed |= !strcmp(models[m].model, api_route_at(i)->model);
            if (!listed)
                fail_msg("model %s is not checked here",
                         api_route_at(i)->model);
            in_table++;
        }
    assert_int_equal(in_table, N_MODELS);
    for (size_t m = 0; m < N_MODELS; m++) {
        char path[128];
        snprintf(path, sizeof path, "/v2/models/%s", models[m].model);
        int status;
        json_t *metadata = get_json(path, &status);
        const json_t *inputs = json_object_get(metadata, "inputs");
        for (size_t i = 0; i < json_array_size(inputs); i++) {
            const char *name = json_string_value(
                json_object_get(json_array_get(inputs, i), "name"));
            json_t *body = json_pack("{s:n}", name);
            json_t *res = post_json(models[m].route, body, &status);
            if (!strcmp(json_string_value(json_object_get(res, "code")),
                        "unknown_field"))
                fail_msg("%s: input %s is not a field of %s", models[m].model,
                         name, models[m].route);
            json_decref(res);
            json_decref(body);
        }
        json_t *bogus = json_pack("{s:i}", "zzz", 1);
        json_t *res = post_json(models[m].route, bogus, &status);
        const char *detail = json_string_value(json_object_get(res, "detail"));
        const char *known = strstr(detail, "Known fields: ");
        assert_non_null(known);
        char list[512];
        snprintf(list, sizeof list, "%s", known + strlen("Known fields: "));
        snprintf(path, sizeof path, "/v2/models/%s/infer", models[m].model);
        for (char *save = NULL, *f = strtok_r(list, ", ", &save); f;
             f = strtok_r(NULL, ", ", &save)) {
            /* labels name a picture's axes; v2 answers no pictures */
            if (is_input(metadata, f) || !strcmp(f, "tensor_format") ||
                !strcmp(f, "labels"))
                continue;
            /* a parameter: null is absent, so only its name is checked */
            json_t *v2 = json_pack("{s:[],s:{s:n}}", "inputs", "parameters",
                                   !strcmp(f, "fit") ? "fit_epochs" : f);
            json_t *ans = post_json(path, v2, &status);
            const char *msg = json_string_value(json_object_get(ans, "error"));
            assert_non_null(msg);
            if (!strncmp(msg, "unknown_field", 13))
                fail_msg("%s: field %s of %s is refused: %s", models[m].model,
                         f, models[m].route, msg);
            json_decref(ans);
            json_decref(v2);
        }
        json_decref(res);
        json_decref(bogus);
        json_decref(metadata);
    }
}

/* ------------------------------------- server metadata and readiness */

static void test_server_metadata_and_ready(void **state) {
    (void)state;
    int status;
    json_t *server = get_json("/v2", &status);
    assert_int_equal(status, 200);
    json_t *version = get_json("/version", &status);
    assert_string_equal(json_string_value(json_object_get(server, "name")),
                        "attnd");
    assert_string_equal(json_string_value(json_object_get(server, "version")),
                        json_string_value(json_object_get(version, "version")));
    /* Triton's name for the binary tensor data extension */
    json_t *extensions = json_object_get(server, "extensions");
    assert_int_equal(json_array_size(extensions), 1);
    assert_string_equal(json_string_value(json_array_get(extensions, 0)),
                        "binary_tensor_data");
    json_decref(version);
    json_decref(server);

    api_set_ready(0);
    json_t *r = get_json("/v2/models/regression_nw/ready", &status);
    assert_int_equal(status, 503);
    assert_true(json_is_false(json_object_get(r, "ready")));
    json_decref(r);
    api_set_ready(1);
    r = get_json("/v2/models/regression_nw/ready", &status);
    assert_int_equal(status, 200);
    assert_true(json_is_true(json_object_get(r, "ready")));
    assert_string_equal(json_string_value(json_object_get(r, "name")),
                        "regression_nw");
    json_decref(r);
}

/* An id with escapes comes back as it was sent; HEAD and OPTIONS work on
 * templated paths. */
static void test_id_and_methods(void **state) {
    (void)state;
    json_t *req = json_pack(
        "{s:s,s:[{s:s,s:[i],s:s,s:[i,i,i]},{s:s,s:[i],s:s,s:[i,i,i]},"
        "{s:s,s:[i],s:s,s:[f]}],s:{s:f}}",
        "id", "\xc3\xa9t\xc3\xa9 \"7\"\n", "inputs", "name", "x_train", "shape",
        3, "datatype", "INT64", "data", 1, 2, 4, "name", "y_train", "shape", 3,
        "datatype", "INT32", "data", 0, 3, 1, "name", "x_query", "shape", 1,
        "datatype", "FP32", "data", 2.5, "parameters", "w", 1.0);
    int status;
    json_t *res = post_json("/v2/models/regression_nw/infer", req, &status);
    assert_int_equal(status, 200);
    assert_string_equal(json_string_value(json_object_get(res, "id")),
                        "\xc3\xa9t\xc3\xa9 \"7\"\n");
    /* the contract's w = 1 prediction */
    const json_t *pred = json_array_get(json_object_get(res, "outputs"), 0);
    assert_string_equal(json_string_value(json_object_get(pred, "name")),
                        "predictions");
    assert_true(json_number_value(json_array_get(json_object_get(pred, "data"),
                                                 0)) == 1.940292211914573);
    json_decref(res);
    json_decref(req);

    api_response head = call("HEAD", "/v2/models/attention_dot", NULL);
    assert_int_equal(head.status, 200);
    api_response_free(&head);
    api_response opt = call("OPTIONS", "/v2/models/attention_dot/infer", NULL);
    assert_int_equal(opt.status, 204);
    assert_string_equal(opt.allow, "POST, OPTIONS");
    api_response_free(&opt);
    api_response res2 = call("GET", "/v2/models/attention_dot/infer", NULL);
    assert_int_equal(res2.status, 405);
    assert_string_equal(res2.content_type, "application/json");
    assert_string_equal(res2.route, "/v2/models/{model}/infer");
    api_response_free(&res2);
}

/* A dot request whose queries (1, n, 2) come as binary FP64 or FP32 bytes
 * (each entry x, the bad one at `at` replaced by `bad` when at < 2n),
 * keys and values as JSON; returns the status, the error text in *error
 * (or "" for 200). */
static int binary_queries(const char *dt, size_t n, size_t at, double bad,
                          double x, char *error, size_t cap) {
    size_t count = 2 * n, size = !strcmp(dt, "FP64") ? 8 : 4;
    char header[512];
    int len = snprintf(
        header, sizeof header,
        "{\"inputs\":[{\"name\":\"queries\",\"shape\":[1,%zu,2],"
        "\"datatype\":\"%s\",\"parameters\":{\"binary_data_size\":%zu}},"
        "{\"name\":\"keys\",\"shape\":[1,1,2],\"datatype\":\"FP64\","
        "\"data\":[1,0]},{\"name\":\"values\",\"shape\":[1,1,1],"
        "\"datatype\":\"FP64\",\"data\":[7]}]}",
        n, dt, count * size);
    char *body = malloc((size_t)len + count * size);
    memcpy(body, header, (size_t)len);
    for (size_t i = 0; i < count; i++) { /* little-endian bytes */
        double v = i == at ? bad : x;
        uint64_t bits;
        if (size == 8) {
            memcpy(&bits, &v, 8);
        } else {
            float f = (float)v;
            uint32_t b32;
            memcpy(&b32, &f, 4);
            bits = b32;
        }
        for (size_t k = 0; k < size; k++)
            body[(size_t)len + i * size + k] = (char)(bits >> (8 * k));
    }
    char length[24];
    snprintf(length, sizeof length, "%d", len);
    api_request req = {.method = "POST",
                       .path = "/v2/models/attention_dot/infer",
                       .content_type = "application/octet-stream",
                       .inference_header_length = length,
                       .body = body,
                       .body_len = (size_t)len + count * size};
    api_response res;
    api_handle(&req, &res);
    error[0] = '\0';
    if (res.status != 200) {
        json_t *j = parse(&res);
        snprintf(error, cap, "%s",
                 json_string_value(json_object_get(j, "error")));
        json_decref(j);
    }
    int status = res.status;
    api_response_free(&res);
    free(body);
    return status;
}

/* Binary FP64 and FP32 inputs: the first NaN or infinity is found
 * wherever it is (in or across the blocks the check tests at once), and
 * every finite value passes, the largest and the subnormal ones too. */
static void test_binary_non_finite(void **state) {
    (void)state;
    static const char *const dts[] = {"FP64", "FP32"};
    static const size_t where[] = {0, 1, 1023, 1024, 1025, 2047, 4095};
    char error[512], want[128];
    for (size_t t = 0; t < 2; t++) {
        const double bads[] = {NAN, INFINITY, -INFINITY};
        const char *names[] = {"NaN", "+Infinity", "-Infinity"};
        for (size_t w = 0; w < sizeof where / sizeof where[0]; w++)
            for (size_t b = 0; b < 3; b++) {
                assert_int_equal(binary_queries(dts[t], 2048, where[w], bads[b],
                                                0.5, error, sizeof error),
                                 422);
                snprintf(want, sizeof want,
                         "entry %zu (row-major) of input queries's bytes is "
                         "%s",
                         where[w], names[b]);
                if (!strstr(error, want))
                    fail_msg("%s: %s not in %s", dts[t], want, error);
            }
        const double finite[] = {t ? FLT_MAX : DBL_MAX, t ? -FLT_MAX : -DBL_MAX,
                                 t ? FLT_TRUE_MIN : DBL_TRUE_MIN, -0.0};
        for (size_t f = 0; f < 4; f++)
            assert_int_equal(binary_queries(dts[t], 2048, 1500, finite[f], 0.5,
                                            error, sizeof error),
                             200);
        assert_int_equal(
            binary_queries(dts[t], 3, 99, 0, 0.25, error, sizeof error), 200);
    }
}

/* FP32 outputs: the first entry beyond float's range (from halfway
 * between FLT_MAX and 2^128 on, where it rounds to infinity) is named
 * wherever it is (the check tests blocks of entries at once); FLT_MAX and
 * the largest double below the halfway point fit. The output equals
 * values' one row (one key, weight 1). */
static void test_fp32_output_range(void **state) {
    (void)state;
    static const struct {
        size_t at;
        double x;
        const char *text; /* NULL: it fits */
    } cases[] = {
        {0, -3.5e38, "-3.5e+38"},
        {1023, -3.5e38, "-3.5e+38"},
        {1024, 0x1.ffffffp127, "3.4028235677973366e+38"},
        {2999, -0x1.ffffffp127, "-3.4028235677973366e+38"},
        {1500, 0x1.fffffefffffffp127, NULL},
        {1500, FLT_MAX, NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        json_t *values = json_array();
        for (size_t i = 0; i < 3000; i++)
            json_array_append_new(values,
                                  json_real(i == cases[c].at ? cases[c].x
                                            : i == 77        ? FLT_MAX
                                                             : 0.5));
        json_t *req = json_pack(
            "{s:[{s:s,s:[i,i,i],s:s,s:[f,f]},{s:s,s:[i,i,i],s:s,s:[f,f]},"
            "{s:s,s:[i,i,i],s:s,s:o}],s:[{s:s}],s:{s:s}}",
            "inputs", "name", "queries", "shape", 1, 1, 2, "datatype", "FP64",
            "data", 1.0, 0.0, "name", "keys", "shape", 1, 1, 2, "datatype",
            "FP64", "data", 1.0, 0.0, "name", "values", "shape", 1, 1, 3000,
            "datatype", "FP64", "data", values, "outputs", "name", "output",
            "parameters", "output_datatype", "FP32");
        int status;
        json_t *res = post_json("/v2/models/attention_dot/infer", req, &status);
        if (!cases[c].text) {
            assert_int_equal(status, 200);
        } else {
            assert_int_equal(status, 422);
            char want[96];
            snprintf(want, sizeof want,
                     "entry %zu of output output is %s, beyond FP32's range",
                     cases[c].at, cases[c].text);
            const char *error =
                json_string_value(json_object_get(res, "error"));
            if (!strstr(error, want))
                fail_msg("%s not in %s", want, error);
        }
        json_decref(res);
        json_decref(req);
    }
}

/* The infer route's body, a JSON header that binary tensor data may
 * follow, is the v2 front's to frame (front.h), and no other route's: the
 * dispatcher reaches it through the front table alone. */
static void test_framing_through_the_front(void **state) {
    (void)state;
    size_t framed = 0;
    for (size_t i = 0; i < api_route_count(); i++) {
        const api_route *r = api_route_at(i);
        const api_front *f = api_front_framing(r);
        if (!f)
            continue;
        assert_ptr_equal(f, &api_front_kserve);
        assert_string_equal(r->path, "/v2/models/{model}/infer");
        assert_non_null(f->check_body_type);
        assert_non_null(f->header_length);
        assert_non_null(f->explain_not_json);
        framed++;
    }
    assert_int_equal(framed, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_case_through_the_front),
        cmocka_unit_test(test_models_match_routes),
        cmocka_unit_test(test_server_metadata_and_ready),
        cmocka_unit_test(test_id_and_methods),
        cmocka_unit_test(test_binary_non_finite),
        cmocka_unit_test(test_fp32_output_range),
        cmocka_unit_test(test_framing_through_the_front),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
