/*
 * kserve.c — the Open Inference Protocol front (see kserve.h): the models,
 * their metadata, readiness, the protocol's error object, and inference
 * as a translation — the protocol's request becomes the route's own
 * request (inputs -> tensor fields, parameters -> the other fields), the
 * route's handler answers it (invoke.h), and its answer becomes the
 * protocol's outputs. Errors from the route point into the request as
 * sent (/inputs/2/data/5, /parameters/scale).
 */
#include "kserve.h"

#include <pthread.h>
#include <string.h>

#include "fastpath.h"
#include "invoke.h"
#include "kserve_binary.h"
#include "kserve_internal.h"
#include "stream.h"
#include "version.h"

/* ------------------------------------------------------------ models */

/* A model is the route whose entry names it (route.h); its inputs are the
 * route's tensor fields and its parameters the other fields, in the
 * route's field order, derived here once from the route's schema. */

static kserve_model models[MODELS_MAX];
static size_t n_models;
static char model_list[MODELS_MAX * (KSERVE_NAME_MAX + 2)]; /* "a, b, c" */
static pthread_once_t models_once = PTHREAD_ONCE_INIT;

/* The batched rank a tensor field shows: its spec's, else the highest
 * rank it allows. */
static unsigned batched_rank(const api_tensor_spec *t) {
    if (t->batched_rank)
        return t->batched_rank;
    unsigned r = 0;
    for (unsigned k = 0; k < 32; k++)
        if (t->ranks & API_RANK(k))
            r = k;
    return r;
}

/* Inputs and parameters from the schema: a nested object's fields become
 * parameters named object_field (NW's fit_epochs); tensor_format has no
 * meaning where outputs are always flat. */
static void derive_model(kserve_model *m, const api_route *r) {
    m->name = r->model;
    m->route = r;
    const api_schema *s = r->request;
    for (size_t i = 0; s && i < s->n; i++) {
        const api_field *f = &s->fields[i];
        if (f->kind == API_FIELD_TENSOR && m->n_inputs < INPUTS_MAX) {
            m->inputs[m->n_inputs++] = (kserve_input){
                f->name,
                (f->tensor->flags & API_TENSOR_INTEGRAL) ? "INT64" : "FP64",
                batched_rank(f->tensor)};
        } else if (f->kind == API_FIELD_OBJECT) {
            for (size_t j = 0; j < f->object->n && m->n_params < PARAMS_MAX;
                 j++) {
                if (f->object->fields[j].kind == API_FIELD_STRINGS)
                    continue; /* labels: for pictures, which v2 has not */
                char *flat = m->flat[m->n_params];
                snprintf(flat, KSERVE_NAME_MAX, "%s_%s", f->name,
                         f->object->fields[j].name);
                m->params[m->n_params++] = flat;
            }
        } else if (strcmp(f->name, "tensor_format") != 0 &&
                   m->n_params < PARAMS_MAX) {
            m->params[m->n_params++] = f->name;
        }
    }
}

static void derive_models(void) {
    size_t len = 0;
    for (size_t i = 0; i < api_route_count() && n_models < MODELS_MAX; i++) {
        const api_route *r = api_route_at(i);
        if (!r->model)
            continue;
        derive_model(&models[n_models], r);
        len += (size_t)snprintf(model_list + len, sizeof model_list - len,
                                "%s%s", n_models ? ", " : "", r->model);
        n_models++;
    }
}

static const kserve_model *model_find(const char *name, size_t len) {
    pthread_once(&models_once, derive_models);
    for (size_t i = 0; i < n_models; i++)
        if (strlen(models[i].name) == len && !memcmp(models[i].name, name, len))
            return &models[i];
    return NULL;
}

int api_kserve_path(const char *path) {
    return path && !strncmp(path, "/v2", 3) &&
           (path[3] == '\0' || path[3] == '/');
}

/* The model segment of "/v2/models/<name>[/...]" (len bytes), or NULL. */
static const char *model_segment(const char *path, size_t *len) {
    static const char prefix[] = "/v2/models/";
    if (!path || strncmp(path, prefix, sizeof prefix - 1) != 0)
        return NULL;
    const char *name = path + sizeof prefix - 1;
    *len = strcspn(name, "/");
    return *len ? name : NULL;
}

