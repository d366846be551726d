/*
 * openapi.c — GET /openapi.json. The document is
 * api/fronts/openapi.json, embedded with the assembler's .incbin
 * (GNU as and clang's integrated assembler both have it), followed by a
 * NUL. The path is relative to the directory make runs in; the Makefile
 * makes this object depend on the JSON file.
 */
#include "openapi.h"

#include "call.h"
#include "route.h"

#ifndef API_OPENAPI_PATH
#define API_OPENAPI_PATH "api/fronts/openapi.json"
#endif

__asm__(".pushsection .rodata,\"a\",@progbits\n"
        ".balign 16\n"
        "api_openapi_doc_start:\n"
        ".incbin \"" API_OPENAPI_PATH "\"\n"
        "api_openapi_doc_end:\n"
        ".byte 0\n"
        ".popsection\n");

extern const char api_openapi_doc_start[];
extern const char api_openapi_doc_end[];

const char *api_openapi_json(size_t *len) {
    *len = (size_t)(api_openapi_doc_end - api_openapi_doc_start);
    return api_openapi_doc_start;
}

static int handle_openapi(api_call *call) {
    size_t len;
    const char *doc = api_openapi_json(&len);
    api_buf_append(&call->out, doc, len);
    return 0;
}

/* The route table's entry (api/routes.c). */
const api_route api_route_openapi = {
    .method = "GET",
    .path = "/openapi.json",
    .handler = handle_openapi,
    .flags = API_ROUTE_OPEN | API_ROUTE_STATIC,
};
