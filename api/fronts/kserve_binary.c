/*
 * kserve_binary.c — the binary tensor data extension of the v2 front (see
 * kserve_binary.h): its members checked, the bytes after the JSON header
 * laid over the inputs, and the outputs' forms and bytes.
 */
#include "kserve_binary.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "tensor.h"

/* ------------------------------------------------------------ members */

static const json_t *input_at(const json_t *request, size_t i) {
    return json_array_get(json_object_get(request, "inputs"), i);
}

static const json_t *size_of(const json_t *input) {
    const json_t *params = api_field_value(input, "parameters");
    return json_is_object(params) ? api_field_value(params, "binary_data_size")
                                  : NULL;
}

int kserve_binary_is_input(const json_t *input) {
    return size_of(input) != NULL;
}

static const char *input_name(const json_t *input) {
    return json_string_value(json_object_get(input, "name"));
}

static int wrong_type(api_problem *p, const char *pointer, const char *want,
                      const json_t *v) {
    return api_fail(p, API_E_WRONG_TYPE, pointer, "%s must be %s; got %s",
                    pointer, want, api_json_kind(v));
}

int kserve_binary_check_types(const json_t *request, api_problem *p) {
    char pointer[96];
    for (size_t i = 0; input_at(request, i); i++) {
        const json_t *size = size_of(input_at(request, i));
        snprintf(pointer, sizeof pointer,
                 "/inputs/%zu/parameters/binary_data_size", i);
        if (size && !json_is_integer(size))
            return wrong_type(p, pointer,
                              "the tensor's size in bytes (an integer)", size);
    }
    const json_t *params = api_field_value(request, "parameters");
    const json_t *v = api_field_value(params, "binary_data_output");
    if (v && !json_is_boolean(v))
        return wrong_type(p, "/parameters/binary_data_output", "true or false",
                          v);
    v = api_field_value(params, "output_datatype");
    if (v && !json_is_string(v))
        return wrong_type(p, "/parameters/output_datatype",
                          "a datatype (\"FP64\", \"FP32\", \"INT64\" or "
                          "\"INT32\")",
                          v);
    const json_t *outputs = api_field_value(request, "outputs");
    for (size_t i = 0; i < json_array_size(outputs); i++) {
        const json_t *op =
            api_field_value(json_array_get(outputs, i), "parameters");
        v = api_field_value(op, "binary_data");
        snprintf(pointer, sizeof pointer, "/outputs/%zu/parameters/binary_data",
                 i);
        if (v && !json_is_boolean(v))
            return wrong_type(p, pointer, "true or false", v);
        v = api_field_value(op, "datatype");
        snprintf(pointer, sizeof pointer, "/outputs/%zu/parameters/datatype",
                 i);
        if (v && !json_is_string(v))
            return wrong_type(p, pointer,
                              "a datatype (\"FP64\", \"FP32\", \"INT64\" or "
                              "\"INT32\")",
                              v);
    }
    return 0;
}

/* An output's datatype: FP64, FP32, INT64 or INT32. */
static int output_datatype_error(api_problem *p, const char *pointer,
                                 const json_t *v) {
    api_datatype dt =
        api_datatype_parse(json_string_value(v), json_string_length(v));
    if (dt != API_DT_NONE && dt != API_DT_BOOL)
        return 0;
    return api_fail(p, API_E_INVALID_VALUE, pointer,
                    "an output's datatype is FP64, FP32, INT64 or INT32; got "
                    "%.40s",
                    api_string_text(v));
}

