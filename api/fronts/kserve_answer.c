/*
 * kserve_answer.c — the route's answer as the protocol's outputs
 * (kserve_internal.h): the outputs asked for, in JSON or as binary tensor
 * data.
 */
#include <string.h>

#include "fastpath.h"
#include "kserve_binary.h"
#include "kserve_internal.h"
#include "stream.h"

/* ------------------------------------------- inference: the answer */

/* One output: a member of the route's typed answer (result.h); a record
 * column is an output of its own ("history.w"). */
typedef struct {
    char name[64];
    const api_result_item *item;
    size_t column; /* RECORDS: which column */
    int int64;     /* INT64 by default (the model metadata's datatype) */
    int integral;  /* holds integers: may be asked for as INT64 or INT32 */
} kserve_output;

#define MAX_OUTPUTS 48

typedef struct {
    kserve_output o[MAX_OUTPUTS];
    size_t n;
} kserve_outputs;

static void add_output(kserve_outputs *outs, const api_answer_table *table,
                       const api_result_item *it, size_t column) {
    if (outs->n == MAX_OUTPUTS)
        return;
    kserve_output *o = &outs->o[outs->n++];
    memset(o, 0, sizeof *o);
    if (it->kind == API_ITEM_RECORDS)
        snprintf(o->name, sizeof o->name, "%s.%s", it->name,
                 it->columns[column].name);
    else
        snprintf(o->name, sizeof o->name, "%s", it->name);
    o->item = it;
    o->column = column;
    const api_answer_field *f =
        api_answers_field(table, o->name, strlen(o->name));
    o->int64 = f && f->int64;
    o->integral =
        o->int64 ||
        (it->kind == API_ITEM_RECORDS && it->columns[column].integer) ||
        it->kind == API_ITEM_INTEGER;
}

/* The outputs of r, in its order; diagnostics.warnings (a list of
 * events, not a tensor) is left out. */
static void collect_outputs(kserve_outputs *outs, const api_result *r,
                            const api_answer_table *table) {
    outs->n = 0;
    for (size_t i = 0; i < r->n; i++) {
        const api_result_item *it = &r->items[i];
        if (it->kind == API_ITEM_EVENTS || it->kind == API_ITEM_TENSORS)
            continue;
        size_t columns = it->kind == API_ITEM_RECORDS ? it->n_columns : 1;
        for (size_t c = 0; c < columns; c++)
            add_output(outs, table, it, c);
    }
}

/* One output object in the header: its name, datatype and shape, then
 * its data (in the result's precision, rounded to float for FP32; large
 * tensors left as holes for the streamed answer, stream.h), or for an
 * output sent as bytes its binary_data_size. */
static void put_output(api_buf *out, const api_result *r,
                       const kserve_output *o, const kserve_output_form *f) {
    const api_result_item *it = o->item;
    api_buf_puts(out, "{\"name\":");
    api_buf_json_string(out, o->name, strlen(o->name));
    api_buf_puts(out, ",\"datatype\":\"");
    api_buf_puts(out, api_datatype_name(f->datatype));
    api_buf_puts(out, "\",\"shape\":[");
    if (it->kind == API_ITEM_TENSOR)
        for (size_t k = 0; k < it->rank; k++) {
            if (k)
                api_buf_putc(out, ',');
            api_buf_uint(out, it->shape[k]);
        }
    else if (it->kind == API_ITEM_RECORDS)
        api_buf_uint(out, it->n_rows);
    else
        api_buf_putc(out, '1');
    if (f->binary) {
        size_t size =
            api_result_item_count(it) * api_datatype_size(f->datatype);
        api_buf_puts(out, "],\"parameters\":{\"binary_data_size\":");
        api_buf_uint(out, size);
        api_buf_puts(out, "}}");
        return;
    }
    api_buf_puts(out, "],\"data\":");
    int fp32 = f->datatype == API_DT_FP32;
    api_tensor_format fmt = {0, api_result_item_precision(r, it), fp32};
    switch (it->kind) {
    case API_ITEM_TENSOR: {
        size_t count = api_result_item_count(it);
        /* a rank-1 nested tensor prints as the flat data array */
        api_tensor_encode(out, it->data, &count, 1, &fmt, it->nan_as_null);
        break;
    }
    case API_ITEM_RECORDS: {
        int integer = it->columns[o->column].integer;
        api_buf_putc(out, '[');
        for (size_t i = 0; i < it->n_rows; i++) {
            double x = api_result_record_value(it, i, o->column);
            if (i)
                api_buf_putc(out, ',');
            if (integer)
                api_buf_uint(out, (uint64_t)x);
            else
                api_buf_number(out, fp32 ? (double)(float)x : x, fmt.precision);
        }
        api_buf_putc(out, ']');
        break;
    }
    case API_ITEM_INTEGER:
        api_buf_putc(out, '[');
        api_buf_uint(out, it->integer);
        api_buf_putc(out, ']');
        break;
    default: /* NUMBER */
        api_buf_putc(out, '[');
        if (it->is_null)
            api_buf_puts(out, "null");
        else
            api_buf_number(out, fp32 ? (double)(float)it->number : it->number,
                           fmt.precision);
        api_buf_putc(out, ']');
        break;
    }
    api_buf_putc(out, '}');
}

