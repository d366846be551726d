/*
 * corpus.c — writes the seed corpora of the fuzz targets (rebuilt on each
 * run; libFuzzer's growing corpus lives beside them):
 *   OUT/fuzz_request  every tests/cases request as fuzz_request reads one
 *                     ("METHOD PATH[ ACCEPT]\n" and the body, or the query
 *                     of other methods), and every JSONTestSuite file as
 *                     the body of every POST route of the route table;
 *   OUT/fuzz_tensor   every array or {"shape", "data"} member of the case
 *                     requests (field spec by name, formats in turn), and
 *                     every JSONTestSuite file;
 *                     and binary tensor data requests to the v2 front
 *                     (binary_seeds: every datatype, outputs as bytes),
 *                     and a few POST /grade/batch bodies (batch_seeds);
 *   OUT/fuzz_numfmt   boundary doubles at precisions 0, 1, 3, 16 and 17;
 *   OUT/fuzz_fastpath every case request to a route fuzz_fastpath picks
 *                     (its byte 0, then the body), and every JSONTestSuite
 *                     file for each of them.
 * Run from the repository root.
 *   usage: corpus OUT_DIR
 * tests/unit/test_fuzz_replay.c includes this file with CORPUS_NO_MAIN and
 * sets corpus_sink to run each seed through its target instead.
 */
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../unit/testfs.h"
#include "fuzz.h"
#include "route.h"

#define CASES_DIR "tests/cases"
#define SUITE_DIR "tests/json/json-test-suite"

enum {
    CORPUS_REQUEST,
    CORPUS_TENSOR,
    CORPUS_NUMFMT,
    CORPUS_FASTPATH,
    CORPUS_TARGETS
};
static const char *const corpus_targets[CORPUS_TARGETS] = {
    "fuzz_request", "fuzz_tensor", "fuzz_numfmt", "fuzz_fastpath"};

/* fuzz_fastpath's routes, in its order (byte 0 picks one) */
static const char *const corpus_fastpath_routes[] = FUZZ_FASTPATH_ROUTES;
enum {
    CORPUS_FASTPATH_ROUTES =
        sizeof corpus_fastpath_routes / sizeof corpus_fastpath_routes[0]
};

/* fuzz_fastpath's byte 0 for a POST path, or -1 when it does not fuzz it */
static int corpus_fastpath_byte(const char *path) {
    for (int i = 0; i < CORPUS_FASTPATH_ROUTES; i++)
        if (!strcmp(corpus_fastpath_routes[i], path))
            return i;
    return -1;
}
static const char *out_dir;
static size_t n_written[CORPUS_TARGETS];

/* When set, seeds go here (the input as one buffer) instead of files. */
static void (*corpus_sink)(int target, const char *name,
                           const unsigned char *data, size_t size);

/* OUT/target/name = head + body. */
static void seed(int target, const char *name, const unsigned char *head,
                 size_t head_len, const void *body, size_t len) {
    n_written[target]++;
    if (corpus_sink) {
        unsigned char *data = malloc(head_len + len + 1);
        memcpy(data, head, head_len);
        memcpy(data + head_len, body, len);
        corpus_sink(target, name, data, head_len + len);
        free(data);
        return;
    }
    char path[2048];
    snprintf(path, sizeof path, "%s/%s/%s", out_dir ? out_dir : ".",
             corpus_targets[target], name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "corpus: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fwrite(head, 1, head_len, f);
    fwrite(body, 1, len, f);
    fclose(f);
}

/* fuzz_tensor's field spec for a request field (see fuzz_tensor.c). */
static unsigned char tensor_spec(const char *key) {
    if (!strcmp(key, "x_train") || !strcmp(key, "x_query"))
        return 1;
    if (!strcmp(key, "y_train") || !strcmp(key, "y_query"))
        return 2;
    if (!strcmp(key, "valid_lens"))
        return 3;
    if (!strcmp(key, "queries") || !strcmp(key, "keys") ||
        !strcmp(key, "values") || !strcmp(key, "grad_output") ||
        !strncmp(key, "W_", 2) || !strcmp(key, "w_v"))
        return 0;
    return 4;
}

static void tensor_seeds(const char *name, const json_t *body) {
    static size_t n;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)body, key, v) {
        if (!json_is_array(v) &&
            !(json_is_object(v) && json_object_get(v, "shape")))
            continue;
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!text)
            continue;
        n++;
        unsigned char head[2] = {tensor_spec(key),
                                 (unsigned char)(n % 18 | (n % 2) << 7)};
        char seed_name[700];
        snprintf(seed_name, sizeof seed_name, "%s_%s", name, key);
        seed(CORPUS_TENSOR, seed_name, head, 2, text, strlen(text));
        free(text);
    }
}

