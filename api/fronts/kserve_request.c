/*
 * kserve_request.c — the protocol's inference request as the route's own
 * (kserve_internal.h): inputs become the route's tensor fields and
 * parameters its other fields, each checked in the protocol's terms, and
 * every error pointed into the request as sent (/inputs/2/data/5).
 */
#include <string.h>

#include "fastpath.h"
#include "foreign_names.h"
#include "kserve_binary.h"
#include "kserve_internal.h"
#include "suggest.h"

/* ------------------------------------------- inference: the request */

static int model_input(const kserve_model *m, const char *name) {
    for (size_t i = 0; i < m->n_inputs; i++)
        if (!strcmp(m->inputs[i].name, name))
            return (int)i;
    return -1;
}

static int model_param(const kserve_model *m, const char *name) {
    for (size_t i = 0; i < m->n_params; i++)
        if (!strcmp(m->params[i], name))
            return (int)i;
    return -1;
}

/* unknown_field for a key of obj outside names (pointer base/key). */
static int unknown_keys(const json_t *obj, const char *const *names, size_t n,
                        const char *base, const char *what, api_problem *p) {
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        int known = 0;
        for (size_t i = 0; i < n && !known; i++)
            known = !strcmp(key, names[i]);
        if (known)
            continue;
        api_pointer ptr;
        api_pointer_init(&ptr, base);
        api_pointer_push_key(&ptr, key, strlen(key));
        char list[256];
        api_join_names(list, sizeof list, names, n);
        char hint[API_SUGGEST_TEXT];
        return api_fail(
            p, API_E_UNKNOWN_FIELD, ptr.s,
            "unknown field `%s` in %s%s Known fields: %s", key, what,
            api_did_you_mean(hint, key, strlen(key), names, n), list);
    }
    return 0;
}

/* The i-th element of the array member `name` of obj when it is an
 * object, else NULL. */
static const json_t *object_at(const json_t *obj, const char *name, size_t i) {
    const json_t *e = json_array_get(json_object_get(obj, name), i);
    return json_is_object(e) ? e : NULL;
}

/* The request's parameters of the front itself, not of the route: the
 * binary tensor data extension's (kserve_binary.h). */
static int is_protocol_param(const char *key) {
    return !strcmp(key, "binary_data_output") ||
           !strcmp(key, "output_datatype");
}

int api_kserve_check_model_name(const kserve_infer *k) {
    const json_t *name = api_field_value(k->request, "model_name");
    if (!json_is_string(name) ||
        (json_string_length(name) == strlen(k->model->name) &&
         !strcmp(json_string_value(name), k->model->name)))
        return 0;
    if (strlen(json_string_value(name)) != json_string_length(name))
        return api_fail(k->p, API_E_INVALID_VALUE, "/model_name",
                        "model_name holds a NUL byte (\\u0000); the path "
                        "names %s",
                        k->model->name);
    return api_fail(k->p, API_E_INVALID_VALUE, "/model_name",
                    "the body names model %.100s, the path %s: send the "
                    "request to /v2/models/%.100s/infer, or leave model_name "
                    "out",
                    json_string_value(name), k->model->name,
                    json_string_value(name));
}

/* unknown_field for a name that holds a NUL byte (\u0000): no name does,
 * and the text before it must not pass for one. */
static int nul_in_name(api_problem *p, const char *pointer, const char *what) {
    return api_fail(p, API_E_UNKNOWN_FIELD, pointer,
                    "%s holds a NUL byte (\\u0000), which no name of "
                    "this front has",
                    what);
}

/* A route's field sent as a member of the inference request itself, as
 * the route's own body has it ({"queries": ...}), or a protocol parameter
 * there ("binary_data_output": true): unknown_field naming where it goes
 * on this front, an input or a parameter. */
