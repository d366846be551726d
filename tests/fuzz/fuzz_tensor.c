/*
 * fuzz_tensor.c — libFuzzer target: the tensor codec (api/text/tensor.h) on
 * arbitrary JSON. Byte 0 picks the field spec (which ranks, integral or
 * not), byte 1 the output format (bit 0x80 flat, low bits precision 0 …
 * 17); the rest is parsed by jansson and, when it is JSON, run through the
 * codec's phases in the contract's order (keys, missing, types, decode).
 *
 * Invariants on a tensor that decodes (docs/contract.md section 1 "Tensors"):
 *   - its rank is allowed, its count is the product of its shape, at most
 *     the element limit, with no zero dimension;
 *   - api_tensor_entry_pointer(i) resolves, in the input, to a number that
 *     api_tensor_read put at index i;
 *   - api_tensor_encode's text parses and decodes to the same shape, and
 *     each number reads back as the same double (shortest form: bit for
 *     bit, -0 as 0) or as strtod("%.{k}g") of it (precision k);
 *     encoding fails only when rounding to k digits overflows.
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "pointer.h"
#include "tensor.h"

#define TENSOR_MAX_ELEMENTS ((size_t)1 << 16)

static const api_tensor_spec tensor_specs[] = {
    {"queries", API_RANK(2) | API_RANK(3), API_TENSOR_MASKED_SCORES,
     "(B, Nq, d) or (Nq, d)", 0},
    {"x_train", API_RANK(1), 0, "(n)", 0},
    {"y_train", API_RANK(1) | API_RANK(2), 0, "(n) or (n, dv)", 1},
    {"valid_lens", API_RANK(0) | API_RANK(1) | API_RANK(2), API_TENSOR_INTEGRAL,
     "(B) or (B, Nq)", 1},
    {"any", 0x1ff, 0, "rank 0 to 8", 0},
};

/* RFC 6901 pointer into doc (relative to the tensor value), or NULL. */
static const json_t *tensor_resolve(const json_t *doc, const char *p) {
    while (doc != NULL && *p == '/') {
        p++;
        char token[64];
        size_t n = 0;
        while (*p && *p != '/' && n + 1 < sizeof token)
            token[n++] = *p++;
        token[n] = '\0';
        if (json_is_object(doc))
            doc = json_object_get(doc, token);
        else if (json_is_array(doc))
            doc = json_array_get(doc, strtoull(token, NULL, 10));
        else
            doc = NULL;
    }
    return *p == '\0' ? doc : NULL;
}

/* What the wire should carry for x at precision k: x itself (k = 0) or
 * x rounded to k significant digits; -0 is written 0. */
static double tensor_expected(double x, int k) {
    double y = x;
    if (k > 0) {
        char text[64];
        snprintf(text, sizeof text, "%.*g", k, x);
        y = strtod(text, NULL);
    }
    return y == 0 ? 0.0 : y;
}

static int tensor_same(double a, double b) {
    return memcmp(&a, &b, sizeof a) == 0;
}