/* The model of the path the route table matched. */
static const kserve_model *model_of(const api_call *call) {
    size_t len = 0;
    const char *name = model_segment(call->req->path, &len);
    return name ? model_find(name, len) : NULL;
}

/* ------------------------------------------------------------ errors */

int api_kserve_empty_body(const char *path, const char *body, size_t len,
                          api_problem *p) {
    for (size_t i = 0; body && i < len; i++)
        if (!strchr(" \t\r\n", body[i]) || body[i] == '\0')
            return 0;
    size_t n = 0;
    const char *name = model_segment(path, &n);
    if (name == NULL)
        return 0;
    memset(p, 0, sizeof *p); /* this replaces the native routes' hint */
    api_fail(p, API_E_INVALID_JSON, NULL,
             "the body is empty: this route reads {\"inputs\": [{\"name\", "
             "\"shape\", \"datatype\", \"data\"}, ...]}, sent with "
             "Content-Type: application/json; GET /v2/models/%.*s lists the "
             "inputs",
             (int)(n > 100 ? 100 : n), name);
    return 1;
}

void api_kserve_respond_error(api_response *res, const api_problem *p,
                              const char *path) {
    api_buf msg = {0}, out = {0};
    size_t len = 0;
    const char *name = model_segment(path, &len);
    api_buf_puts(&msg, api_error_name(p->code));
    if (p->code == API_E_NOT_FOUND && name && !model_find(name, len)) {
        api_buf_puts(&msg, ": unknown model `");
        api_buf_append(&msg, name, len > 100 ? 100 : len);
        api_buf_puts(&msg, "`; the models are ");
        api_buf_puts(&msg, model_list);
    } else {
        if (p->has_pointer) {
            api_buf_puts(&msg, " at ");
            api_buf_puts(&msg, p->pointer[0] ? p->pointer : "\"\" (the body)");
        }
        api_buf_puts(&msg, ": ");
        api_buf_puts(&msg, p->detail);
    }
    api_buf_puts(&out, "{\"error\":");
    api_buf_json_string(&out, msg.data ? msg.data : "", msg.len);
    api_buf_putc(&out, '}');
    api_buf_free(&msg);
    free(res->body);
    res->status = api_error_status(p->code);
    res->no_room = p->code == API_E_NO_ROOM;
    res->content_type = API_CT_JSON;
    res->body = api_buf_release(&out, &res->body_len);
}

/* ---------------------------------------------------------- metadata */

static int handle_v2_server(api_call *call) {
    api_buf_puts(&call->out, "{\"name\":\"attnd\",\"version\":");
    api_buf_json_string(&call->out, ATTND_VERSION, strlen(ATTND_VERSION));
    api_buf_puts(&call->out, ",\"extensions\":[\"binary_tensor_data\"]}");
    return 0;
}

static void put_metadata_tensor(api_buf *out, const char *name,
                                const char *datatype, unsigned rank) {
    api_buf_puts(out, "{\"name\":\"");
    api_buf_puts(out, name);
    api_buf_puts(out, "\",\"datatype\":\"");
    api_buf_puts(out, datatype);
    api_buf_puts(out, "\",\"shape\":[");
    if (rank == 0)
        api_buf_putc(out, '1');
    for (unsigned i = 0; i < rank; i++)
        api_buf_puts(out, i ? ",-1" : "-1");
    api_buf_puts(out, "]}");
}

static int handle_v2_model(api_call *call) {
    const kserve_model *m = model_of(call);
    const api_answer_table *t = m ? m->route->answer : NULL;
    if (!t)
        return api_fail(&call->problem, API_E_NOT_FOUND, NULL, "no model");
    api_buf *out = &call->out;
    api_buf_puts(out, "{\"name\":\"");
    api_buf_puts(out, m->name);
    api_buf_puts(out, "\",\"platform\":\"attnd\",\"inputs\":[");
    for (size_t i = 0; i < m->n_inputs; i++) {
        if (i)
            api_buf_putc(out, ',');
        put_metadata_tensor(out, m->inputs[i].name, m->inputs[i].datatype,
                            m->inputs[i].rank);
    }
    api_buf_puts(out, "],\"outputs\":[");
    for (size_t i = 0; i < t->n; i++) {
        const api_answer_field *f = &t->fields[i];
        if (i)
            api_buf_putc(out, ',');
        put_metadata_tensor(out, f->name, f->int64 ? "INT64" : "FP64", f->rank);
    }
    api_buf_puts(out, "]}");
    return 0;
}

