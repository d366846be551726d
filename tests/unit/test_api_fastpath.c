/*
 * test_api_fastpath.c — the numeric-array fast path (api/text/fastpath.h)
 * against jansson alone: every request is answered by api_handle twice,
 * fast path off and on, and the answers must be identical (status,
 * content type, body bytes). Bodies: hand-written edge cases (number
 * forms, ragged and empty rows, depth, duplicate and escaped keys, \u0000,
 * forged placeholders, syntax errors before and after a fast array, size
 * limits) and random mutations of valid requests. Also checks that the
 * fast path is really taken where it should be and reads the same doubles
 * as jansson, and that flat objects built without jansson's lexer are
 * jansson's documents.
 * FASTPATH_ITERATIONS=n sets the number of mutated bodies (default
 * 30,000); FASTPATH_SEED=s fixes the seed (default: from the clock).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "fastpath.h"
#include "route.h"
#include "tensor_bytes.h"

static uint64_t rng_state;

static uint64_t rng_next(void) {
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static size_t rng_below(size_t n) {
    return (size_t)(rng_next() % n);
}

static const api_limits *small_limits(void) {
    static api_limits limits;
    api_limits_default(&limits);
    limits.max_elements = 64;
    limits.max_work = (uint64_t)1 << 20;
    return &limits;
}

static size_t divergences;

/* api_handle on body[0 .. len) with the fast path off and on; reports and
 * counts a difference. The body is an exact-size copy (no terminator). */
static void compare(const char *route, const char *body, size_t len) {
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, body, len);
    api_request req = {.method = "POST",
                       .path = route,
                       .content_type = "application/json",
                       .body = len ? copy : NULL,
                       .body_len = len,
                       .limits = small_limits()};
    api_response plain, fast;
    api_fastpath_enable(0);
    api_handle(&req, &plain);
    api_fastpath_enable(1);
    api_handle(&req, &fast);
    int same = plain.status == fast.status &&
               !strcmp(plain.content_type, fast.content_type) &&
               plain.body_len == fast.body_len &&
               !memcmp(plain.body, fast.body, plain.body_len) &&
               (plain.compute_ms >= 0) == (fast.compute_ms >= 0);
    if (!same && divergences++ < 5)
        print_message("# %s %.*s\n#   jansson:   %d %.*s\n#   fast path: "
                      "%d %.*s\n",
                      route, (int)(len < 300 ? len : 300), body, plain.status,
                      (int)(plain.body_len < 300 ? plain.body_len : 300),
                      plain.body, fast.status,
                      (int)(fast.body_len < 300 ? fast.body_len : 300),
                      fast.body);
    api_response_free(&plain);
    api_response_free(&fast);
    free(copy);
}

/* The paths the route lets the fast path read. */
static const char *const *fast_fields(const char *route) {
    const api_route *r = api_route_find(route);
    assert_non_null(r);
    return api_route_fast_fields(r);
}

static void compare_text(const char *route, const char *body) {
    compare(route, body, strlen(body));
}

static void finish(const char *what, size_t n) {
    print_message("# %s: %zu bodies, %zu differ\n", what, n, divergences);
    size_t d = divergences;
    divergences = 0;
    assert_int_equal(d, 0);
}

/* ---- valid bodies the mutations start from ------------------------------ */