/* The outputs to send, as indexes into outs (pick[0 .. *n)): every one
 * when wanted is NULL, else those it names, in its order. Returns 0, or
 * -1 with call->problem set when one is not in this answer. */
static int pick_outputs(size_t *pick, size_t *n, api_call *call,
                        const kserve_infer *k, const kserve_outputs *outs,
                        const json_t *wanted) {
    const api_answer_table *table = k->model->route->answer;
    size_t count = 0;
    if (!wanted)
        for (count = 0; count < outs->n; count++)
            pick[count] = count;
    for (size_t i = 0; i < json_array_size(wanted) && count < MAX_OUTPUTS;
         i++) {
        const char *name = json_string_value(
            json_object_get(json_array_get(wanted, i), "name"));
        size_t j = 0;
        while (j < outs->n && strcmp(outs->o[j].name, name) != 0)
            j++;
        if (j < outs->n) {
            pick[count++] = j;
            continue;
        }
        const api_answer_field *f =
            api_answers_field(table, name, strlen(name));
        char pointer[64];
        snprintf(pointer, sizeof pointer, "/outputs/%zu/name", i);
        return api_fail(&call->problem, API_E_INVALID_VALUE, pointer,
                        "this request does not produce %s: %s gives it only "
                        "with %s",
                        name, k->model->name,
                        f && f->needs ? f->needs : "other inputs");
    }
    *n = count;
    return 0;
}

int api_kserve_write_response(api_call *call, const kserve_infer *k,
                              const api_result *answer,
                              const api_arena *arena) {
    kserve_outputs outs;
    collect_outputs(&outs, answer, k->model->route->answer);
    /* none listed, or an empty list: every output, as Triton answers */
    const json_t *wanted = api_field_value(k->request, "outputs");
    if (json_array_size(wanted) == 0)
        wanted = NULL;
    size_t pick[MAX_OUTPUTS], n = 0;
    kserve_output_form forms[MAX_OUTPUTS];
    if (pick_outputs(pick, &n, call, k, &outs, wanted))
        return -1;
    int any_binary = 0;
    for (size_t i = 0; i < n; i++) {
        const kserve_output *o = &outs.o[pick[i]];
        kserve_output_form_of(&forms[i], k->request,
                              wanted ? json_array_get(wanted, i) : NULL, i,
                              o->int64);
        if (kserve_output_fits(&forms[i], o->item, o->column, o->name,
                               o->integral, &call->problem))
            return -1;
        any_binary |= forms[i].binary;
    }
    api_buf *out = &call->out;
    if (!any_binary) /* JSON alone: large tensors may be holes */
        api_stream_allow(out, arena, call->req);
    api_buf_puts(out, "{\"model_name\":\"");
    api_buf_puts(out, k->model->name);
    api_buf_putc(out, '"');
    const json_t *id = api_field_value(k->request, "id");
    if (id) {
        api_buf_puts(out, ",\"id\":");
        api_buf_json_string(out, json_string_value(id), json_string_length(id));
    }
    api_buf_puts(out, ",\"outputs\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            api_buf_putc(out, ',');
        put_output(out, answer, &outs.o[pick[i]], &forms[i]);
    }
    api_buf_puts(out, "]}");
    if (!any_binary)
        return 0;
    int rc = out->failed ? api_fail(&call->problem, API_E_INTERNAL, NULL,
                                    "out of memory")
                         : 0;
    call->inference_header_length = out->len;
    call->content_type = API_CT_OCTET_STREAM;
    api_stream_allow(out, arena, call->req); /* for the bytes */
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t size;
        if (forms[i].binary)
            rc = kserve_output_write_bytes(
                &call->out, &forms[i], outs.o[pick[i]].item,
                outs.o[pick[i]].column, &size, &call->problem);
    }
    return rc;
}
