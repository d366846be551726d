/*
 * openapi.c — embeds api/fronts/openapi.json with the assembler's .incbin
 * (GNU as and clang's integrated assembler both have it), followed by a
 * NUL. The path is relative to the directory make runs in; the Makefile
 * makes this object depend on the JSON file.
 */
#include "openapi.h"

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