static const struct {
    const char *route;
    const char *body;
} bases[] = {
    {"/attention/dot",
     "{\"queries\":[[[1,2],[0.5,-1]]],\"keys\":[[[1,2],[3,4],[5,6]]],"
     "\"values\":[[[1,-0],[2e3,4.5E-1],[5,6]]],\"valid_lens\":[2]}"},
    {"/attention/dot",
     "{ \"queries\" : [ [ 0.25 , 1e-3 ] ] ,\n\t\"keys\":[[1,2],[-0.0,4]],\r\n"
     "\"values\":[[1],[2]], \"scale\": 0.5, \"return_weights\": false }"},
    {"/attention/dot", "{\"queries\":[[[1,2]]],\"keys\":{\"shape\":[1,1,2],"
                       "\"data\":[3,4]},\"values\":[[[7,8,9]]]}"},
    {"/attention/additive",
     "{\"queries\":[[[1,2]]],\"keys\":[[[1,2],[3,4]]],\"values\":[[[1],[2]]],"
     "\"W_q\":[[0.1,0.2],[0.3,0.4],[0.5,0.6]],\"W_k\":[[1,0],[0,1],[1,1]],"
     "\"w_v\":[1,-1,0.5]}"},
    {"/attention/additive",
     "{\"queries\":[[[1,2,3]]],\"keys\":[[[1,2],[3,4]]],\"values\":[[[1],[2]"
     "]],\"num_hiddens\":4,\"seed\":3}"},
    {"/attention/dot",
     "{\"queries\":[[[1,2]]],\"keys\":[[[1,2],[3,4]]],\"values\":[[[1],[2]]],"
     "\"grad_output\":[[[0.5]]],\"diagnostics\":true}"},
    {"/attention/multihead",
     "{\"queries\":[[[1,2],[3,4]]],\"keys\":[[[1,0],[0,1],[1,1]]],"
     "\"num_heads\":2,\"num_hiddens\":4,\"seed\":1,"
     "\"grad_output\":[[[1,0,0,1],[0,1,1,0]]]}"},
    {"/attention/multihead",
     "{\"queries\":[[1,2],[3,4]],\"num_heads\":1,\"W_q\":[[1,0],[0,1]],"
     "\"W_k\":[[1,1],[0,1]],\"W_v\":[[2,0],[0,2]],\"W_o\":[[1,0],[0,1]],"
     "\"b_o\":[0.5,-0.5]}"},
    {"/softmax/masked",
     "{\"scores\":[[[1,2,3],[0,-1,5]],[[2,2,2],[1e-3,4,-2]]],"
     "\"valid_lens\":[2,3]}"},
    {"/regression/nw", "{\"x_train\":[1,2,4],\"y_train\":[0,3,1],"
                       "\"x_query\":[2.5],\"w\":0.5,\"y_query\":[3]}"},
    {"/regression/nw",
     "{\"x_train\":[0.5,1.5,2.5,3.5],\"y_train\":[[1,2],[3,4],[5,6],[7,8]],"
     "\"x_query\":[1,2],\"kernel\":\"gaussian\",\"w\":\"silverman\"}"},
    /* the fronts: tensors inside the request and the answer */
    {"/grade",
     "{\"endpoint\":\"/attention/dot\",\"request\":{\"queries\":[[[1,2]]],"
     "\"keys\":[[[1,2],[3,4]]],\"values\":[[[1],[2]]],\"valid_lens\":[1]},"
     "\"answer\":{\"output\":[[[1]]],\"weights\":[[[1,0]]]}}"},
    {"/grade",
     "{\"endpoint\":\"/attention/dot\",\"rtol\":0.1,\"answer\":{\"output\":"
     "[[[1.5]]],\"grads\":{\"queries\":[[[0.1,0.2]]]}},\"request\":{"
     "\"queries\":[[[1,2]]],\"keys\":[[[1,2],[3,4]]],\"values\":[[[1],[2]]],"
     "\"grad_output\":[[[0.5]]]}}"},
    {"/grade",
     "{\"endpoint\":\"/regression/nw\",\"request\":{\"x_train\":[1,2,4],"
     "\"y_train\":[0,3,1],\"x_query\":[2.5],\"w\":0.5,\"y_query\":[3]},"
     "\"answer\":{\"predictions\":[1.2],\"weights\":[[0.3,0.4,0.3]],"
     "\"loss\":1}}"},
    {"/grade", "{\"endpoint\":\"/encoding/positional\",\"request\":{"
               "\"num_steps\":2,\"d\":2},\"answer\":{\"P\":[[0,1],[0.84,"
               "0.54]]}}"},
    {"/v2/models/attention_dot/infer",
     "{\"inputs\":[{\"name\":\"queries\",\"shape\":[1,1,2],\"datatype\":"
     "\"FP64\",\"data\":[1,2]},{\"name\":\"keys\",\"shape\":[1,2,2],"
     "\"datatype\":\"FP64\",\"data\":[[[1,2],[3,4]]]},{\"name\":\"values\","
     "\"shape\":[1,2,1],\"datatype\":\"FP64\",\"data\":[1,2]},{\"name\":"
     "\"valid_lens\",\"shape\":[1],\"datatype\":\"INT64\",\"data\":[1]}]}"},
    {"/v2/models/attention_dot/infer",
     "{\"inputs\":[{\"name\":\"queries\",\"shape\":[1,2],\"datatype\":"
     "\"FP64\",\"data\":[[1,2]]},{\"name\":\"keys\",\"shape\":[2,2],"
     "\"datatype\":\"FP64\",\"data\":[1,2,3,4]},{\"name\":\"values\","
     "\"shape\":[2,1],\"datatype\":\"FP64\",\"data\":[[1],[2]]},{\"name\":"
     "\"valid_lens\",\"shape\":[1],\"datatype\":\"INT64\",\"data\":[1]}],"
     "\"outputs\":[{\"name\":\"output\"}]}"},
};

