/*
 * test_api_openapi.c — api/fronts/openapi.json is the machine-readable
 * contract: its paths are exactly the route table (with each route's method),
 * its problem code enum is exactly the error enum, and GET /openapi.json serves
 * the embedded bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "api.h"
#include "fields.h"
#include "openapi.h"
#include "problem.h"
#include "route.h"

static json_t *document(void) {
    size_t len;
    const char *doc = api_openapi_json(&len);
    assert_non_null(doc);
    assert_int_equal(doc[len], '\0');
    json_error_t err;
    json_t *j = json_loadb(doc, len, 0, &err);
    if (!j)
        fail_msg("api/fronts/openapi.json: %s (line %d)", err.text, err.line);
    return j;
}

static void test_version_and_info(void **state) {
    (void)state;
    json_t *j = document();
    assert_string_equal(json_string_value(json_object_get(j, "openapi")),
                        "3.1.0");
    assert_non_null(json_object_get(json_object_get(j, "info"), "title"));
    json_decref(j);
}

static void test_paths_are_the_route_table(void **state) {
    (void)state;
    json_t *j = document();
    json_t *paths = json_object_get(j, "paths");
    assert_int_equal(json_object_size(paths), api_route_count());
    for (size_t i = 0; i < api_route_count(); i++) {
        const api_route *r = api_route_at(i);
        json_t *item = json_object_get(paths, r->path);
        if (!item)
            fail_msg("route %s %s is missing from openapi.json", r->method,
                     r->path);
        /* exactly one operation, the route's method in lower case */
        char method[8];
        size_t n = strlen(r->method);
        for (size_t k = 0; k <= n; k++)
            method[k] = (char)(r->method[k] | (k < n ? 0x20 : 0));
        if (!json_object_get(item, method) || json_object_size(item) != 1)
            fail_msg("%s: openapi.json should have only \"%s\"", r->path,
                     method);
        /* every operation documents 200 and its errors */
        json_t *responses =
            json_object_get(json_object_get(item, method), "responses");
        assert_non_null(json_object_get(responses, "200"));
        assert_non_null(json_object_get(responses, "404"));
        assert_non_null(json_object_get(responses, "405"));
        /* an ambiguous request head (RFC 9112), a request sent too slowly
         * and a body over --max-body-bytes, on every route */
        assert_non_null(json_object_get(responses, "400"));
        assert_non_null(json_object_get(responses, "408"));
        assert_non_null(json_object_get(responses, "413"));
        if ((r->flags & API_ROUTE_JSON_BODY)) {
            assert_non_null(json_object_get(responses, "413"));
            assert_non_null(json_object_get(responses, "415"));
            assert_non_null(json_object_get(responses, "422"));
        }
    }
    json_decref(j);
}

static void test_codes_are_the_error_enum(void **state) {
    (void)state;
    json_t *j = document();
    json_t *codes = json_object_get(
        json_object_get(
            json_object_get(
                json_object_get(
                    json_object_get(json_object_get(j, "components"),
                                    "schemas"),
                    "Problem"),
                "properties"),
            "code"),
        "enum");
    assert_true(json_is_array(codes));
    /* every code's name, each once (API_E_NO_ROOM is "overloaded" too) */
    size_t names = 0;
    for (int c = API_E_NONE + 1; c < API_E_COUNT; c++) {
        int earlier = 0;
        for (int k = API_E_NONE + 1; k < c; k++)
            earlier |= !strcmp(api_error_name((api_error)k),
                               api_error_name((api_error)c));
        names += !earlier;
    }
    assert_int_equal(json_array_size(codes), names);
    for (int c = API_E_NONE + 1; c < API_E_COUNT; c++) {
        const char *name = api_error_name((api_error)c);
        int found = 0;
        for (size_t i = 0; i < json_array_size(codes); i++)
            found |= !strcmp(json_string_value(json_array_get(codes, i)), name);
        if (!found)
            fail_msg("error code %s is missing from the Problem enum", name);
    }
    json_decref(j);
}

/* The JSON request body schema documented for POST path. */
static json_t *request_schema(json_t *paths, const char *path) {
    json_t *post = json_object_get(json_object_get(paths, path), "post");
    json_t *content =
        json_object_get(json_object_get(post, "requestBody"), "content");
    return json_object_get(json_object_get(content, "application/json"),
                           "schema");
}

/* A path to send for the route: a template's {model} becomes a model. */
static const char *example_path(const char *route, char *buf, size_t cap) {
    const char *at = strstr(route, "{model}");
    if (!at)
        return route;
    snprintf(buf, cap, "%.*sattention_dot%s", (int)(at - route), route,
             at + strlen("{model}"));
    return buf;
}

/* Each documented request schema lists exactly the fields its handler
 * knows: an unknown one is refused (422 unknown_field), a listed one is
 * not called unknown. */
