/*
 * grade_batch_bench.c — POST /grade/batch against what it cannot avoid,
 * in-process (no sockets): a class of N submissions of one request, each
 * with its own answer, graded in one batch, against computing that
 * request's reference once plus parsing the N answers.
 *
 *   usage: grade_batch_bench BODY.json [N, default 1000] [repetitions, 5]
 *
 * BODY.json is the request every submission carries (the bench's medium
 * dot, B=2 Nq=Nk=64 d=dv=32: tests/bench/gen_payloads.py). Three of four
 * submissions answer with attnd's own answer to it (they pass); every
 * fourth answers with the answer of the same request without the 1/√d
 * scale (it fails, and its misconception, dot.no_scale, is found), so the
 * mistakes' answers are computed once and shared too. The body is built
 * in memory as JSON Lines (~N × 0.5 MB), with limits to match.
 *
 * Timed, median of the repetitions:
 *   batch      api_handle of the batch body, to its answer made;
 *   reference  api_handle of the request alone on /attention/dot;
 *   answers    api_fastpath_load of the N answer texts alone, their
 *              tensors read by the fast path as /grade reads them.
 * Prints each and the ratio batch / (reference + answers); the target is
 * a ratio ≤ 3. Also checks the batch's answer: N lines, the failing ones
 * naming dot.no_scale, one reference computed. Exits 1 when the answer
 * is wrong.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "batch.h"
#include "bench_io.h"
#include "buf.h"
#include "fastpath.h"

/* api_handle of body on path; the answer's body (malloc'd) or NULL. */
static char *answer_of(const char *path, const char *body, size_t len,
                       const api_limits *limits, size_t *out_len) {
    api_request req = {.method = "POST",
                       .path = path,
                       .content_type = "application/json",
                       .body = body,
                       .body_len = len,
                       .limits = limits};
    api_response res;
    api_handle(&req, &res);
    char *text = NULL;
    if (res.status == 200 && res.body) {
        text = res.body;
        *out_len = res.body_len;
        res.body = NULL;
    } else {
        fprintf(stderr, "%s answered %d: %.*s\n", path, res.status,
                (int)res.body_len, res.body ? res.body : "");
    }
    api_response_free(&res);
    return text;
}

/* The request with "scale": 1 (the mistake of no 1/√d): body is an
 * object "{...}". */