#define N_BASES (sizeof bases / sizeof bases[0])

/* ---- tests ----------------------------------------------------------------
 */

static void test_bases_agree_and_take_fast_path(void **state) {
    (void)state;
    for (size_t i = 0; i < N_BASES; i++) {
        compare_text(bases[i].route, bases[i].body);
        api_fastpath fp;
        json_error_t error;
        json_t *root =
            api_fastpath_load(&fp, fast_fields(bases[i].route), bases[i].body,
                              strlen(bases[i].body),
                              JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL, &error);
        assert_non_null(root);
        assert_true(fp.n_arrays >= 1); /* every base has a fast array */
        json_decref(root);
        api_fastpath_release(&fp);
    }
    finish("valid bodies", N_BASES);
}

/* The doubles of a fast array are those jansson reads, and the shape is
 * the nesting's. */
static void test_same_numbers_and_shape(void **state) {
    (void)state;
    const char *body =
        "{\"queries\":[[[1,-0,-0.0,1e-400,9007199254740991,"
        "-9007199254740991]],[[0.1,2.5e+3,7E1,1.7976931348623157e308,"
        "4.9e-324,123456789012345678901234567890.5]]],\"keys\":[[1]],"
        "\"values\":[[2]]}";
    json_error_t error;
    json_t *plain = json_loadb(body, strlen(body), 0, &error);
    assert_non_null(plain);
    api_fastpath fp;
    json_t *root = api_fastpath_load(
        &fp, fast_fields("/attention/dot"), body, strlen(body),
        JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL, &error);
    assert_non_null(root);
    const api_fastpath_array *a =
        api_fastpath_find(&fp, json_object_get(root, "queries"));
    assert_non_null(a);
    assert_int_equal(a->rank, 3);
    assert_int_equal(a->shape[0], 2);
    assert_int_equal(a->shape[1], 1);
    assert_int_equal(a->shape[2], 6);
    assert_int_equal(a->count, 12);
    const json_t *q = json_object_get(plain, "queries");
    for (size_t i = 0; i < a->count; i++) {
        double want = json_number_value(
            json_array_get(json_array_get(json_array_get(q, i / 6), 0), i % 6));
        assert_memory_equal(&a->data[i], &want, sizeof want);
    }
    assert_false(a->integers);
    assert_true(
        api_fastpath_find(&fp, json_object_get(root, "keys"))->integers);
    /* the placeholder means nothing once released */
    json_t *keys = json_incref(json_object_get(root, "keys"));
    assert_non_null(api_fastpath_find(&fp, keys));
    api_fastpath_release(&fp);
    assert_null(api_fastpath_find(&fp, keys));
    json_decref(keys);
    json_decref(root);
    json_decref(plain);
}

/* A repeated member name keeps its last value (jansson's rule): the
 * earlier arrays of that name are not held as read numbers (they would be
 * memory the tree estimate does not count), whether the repeats follow
 * each other or alternate with other names, and whatever the last value
 * is; the answers are jansson's. */
