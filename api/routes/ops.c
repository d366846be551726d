/*
 * ops.c — operational routes (docs/contract.md section 14): GET
 * /healthz, /v2/health/live, /v2/health/ready (503 while draining) and
 * /version, from the readiness and threads the server sets (readiness.h).
 */
#include <string.h>

#include "attn.h"
#include "call.h"
#include "readiness.h"
#include "route.h"
#include "version.h"

static int handle_healthz(api_call *call) {
    api_buf_puts(&call->out, "{\"status\":\"ok\"}");
    return 0;
}

static int handle_live(api_call *call) {
    api_buf_puts(&call->out, "{\"live\":true}");
    return 0;
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
    api_buf_int(out, threads > 0 ? threads : api_blas_threads_set());
    api_buf_puts(out, "},\"threads\":");
    api_buf_int(out, api_http_threads());
    api_buf_putc(out, '}');
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
    .flags = API_ROUTE_OPEN | API_ROUTE_STATIC,
};
