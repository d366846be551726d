/*
 * api_bench.c — where the time of one request goes, in-process (no
 * sockets): the body parsed by jansson alone and by the fast path
 * (api/core/fastpath.h), and api_handle end to end with each, on the same
 * body in one run. Both answers must be byte-identical, else it exits 1.
 *   usage: api_bench ROUTE BODY.json [repetitions, default 5]
 * Prints the median and best milliseconds of each step and the MB/s of
 * the body for the parse steps.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "fastpath.h"
#include "route.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return s;
}

static void report(const char *what, double *ms, int reps, size_t bytes) {
    qsort(ms, (size_t)reps, sizeof *ms, cmp_double);
    double median = ms[reps / 2];
    printf("%-34s median %9.2f ms  best %9.2f ms", what, median, ms[0]);
    if (bytes)
        printf("  %7.0f MB/s", (double)bytes / 1e6 / (median / 1e3));
    printf("\n");
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: api_bench ROUTE BODY.json [repetitions]\n");
        return 2;
    }
    const char *route = argv[1];
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    if (reps < 1 || reps > 1000)
        reps = 5;
    size_t len;
    char *body = read_file(argv[2], &len);
    if (body == NULL) {
        perror(argv[2]);
        return 2;
    }
    double *ms = malloc((size_t)reps * sizeof *ms);
    json_error_t error;
    size_t flags = JSON_DECODE_ANY | JSON_ALLOW_NUL;

    for (int r = 0; r < reps; r++) {
        double t0 = now_ms();
        json_t *root = json_loadb(body, len, flags, &error);
        ms[r] = now_ms() - t0;
        json_decref(root);
    }
    report("parse: jansson json_loadb", ms, reps, len);
    for (int r = 0; r < reps; r++) {
        api_fastpath fp;
        double t0 = now_ms();
        json_t *root = api_fastpath_load(
            &fp, api_route_fast_fields(api_route_named(route)), body, len,
            flags, NULL, &error);
        ms[r] = now_ms() - t0;
        json_decref(root);
        api_fastpath_release(&fp);
    }
    report("parse: fast path", ms, reps, len);

    /* no tree limit: jansson alone builds a tree of every number */
    api_limits limits;
    api_limits_default(&limits);
    limits.max_tree_bytes = 0;
    api_request req = {.method = "POST",
                       .path = route,
                       .content_type = "application/json",
                       .body = body,
                       .body_len = len,
                       .limits = &limits};
    api_response res[2];
    for (int on = 0; on < 2; on++) {
        api_fastpath_enable(on);
        double compute = 0;
        for (int r = 0; r < reps; r++) {
            if (r)
                api_response_free(&res[on]);
            double t0 = now_ms();
            api_handle(&req, &res[on]);
            ms[r] = now_ms() - t0;
            compute += res[on].compute_ms;
        }
        report(on ? "api_handle, fast path" : "api_handle, jansson only", ms,
               reps, 0);
        printf("%-34s mean   %9.2f ms  (answer %d, %zu bytes)\n",
               "  of which compute (lib/)", compute / reps, res[on].status,
               res[on].body_len);
    }
    int same = res[0].status == res[1].status &&
               res[0].body_len == res[1].body_len &&
               !memcmp(res[0].body, res[1].body, res[0].body_len);
    printf("answers identical: %s\n", same ? "yes" : "NO");
    api_response_free(&res[0]);
    api_response_free(&res[1]);
    free(ms);
    free(body);
    return same ? 0 : 1;
}