static void test_repeated_members_read_once(void **state) {
    (void)state;
    size_t cap = 64 << 10, len = 0;
    char *body = malloc(cap);
    assert_non_null(body);
    for (int form = 0; form < 3; form++) {
        len = (size_t)snprintf(body, cap, "{");
        for (int i = 0; i < 1000; i++)
            len += (size_t)snprintf(body + len, cap - len,
                                    form == 1 ? "\"queries\":[[%d]],"
                                                "\"keys\":[[%d]],"
                                              : "\"queries\":[[%d]],",
                                    i, i + 1);
        len += (size_t)snprintf(body + len, cap - len, "%s",
                                form == 2   ? "\"keys\":[[2]],\"values\":[[3]],"
                                              "\"queries\":\"x\"}"
                                : form == 1 ? "\"values\":[[3]],"
                                              "\"queries\":[[7,8]]}"
                                            : "\"keys\":[[2]],\"values\":[["
                                              "3]],\"queries\":[[7,8]]}");
        json_error_t error;
        api_fastpath fp;
        json_t *root =
            api_fastpath_load(&fp, fast_fields("/attention/dot"), body, len,
                              JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL, &error);
        assert_non_null(root);
        const api_fastpath_array *q =
            api_fastpath_find(&fp, json_object_get(root, "queries"));
        const api_fastpath_array *k =
            api_fastpath_find(&fp, json_object_get(root, "keys"));
        assert_non_null(k);
        assert_memory_equal(k->data, &(double){form == 1 ? 1000 : 2},
                            sizeof(double));
        if (form == 2) {
            assert_null(q);
            assert_string_equal(
                json_string_value(json_object_get(root, "queries")), "x");
            assert_int_equal(fp.n_arrays, 2);
            assert_int_equal(fp.n_numbers, 2);
        } else {
            assert_non_null(q);
            assert_int_equal(q->count, 2);
            assert_memory_equal(q->data, ((double[]){7, 8}),
                                2 * sizeof(double));
            assert_int_equal(fp.n_arrays, 3);
            assert_int_equal(fp.n_numbers, 4);
        }
        api_fastpath_release(&fp);
        json_decref(root);
        compare("/attention/dot", body, len);
    }
    free(body);
    assert_int_equal(divergences, 0);
}

/* A body of more tiny arrays than the fast path reads (65,536) is left to
 * jansson whole: reading a million of v2's inputs[*].data took ~200 bytes
 * each before the tree gate could refuse the body. Up to the bound they
 * are read; one more, and nothing is; the answers are jansson's alone. */
static void test_many_arrays_left_to_jansson(void **state) {
    (void)state;
    const char *route = "/v2/models/attention_dot/infer";
    const size_t bound = (size_t)1 << 16;
    static const char item[] = "{\"data\":[1]},";
    size_t cap = 16 + (bound + 1) * (sizeof item - 1);
    char *body = malloc(cap);
    assert_non_null(body);
    for (size_t n = bound; n <= bound + 1; n++) {
        size_t len = (size_t)snprintf(body, cap, "{\"inputs\":[");
        for (size_t i = 0; i < n; i++) {
            memcpy(body + len, item, sizeof item - 1);
            len += sizeof item - 1;
        }
        body[len - 1] = ']'; /* the last item's comma */
        body[len++] = '}';
        json_error_t error;
        api_fastpath fp;
        json_t *root =
            api_fastpath_load(&fp, fast_fields(route), body, len,
                              JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL, &error);
        assert_non_null(root);
        json_t *last = json_object_get(
            json_array_get(json_object_get(root, "inputs"), n - 1), "data");
        if (n == bound) {
            assert_int_equal(fp.n_arrays, bound);
            assert_non_null(api_fastpath_find(&fp, last));
        } else {
            assert_int_equal(fp.n_arrays, 0);
            assert_null(api_fastpath_find(&fp, last));
            assert_true(json_is_array(last));
        }
        api_fastpath_release(&fp);
        json_decref(root);
        compare(route, body, len);
    }
    free(body);
    finish("bodies of 65,536 and 65,537 arrays", 2);
}

/* An integer beyond 2^53 has no exact double, so its array is left to
 * jansson (json_integer keeps it); the answer is the same. */