static int misplaced_route_fields(const kserve_model *m, const json_t *req,
                                  api_problem *p) {
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)req, key, v) {
        api_pointer ptr;
        api_pointer_init(&ptr, "");
        api_pointer_push_key(&ptr, key, strlen(key));
        for (size_t i = 0; i < m->n_inputs; i++)
            if (!strcmp(key, m->inputs[i].name))
                return api_fail(
                    p, API_E_UNKNOWN_FIELD, ptr.s,
                    "`%s` is an input of %s: on this front a tensor goes in "
                    "\"inputs\": [{\"name\": \"%s\", \"shape\", "
                    "\"datatype\", \"data\"}] (GET /v2/models/%s lists "
                    "them)",
                    key, m->name, key, m->name);
        if (is_protocol_param(key))
            return api_fail(p, API_E_UNKNOWN_FIELD, ptr.s,
                            "`%s` is a parameter of the request: it goes in "
                            "\"parameters\": {\"%s\": ...}",
                            key, key);
        for (size_t i = 0; i < m->n_params; i++)
            if (!strcmp(key, m->params[i]))
                return api_fail(p, API_E_UNKNOWN_FIELD, ptr.s,
                                "`%s` is a parameter of %s: on this front "
                                "it goes in \"parameters\": {\"%s\": ...}",
                                key, m->name, key);
    }
    return 0;
}

/* unknown_field for the parameter `key` (at pointer), which is neither
 * the route's nor the front's: where it goes instead, when it is an input,
 * tensor_format, fit or a name of PyTorch's, else the parameters there
 * are. */
static int unknown_parameter(const kserve_model *m, const char *key,
                             const char *pointer, api_problem *p) {
    if (model_input(m, key) >= 0)
        return api_fail(p, API_E_UNKNOWN_FIELD, pointer,
                        "%s is a tensor: send it in inputs as "
                        "{\"name\": \"%s\", \"shape\", \"datatype\", "
                        "\"data\"}",
                        key, key);
    if (!strcmp(key, "tensor_format"))
        return api_fail(p, API_E_UNKNOWN_FIELD, pointer,
                        "outputs always carry a shape and flat "
                        "row-major data; tensor_format has no "
                        "meaning here");
    if (!strcmp(key, "fit") && model_param(m, "fit_epochs") >= 0)
        return api_fail(p, API_E_UNKNOWN_FIELD, pointer,
                        "parameters are flat on this front: fit's "
                        "members are the parameters fit_epochs, fit_lr "
                        "and fit_data");
    /* PyTorch's names: the route's fields are its parameters and its
     * inputs here */
    const char *fields[PARAMS_MAX + INPUTS_MAX];
    size_t n_fields = 0;
    for (size_t i = 0; i < m->n_params; i++)
        fields[n_fields++] = m->params[i];
    for (size_t i = 0; i < m->n_inputs; i++)
        fields[n_fields++] = m->inputs[i].name;
    const char *foreign = api_foreign_name(key, fields, n_fields);
    if (foreign)
        return api_fail(p, API_E_UNKNOWN_FIELD, pointer,
                        "unknown parameter `%s` for %s: `%s` %s", key, m->name,
                        key, foreign);
    /* the route's parameters, then the front's own */
    const char *known[PARAMS_MAX + 2];
    size_t n_known = 0;
    for (size_t i = 0; i < m->n_params; i++)
        known[n_known++] = m->params[i];
    known[n_known++] = "binary_data_output";
    known[n_known++] = "output_datatype";
    char hint[API_SUGGEST_TEXT], list[640];
    api_join_names(list, sizeof list, known, n_known);
    return api_fail(p, API_E_UNKNOWN_FIELD, pointer,
                    "unknown parameter `%s` for %s%s Its parameters: %s "
                    "(GET /v2/models/%s lists the inputs)",
                    key, m->name,
                    api_did_you_mean(hint, key, strlen(key), known, n_known),
                    list, m->name);
}

/* unknown_field in each input: its members, its parameters' and its
 * name, which must be one of the model's inputs. */
