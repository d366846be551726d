/*
 * api_bench.c — where the time of one request goes, in-process (no
 * sockets): the body parsed by jansson alone and by the fast path
 * (api/text/fastpath.h), and api_handle end to end with each, on the same
 * body in one run. Both answers must be byte-identical, else it exits 1.
 *   usage: api_bench ROUTE BODY.json [repetitions, default 5]
 * Prints the median and best milliseconds of each step and the MB/s of
 * the body for the parse steps.
 *
 *   usage: api_bench --binary HEADER_LENGTH ROUTE BODY.bin [repetitions]
 * A body of the binary tensor data extension (a JSON header of
 * HEADER_LENGTH bytes, then the inputs' bytes): api_handle as the server
 * calls it (a large answer streamed), the stream read to its end in the
 * server's pieces, with the heap kept as the server keeps it; and, for
 * scale, copying the answer's bytes and reading the inputs' bytes once.
 */
#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "bench_io.h"
#include "fastpath.h"
#include "route.h"

static void report(const char *what, double *ms, int reps, size_t bytes) {
    qsort(ms, (size_t)reps, sizeof *ms, cmp_double);
    double median = ms[reps / 2];
    printf("%-34s median %9.2f ms  best %9.2f ms", what, median, ms[0]);
    if (bytes)
        printf("  %7.0f MB/s", (double)bytes / 1e6 / (median / 1e3));
    printf("\n");
}

/* The server's piece of a streamed answer (server/http.c STREAM_BLOCK). */
#define STREAM_PIECE ((size_t)1 << 20)

static int binary_bench(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: api_bench --binary HEADER_LENGTH ROUTE "
                        "BODY.bin [repetitions]\n");
        return 2;
    }
    const char *header_len = argv[2], *route = argv[3];
    int reps = argc > 5 ? atoi(argv[5]) : 9;
    if (reps < 1 || reps > 1000)
        reps = 9;
    /* freed blocks stay in the heap, as in the server (server/main.c) */
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    size_t len;
    char *body = read_file(argv[4], &len);
    if (body == NULL) {
        perror(argv[4]);
        return 2;
    }
    api_limits limits;
    api_limits_default(&limits);
    api_request req = {.method = "POST",
                       .path = route,
                       .content_type = "application/octet-stream",
                       .inference_header_length = header_len,
                       .body = body,
                       .body_len = len,
                       .limits = &limits,
                       .stream_ok = 1};
    double *handle = malloc((size_t)reps * sizeof *handle);
    double *compute = malloc((size_t)reps * sizeof *compute);
    double *read = malloc((size_t)reps * sizeof *read);
    double *copy = malloc((size_t)reps * sizeof *copy);
    double *outside = malloc((size_t)reps * sizeof *outside);
    double *total = malloc((size_t)reps * sizeof *total);
    char *piece = malloc(STREAM_PIECE);
    char *sink = NULL;
    size_t answer_len = 0;
    int status = 0;
    for (int r = 0; r < reps; r++) {
        api_response res;
        double t0 = now_ms();
        api_handle(&req, &res);
        double t1 = now_ms();
        size_t n = 0;
        if (res.stream) {
            ssize_t k;
            while ((k = api_stream_read(res.stream, piece, STREAM_PIECE)) > 0)
                n += (size_t)k;
        } else {
            n = res.body_len;
        }
        double t2 = now_ms();
        handle[r] = t1 - t0;
        read[r] = t2 - t1;
        total[r] = t2 - t0;
        compute[r] = res.compute_ms;
        outside[r] = handle[r] - res.compute_ms;
        status = res.status;
        answer_len = n;
        if (r == 0 && res.stream == NULL)
            fprintf(stderr, "(the answer was not streamed)\n");
        api_response_free(&res);
        /* the same bytes copied once, for scale */
        if (!sink)
            sink = malloc(n ? n : 1);
        double t3 = now_ms();
        for (size_t at = 0; at < n; at += STREAM_PIECE)
            memcpy(sink + at, piece,
                   n - at < STREAM_PIECE ? n - at : STREAM_PIECE);
        copy[r] = now_ms() - t3;
    }
    printf("binary body %zu bytes (header %s), answer %d, %zu bytes\n", len,
           header_len, status, answer_len);
    report("api_handle (to the answer made)", handle, reps, 0);
    report("  of which compute (Server-Timing)", compute, reps, 0);
    report("  the rest (api_handle - compute)", outside, reps, 0);
    report("stream read to the end, 1 MiB", read, reps, answer_len);
    report("api_handle + stream read", total, reps, 0);
    report("memcpy of the answer's bytes", copy, reps, answer_len);
    free(handle);
    free(compute);
    free(read);
    free(copy);
    free(outside);
    free(total);
    free(piece);
    free(sink);
    free(body);
    return status == 200 ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--binary"))
        return binary_bench(argc, argv);
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