static void test_big_integers_left_to_jansson(void **state) {
    (void)state;
    static const char *const bodies[] = {
        "{\"queries\":[[9007199254740993]],\"keys\":[[1]],\"values\":[[2]]}",
        "{\"queries\":[[-9223372036854775808]],\"keys\":[[1]],\"values\":"
        "[[2]]}",
        "{\"queries\":[[1]],\"keys\":[[1]],\"values\":[[2]],\"valid_lens\":"
        "[9007199254740993]}",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++)
        compare_text("/attention/dot", bodies[i]);
    api_fastpath fp;
    json_error_t error;
    json_t *root = api_fastpath_load(
        &fp, fast_fields("/attention/dot"), bodies[0], strlen(bodies[0]),
        JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL, &error);
    assert_non_null(root);
    assert_null(api_fastpath_find(&fp, json_object_get(root, "queries")));
    assert_non_null(api_fastpath_find(&fp, json_object_get(root, "keys")));
    json_decref(root);
    api_fastpath_release(&fp);
    finish("integers beyond 2^53", sizeof bodies / sizeof bodies[0]);
}

/* A string holding \u0000 anywhere turns the fast path off for the body,
 * so a forged placeholder is just a string. */
static void test_nul_strings_and_forged_placeholders(void **state) {
    (void)state;
    static const char *const bodies[] = {
        "{\"keys\":[[1]],\"values\":[[2]],\"queries\":\"\\u00000.0\"}",
        "{\"keys\":[[1]],\"values\":[[2]],\"queries\":\"\\u00001.1\"}",
        "{\"keys\":[[1]],\"values\":[[2]],\"queries\":[[1]],\"causal\":"
        "\"a\\u0000b\"}",
        "{\"keys\":[[1]],\"values\":[[2]],\"queries\":[[1]],\"x\\u0000\":1}",
        "{\"keys\":[[1]],\"values\":[[2]],\"queries\":[[1]],\"fully_masked\":"
        "\"\\\\u0000\"}",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++)
        compare_text("/attention/dot", bodies[i]);
    api_fastpath fp;
    json_error_t error;
    json_t *root = api_fastpath_load(
        &fp, fast_fields("/attention/dot"), bodies[0], strlen(bodies[0]),
        JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL, &error);
    assert_non_null(root);
    assert_int_equal(fp.n_arrays, 0);
    assert_null(api_fastpath_find(&fp, json_object_get(root, "queries")));
    json_decref(root);
    api_fastpath_release(&fp);
    finish("\\u0000 and forged placeholders", sizeof bodies / sizeof bodies[0]);
}

/* The members of a and b in their order, each of the same type and value
 * (json_equal ignores order; integer 1 and real 1.0 differ). */
static int same_members(const json_t *a, const json_t *b) {
    if (!json_equal(a, b))
        return 0;
    void *i = json_object_iter((json_t *)a), *j = json_object_iter((json_t *)b);
    for (; i != NULL && j != NULL; i = json_object_iter_next((json_t *)a, i),
                                   j = json_object_iter_next((json_t *)b, j)) {
        size_t n = json_object_iter_key_len(i);
        if (n != json_object_iter_key_len(j) ||
            memcmp(json_object_iter_key(i), json_object_iter_key(j), n) ||
            json_typeof(json_object_iter_value(i)) !=
                json_typeof(json_object_iter_value(j)))
            return 0;
    }
    return i == NULL && j == NULL;
}

/* A flat object (strings, numbers, true, false, null, arrays of those) is
 * built without jansson's lexer: the same document as jansson's, member by
 * member and in order, or jansson's own error for what it refuses (a body
 * with fast arrays holds placeholders: its answers are compared). */
