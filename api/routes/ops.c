/*
 * ops.c — operational routes (docs/contract.md section 14): GET
 * /healthz, /v2/health/live, /v2/health/ready (503 while draining), /version
 * and /openapi.json; plus the readiness and thread settings the server sets.
 */
#include <stdatomic.h>
#include <string.h>

#include "attn.h"
#include "call.h"
#include "openapi.h"
#include "route.h"
#include "version.h"

static atomic_int ready = 1;
static atomic_int http_threads = 1;
static atomic_int blas_threads = 1;

void api_set_ready(int value) {
    atomic_store(&ready, value != 0);
}

int api_set_threads(int http, int blas) {
    int used = attn_blas_set_threads(blas);
    if (used < 1)
        used = 1;
    atomic_store(&http_threads, http);
    atomic_store(&blas_threads, used);
    return used;
}

static int handle_healthz(api_call *call) {
    api_buf_puts(&call->out, "{\"status\":\"ok\"}");
    return 0;
}

static int handle_live(api_call *call) {
    api_buf_puts(&call->out, "{\"live\":true}");
    return 0;
}

int api_is_ready(void) {
    return atomic_load(&ready);
}

static int handle_ready(api_call *call) {
    if (api_is_ready()) {
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

static int handle_version(api_call *call) {
    api_buf *out = &call->out;
    api_buf_puts(out, "{\"name\":\"attnd\",\"version\":");
    put_trimmed(out, ATTND_VERSION);
    api_buf_puts(out, ",\"api_version\":\"1\",\"blas\":{\"name\":");
    attn_blas_info blas = attn_blas_about();
    if (blas.version[0]) {
        /* OpenBLAS's version text is " OpenBLAS 0.3.21 " */
        const char *v = strstr(blas.version, blas.name);
        api_buf_putc(out, '"');
        api_buf_puts(out, blas.name);
        api_buf_puts(out, "\",\"version\":");
        put_trimmed(out, v ? v + strlen(blas.name) : blas.version);
    } else {
        api_buf_puts(out, "\"cblas\",\"version\":\"unknown\"");
    }
    api_buf_puts(out, ",\"config\":");
    put_trimmed(out, blas.config);
    api_buf_puts(out, ",\"threads\":");
    int threads = attn_blas_threads();
    api_buf_int(out, threads > 0 ? threads : atomic_load(&blas_threads));
    api_buf_puts(out, "},\"threads\":");
    api_buf_int(out, atomic_load(&http_threads));
    api_buf_putc(out, '}');
    return 0;
}

static int handle_openapi(api_call *call) {
    size_t len;
    const char *doc = api_openapi_json(&len);
    api_buf_append(&call->out, doc, len);
    return 0;
}

/* The route table's entries (route.h). */
const api_route api_route_healthz = {
    .method = "GET",
    .path = "/healthz",
    .handler = handle_healthz,
    .flags = API_ROUTE_OPEN | API_ROUTE_UNLIMITED,
};

const api_route api_route_live = {
    .method = "GET",
    .path = "/v2/health/live",
    .handler = handle_live,
    .flags = API_ROUTE_OPEN | API_ROUTE_UNLIMITED,
};

const api_route api_route_ready = {
    .method = "GET",
    .path = "/v2/health/ready",
    .handler = handle_ready,
    .flags = API_ROUTE_OPEN | API_ROUTE_UNLIMITED,
};

const api_route api_route_version = {
    .method = "GET",
    .path = "/version",
    .handler = handle_version,
    .flags = API_ROUTE_OPEN,
};

const api_route api_route_openapi = {
    .method = "GET",
    .path = "/openapi.json",
    .handler = handle_openapi,
    .flags = API_ROUTE_OPEN,
};