static void tensor_round_trip(const api_tensor *t, const double *x,
                              const api_tensor_spec *spec,
                              const api_tensor_format *fmt) {
    int overflows = 0;
    for (size_t i = 0; i < t->count; i++)
        overflows |= isinf(tensor_expected(x[i], fmt->precision));
    api_buf out = {0};
    int rc = api_tensor_encode(&out, x, t->shape, t->rank, fmt, 0);
    fuzz_check(!out.failed, "encode ran out of memory");
    fuzz_check(rc == (overflows ? -1 : 0),
               "encode returned %d; %s value rounds beyond the largest "
               "double at precision %d",
               rc, overflows ? "a" : "no", fmt->precision);
    if (rc != 0) {
        api_buf_free(&out);
        return;
    }
    json_error_t err;
    /* INT_AS_REAL: integers from 2^63 up to 1e21 print without exponent
     * (ECMAScript), beyond what jansson's int64 integers hold */
    json_t *doc = json_loadb(out.data, out.len,
                             JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &err);
    fuzz_check(doc != NULL, "encoded text does not parse: %s: %.200s", err.text,
               out.data);
    api_problem p = {0};
    api_tensor back;
    fuzz_check(api_tensor_check_types(NULL, doc, spec, "", &p) == 0 &&
                   api_tensor_decode(&back, NULL, doc, spec, "",
                                     TENSOR_MAX_ELEMENTS, &p) == 0,
               "encoded text does not decode: %s: %.200s", p.detail, out.data);
    fuzz_check(back.rank == t->rank && back.count == t->count &&
                   !memcmp(back.shape, t->shape, t->rank * sizeof t->shape[0]),
               "shape changed through encode: %.200s", out.data);
    double *y = malloc(back.count * sizeof *y);
    api_tensor_read(y, &back);
    for (size_t i = 0; i < t->count; i++) {
        double want = tensor_expected(x[i], fmt->precision);
        fuzz_check(tensor_same(y[i], want),
                   "entry %zu: %.17g printed at precision %d reads back as "
                   "%.17g, not %.17g",
                   i, x[i], fmt->precision, y[i], want);
    }
    free(y);
    json_decref(doc);
    api_buf_free(&out);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2)
        return 0;
    enum { N_SPECS = sizeof tensor_specs / sizeof tensor_specs[0] };
    const api_tensor_spec *spec = &tensor_specs[data[0] % N_SPECS];
    api_tensor_format fmt = {.flat = (data[1] & 0x80) != 0,
                             .precision = (data[1] & 0x7f) % 18};
    json_error_t err;
    json_t *v = json_loadb((const char *)data + 2, size - 2,
                           JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (v == NULL)
        return 0;
    api_problem p = {0};
    api_tensor t;
    int rc = api_tensor_check_keys(v, "", &p);
    if (rc == 0)
        rc = api_tensor_check_missing(v, "", &p);
    if (rc == 0)
        rc = api_tensor_check_types(NULL, v, spec, "", &p);
    if (rc == 0)
        rc = api_tensor_decode(&t, NULL, v, spec, "", TENSOR_MAX_ELEMENTS, &p);
    if (rc != 0) {
        fuzz_check(p.code != API_E_NONE, "failed without a problem");
        json_decref(v);
        return 0;
    }
    fuzz_check(spec->ranks & API_RANK(t.rank), "rank %zu not allowed", t.rank);
    size_t count = 1;
    for (size_t i = 0; i < t.rank; i++) {
        fuzz_check(t.shape[i] >= 1, "dimension %zu is 0", i);
        count *= t.shape[i];
    }
    fuzz_check(count == t.count && count <= TENSOR_MAX_ELEMENTS,
               "count %zu, shape product %zu", t.count, count);
    double *x = malloc(t.count * sizeof *x);
    api_tensor_read(x, &t);
    for (size_t i = 0; i < t.count; i++) {
        fuzz_check(isfinite(x[i]), "entry %zu is not finite", i);
        if (spec->flags & API_TENSOR_INTEGRAL)
            fuzz_check(x[i] == floor(x[i]), "entry %zu is not integral", i);
    }
    /* pointers of a few entries: the first, the last and one in between */
    size_t probe[3] = {0, t.count - 1, (size_t)data[1] * 7919 % t.count};
    for (size_t k = 0; k < 3; k++) {
        api_pointer ptr;
        api_tensor_entry_pointer(&ptr, "", &t, probe[k]);
        const json_t *e = tensor_resolve(v, ptr.s);
        fuzz_check(json_is_number(e) &&
                       tensor_same(json_number_value(e), x[probe[k]]),
                   "entry %zu: pointer '%s' does not name it", probe[k], ptr.s);
    }
    tensor_round_trip(&t, x, spec, &fmt);
    free(x);
    json_decref(v);
    return 0;
}