static void test_flat_objects(void **state) {
    (void)state;
    static const char *const bodies[] = {
        "{}",
        " {\t\r\n} \n",
        "{\"a\":1,\"b\":-0,\"c\":-0.0,\"d\":0.5,\"e\":1e5,\"f\":1E+5,"
        "\"g\":2.5e-3,\"h\":true,\"i\":false,\"j\":null,\"k\":\"s t\"}",
        "{\"n\":9223372036854775807,\"m\":-9223372036854775808}",
        "{\"n\":9223372036854775808}",
        "{\"n\":-9223372036854775809}",
        "{\"x\":1e400}",
        "{\"x\":-1e400}",
        "{\"x\":1e-400}",
        "{\"x\":4.9e-324,\"y\":1.7976931348623157e308}",
        "{\"x\":123456789012345678901234567890123456789012345678901234567890"
        "123456789012345678901234567890}",
        "{\"a\":1,\"b\":2,\"a\":3}",
        "{\"a\":\"\\u0000x\",\"b\":\"\\u00001.2\"}",
        "{\"a\\u0000\":1}",
        "{\"a\":\"\\n\"}",
        "{\"a\":\"\\u0041\"}",
        "{\"\":1}",
        "{\"a\":01}",
        "{\"a\":1.}",
        "{\"a\":.5}",
        "{\"a\":+1}",
        "{\"a\":-}",
        "{\"a\":1e}",
        "{\"a\":1e+}",
        "{\"a\":1x}",
        "{\"a\":truex}",
        "{\"a\":true1}",
        "{\"a\":nul}",
        "{\"a\":True}",
        "{\"a\":1,}",
        "{\"a\":1 \"b\":2}",
        "{\"a\" 1}",
        "{\"a\":1}x",
        "{\"a\":1}}",
        "{\"a\":\"\x01\"}",
        "{\"a\":\"\xc3\xa9\"}",
        "{\"a\":[1],\"b\":2}",
        "{\"a\":[],\"b\":[ ],\"c\":[1, -2.5e1 ,\"x\",true,false,null]}",
        "{\"a\":[1,]}",
        "{\"a\":[,1]}",
        "{\"a\":[1 2]}",
        "{\"a\":[1}",
        "{\"a\":[[1]]}",
        "{\"a\":[{}]}",
        "{\"a\":[01]}",
        "{\"a\":[9223372036854775808]}",
        "{\"queries\":[[1,2]],\"keys\":[[1,2],[3,4]],\"values\":[[1],[2]],"
        "\"valid_lens\":[1]}",
        "{\"queries\":[[[1,2]]],\"keys\":[[[1,2],[3,4]]],\"values\":[[[1],[2]]]"
        ","
        "\"valid_lens\":[[1]],\"scale\":0.5,\"causal\":\"top_left\"}",
        "{\"a\":{\"b\":1}}",
        "{\"a\":1",
        "{\"a\":\"x",
        "[1]",
        "1",
        "\"s\"",
    };
    size_t flags = JSON_DECODE_ANY | JSON_ALLOW_NUL;
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        size_t len = strlen(bodies[i]);
        json_error_t e1, e2;
        api_fastpath off, fp;
        api_fastpath_enable(0); /* jansson alone (big integers widened) */
        json_t *plain = api_fastpath_load(&off, fast_fields("/attention/dot"),
                                          bodies[i], len, flags, NULL, &e1);
        api_fastpath_enable(1);
        json_t *root = api_fastpath_load(&fp, fast_fields("/attention/dot"),
                                         bodies[i], len, flags, NULL, &e2);
        if (plain == NULL || root == NULL) {
            if (root != NULL || plain != NULL || strcmp(e1.text, e2.text) ||
                e1.position != e2.position)
                fail_msg("%s: jansson %s, flat %s", bodies[i],
                         plain ? "parses" : e1.text, root ? "parses" : e2.text);
        } else if (fp.n_arrays == 0 && !same_members(plain, root)) {
            fail_msg("%s: the documents differ", bodies[i]);
        }
        json_decref(plain);
        json_decref(root);
        api_fastpath_release(&off);
        api_fastpath_release(&fp);
        compare_text("/attention/dot", bodies[i]);
        compare_text("/regression/nw", bodies[i]);
    }
    finish("flat objects", 2 * (sizeof bodies / sizeof bodies[0]));
}

/* A document resolves its own placeholders, and those of the document it
 * is built on; never another's, even one of the same text. */