static void case_seeds(void) {
    char **eps;
    size_t n_eps = test_list(CASES_DIR, 0, &eps);
    for (size_t i = 0; i < n_eps; i++) {
        char dir[512], file[700];
        snprintf(dir, sizeof dir, "%s/%s", CASES_DIR, eps[i]);
        snprintf(file, sizeof file, "%s/route", dir);
        size_t len;
        char *route = test_slurp(file, &len);
        char method[16], path[256];
        if (!route || sscanf(route, "%15s %255s", method, path) != 2) {
            free(route);
            continue;
        }
        free(route);
        char **names;
        size_t n = test_list(dir, 0, &names);
        for (size_t j = 0; j < n; j++) {
            char cdir[800], name[600], file2[900];
            snprintf(cdir, sizeof cdir, "%s/%s", dir, names[j]);
            snprintf(name, sizeof name, "%s_%s", eps[i], names[j]);
            snprintf(file2, sizeof file2, "%s/meta.json", cdir);
            json_t *meta = json_load_file(file2, 0, NULL);
            const char *m = method, *p = path, *query = "", *accept = "";
            if (json_is_string(json_object_get(meta, "method")))
                m = json_string_value(json_object_get(meta, "method"));
            if (json_is_string(json_object_get(meta, "path")))
                p = json_string_value(json_object_get(meta, "path"));
            if (json_is_string(json_object_get(meta, "query")))
                query = json_string_value(json_object_get(meta, "query"));
            if (json_is_string(json_object_get(meta, "accept")))
                accept = json_string_value(json_object_get(meta, "accept"));
            snprintf(file2, sizeof file2, "%s/request.json", cdir);
            size_t body_len = 0;
            char *body = test_slurp(file2, &body_len);
            char head[600];
            int head_len = snprintf(head, sizeof head, "%s %s%s%s\n", m, p,
                                    accept[0] ? " " : "", accept);
            if (head_len > 0 && (size_t)head_len < sizeof head) {
                if (strcmp(m, "POST") != 0)
                    seed(CORPUS_REQUEST, name, (unsigned char *)head,
                         (size_t)head_len, query, strlen(query));
                else
                    seed(CORPUS_REQUEST, name, (unsigned char *)head,
                         (size_t)head_len, body ? body : "", body_len);
            }
            int fast = corpus_fastpath_byte(p);
            if (!strcmp(m, "POST") && fast >= 0) {
                unsigned char byte = (unsigned char)fast;
                seed(CORPUS_FASTPATH, name, &byte, 1, body ? body : "",
                     body_len);
            }
            json_t *doc = body ? json_loadb(body, body_len, 0, NULL) : NULL;
            if (json_is_object(doc))
                tensor_seeds(name, doc);
            json_decref(doc);
            json_decref(meta);
            free(body);
        }
        test_list_free(names, n);
    }
    test_list_free(eps, n_eps);
}

static void suite_seeds(void) {
    char **names;
    size_t n = test_list(SUITE_DIR, 0, &names);
    for (size_t j = 0; j < n; j++) {
        if (!strstr(names[j], ".json"))
            continue;
        char file[600], name[700];
        snprintf(file, sizeof file, "%s/%s", SUITE_DIR, names[j]);
        size_t len;
        char *body = test_slurp(file, &len);
        if (!body)
            continue;
        for (size_t i = 0; i < api_route_count(); i++) {
            const api_route *r = api_route_at(i);
            if (strcmp(r->method, "POST") != 0)
                continue;
            char head[300];
            int head_len = snprintf(head, sizeof head, "POST %s\n", r->path);
            snprintf(name, sizeof name, "suite%zu_%s", i, names[j]);
            seed(CORPUS_REQUEST, name, (unsigned char *)head, (size_t)head_len,
                 body, len);
        }
        unsigned char head[2] = {4, 0};
        snprintf(name, sizeof name, "suite_%s", names[j]);
        seed(CORPUS_TENSOR, name, head, 2, body, len);
        for (int i = 0; i < CORPUS_FASTPATH_ROUTES; i++) {
            unsigned char byte = (unsigned char)i;
            snprintf(name, sizeof name, "suite%d_%s", i, names[j]);
            seed(CORPUS_FASTPATH, name, &byte, 1, body, len);
        }
        free(body);
    }
    test_list_free(names, n);
}