static int unknown_in_inputs(const kserve_model *m, const json_t *req,
                             api_problem *p) {
    static const char *const input_keys[] = {"name", "shape", "datatype",
                                             "parameters", "data"};
    static const char *const input_params[] = {"binary_data_size"};
    for (size_t i = 0; object_at(req, "inputs", i); i++) {
        const json_t *in = object_at(req, "inputs", i);
        char base[64];
        snprintf(base, sizeof base, "/inputs/%zu", i);
        if (unknown_keys(in, input_keys, 5, base, "an input", p))
            return -1;
        const json_t *ip = json_object_get(in, "parameters");
        snprintf(base, sizeof base, "/inputs/%zu/parameters", i);
        if (json_is_object(ip) &&
            unknown_keys(ip, input_params, 1, base, "an input's parameters", p))
            return -1;
        const json_t *name = json_object_get(in, "name");
        const char *s = json_string_value(name);
        int whole = s && strlen(s) == json_string_length(name);
        if (!s || (whole && model_input(m, s) >= 0))
            continue;
        snprintf(base, sizeof base, "/inputs/%zu/name", i);
        if (!whole)
            return nul_in_name(p, base, "an input's name");
        if (strlen(s) == json_string_length(name) && model_param(m, s) >= 0)
            return api_fail(p, API_E_UNKNOWN_FIELD, base,
                            "%s is not a tensor: send it in parameters "
                            "({\"parameters\": {\"%s\": ...}})",
                            s, s);
        const char *names[INPUTS_MAX];
        for (size_t j = 0; j < m->n_inputs; j++)
            names[j] = m->inputs[j].name;
        char hint[API_SUGGEST_TEXT];
        return api_fail(
            p, API_E_UNKNOWN_FIELD, base,
            "%s has no input `%.100s`%s GET /v2/models/%s lists "
            "its inputs",
            m->name, s,
            api_did_you_mean(hint, s, strlen(s), names, m->n_inputs), m->name);
    }
    return 0;
}

/* unknown_field in each requested output: its members, its parameters'
 * and its name, which must be a member of the route's answer. */
static int unknown_in_outputs(const kserve_model *m, const json_t *req,
                              api_problem *p) {
    static const char *const output_keys[] = {"name", "parameters"};
    static const char *const output_params[] = {"binary_data", "datatype"};
    const api_answer_table *t = m->route->answer;
    for (size_t i = 0; object_at(req, "outputs", i); i++) {
        const json_t *out = object_at(req, "outputs", i);
        char base[64];
        snprintf(base, sizeof base, "/outputs/%zu", i);
        if (unknown_keys(out, output_keys, 2, base, "a requested output", p))
            return -1;
        const json_t *op = json_object_get(out, "parameters");
        snprintf(base, sizeof base, "/outputs/%zu/parameters", i);
        if (json_is_object(op) &&
            unknown_keys(op, output_params, 2, base,
                         "a requested output's parameters", p))
            return -1;
        const json_t *name = json_object_get(out, "name");
        const char *s = json_string_value(name);
        int whole = s && strlen(s) == json_string_length(name);
        if (!s || (whole && api_answers_field(t, s, strlen(s))))
            continue;
        snprintf(base, sizeof base, "/outputs/%zu/name", i);
        if (!whole)
            return nul_in_name(p, base, "an output's name");
        const char *names[32];
        for (size_t j = 0; j < t->n && j < 32; j++)
            names[j] = t->fields[j].name;
        char hint[API_SUGGEST_TEXT];
        return api_fail(
            p, API_E_UNKNOWN_FIELD, base,
            "%s has no output `%.100s`%s GET /v2/models/%s lists "
            "its outputs",
            m->name, s,
            api_did_you_mean(hint, s, strlen(s), names, t->n < 32 ? t->n : 32),
            m->name);
    }
    return 0;
}

int api_kserve_check_unknown(const kserve_infer *k) {
    /* model_name: Triton's clients repeat the path's model in the body */
    static const char *const root[] = {"id", "model_name", "parameters",
                                       "inputs", "outputs"};
    const kserve_model *m = k->model;
    const json_t *req = k->request;
    api_problem *p = k->p;
    if (misplaced_route_fields(m, req, p) ||
        unknown_keys(req, root, 5, "", "the inference request", p))
        return -1;
    const json_t *params = json_object_get(req, "parameters");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)params, key, v) {
        if (model_param(m, key) >= 0 || is_protocol_param(key))
            continue;
        api_pointer ptr;
        api_pointer_init(&ptr, "/parameters");
        api_pointer_push_key(&ptr, key, strlen(key));
        return unknown_parameter(m, key, ptr.s, p);
    }
    return unknown_in_inputs(m, req, p) || unknown_in_outputs(m, req, p) ? -1
                                                                         : 0;
}