static int handle_v2_model_ready(api_call *call) {
    const kserve_model *m = model_of(call);
    if (!m)
        return api_fail(&call->problem, API_E_NOT_FOUND, NULL, "no model");
    /* a model is ready when the server is (/v2/health/ready) */
    int ready = api_is_ready();
    call->status = ready ? 200 : 503;
    api_buf_puts(&call->out, "{\"name\":\"");
    api_buf_puts(&call->out, m->name);
    api_buf_puts(&call->out,
                 ready ? "\",\"ready\":true}" : "\",\"ready\":false}");
    return 0;
}

/* ------------------------------------------------ inference: handler */

static int handle_v2_infer(api_call *call) {
    kserve_infer k;
    memset(&k, 0, sizeof k);
    k.model = model_of(call);
    k.request = call->body;
    k.doc = call->doc;
    k.p = &call->problem;
    if (!k.model)
        return api_fail(k.p, API_E_NOT_FOUND, NULL, "no model");
    /* 1. the envelope, phase by phase, then the bytes after it (every
     * input's name is known and given once, so they fit k.bin) */
    size_t n_inputs = json_array_size(json_object_get(k.request, "inputs"));
    if (api_kserve_check_model_name(&k) || api_kserve_check_unknown(&k) ||
        api_kserve_check_missing(&k) || api_kserve_check_types(&k) ||
        api_kserve_check_values(&k) ||
        kserve_binary_inputs(k.request, call->binary, call->binary_len,
                             call->limits->max_elements, k.bin,
                             n_inputs < INPUTS_MAX ? n_inputs : INPUTS_MAX,
                             k.p))
        return -1;
    /* 2. the route's request; the route checks and computes it */
    api_result answer;
    memset(&answer, 0, sizeof answer);
    api_fastpath_begin(&k.bytes, k.doc);
    int rc = api_kserve_translate(&k);
    if (rc == 0) {
        rc = api_invoke_result(call, k.model->route, k.body, &k.bytes, NULL,
                               &answer);
        if (rc)
            api_kserve_map_pointer(&k, k.p);
    }
    /* 3. its answer as outputs, large ones streamed (stream.h) */
    if (rc == 0) {
        rc = api_kserve_write_response(call, &k, &answer, &answer.arena);
        api_stream_hand_over(&call->out, &answer.arena);
    }
    api_result_free(&answer);
    json_decref(k.body);
    api_fastpath_release(&k.bytes);
    return rc ? -1 : 0;
}

/* The route table's entries (route.h). */
const api_route api_route_v2_server = {
    .method = "GET",
    .path = "/v2",
    .handler = handle_v2_server,
    .flags = 0,
};

const api_route api_route_v2_model = {
    .method = "GET",
    .path = "/v2/models/{model}",
    .handler = handle_v2_model,
    .flags = 0,
};

const api_route api_route_v2_model_ready = {
    .method = "GET",
    .path = "/v2/models/{model}/ready",
    .handler = handle_v2_model_ready,
    .flags = 0,
};

/* Each input's data is read by the fast path (fastpath.h): check_types,
 * translate_input and nested_leaf resolve its placeholders, and the
 * route's tensor codec reads the numbers. */
static const char *const *infer_fast_paths(void) {
    static const char *const paths[] = {"inputs/*/data", NULL};
    return paths;
}

const api_route api_route_v2_infer = {
    .method = "POST",
    .path = "/v2/models/{model}/infer",
    .handler = handle_v2_infer,
    .flags =
        API_ROUTE_JSON_BODY | API_ROUTE_COMPUTES | API_ROUTE_TENSOR_PROTOCOL,
    .fast_paths = infer_fast_paths,
};

/* The front's place in api/registry.c's list (front.h). */
const api_front api_front_kserve = {
    .owns = api_kserve_path,
    .respond_error = api_kserve_respond_error,
    .frames_body = api_kserve_frames_body,
    .check_body_type = api_kserve_check_body_type,
    .header_length = api_kserve_header_length,
    .explain_not_json = api_kserve_explain_not_json,
};