/* fuzz_request's binary tensor data requests: "POST PATH ihcl=N\n", a
 * JSON header of N bytes, then the inputs' little-endian bytes. */
static void binary_seed(const char *name, const char *path, const char *header,
                        const void *bytes, size_t len) {
    size_t n = strlen(header);
    char head[300];
    int head_len = snprintf(head, sizeof head, "POST %s ihcl=%zu\n", path, n);
    unsigned char *body = malloc(n + len);
    memcpy(body, header, n);
    memcpy(body + n, bytes, len);
    seed(CORPUS_REQUEST, name, (unsigned char *)head, (size_t)head_len, body,
         n + len);
    free(body);
}

/* fuzz_request's POST /grade/batch bodies (a JSON array, as it sends
 * application/json): graded submissions, one request in two spellings
 * (shared), malformed ones among them, a broken frame. */
static void batch_seeds(void) {
#define BATCH_DOT                                                              \
    "\"endpoint\":\"/attention/dot\",\"request\":{\"queries\":[[1,2]],"        \
    "\"keys\":[[1,0],[0,1]],\"values\":[[1],[2]]}"
    static const struct {
        const char *name, *body;
    } seeds[] = {
        {"batch_graded",
         "[{\"id\":\"a\"," BATCH_DOT ",\"answer\":{\"output\":[[1.66976]]}},"
         "{\"id\":2," BATCH_DOT ",\"answer\":{\"output\":[[1.73106]]}}]"},
        {"batch_spellings",
         "[{\"id\":1," BATCH_DOT ",\"answer\":{\"weights\":[[0.33,0.67]]}},"
         "{\"id\":2,\"endpoint\":\"/attention/dot\",\"request\":{\"values\":"
         "[[1e0],[2.0]],\"keys\":[[1,0],[0,1]],\"queries\":[[1.0,2]]},"
         "\"answer\":{\"output\":{\"shape\":[1,1],\"data\":[1.7]}}}]"},
        {"batch_malformed",
         "[{\"id\":1," BATCH_DOT ",\"answer\":{\"outptu\":1}},"
         "{" BATCH_DOT ",\"answer\":{\"output\":[[1]]}},[1],\"x\","
         "{\"id\":[],\"answer\":{}},{\"id\":\"q\",\"endpoint\":"
         "\"/encoding/positional\",\"request\":{\"num_steps\":3,\"d\":4},"
         "\"answer\":{\"P\":[[0]]}}]"},
        {"batch_broken", "[{\"id\":1," BATCH_DOT ",\"answer\":{}} {\"id\":2}]"},
    };
#undef BATCH_DOT
    static const char head[] = "POST /grade/batch\n";
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        seed(CORPUS_REQUEST, seeds[i].name, (const unsigned char *)head,
             sizeof head - 1, seeds[i].body, strlen(seeds[i].body));
}