static void test_request_fields_match_handlers(void **state) {
    (void)state;
    json_t *j = document();
    json_t *paths = json_object_get(j, "paths");
    for (size_t i = 0; i < api_route_count(); i++) {
        const api_route *r = api_route_at(i);
        if (!(r->flags & API_ROUTE_JSON_BODY))
            continue;
        json_t *props =
            json_object_get(request_schema(paths, r->path), "properties");
        assert_true(json_object_size(props) > 3);
        char path_buf[128];
        const char *path = example_path(r->path, path_buf, sizeof path_buf);
        const char *key;
        json_t *v;
        json_object_foreach(props, key, v) {
            /* a body with only that field: the first error must not be
             * unknown_field */
            char body[256];
            snprintf(body, sizeof body, "{\"%s\": null}", key);
            api_request req = {.method = "POST",
                               .path = path,
                               .content_type = "application/json",
                               .body = body,
                               .body_len = strlen(body)};
            api_response res;
            api_handle(&req, &res);
            if (strstr(res.body, "unknown_field"))
                fail_msg("%s: documented field %s is refused: %s", r->path, key,
                         res.body);
            api_response_free(&res);
        }
        /* and the handler knows no field the document leaves out: its
         * unknown_field detail lists "Known fields: a, b, ..." */
        const char *bogus = "{\"zzz_not_a_field\": 1}";
        api_request req = {.method = "POST",
                           .path = path,
                           .content_type = "application/json",
                           .body = bogus,
                           .body_len = strlen(bogus)};
        api_response res;
        api_handle(&req, &res);
        json_t *problem = json_loadb(res.body, res.body_len, 0, NULL);
        const char *detail =
            json_string_value(json_object_get(problem, "detail"));
        if (!detail) /* the Open Inference Protocol's {"error": "..."} */
            detail = json_string_value(json_object_get(problem, "error"));
        const char *known = detail ? strstr(detail, "Known fields: ") : NULL;
        assert_non_null(known);
        size_t listed = 0;
        char name[64];
        for (const char *s = known + strlen("Known fields: "); *s;) {
            size_t n = strcspn(s, ", ");
            assert_true(n > 0 && n < sizeof name);
            memcpy(name, s, n);
            name[n] = '\0';
            if (!json_object_get(props, name))
                fail_msg("%s: field %s is not in openapi.json", r->path, name);
            listed++;
            s += n;
            s += strspn(s, ", ");
        }
        assert_int_equal(listed, json_object_size(props));
        json_decref(problem);
        api_response_free(&res);
    }
    json_decref(j);
}

/* The request body documented for a route with a field table is exactly
 * that table: the same names, in the table's order, and the same required
 * list. */
static void test_request_schemas_are_the_field_tables(void **state) {
    (void)state;
    json_t *j = document();
    json_t *paths = json_object_get(j, "paths");
    size_t checked = 0;
    for (size_t i = 0; i < api_route_count(); i++) {
        const api_route *r = api_route_at(i);
        if (!r->request)
            continue;
        json_t *schema = request_schema(paths, r->path);
        json_t *props = json_object_get(schema, "properties");
        json_t *required = json_object_get(schema, "required");
        if (json_object_size(props) != r->request->n)
            fail_msg("%s: openapi.json documents %zu fields, the table has "
                     "%zu",
                     r->path, json_object_size(props), r->request->n);
        const char *key;
        json_t *v;
        size_t k = 0, n_required = 0;
        json_object_foreach(props, key, v) {
            const api_field *f = &r->request->fields[k++];
            if (strcmp(key, f->name) != 0)
                fail_msg("%s: field %zu is %s in openapi.json, %s in the "
                         "table",
                         r->path, k, key, f->name);
        }
        for (size_t f = 0; f < r->request->n; f++) {
            const api_field *field = &r->request->fields[f];
            int listed = 0;
            for (size_t q = 0; q < json_array_size(required); q++)
                listed |=
                    !strcmp(json_string_value(json_array_get(required, q)),
                            field->name);
            if (listed != field->required)
                fail_msg("%s: %s is %srequired in openapi.json but %srequired "
                         "in the table",
                         r->path, field->name, listed ? "" : "not ",
                         field->required ? "" : "not ");
            n_required += field->required;
        }
        assert_int_equal(json_array_size(required), n_required);
        checked++;
    }
    assert_true(checked >= 5); /* dot, additive, multihead, nw, softmax */
    json_decref(j);
}

static void test_served_document(void **state) {
    (void)state;
    api_request req = {.method = "GET", .path = "/openapi.json"};
    api_response res;
    api_handle(&req, &res);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.content_type, "application/json");
    size_t len;
    const char *doc = api_openapi_json(&len);
    assert_int_equal(res.body_len, len);
    assert_memory_equal(res.body, doc, len);
    api_response_free(&res);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_and_info),
        cmocka_unit_test(test_paths_are_the_route_table),
        cmocka_unit_test(test_codes_are_the_error_enum),
        cmocka_unit_test(test_request_fields_match_handlers),
        cmocka_unit_test(test_request_schemas_are_the_field_tables),
        cmocka_unit_test(test_served_document),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
