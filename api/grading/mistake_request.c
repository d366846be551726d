/*
 * mistake_request.c — reading and altering a request for a
 * mistake (mistake_request.h).
 */
#include "mistake_request.h"

#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "invoke.h"
#include "misconceptions.h"
#include "tensor.h"
#include "tensor_bytes.h"

/* Any tensor of the routes: the route has already checked the field
 * against its own spec, so this one only reads it. */
static const api_tensor_spec any_spec = {
    "tensor",
    API_RANK(0) | API_RANK(1) | API_RANK(2) | API_RANK(3) | API_RANK(4), 0,
    "of any rank up to 4", 0};

/* Decode (and, with data, read) the field: as api_mistake_tensor_read. */
static int tensor_of(api_mistake_tensor *t, api_call *call,
                     const json_t *request, const char *name, int data) {
    memset(t, 0, sizeof *t);
    api_tensor decoded;
    int present = 0;
    api_problem scratch;
    memset(&scratch, 0, sizeof scratch);
    if (api_field_tensor(&decoded, &present, call->doc, request, name,
                         &any_spec, call->limits->max_elements, &scratch))
        return -1;
    if (!present)
        return 0;
    t->rank = decoded.rank;
    memcpy(t->shape, decoded.shape, sizeof t->shape);
    t->count = decoded.count;
    if (!data)
        return 1;
    t->data = malloc(decoded.count * sizeof *t->data);
    if (!t->data)
        return -1;
    api_tensor_read(t->data, &decoded);
    return 1;
}

int api_mistake_tensor_read(api_mistake_tensor *t, api_call *call,
                            const json_t *request, const char *name) {
    return tensor_of(t, call, request, name, 1);
}

int api_mistake_tensor_shape(api_mistake_tensor *t, api_call *call,
                             const json_t *request, const char *name) {
    return tensor_of(t, call, request, name, 0);
}

void api_mistake_tensor_free(api_mistake_tensor *t) {
    free(t->data);
    memset(t, 0, sizeof *t);
}

void api_mistake_request_begin(api_mistake_request *m, const api_call *call,
                               const json_t *request) {
    memset(m, 0, sizeof *m);
    m->request = json_copy((json_t *)request);
    m->failed = m->request == NULL;
    api_fastpath_begin(&m->fp, call->doc);
}

void api_mistake_request_set(api_mistake_request *m, const char *name,
                             json_t *value) {
    if (!value) {
        m->failed = 1;
    } else if (m->failed) {
        json_decref(value);
    } else if (json_object_set_new(m->request, name, value)) {
        m->failed = 1; /* jansson has freed value */
    }
}

void api_mistake_request_del(api_mistake_request *m, const char *name) {
    if (!m->failed)
        json_object_del(m->request, name);
}

void api_mistake_request_drop_masks(api_mistake_request *m) {
    api_mistake_request_del(m, "valid_lens");
    api_mistake_request_del(m, "causal");
    api_mistake_request_del(m, "attn_mask");
    api_mistake_request_del(m, "key_padding_mask");
}

int api_mistake_masks_keys(const json_t *request) {
    const json_t *causal = api_field_value(request, "causal");
    return api_field_value(request, "valid_lens") ||
           (causal && !json_is_false(causal)) ||
           api_field_value(request, "attn_mask") ||
           api_field_value(request, "key_padding_mask");
}

int api_mistake_mask_ignored(api_call *call, const json_t *request,
                             const api_route *route, api_result *wrong) {
    if (!api_mistake_masks_keys(request))
        return API_MISTAKE_NOT_APPLICABLE;
    api_mistake_request m;
    api_mistake_request_begin(&m, call, request);
    api_mistake_request_drop_masks(&m);
    return api_mistake_request_answer(&m, call, route, wrong);
}

void api_mistake_request_tensor(api_mistake_request *m, const char *name,
                                const double *data, const size_t *shape,
                                size_t rank) {
    if (m->failed || m->n == API_MISTAKE_TENSORS_MAX) {
        m->failed = 1;
        return;
    }
    size_t count = 1;
    for (size_t i = 0; i < rank; i++)
        count *= shape[i];
    unsigned char *bytes = malloc(count * api_datatype_size(API_DT_FP64));
    if (!bytes) {
        m->failed = 1;
        return;
    }
    m->bytes[m->n++] = bytes;
    api_bytes_write(bytes, data, count, API_DT_FP64);
    json_t *dims = json_array();
    for (size_t i = 0; dims && i < rank; i++)
        if (json_array_append_new(dims, json_integer((json_int_t)shape[i]))) {
            json_decref(dims);
            dims = NULL;
        }
    json_t *flat = dims ? json_object() : NULL;
    if (flat && json_object_set_new(flat, "shape", dims)) {
        json_decref(flat);
        flat = NULL;
    } else if (!flat) {
        json_decref(dims);
    }
    json_t *placeholder =
        flat ? api_fastpath_adopt_bytes(&m->fp, bytes, API_DT_FP64, count)
             : NULL;
    if (flat && json_object_set_new(flat, "data", placeholder)) {
        json_decref(flat);
        flat = NULL;
    }
    api_mistake_request_set(m, name, flat);
}

int api_mistake_request_answer(api_mistake_request *m, api_call *call,
                               const api_route *route, api_result *result) {
    int rc = API_MISTAKE_FAILED;
    if (!m->failed &&
        api_invoke_result(call, route, m->request, &m->fp, NULL, result) == 0)
        rc = API_MISTAKE_ANSWERED;
    json_decref(m->request);
    api_fastpath_release(&m->fp);
    for (size_t i = 0; i < m->n; i++)
        free(m->bytes[i]);
    memset(m, 0, sizeof *m);
    return rc;
}

double *api_mistake_result_start(api_result *wrong, const api_result *reference,
                                 size_t slots) {
    api_arena arena = {0};
    api_arena_plan(&arena, slots);
    if (api_arena_alloc(&arena))
        return NULL;
    double *data = api_arena_take(&arena, slots);
    api_result_init(wrong, &reference->fmt, API_E_INVALID_VALUE,
                    "a mistaken answer could not be printed");
    api_result_keep(wrong, &arena);
    return data;
}
