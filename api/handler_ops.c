/*
 * handler_ops.c — operational routes (API.md section 14): GET /healthz,
 * /v2/health/live, /v2/health/ready (503 while draining), /version and
 * /openapi.json; plus the readiness and thread settings the server sets.
 */
#include <stdatomic.h>
#include <string.h>

#include <cblas.h>

#include "call.h"
#include "openapi.h"
#include "version.h"

static atomic_int ready = 1;
static atomic_int http_threads = 1;
static atomic_int blas_threads = 1;

void api_set_ready(int value) {
    atomic_store(&ready, value != 0);
}

void api_set_threads(int http, int blas) {
    atomic_store(&http_threads, http);
    atomic_store(&blas_threads, blas);
}

int api_handle_healthz(api_call *call) {
    api_buf_puts(&call->out, "{\"status\":\"ok\"}");
    return 0;
}

int api_handle_live(api_call *call) {
    api_buf_puts(&call->out, "{\"live\":true}");
    return 0;
}

int api_handle_ready(api_call *call) {
    if (atomic_load(&ready)) {
        api_buf_puts(&call->out, "{\"ready\":true}");
    } else {
        call->status = 503;
        api_buf_puts(&call->out, "{\"ready\":false}");
    }
    return 0;
}

/* Copy s without the spaces around it. */
static void put_trimmed(api_buf *out, const char *s) {
    while (*s == ' ')
        s++;
    size_t n = strlen(s);
    while (n && s[n - 1] == ' ')
        n--;
    api_buf_json_string(out, s, n);
}

int api_handle_version(api_call *call) {
    api_buf *out = &call->out;
    api_buf_puts(out, "{\"name\":\"attnd\",\"version\":");
    put_trimmed(out, ATTND_VERSION);
    api_buf_puts(out, ",\"api_version\":\"1\",\"blas\":{\"name\":");
#ifdef OPENBLAS_VERSION
    /* OPENBLAS_VERSION is " OpenBLAS 0.3.21 " */
    const char *v = strstr(OPENBLAS_VERSION, "OpenBLAS");
    api_buf_puts(out, "\"OpenBLAS\",\"version\":");
    put_trimmed(out, v ? v + strlen("OpenBLAS") : OPENBLAS_VERSION);
    api_buf_puts(out, ",\"config\":");
    put_trimmed(out, openblas_get_config());
    api_buf_puts(out, ",\"threads\":");
    api_buf_int(out, openblas_get_num_threads());
#else
    api_buf_puts(out, "\"cblas\",\"version\":\"unknown\",\"config\":\"\"");
    api_buf_puts(out, ",\"threads\":");
    api_buf_int(out, atomic_load(&blas_threads));
#endif
    api_buf_puts(out, "},\"threads\":");
    api_buf_int(out, atomic_load(&http_threads));
    api_buf_putc(out, '}');
    return 0;
}

int api_handle_openapi(api_call *call) {
    size_t len;
    const char *doc = api_openapi_json(&len);
    api_buf_append(&call->out, doc, len);
    return 0;
}
