/*
 * fuzz_fastpath.c — libFuzzer target: the numeric-array fast path
 * (api/text/fastpath.h) against jansson alone. Byte 0 picks one of the routes
 * that use the fast path (modulo their number); the rest is the body.
 * api_handle answers it twice, with the fast path off and on.
 *
 * Invariant (fastpath.h): the two answers are the same — status, content
 * type, Allow, whether a compute time is reported, and the body byte for
 * byte (every double, every error code, pointer and detail).
 * Small limits keep every input fast, as in fuzz_request.c.
 */
#include <cblas.h>
#include <string.h>

#include "api.h"
#include "fastpath.h"
#include "fuzz.h"

#define FASTPATH_MAX_ELEMENTS ((size_t)1 << 16)
#define FASTPATH_MAX_WORK ((uint64_t)1 << 22)

static const char *const fastpath_routes[] = FUZZ_FASTPATH_ROUTES;

static int fastpath_same_string(const char *a, const char *b) {
    return a == b || (a != NULL && b != NULL && !strcmp(a, b));
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
#ifdef OPENBLAS_VERSION
    openblas_set_num_threads(1); /* inputs must run alike every time */
#endif
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    size_t n_routes = sizeof fastpath_routes / sizeof fastpath_routes[0];
    api_limits limits;
    api_limits_default(&limits);
    limits.max_elements = FASTPATH_MAX_ELEMENTS;
    limits.max_work = FASTPATH_MAX_WORK;

    /* the body as sent: no terminating NUL to lean on */
    char *body = malloc(size);
    memcpy(body, data + 1, size - 1);
    api_request req = {.method = "POST",
                       .path = fastpath_routes[data[0] % n_routes],
                       .content_type = "application/json",
                       .body = size > 1 ? body : NULL,
                       .body_len = size - 1,
                       .limits = &limits};
    api_response plain, fast;
    api_fastpath_enable(0);
    api_handle(&req, &plain);
    api_fastpath_enable(1);
    api_handle(&req, &fast);

    fuzz_check(plain.status == fast.status,
               "status %d with jansson alone, "
               "%d with the fast path",
               plain.status, fast.status);
    fuzz_check(fastpath_same_string(plain.content_type, fast.content_type) &&
                   fastpath_same_string(plain.allow, fast.allow),
               "headers differ for status %d", plain.status);
    fuzz_check((plain.compute_ms >= 0) == (fast.compute_ms >= 0),
               "compute time reported by one path only");
    fuzz_check(plain.body_len == fast.body_len &&
                   (plain.body_len == 0 ||
                    !memcmp(plain.body, fast.body, plain.body_len)),
               "bodies differ:\n  jansson:   %.*s\n  fast path: %.*s",
               (int)(plain.body_len < 400 ? plain.body_len : 400),
               plain.body ? plain.body : "",
               (int)(fast.body_len < 400 ? fast.body_len : 400),
               fast.body ? fast.body : "");
    api_response_free(&plain);
    api_response_free(&fast);
    free(body);
    return 0;
}