int api_kserve_check_missing(const kserve_infer *k) {
    static const char *const input_keys[] = {"name", "shape", "datatype",
                                             "data"};
    const json_t *req = k->request;
    if (!api_field_value(req, "inputs"))
        return api_fail(k->p, API_E_MISSING_FIELD, "/inputs",
                        "an inference request needs \"inputs\": [{\"name\", "
                        "\"shape\", \"datatype\", \"data\"}, ...]");
    for (size_t i = 0; object_at(req, "inputs", i); i++)
        for (size_t j = 0; j < 4; j++) {
            const json_t *in = object_at(req, "inputs", i);
            if (api_field_value(in, input_keys[j]) ||
                (j == 3 && kserve_binary_is_input(in)))
                continue;
            char pointer[64];
            snprintf(pointer, sizeof pointer, "/inputs/%zu/%s", i,
                     input_keys[j]);
            return api_fail(k->p, API_E_MISSING_FIELD, pointer,
                            "each input needs \"name\", \"shape\", "
                            "\"datatype\" and \"data\" (or, for bytes after "
                            "the JSON header, \"parameters\": "
                            "{\"binary_data_size\"}); this one has no \"%s\"",
                            input_keys[j]);
        }
    for (size_t i = 0; object_at(req, "outputs", i); i++) {
        if (api_field_value(object_at(req, "outputs", i), "name"))
            continue;
        char pointer[64];
        snprintf(pointer, sizeof pointer, "/outputs/%zu/name", i);
        return api_fail(k->p, API_E_MISSING_FIELD, pointer,
                        "a requested output needs its \"name\"");
    }
    return 0;
}

static int type_error(api_problem *p, const char *pointer, const char *want,
                      const json_t *v) {
    return api_fail(p, API_E_WRONG_TYPE, pointer, "%s must be %s; got %s",
                    pointer, want, api_json_kind(v));
}

int api_kserve_check_types(const kserve_infer *k) {
    const json_t *req = k->request;
    api_problem *p = k->p;
    const json_t *v = api_field_value(req, "id");
    if (v && !json_is_string(v))
        return type_error(p, "/id", "a string", v);
    v = api_field_value(req, "model_name");
    if (v && !json_is_string(v))
        return type_error(p, "/model_name", "a string", v);
    v = api_field_value(req, "parameters");
    if (v && !json_is_object(v))
        return type_error(p, "/parameters", "an object", v);
    v = json_object_get(req, "inputs");
    if (!json_is_array(v))
        return type_error(p, "/inputs", "an array of input objects", v);
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *in = json_array_get(v, i);
        char pointer[64];
        snprintf(pointer, sizeof pointer, "/inputs/%zu", i);
        if (!json_is_object(in))
            return type_error(p, pointer,
                              "an object {\"name\", \"shape\", \"datatype\", "
                              "\"data\"}",
                              in);
        static const struct {
            const char *key, *want;
        } members[] = {{"name", "a string"},
                       {"shape", "an array of integers"},
                       {"datatype", "a string"},
                       {"parameters", "an object"},
                       {"data", "an array (flat row-major, or nested)"}};
        for (size_t j = 0; j < 5; j++) {
            const json_t *m = api_field_value(in, members[j].key);
            int ok = !m || (j == 0 || j == 2 ? json_is_string(m)
                            : j == 3         ? json_is_object(m)
                                             : json_is_array(m) ||
                                           api_fastpath_find(k->doc, m));
            if (ok)
                continue;
            snprintf(pointer, sizeof pointer, "/inputs/%zu/%s", i,
                     members[j].key);
            return type_error(p, pointer, members[j].want, m);
        }
    }
    v = api_field_value(req, "outputs");
    if (v && !json_is_array(v))
        return type_error(p, "/outputs", "an array of {\"name\"} objects", v);
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *out = json_array_get(v, i);
        char pointer[64];
        snprintf(pointer, sizeof pointer, "/outputs/%zu", i);
        if (!json_is_object(out))
            return type_error(p, pointer, "an object {\"name\"}", out);
        const json_t *name = json_object_get(out, "name");
        const json_t *op = api_field_value(out, "parameters");
        snprintf(pointer, sizeof pointer, "/outputs/%zu/name", i);
        if (!json_is_string(name))
            return type_error(p, pointer, "a string", name);
        snprintf(pointer, sizeof pointer, "/outputs/%zu/parameters", i);
        if (op && !json_is_object(op))
            return type_error(p, pointer, "an object", op);
    }
    return kserve_binary_check_types(req, p);
}