static void binary_seeds(void) {
    /* q (1, 2, 2), k and v (1, 3, 2) FP64; then FP32 keys; BOOL values;
     * INT32 valid_lens (little-endian, as the tests' hosts are) */
    const double q[4] = {1, 0, 0.5, -1}, kv[6] = {1, 2, 3, 4, 5, 6};
    const float k32[6] = {1, 0, 0, 1, 1, 1};
    const unsigned char bools[6] = {1, 0, 0, 1, 1, 1};
    const int32_t lens[1] = {2};
    unsigned char bytes[256];
    size_t at = 0;
    memcpy(bytes + at, q, sizeof q), at += sizeof q;
    memcpy(bytes + at, k32, sizeof k32), at += sizeof k32;
    memcpy(bytes + at, bools, sizeof bools), at += sizeof bools;
    memcpy(bytes + at, lens, sizeof lens), at += sizeof lens;
    binary_seed("binary_mixed", "/v2/models/attention_dot/infer",
                "{\"inputs\":["
                "{\"name\":\"queries\",\"shape\":[1,2,2],\"datatype\":"
                "\"FP64\",\"parameters\":{\"binary_data_size\":32}},"
                "{\"name\":\"keys\",\"shape\":[1,3,2],\"datatype\":\"FP32\","
                "\"parameters\":{\"binary_data_size\":24}},"
                "{\"name\":\"values\",\"shape\":[1,3,2],\"datatype\":\"BOOL\","
                "\"parameters\":{\"binary_data_size\":6}},"
                "{\"name\":\"valid_lens\",\"shape\":[1],\"datatype\":"
                "\"INT32\",\"parameters\":{\"binary_data_size\":4}}],"
                "\"parameters\":{\"binary_data_output\":true,"
                "\"output_datatype\":\"FP32\",\"return_scores\":true,"
                "\"diagnostics\":true}}",
                bytes, at);
    memcpy(bytes + sizeof q, kv, sizeof kv); /* q, then the values */
    binary_seed("binary_fp64_out", "/v2/models/attention_dot/infer",
                "{\"model_name\":\"attention_dot\",\"inputs\":["
                "{\"name\":\"queries\",\"shape\":[2,2],\"datatype\":"
                "\"FP64\",\"parameters\":{\"binary_data_size\":32}},"
                "{\"name\":\"keys\",\"shape\":[3,2],\"datatype\":\"FP64\","
                "\"data\":[1,2,3,4,5,6]},"
                "{\"name\":\"values\",\"shape\":[3,2],\"datatype\":\"FP64\","
                "\"parameters\":{\"binary_data_size\":48}}],"
                "\"outputs\":[{\"name\":\"weights\",\"parameters\":"
                "{\"binary_data\":true}},{\"name\":\"output\"}]}",
                bytes, sizeof q + sizeof kv);
    binary_seed("binary_nw", "/v2/models/regression_nw/infer",
                "{\"inputs\":["
                "{\"name\":\"x_train\",\"shape\":[3],\"datatype\":\"FP64\","
                "\"parameters\":{\"binary_data_size\":24}},"
                "{\"name\":\"y_train\",\"shape\":[3],\"datatype\":\"FP64\","
                "\"parameters\":{\"binary_data_size\":24}},"
                "{\"name\":\"x_query\",\"shape\":[1],\"datatype\":\"FP64\","
                "\"data\":[2.5]}],\"parameters\":{\"w\":0.5,"
                "\"fit_epochs\":2,\"binary_data_output\":true}}",
                kv, 48);
}

static void numfmt_seeds(void) {
    const double x[] = {0.0,
                        -0.0,
                        1,
                        -1,
                        0.1,
                        0.3,
                        4.35,
                        1.0 / 3,
                        2.0 / 3,
                        5e-324,
                        1e-323,
                        DBL_MIN,
                        2.2250738585072009e-308,
                        DBL_MAX,
                        9007199254740992.0,
                        9007199254740994.0,
                        1e21,
                        999999999999999868928.0,
                        1e-6,
                        9.999999999999999e-7,
                        1e-7,
                        123456789012345680000.0,
                        1.5e300,
                        0x1p1023,
                        0x1p-1022,
                        0x1p63,
                        0x1p64,
                        1e23,
                        8.41e21,
                        5e-7,
                        0.000001234,
                        100,
                        1e15,
                        1e16,
                        1e17,
                        9.5,
                        0.5,
                        2.5e-5};
    const unsigned char precisions[] = {0, 1, 3, 16, 17};
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) {
        for (size_t k = 0; k < sizeof precisions; k++) {
            unsigned char bytes[9];
            uint64_t bits;
            memcpy(&bits, &x[i], sizeof bits);
            for (int b = 0; b < 8; b++)
                bytes[b] = (unsigned char)(bits >> (8 * b));
            bytes[8] = precisions[k];
            char name[64];
            snprintf(name, sizeof name, "double_%zu_p%u", i, precisions[k]);
            seed(CORPUS_NUMFMT, name, bytes, sizeof bytes, "", 0);
        }
    }
}

#ifndef CORPUS_NO_MAIN
int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: corpus OUT_DIR\n");
        return 2;
    }
    out_dir = argv[1];
    for (int i = -1; i < CORPUS_TARGETS; i++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s%s%s", out_dir, i < 0 ? "" : "/",
                 i < 0 ? "" : corpus_targets[i]);
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "corpus: cannot create %s\n", dir);
            return 1;
        }
    }
    case_seeds();
    suite_seeds();
    binary_seeds();
    batch_seeds();
    numfmt_seeds();
    if (n_written[CORPUS_REQUEST] == 0 || n_written[CORPUS_TENSOR] == 0) {
        fprintf(stderr, "corpus: no seeds (run from the repository root)\n");
        return 1;
    }
    printf("# seeds:");
    for (int i = 0; i < CORPUS_TARGETS; i++)
        printf(" %s %zu", corpus_targets[i], n_written[i]);
    printf("\n");
    return 0;
}
#endif