int kserve_binary_check_values(const json_t *request, api_problem *p) {
    char pointer[96];
    for (size_t i = 0; input_at(request, i); i++) {
        const json_t *in = input_at(request, i);
        const json_t *size = size_of(in);
        if (!size)
            continue;
        snprintf(pointer, sizeof pointer,
                 "/inputs/%zu/parameters/binary_data_size", i);
        if (json_integer_value(size) < 0)
            return api_fail(p, API_E_INVALID_VALUE, pointer,
                            "binary_data_size is a count of bytes, at least "
                            "0; got %lld",
                            (long long)json_integer_value(size));
        snprintf(pointer, sizeof pointer, "/inputs/%zu/data", i);
        if (api_field_value(in, "data"))
            return api_fail(p, API_E_INVALID_VALUE, pointer,
                            "input %.100s gives both \"data\" and "
                            "parameters.binary_data_size: send its tensor "
                            "one way, as JSON data or as bytes after the "
                            "JSON header",
                            input_name(in));
    }
    const json_t *params = api_field_value(request, "parameters");
    const json_t *v = api_field_value(params, "output_datatype");
    if (v && output_datatype_error(p, "/parameters/output_datatype", v))
        return -1;
    const json_t *outputs = api_field_value(request, "outputs");
    for (size_t i = 0; i < json_array_size(outputs); i++) {
        v = api_field_value(
            api_field_value(json_array_get(outputs, i), "parameters"),
            "datatype");
        snprintf(pointer, sizeof pointer, "/outputs/%zu/parameters/datatype",
                 i);
        if (v && output_datatype_error(p, pointer, v))
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- inputs */

/* The entries of shape when the route would take it as it is (rank 0 …
 * API_SHAPE_MAX, integers >= 0, at most max_elements; [] is one entry):
 * returns 1 with *count set, else 0 (the route's own error comes). */
static int shape_entries(const json_t *shape, size_t max_elements,
                         size_t *count) {
    size_t rank = json_array_size(shape), c = 1;
    if (!json_is_array(shape) || rank > API_SHAPE_MAX)
        return 0;
    int zero = 0;
    for (size_t i = 0; i < rank; i++) {
        const json_t *d = json_array_get(shape, i);
        if (!json_is_integer(d) || json_integer_value(d) < 0)
            return 0;
        zero |= json_integer_value(d) == 0;
    }
    for (size_t i = 0; i < rank && !zero; i++) {
        size_t n = (size_t)json_integer_value(json_array_get(shape, i));
        if (c > max_elements / n)
            return 0;
        c *= n;
    }
    *count = zero ? 0 : c;
    return 1;
}

/* Entries tested at a time before the first bad one is looked for. */
#define FINITE_BLOCK 1024

/* 1 when one of the n FP64 (size 8) or FP32 (size 4) little-endian
 * entries at p is a NaN or an infinity: every bit of its exponent set.
 * No branch per entry, so that the compiler may test several at once
 * (the entry-by-entry test took 1 ms of a 3 MiB request). */
static int any_non_finite(const unsigned char *p, size_t n, size_t size) {
    unsigned bad = 0;
    if (size == 8)
        for (size_t i = 0; i < n; i++) {
            const unsigned char *e = p + 8 * i;
            uint32_t top = (uint32_t)e[7] << 8 | e[6];
            bad |= (top & 0x7ff0) == 0x7ff0;
        }
    else
        for (size_t i = 0; i < n; i++) {
            const unsigned char *e = p + 4 * i;
            uint32_t top = (uint32_t)e[3] << 8 | e[2];
            bad |= (top & 0x7f80) == 0x7f80;
        }
    return bad != 0;
}

/* The index of the first entry that is not finite, or count. */
static size_t first_non_finite(const unsigned char *bytes, size_t count,
                               api_datatype dt) {
    size_t size = api_datatype_size(dt);
    for (size_t at = 0; at < count; at += FINITE_BLOCK) {
        size_t n = count - at < FINITE_BLOCK ? count - at : FINITE_BLOCK;
        if (!any_non_finite(bytes + at * size, n, size))
            continue;
        for (size_t i = at; i < at + n; i++)
            if (!isfinite(api_bytes_at(bytes, i, dt)))
                return i;
    }
    return count;
}

/* Each input's binary_data_size and datatype into in (bytes still NULL);
 * 400 when one has bytes to come and the body has none after its JSON
 * (no Inference-Header-Content-Length: the first thing to say). */
static int describe(const json_t *request, size_t len, kserve_binary_input *in,
                    size_t n, api_problem *p) {
    for (size_t i = 0; i < n; i++) {
        const json_t *input = input_at(request, i);
        const json_t *size = size_of(input);
        memset(&in[i], 0, sizeof in[i]);
        if (!size)
            continue;
        const json_t *dt = json_object_get(input, "datatype");
        in[i].binary = 1;
        in[i].size = (size_t)json_integer_value(size);
        in[i].datatype =
            api_datatype_parse(json_string_value(dt), json_string_length(dt));
        if (in[i].size > 0 && len == 0) {
            char pointer[96];
            snprintf(pointer, sizeof pointer,
                     "/inputs/%zu/parameters/binary_data_size", i);
            return api_fail(p, API_E_INVALID_JSON, pointer,
                            "input %.100s has binary_data_size %zu, but the "
                            "body has no binary tensor data: send the JSON "
                            "header's length in bytes as "
                            "Inference-Header-Content-Length, and the bytes "
                            "after it",
                            input_name(input), in[i].size);
        }
    }
    return 0;
}

/* The inputs' bytes one after another: the sizes must add up to the
 * bytes after the header (400 otherwise). */
static int lay_out(const json_t *request, const unsigned char *binary,
                   size_t len, kserve_binary_input *in, size_t n,
                   api_problem *p) {
    size_t at = 0, n_binary = 0;
    for (size_t i = 0; i < n; i++) {
        if (!in[i].binary)
            continue;
        n_binary++;
        in[i].bytes = binary ? binary + at : (const unsigned char *)"";
        if (in[i].size > len - at) {
            char pointer[96];
            snprintf(pointer, sizeof pointer,
                     "/inputs/%zu/parameters/binary_data_size", i);
            return api_fail(
                p, API_E_INVALID_JSON, pointer,
                "the body ends inside input %.100s's bytes: its "
                "binary_data_size %zu needs bytes %zu to %llu "
                "after the JSON header, and the body has %zu "
                "there",
                input_name(input_at(request, i)), in[i].size, at,
                (unsigned long long)at + (unsigned long long)in[i].size, len);
        }
        at += in[i].size;
    }
    if (at == len)
        return 0;
    if (n_binary == 0)
        return api_fail(p, API_E_INVALID_JSON, NULL,
                        "the body has %zu bytes after its JSON header "
                        "(Inference-Header-Content-Length), but no input "
                        "has parameters.binary_data_size to claim them",
                        len);
    return api_fail(p, API_E_INVALID_JSON, NULL,
                    "the body has %zu bytes after its JSON header, but the "
                    "inputs' binary_data_size add up to %zu: %zu bytes at "
                    "the end belong to no input",
                    len, at, len - at);
}

/* Each binary input's size against its shape and datatype (before the
 * body is looked at, so that the input at fault is the one named). */
static int check_sizes(const json_t *request, size_t max_elements,
                       kserve_binary_input *in, size_t n, api_problem *p) {
    char pointer[96];
    for (size_t i = 0; i < n; i++) {
        if (!in[i].binary)
            continue;
        const json_t *input = input_at(request, i);
        const char *name = input_name(input);
        size_t esize = api_datatype_size(in[i].datatype), count;
        if (!shape_entries(json_object_get(input, "shape"), max_elements,
                           &count)) {
            in[i].count = in[i].size / esize; /* the route says what is wrong */
            continue;
        }
        if (count * esize != in[i].size) {
            snprintf(pointer, sizeof pointer,
                     "/inputs/%zu/parameters/binary_data_size", i);
            char shape[160];
            char *dump =
                json_dumps(json_object_get(input, "shape"), JSON_COMPACT);
            snprintf(shape, sizeof shape, "%s", dump ? dump : "?");
            free(dump);
            return api_fail(p, API_E_SHAPE_MISMATCH, pointer,
                            "input %.100s has shape %s and datatype %s: %zu "
                            "%s of %zu %s, so binary_data_size must be %zu; "
                            "it is %zu",
                            name, shape, api_datatype_name(in[i].datatype),
                            count, api_plural(count, "entry", "entries"), esize,
                            api_plural(esize, "byte", "bytes"), count * esize,
                            in[i].size);
        }
        in[i].count = count;
    }
    return 0;
}

int kserve_binary_inputs(const json_t *request, const unsigned char *binary,
                         size_t len, size_t max_elements,
                         kserve_binary_input *in, size_t n, api_problem *p) {
    if (describe(request, len, in, n, p) ||
        check_sizes(request, max_elements, in, n, p) ||
        lay_out(request, binary, len, in, n, p))
        return -1;
    char pointer[96];
    for (size_t i = 0; i < n; i++) {
        if (!in[i].binary)
            continue;
        const char *name = input_name(input_at(request, i));
        size_t count = in[i].count;
        snprintf(pointer, sizeof pointer, "/inputs/%zu", i);
        if (in[i].datatype == API_DT_BOOL) {
            size_t bad = api_bytes_bad_bool(in[i].bytes, count);
            if (bad < count)
                return api_fail(p, API_E_INVALID_VALUE, pointer,
                                "input %.100s is BOOL: each byte is 0 (false) "
                                "or 1 (true); byte %zu of its data is 0x%02x",
                                name, bad, in[i].bytes[bad]);
        }
        if (in[i].datatype == API_DT_FP64 || in[i].datatype == API_DT_FP32) {
            size_t bad = first_non_finite(in[i].bytes, count, in[i].datatype);
            if (bad < count) {
                double x = api_bytes_at(in[i].bytes, bad, in[i].datatype);
                return api_fail(p, API_E_INVALID_VALUE, pointer,
                                "entry %zu (row-major) of input %.100s's bytes "
                                "is %s: tensors hold finite numbers, as JSON "
                                "does",
                                bad, name,
                                isnan(x) ? "NaN"
                                : x > 0  ? "+Infinity"
                                         : "-Infinity");
            }
        }
    }
    return 0;
}

/* ------------------------------------------------------------ outputs */

void kserve_output_form_of(kserve_output_form *f, const json_t *request,
                           const json_t *requested, size_t out_index,
                           int integral) {
    const json_t *params = api_field_value(request, "parameters");
    const json_t *own =
        requested ? api_field_value(requested, "parameters") : NULL;
    const json_t *binary = api_field_value(own, "binary_data");
    f->binary =
        binary ? json_is_true(binary)
               : json_is_true(api_field_value(params, "binary_data_output"));
    const json_t *dt = api_field_value(own, "datatype");
    f->asked_at[0] = '\0';
    if (dt)
        snprintf(f->asked_at, sizeof f->asked_at,
                 "/outputs/%zu/parameters/datatype", out_index);
    else if ((dt = api_field_value(params, "output_datatype")))
        snprintf(f->asked_at, sizeof f->asked_at,
                 "/parameters/output_datatype");
    f->datatype =
        dt ? api_datatype_parse(json_string_value(dt), json_string_length(dt))
        : integral ? API_DT_INT64
                   : API_DT_FP64;
}

/* Entry i of the output (column for RECORDS); NaN for null. */
static double entry(const api_result_item *it, size_t column, size_t i) {
    switch (it->kind) {
    case API_ITEM_TENSOR:
        return it->data[i];
    case API_ITEM_RECORDS:
        return api_result_record_value(it, i, column);
    case API_ITEM_INTEGER:
        return (double)it->integer;
    default:
        return it->is_null ? NAN : it->number;
    }
}

/* The index of the block of FINITE_BLOCK doubles at x (n of them) where
 * the first entry beyond FP32's range (fp32: from halfway between FLT_MAX
 * and 2^128 on, where it rounds to infinity, as below; NaN, a masked
 * score, is kept) or INT32's (|x| > INT32_MAX or NaN) is, or n when there
 * is none. A block is tested without a branch per entry: entry by entry,
 * the test of a large dot's 1.2 M entries took 2 to 3 ms. */
static size_t first_beyond(const double *x, size_t n, int fp32) {
    for (size_t at = 0; at < n; at += FINITE_BLOCK) {
        size_t m = n - at < FINITE_BLOCK ? n - at : FINITE_BLOCK;
        unsigned bad = 0;
        if (fp32)
            for (size_t i = 0; i < m; i++)
                bad |= fabs(x[at + i]) >= 0x1.ffffffp127; /* not NaN */
        else
            for (size_t i = 0; i < m; i++)
                bad |= !(fabs(x[at + i]) <= INT32_MAX);
        if (bad)
            return at;
    }
    return n;
}

int kserve_output_fits(const kserve_output_form *f, const api_result_item *it,
                       size_t column, const char *name, int integral,
                       api_problem *p) {
    const char *at = f->asked_at[0] ? f->asked_at : NULL;
    if (!integral &&
        (f->datatype == API_DT_INT64 || f->datatype == API_DT_INT32))
        return api_fail(p, API_E_INVALID_VALUE, at,
                        "output %s holds real numbers: ask for FP64 or FP32, "
                        "not %s",
                        name, api_datatype_name(f->datatype));
    if (f->datatype != API_DT_FP32 && f->datatype != API_DT_INT32)
        return 0;
    size_t n = api_result_item_count(it);
    size_t i = it->kind == API_ITEM_TENSOR
                   ? first_beyond(it->data, n, f->datatype == API_DT_FP32)
                   : 0;
    for (; i < n; i++) {
        double x = entry(it, column, i);
        /* below halfway from FLT_MAX (0x1.fffffep127) to 2^128 a double
         * rounds to a finite float; from there on, to infinity */
        if (f->datatype == API_DT_FP32 &&
            (isnan(x) || fabs(x) < 0x1.ffffffp127))
            continue;
        if (f->datatype == API_DT_INT32 && fabs(x) <= INT32_MAX)
            continue;
        return api_fail(p, API_E_INVALID_VALUE, at,
                        "entry %zu of output %s is %.17g, beyond %s's range: "
                        "ask for %s",
                        i, name, x, api_datatype_name(f->datatype),
                        f->datatype == API_DT_FP32 ? "FP64" : "INT64");
    }
    return 0;
}

int kserve_output_write_bytes(api_buf *out, const kserve_output_form *f,
                              const api_result_item *it, size_t column,
                              size_t *size, api_problem *p) {
    size_t n = api_result_item_count(it);
    *size = n * api_datatype_size(f->datatype);
    if (it->kind == API_ITEM_TENSOR) {
        if (api_tensor_encode_bytes(out, it->data, n, f->datatype) == 0)
            return 0;
        return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    }
    /* records, numbers: gathered (a fit's history: at most its epochs) */
    double *values = malloc((n ? n : 1) * sizeof *values);
    if (!values)
        return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    for (size_t i = 0; i < n; i++)
        values[i] = entry(it, column, i);
    int rc = 0;
    if (api_buf_reserve(out, *size) == 0) {
        api_bytes_write((unsigned char *)out->data + out->len, values, n,
                        f->datatype);
        out->len += *size;
        out->data[out->len] = '\0';
    } else {
        rc = api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    }
    free(values);
    return rc;
}