int api_kserve_check_values(const kserve_infer *k) {
    const json_t *req = k->request;
    const json_t *inputs = json_object_get(req, "inputs");
    for (size_t i = 0; i < json_array_size(inputs); i++) {
        const json_t *in = json_array_get(inputs, i);
        const json_t *dt = json_object_get(in, "datatype");
        char pointer[64];
        if (!api_datatype_parse(json_string_value(dt),
                                json_string_length(dt))) {
            snprintf(pointer, sizeof pointer, "/inputs/%zu/datatype", i);
            return api_fail(k->p, API_E_INVALID_VALUE, pointer,
                            "datatype is FP64, FP32, INT64, INT32 or BOOL "
                            "(values are read as doubles either way); got "
                            "%.40s",
                            api_string_text(dt));
        }
        const char *name = json_string_value(json_object_get(in, "name"));
        for (size_t j = 0; j < i; j++)
            if (!strcmp(name, json_string_value(json_object_get(
                                  json_array_get(inputs, j), "name")))) {
                snprintf(pointer, sizeof pointer, "/inputs/%zu/name", i);
                return api_fail(k->p, API_E_INVALID_VALUE, pointer,
                                "input %s is given twice (also at "
                                "/inputs/%zu)",
                                name, j);
            }
    }
    const json_t *outputs = api_field_value(req, "outputs");
    for (size_t i = 0; i < json_array_size(outputs); i++) {
        const char *name = json_string_value(
            json_object_get(json_array_get(outputs, i), "name"));
        for (size_t j = 0; j < i; j++)
            if (!strcmp(name, json_string_value(json_object_get(
                                  json_array_get(outputs, j), "name")))) {
                char pointer[64];
                snprintf(pointer, sizeof pointer, "/outputs/%zu/name", i);
                return api_fail(k->p, API_E_INVALID_VALUE, pointer,
                                "output %s is asked for twice", name);
            }
    }
    return kserve_binary_check_values(req, k->p);
}

/* Append the leaves of nested data to flat in document order; arrays
 * nested deeper than any tensor's rank -> wrong_type. */
static int flatten(json_t *flat, const json_t *a, size_t depth,
                   api_pointer *ptr, api_problem *p) {
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *e = json_array_get(a, i);
        if (!json_is_array(e)) {
            if (json_array_append(flat, e))
                return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
            continue;
        }
        size_t mark = api_pointer_push_index(ptr, i);
        if (depth >= API_SHAPE_MAX)
            return api_fail(p, API_E_WRONG_TYPE, ptr->s,
                            "data nests arrays deeper than a tensor's rank "
                            "(at most %d)",
                            API_SHAPE_MAX);
        if (flatten(flat, e, depth + 1, ptr, p))
            return -1;
        api_pointer_pop(ptr, mark);
    }
    return 0;
}

static int any_array(const json_t *a) {
    for (size_t i = 0; i < json_array_size(a); i++)
        if (json_is_array(json_array_get(a, i)))
            return 1;
    return 0;
}

static int nested_leaf(const api_fastpath *doc, const json_t *a, size_t *k,
                       api_pointer *ptr);

/* A BOOL input's JSON data (flat, in document order) as the numbers 1
 * and 0; an entry that is not true or false -> wrong_type at it (data as
 * sent: nested or flat). Returns the new array, or NULL (p set). */