static void test_documents_apart(void **state) {
    (void)state;
    const char *outer_body = "{\"queries\":[[1,2]],\"keys\":[[3,4]]}";
    const char *inner_body = "{\"queries\":[[5]]}";
    api_fastpath outer, inner, built;
    json_error_t error;
    size_t flags = JSON_DECODE_ANY | JSON_ALLOW_NUL;
    json_t *a =
        api_fastpath_load(&outer, fast_fields("/attention/dot"), outer_body,
                          strlen(outer_body), flags, NULL, &error);
    json_t *b =
        api_fastpath_load(&inner, fast_fields("/attention/dot"), inner_body,
                          strlen(inner_body), flags, NULL, &error);
    assert_non_null(a);
    assert_non_null(b);
    const json_t *a_queries = json_object_get(a, "queries");
    const json_t *a_keys = json_object_get(a, "keys");
    const json_t *b_queries = json_object_get(b, "queries");
    const api_fastpath_array *qa = api_fastpath_find(&outer, a_queries);
    const api_fastpath_array *qb = api_fastpath_find(&inner, b_queries);
    assert_non_null(qa);
    assert_non_null(qb);
    assert_true(qa->count == 2 && qa->data[1] == 2);
    assert_true(qb->count == 1 && qb->data[0] == 5);
    assert_null(api_fastpath_find(&outer, b_queries));
    assert_null(api_fastpath_find(&inner, a_keys));
    assert_null(api_fastpath_find(NULL, a_keys));
    /* a document built on outer (a request made from its parts) */
    api_fastpath_begin(&built, &outer);
    assert_ptr_equal(api_fastpath_find(&built, a_keys), &outer.arrays[1]);
    assert_null(api_fastpath_find(&built, b_queries));
    /* its serial names no array: its own resolve by identity only */
    char text[48];
    int n = snprintf(text, sizeof text, "%c%llu.0", '\0', built.serial);
    double x = 1;
    json_t *own = api_fastpath_adopt_bytes(&built, (const unsigned char *)&x,
                                           API_DT_FP64, 1);
    json_t *forged = json_stringn(text, (size_t)n);
    assert_non_null(api_fastpath_find(&built, own));
    assert_null(api_fastpath_find(&built, forged));
    json_decref(forged);
    json_decref(own);
    api_fastpath_release(&built);
    api_fastpath_release(&inner);
    assert_ptr_equal(api_fastpath_find(&outer, a_keys), &outer.arrays[1]);
    api_fastpath_release(&outer);
    assert_null(api_fastpath_find(&outer, a_keys));
    json_decref(a);
    json_decref(b);
}

static void test_edge_cases(void **state) {
    (void)state;
    static const char *const dot[] = {
        /* number forms and errors jansson reports */
        "{\"queries\":[[1e400]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[-1e400]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[9223372036854775808]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[-9223372036854775809]],\"keys\":[[1]],\"values\":[[1]]"
        "}",
        "{\"queries\":[[01]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1.]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[.5]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[-]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[+1]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1e5e5]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1 2]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1,]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[,1]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1]]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[NaN]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[Infinity]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[0x10]],\"keys\":[[1]],\"values\":[[1]]}",
        /* shapes: ragged, empty, mixed depth, too deep, rank */
        "{\"queries\":[[1,2],[3]],\"keys\":[[1,2]],\"values\":[[1]]}",
        "{\"queries\":[[1],[2,3]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[[1]],[[2],[3]]],\"keys\":[[[1]]],\"values\":[[[1]]]}",
        "{\"queries\":[],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1],[]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1],2],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[1,[2]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[1,2],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[[[1]]]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[[[[[[[1]]]]]]]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[[[[[[[[1]]]]]]]]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1,2]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1,2]],\"keys\":[[1,2],[3,4]],\"values\":[[1],[2],[3]]}",
        /* non-numbers inside */
        "{\"queries\":[[1,null]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1,\"2\"]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1,true]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1,{}]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1,[2]]],\"keys\":[[1]],\"values\":[[1]]}",
        /* sizes over the limits (64 elements here) */
        "{\"queries\":[[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,"
        "22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,"
        "45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65]],"
        "\"keys\":[[1]],\"values\":[[1]]}",
        /* keys: duplicates, escapes, unknown, non-tensor fields */
        "{\"queries\":[[1]],\"queries\":\"x\",\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":\"x\",\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1]],\"queries\":[[1,2]],\"keys\":[[1]],\"values\":[[1]"
        "]}",
        "{\"quer\\u0069es\":[[1]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]],\"query\":[[1]]}",
        "{\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]],\"scale\":[[1]]}",
        "{\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]],\"valid_lens\":[0.5"
        "]}",
        "{\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]],\"valid_lens\":[["
        "1]]}",
        /* the document around the arrays */
        "{\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]]} x",
        "{\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]]}}",
        "{\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]]",
        "{\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]],}",
        "{\"queries\":[[1]] \"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\" [[1]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]],\"causal\":tru}",
        "{\"causal\":[1,2},\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]]}",
        "{\"causal\":\"\xff\",\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]"
        "]}",
        "{\"causal\":\"unterminated,\"queries\":[[1]],\"keys\":[[1]]}",
        "[{\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]]}]",
        "{\"nested\":{\"queries\":[[1]]},\"queries\":[[1]],\"keys\":[[1]],"
        "\"values\":[[1]]}",
        "{}",
        "",
        " ",
        "{\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]],\"tensor_format\":"
        "\"flat\",\"precision\":3}",
    };
    for (size_t i = 0; i < sizeof dot / sizeof dot[0]; i++)
        compare_text("/attention/dot", dot[i]);
    compare_text("/regression/nw",
                 "{\"x_train\":[1,2,4],\"y_train\":[0,3,1],\"x_query\":[2.5],"
                 "\"w\":[0.5]}");
    compare_text("/regression/nw",
                 "{\"x_train\":[[1,2,4]],\"y_train\":[0,3,1],\"x_query\":[1]}");
    compare_text("/attention/additive",
                 "{\"queries\":[[1]],\"keys\":[[1]],\"values\":[[1]],\"W_q\":["
                 "[1]],\"W_k\":[[1]]}");
    finish("edge cases", sizeof dot / sizeof dot[0] + 3);
}