static char *unscaled(const char *body, size_t len, size_t *out_len) {
    api_buf b = {0};
    api_buf_puts(&b, "{\"scale\":1,");
    api_buf_append(&b, body + 1, len - 1);
    return api_buf_release(&b, out_len);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: grade_batch_bench BODY.json [N] [reps]\n");
        return 2;
    }
    size_t n = argc > 2 ? (size_t)atol(argv[2]) : 1000;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    if (n < 1 || n > 100000)
        n = 1000;
    if (reps < 1 || reps > 100)
        reps = 5;
    size_t len;
    char *request = read_file(argv[1], &len);
    if (!request || len < 2 || request[0] != '{') {
        fprintf(stderr, "cannot read a JSON object from %s\n", argv[1]);
        return 2;
    }
    while (len > 0 && (request[len - 1] == '\n' || request[len - 1] == ' '))
        len--;
    api_limits limits;
    api_limits_default(&limits);

    /* the two answers: attnd's own, and the unscaled one */
    size_t right_len, wrong_len, unscaled_len;
    char *right =
        answer_of("/attention/dot", request, len, &limits, &right_len);
    char *alt = unscaled(request, len, &unscaled_len);
    char *wrong =
        answer_of("/attention/dot", alt, unscaled_len, &limits, &wrong_len);
    if (!right || !wrong)
        return 1;
    while (right_len > 0 && right[right_len - 1] == '\n')
        right_len--;
    while (wrong_len > 0 && wrong[wrong_len - 1] == '\n')
        wrong_len--;

    /* the batch body, and the answers alone */
    api_buf body = {0};
    const char **answers = malloc(n * sizeof *answers);
    size_t *answer_lens = malloc(n * sizeof *answer_lens);
    for (size_t i = 0; i < n; i++) {
        int fails = i % 4 == 3;
        api_buf_puts(&body, "{\"id\":");
        api_buf_uint(&body, i);
        api_buf_puts(&body, ",\"endpoint\":\"/attention/dot\",\"request\":");
        api_buf_append(&body, request, len);
        api_buf_puts(&body, ",\"answer\":");
        api_buf_append(&body, fails ? wrong : right,
                       fails ? wrong_len : right_len);
        api_buf_puts(&body, "}\n");
        answers[i] = fails ? wrong : right;
        answer_lens[i] = fails ? wrong_len : right_len;
    }
    if (body.failed) {
        fprintf(stderr, "out of memory for the body\n");
        return 1;
    }
    limits.max_body_bytes = body.len;
    api_request req = {.method = "POST",
                       .path = "/grade/batch",
                       .content_type = "application/x-ndjson",
                       .body = body.data,
                       .body_len = body.len,
                       .limits = &limits};
    static const char *const answer_fields[] = {"output", "weights", NULL};

    double *t_batch = calloc((size_t)reps, sizeof(double));
    double *t_ref = calloc((size_t)reps, sizeof(double));
    double *t_answers = calloc((size_t)reps, sizeof(double));
    int bad = 0;
    api_batch_stats stats = {0};
    for (int r = 0; r < reps; r++) {
        /* taking turns, so that a change in the machine's load hits all */
        double t0 = now_ms();
        api_response res;
        api_handle(&req, &res);
        t_batch[r] = now_ms() - t0;
        api_batch_last_stats(&stats);
        if (r == 0) { /* check the answer once */
            size_t lines = 0, named = 0, passed = 0;
            for (size_t i = 0; res.body && i < res.body_len; i++)
                lines += res.body[i] == '\n';
            for (const char *s = res.body; s && (s = strstr(s, "dot.no_scale"));
                 s++)
                named++;
            for (const char *s = res.body;
                 s && (s = strstr(s, "\"pass\":true,\"score\":1,\"points\""));
                 s++)
                passed++;
            if (res.status != 200 || lines != n || named != n / 4 ||
                passed != n - n / 4 || stats.references_computed != 1 ||
                stats.problems != 0) {
                fprintf(stderr,
                        "wrong batch answer: status %d, %zu lines, %zu "
                        "misconceptions, %zu passed, %zu references, %zu "
                        "problems: %.300s\n",
                        res.status, lines, named, passed,
                        stats.references_computed, stats.problems,
                        res.body ? res.body : "");
                bad = 1;
            }
        }
        api_response_free(&res);

        t0 = now_ms();
        size_t ref_len;
        char *ref =
            answer_of("/attention/dot", request, len, &limits, &ref_len);
        t_ref[r] = now_ms() - t0;
        free(ref);

        t0 = now_ms();
        for (size_t i = 0; i < n; i++) {
            api_fastpath fp = {0};
            json_error_t err;
            json_t *doc =
                api_fastpath_load(&fp, answer_fields, answers[i],
                                  answer_lens[i], JSON_ALLOW_NUL, NULL, &err);
            if (!doc)
                bad = 1;
            json_decref(doc);
            api_fastpath_release(&fp);
        }
        t_answers[r] = now_ms() - t0;
    }
    double batch = median(t_batch, reps), ref = median(t_ref, reps),
           parse = median(t_answers, reps);
    double ratio = batch / (ref + parse);
    printf("grade batch: %zu submissions of %zu bytes each (%.0f MB), "
           "%zu references and %zu mistakes' answers computed, %zu "
           "requests not parsed again\n",
           n, body.len / n, body.len / 1e6, stats.references_computed,
           stats.mistakes_computed, stats.requests_elided);
    printf("  batch (api_handle)               median %9.1f ms  %6.0f MB/s\n",
           batch, body.len / 1e6 / (batch / 1e3));
    printf("  reference once (api_handle)      median %9.1f ms\n", ref);
    printf("  the answers parsed (fast path)   median %9.1f ms\n", parse);
    printf("  ratio batch / (reference + answers) = %.2f (target <= 3)\n",
           ratio);
    printf("row op=grade_batch n=%zu batch_ms=%.3f reference_ms=%.3f "
           "answers_ms=%.3f ratio=%.4f ok=%d\n",
           n, batch, ref, parse, ratio, !bad);
    api_buf_free(&body);
    free(answers);
    free(answer_lens);
    free(right);
    free(wrong);
    free(alt);
    free(request);
    free(t_batch);
    free(t_ref);
    free(t_answers);
    return bad;
}