static json_t *bools_as_numbers(const api_fastpath *doc, const json_t *flat,
                                const json_t *data, size_t input,
                                api_problem *p) {
    const api_fastpath_array *fa = api_fastpath_find(doc, flat);
    size_t n = fa ? fa->count : json_array_size(flat);
    json_t *numbers = json_array();
    for (size_t i = 0; numbers && i < n; i++) {
        const json_t *e = fa ? NULL : json_array_get(flat, i);
        if (json_is_boolean(e)) {
            if (json_array_append_new(numbers,
                                      json_integer(json_is_true(e) ? 1 : 0))) {
                json_decref(numbers);
                numbers = NULL;
            }
            continue;
        }
        api_pointer ptr;
        api_pointer_init(&ptr, "/inputs");
        api_pointer_push_index(&ptr, input);
        api_pointer_push_key(&ptr, "data", 4);
        size_t at = i;
        const api_fastpath_array *fd = api_fastpath_find(doc, data);
        if (fd ? fd->rank > 1 : any_array(data))
            nested_leaf(doc, data, &at, &ptr); /* the entry as nested */
        else
            api_pointer_push_index(&ptr, i);
        api_fail(p, API_E_WRONG_TYPE, ptr.s,
                 "a BOOL input's data are true or false; %s is %s", ptr.s,
                 fa || json_is_number(e) ? "a number" : api_json_kind(e));
        json_decref(numbers);
        return NULL;
    }
    if (!numbers)
        api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    return numbers;
}

/* The route's tensor field for input i: {"shape", "data"} with data flat,
 * or the number itself for a scalar valid_lens of unbatched input. */
static int translate_input(kserve_infer *k, size_t i, int unbatched) {
    const json_t *in = json_array_get(json_object_get(k->request, "inputs"), i);
    const char *name = json_string_value(json_object_get(in, "name"));
    kserve_source *src = &k->src[model_input(k->model, name)];
    src->input = in;
    src->index = i;
    json_t *shape = json_object_get(in, "shape");
    json_t *data = json_object_get(in, "data");
    /* numbers the fast path read: already flat in row-major order, for
     * the route's tensor codec (tensor.h) as for nested data flattened;
     * bytes after the header: read from there by the codec */
    const kserve_binary_input *bin = &k->bin[i];
    json_t *flat = NULL;
    if (bin->binary) {
        src->binary = 1;
        flat = api_fastpath_adopt_bytes(&k->bytes, bin->bytes, bin->datatype,
                                        bin->count);
        if (!flat)
            return api_fail(k->p, API_E_INTERNAL, NULL, "out of memory");
        data = flat;
    }
    const api_fastpath_array *fa = api_fastpath_find(&k->bytes, data);
    if (!flat)
        flat = json_incref(data);
    if (fa && !bin->binary) {
        src->nested = fa->rank > 1;
    } else if (!fa && any_array(data)) {
        src->nested = 1;
        json_decref(flat);
        flat = json_array();
        api_pointer ptr;
        api_pointer_init(&ptr, "/inputs");
        api_pointer_push_index(&ptr, i);
        api_pointer_push_key(&ptr, "data", 4);
        if (!flat || flatten(flat, data, 1, &ptr, k->p)) {
            json_decref(flat);
            return -1;
        }
    }
    const char *dt = json_string_value(json_object_get(in, "datatype"));
    if (!bin->binary && !strcmp(dt, "BOOL")) {
        json_t *numbers = bools_as_numbers(&k->bytes, flat, data, i, k->p);
        json_decref(flat);
        if (!numbers)
            return -1;
        flat = numbers;
        fa = NULL;
    }
    json_t *value;
    size_t rank = json_array_size(shape);
    if (!strcmp(name, "valid_lens") && unbatched && rank <= 1 &&
        (rank == 0 || json_number_value(json_array_get(shape, 0)) == 1) &&
        (fa ? fa->count : json_array_size(flat)) == 1) {
        src->scalar = 1;
        if (!fa)
            value = json_incref(json_array_get(flat, 0));
        else if (fa->integers) /* the json_t jansson would have made */
            value = json_integer((json_int_t)api_fastpath_at(fa, 0));
        else
            value = json_real(api_fastpath_at(fa, 0));
    } else {
        if (rank == 0) {
            src->empty_shape = 1;
            shape = json_pack("[i]", 1);
        } else {
            json_incref(shape);
        }
        value = json_pack("{s:o,s:O}", "shape", shape, "data", flat);
    }
    json_decref(flat);
    if (!value || json_object_set_new(k->body, name, value))
        return api_fail(k->p, API_E_INTERNAL, NULL, "out of memory");
    return 0;
}