/* Random edits of the valid bodies with JSON-ish bytes. */
static void test_random_mutations(void **state) {
    (void)state;
    static const char alphabet[] = "0123456789-+.eE[],{}:\" \t\n\\u0nt";
    static const char *const splices[] = {"1e400",
                                          "9223372036854775808",
                                          "-0",
                                          "[]",
                                          "[[",
                                          "]]",
                                          "\\u0000",
                                          "\"queries\":",
                                          "\"keys\":[[1]],",
                                          "null",
                                          "1.5e-320",
                                          ",,"};
    const char *s = getenv("FASTPATH_ITERATIONS");
    size_t n = s ? (size_t)strtoull(s, NULL, 10) : 30000;
    char buf[2048];
    for (size_t it = 0; it < n; it++) {
        size_t b = rng_below(N_BASES);
        size_t len = strlen(bases[b].body);
        memcpy(buf, bases[b].body, len);
        size_t edits = 1 + rng_below(3);
        for (size_t e = 0; e < edits; e++) {
            size_t at = rng_below(len + 1);
            switch (rng_below(4)) {
            case 0: /* replace one byte */
                if (at < len)
                    buf[at] = alphabet[rng_below(sizeof alphabet - 1)];
                break;
            case 1: /* delete a few bytes */
                if (at < len) {
                    size_t k = 1 + rng_below(3);
                    if (k > len - at)
                        k = len - at;
                    memmove(buf + at, buf + at + k, len - at - k);
                    len -= k;
                }
                break;
            case 2: /* insert one byte */
                if (len + 1 < sizeof buf) {
                    memmove(buf + at + 1, buf + at, len - at);
                    buf[at] = alphabet[rng_below(sizeof alphabet - 1)];
                    len++;
                }
                break;
            default: { /* splice in a token */
                const char *t =
                    splices[rng_below(sizeof splices / sizeof splices[0])];
                size_t k = strlen(t);
                if (len + k < sizeof buf) {
                    memmove(buf + at + k, buf + at, len - at);
                    memcpy(buf + at, t, k);
                    len += k;
                }
            }
            }
        }
        compare(bases[b].route, buf, len);
    }
    finish("mutated bodies", n);
}

int main(void) {
    const char *seed = getenv("FASTPATH_SEED");
    rng_state = seed ? strtoull(seed, NULL, 10) : (uint64_t)time(NULL);
    printf("# FASTPATH_SEED=%" PRIu64 "\n", rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bases_agree_and_take_fast_path),
        cmocka_unit_test(test_same_numbers_and_shape),
        cmocka_unit_test(test_repeated_members_read_once),
        cmocka_unit_test(test_big_integers_left_to_jansson),
        cmocka_unit_test(test_many_arrays_left_to_jansson),
        cmocka_unit_test(test_nul_strings_and_forged_placeholders),
        cmocka_unit_test(test_documents_apart),
        cmocka_unit_test(test_flat_objects),
        cmocka_unit_test(test_edge_cases),
        cmocka_unit_test(test_random_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
