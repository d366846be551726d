/*
 * metrics.c — GET /metrics (docs/contract.md section 14): the
 * Prometheus text exposition format 0.0.4. The request counters belong to the
 * HTTP server, which installs them with api_set_metrics_source; this layer adds
 * attnd_build_info{version, blas}, which it knows from the build. Without a
 * source (in-process use) the answer is attnd_build_info alone.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "call.h"
#include "route.h"
#include "version.h"

/* The media type Prometheus servers ask for and accept. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

static _Atomic(api_metrics_source) source; /* static storage: starts NULL */

void api_set_metrics_source(api_metrics_source fn) {
    atomic_store(&source, fn);
}

const char *api_route_template(size_t i) {
    const api_route *r = api_route_at(i);
    return r != NULL ? r->path : NULL;
}

/* s as a label value: backslash, double quote and newline escaped, blanks
 * around it dropped ("OpenBLAS 0.3.21" from " OpenBLAS 0.3.21 "). */
static void put_label_value(api_buf *out, const char *s) {
    while (*s == ' ')
        s++;
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == ' ')
        n--;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' || s[i] == '"') {
            api_buf_putc(out, '\\');
            api_buf_putc(out, s[i]);
        } else if (s[i] == '\n') {
            api_buf_puts(out, "\\n");
        } else {
            api_buf_putc(out, s[i]);
        }
    }
}

static int handle_metrics(api_call *call) {
    api_metrics_source fn = atomic_load(&source);
    if (fn != NULL) {
        size_t len = 0;
        char *text = fn(&len);
        if (text == NULL)
            return api_fail(&call->problem, API_E_INTERNAL, NULL,
                            "out of memory while writing the metrics");
        api_buf_append(&call->out, text, len);
        free(text);
    }
    api_buf *out = &call->out;
    api_buf_puts(out, "# HELP attnd_build_info The running build: version "
                      "and BLAS library (always 1).\n"
                      "# TYPE attnd_build_info gauge\n"
                      "attnd_build_info{version=\"");
    put_label_value(out, ATTND_VERSION);
    api_buf_puts(out, "\",blas=\"");
    attn_blas_info blas = attn_blas_about();
    put_label_value(out, blas.version[0] ? blas.version : blas.name);
    api_buf_puts(out, "\"} 1\n");
    call->content_type = METRICS_CONTENT_TYPE;
    return 0;
}

/* The route table's entry (route.h). */
const api_route api_route_metrics = {
    .method = "GET",
    .path = "/metrics",
    .handler = handle_metrics,
    .flags = API_ROUTE_OPEN_IF_METRICS_PUBLIC | API_ROUTE_UNLIMITED,
};