int api_kserve_translate(kserve_infer *k) {
    const json_t *inputs = json_object_get(k->request, "inputs");
    /* unbatched: queries (or NW's rank-1 tensors, which have no batch)
     * of rank 2 */
    int unbatched = 0;
    for (size_t i = 0; i < json_array_size(inputs); i++) {
        const json_t *in = json_array_get(inputs, i);
        if (!strcmp(json_string_value(json_object_get(in, "name")), "queries"))
            unbatched = json_array_size(json_object_get(in, "shape")) == 2;
    }
    k->body = json_object();
    if (!k->body)
        return api_fail(k->p, API_E_INTERNAL, NULL, "out of memory");
    for (size_t i = 0; i < json_array_size(inputs); i++)
        if (translate_input(k, i, unbatched))
            return -1;
    const json_t *params = api_field_value(k->request, "parameters");
    const char *key;
    json_t *v;
    json_t *fit = NULL;
    json_object_foreach((json_t *)params, key, v) {
        if (is_protocol_param(key))
            continue; /* the outputs' form: write_response */
        if (json_is_null(v))
            continue; /* absent, as everywhere: fit_epochs null fits nothing */
        int rc;
        if (!strncmp(key, "fit_", 4)) {
            if (!fit && !(fit = json_object()))
                return api_fail(k->p, API_E_INTERNAL, NULL, "out of memory");
            rc = json_object_set(fit, key + 4, v);
        } else {
            rc = json_object_set(k->body, key, v);
        }
        if (rc) {
            json_decref(fit);
            return api_fail(k->p, API_E_INTERNAL, NULL, "out of memory");
        }
    }
    if (fit && json_object_set_new(k->body, "fit", fit))
        return api_fail(k->p, API_E_INTERNAL, NULL, "out of memory");
    return 0;
}

/* dst = a + b, cut to fit cap bytes (NUL included). */
static void join(char *dst, size_t cap, const char *a, const char *b) {
    size_t na = strlen(a), nb = strlen(b);
    if (na > cap - 1)
        na = cap - 1;
    if (nb > cap - 1 - na)
        nb = cap - 1 - na;
    memmove(dst, a, na);
    memmove(dst + na, b, nb);
    dst[na + nb] = '\0';
}

/* The pointer of the k-th leaf (document order) of nested data. Returns 1
 * when found. */
static int nested_leaf(const api_fastpath *doc, const json_t *a, size_t *k,
                       api_pointer *ptr) {
    const api_fastpath_array *fa = api_fastpath_find(doc, a);
    if (fa) { /* rectangular: the indices of k in row-major order */
        if (*k >= fa->count)
            return 0;
        size_t idx[API_FASTPATH_RANK_MAX], rest = *k;
        for (size_t i = fa->rank; i-- > 0;) {
            idx[i] = rest % fa->shape[i];
            rest /= fa->shape[i];
        }
        for (size_t i = 0; i < fa->rank; i++)
            api_pointer_push_index(ptr, idx[i]);
        return 1;
    }
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *e = json_array_get(a, i);
        size_t mark = api_pointer_push_index(ptr, i);
        if (json_is_array(e) ? nested_leaf(doc, e, k, ptr) : (*k)-- == 0)
            return 1;
        api_pointer_pop(ptr, mark);
    }
    return 0;
}

/* Replace every `from` in the detail with `to` (as far as it fits). */
static void replace_in_detail(api_problem *p, const char *from,
                              const char *to) {
    size_t nf = strlen(from), nt = strlen(to);
    if (nf == 0)
        return;
    char text[API_DETAIL_MAX];
    size_t w = 0;
    for (const char *s = p->detail; *s && w + 1 < sizeof text;) {
        if (!strncmp(s, from, nf) && w + nt + 1 < sizeof text) {
            memcpy(text + w, to, nt);
            w += nt;
            s += nf;
        } else {
            text[w++] = *s++;
        }
    }
    text[w] = '\0';
    memcpy(p->detail, text, w + 1);
}

/* The detail in the protocol's names: the route's pointer becomes the
 * protocol's, and fit's members (fit.lr) its flattened parameters
 * (fit_lr). */
static void map_detail(api_problem *p, const char *route_pointer) {
    replace_in_detail(p, route_pointer, p->pointer);
    replace_in_detail(p, "fit.", "fit_");
}

void api_kserve_map_pointer(const kserve_infer *k, api_problem *p) {
    if (!p->has_pointer || p->pointer[0] != '/')
        return;
    char field[API_POINTER_MAX];
    const char *rest = p->pointer + 1 + strcspn(p->pointer + 1, "/");
    size_t n = (size_t)(rest - p->pointer - 1);
    memcpy(field, p->pointer + 1, n);
    field[n] = '\0';
    api_pointer ptr;
    int i = model_input(k->model, field);
    if (i >= 0 && !k->src[i].input) {
        api_pointer_init(&ptr, "/inputs");
    } else if (i >= 0) {
        const kserve_source *src = &k->src[i];
        api_pointer_init(&ptr, "/inputs");
        api_pointer_push_index(&ptr, src->index);
        const json_t *data = json_object_get(src->input, "data");
        if (src->binary && (src->scalar || !strncmp(rest, "/data", 5))) {
            /* bytes have no pointer of their own: the input's, and the
             * entry named in the detail */
            char where[API_POINTER_MAX + 48];
            if (!strncmp(rest, "/data/", 6))
                snprintf(where, sizeof where, "entry %s of %s's bytes",
                         rest + 6, ptr.s);
            else
                snprintf(where, sizeof where, "%s's bytes", ptr.s);
            char route_pointer[API_POINTER_MAX];
            memcpy(route_pointer, p->pointer, sizeof route_pointer);
            join(p->pointer, sizeof p->pointer, ptr.s, "");
            replace_in_detail(p, route_pointer, where);
            return;
        }
        if (src->scalar) {
            size_t at = 0;
            api_pointer_push_key(&ptr, "data", 4);
            if (src->nested)
                nested_leaf(k->doc, data, &at, &ptr);
            else
                api_pointer_push_index(&ptr, 0);
        } else if (!strncmp(rest, "/data/", 6) && src->nested) {
            size_t at = (size_t)strtoull(rest + 6, NULL, 10);
            api_pointer_push_key(&ptr, "data", 4);
            nested_leaf(k->doc, data, &at, &ptr);
        } else if (!strncmp(rest, "/shape", 6) && src->empty_shape) {
            api_pointer_push_key(&ptr, "shape", 5);
        } else { /* /shape/j, /data/k of flat data: the same places */
            char joined[API_POINTER_MAX];
            api_pointer_join(joined, sizeof joined, ptr.s, rest);
            api_pointer_init(&ptr, joined);
        }
    } else if (!strcmp(field, "fit")) {
        api_pointer_init(&ptr, "/parameters");
        if (rest[0] == '/') {
            char key[API_POINTER_MAX];
            join(key, sizeof key, "fit_", rest + 1);
            api_pointer_push_key(&ptr, key, strlen(key));
        }
    } else if (field[0]) { /* a parameter, already escaped */
        char joined[API_POINTER_MAX];
        api_pointer_join(joined, sizeof joined, "/parameters", p->pointer);
        api_pointer_init(&ptr, joined);
    } else {
        return;
    }
    char route_pointer[API_POINTER_MAX];
    memcpy(route_pointer, p->pointer, sizeof route_pointer);
    join(p->pointer, sizeof p->pointer, ptr.s, "");
    map_detail(p, route_pointer);
}
