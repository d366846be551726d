/*
 * variant_class_bench.c — POST /grade/batch of a class of 1,000 students,
 * each answering their own variant of the medium dot (docs/variants.md),
 * in-process: every submission carries the problem's marked template, the
 * batch draws each student's variant from the course secret, grades it,
 * and checks the failures for copies of another student's variant.
 *
 *   usage: variant_class_bench DIR [repetitions, default 3]
 *
 * DIR is what tests/bench/variant_class.py writes: class.ndjson (the
 * body), secret, truth.json (what each submission is) and
 * shared_request.json (s0001's drawn request).
 *
 * Timed, median of the repetitions (CLOCK_MONOTONIC):
 *   variants  api_handle of the class body (variant_secret and grader set);
 *   shared    the same 1000 answers in today's shared-reference batch:
 *             each submission carrying s0001's drawn request, no
 *             "problem" (most of them then fail against it).
 * Reports peak RSS (getrusage ru_maxrss) after the variant batches and at
 * the end, and from the first variant answer: the lines graded, the copy
 * summary, copy-detection precision and recall against truth.json, and
 * how many catalogue mistakes have a misconception named (the code
 * checked where truth knows it: dot.no_scale). Exits 1 when precision or
 * recall is below 1 or a catalogue mistake is unnamed.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "api.h"
#include "bench_io.h"
#include "buf.h"

static double peak_rss_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

static char *path_in(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static char *read_in(const char *dir, const char *name, size_t *len) {
    char *p = path_in(dir, name);
    char *s = read_file(p, len);
    if (!s)
        fprintf(stderr, "variant_class_bench: cannot read %s\n", p);
    free(p);
    return s;
}

/* The shared-reference body: each line {"id":"sNNNN",...,"answer":A}
 * becomes {"id":"sNNNN","endpoint":"/attention/dot","request":SHARED,
 * "answer":A}. */
static int shared_body(const char *cls, size_t len, const char *shared,
                       size_t shared_len, api_buf *out) {
    const char *p = cls, *end = cls + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        if (eol > p) {
            const char *comma = memchr(p, ',', (size_t)(eol - p));
            const char *ans = NULL;
            for (const char *s = p; s + 10 <= eol; s++)
                if (memcmp(s, ",\"answer\":", 10) == 0) {
                    ans = s;
                    break;
                }
            if (!comma || !ans)
                return -1;
            api_buf_append(out, p, (size_t)(comma - p));
            api_buf_puts(out, ",\"endpoint\":\"/attention/dot\",\"request\":");
            api_buf_append(out, shared, shared_len);
            api_buf_append(out, ans, (size_t)(eol - ans));
            api_buf_puts(out, "\n");
        }
        p = eol + 1;
    }
    return out->failed ? -1 : 0;
}

static const char *kind_of(json_t *truth, const char *id) {
    return json_string_value(json_object_get(json_object_get(truth, id),
                                             "kind"));
}

static int is_copy(const char *kind) {
    return kind && (!strcmp(kind, "copy") || !strcmp(kind, "perturbed"));
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: variant_class_bench DIR [repetitions]\n");
        return 2;
    }
    const char *dir = argv[1];
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    if (reps < 1 || reps > 100)
        reps = 3;
    size_t cls_len, secret_len, shared_len, truth_len;
    char *cls = read_in(dir, "class.ndjson", &cls_len);
    char *secret = read_in(dir, "secret", &secret_len);
    char *shared = read_in(dir, "shared_request.json", &shared_len);
    char *truth_text = read_in(dir, "truth.json", &truth_len);
    if (!cls || !secret || !shared || !truth_text)
        return 2;
    while (secret_len > 0 && secret[secret_len - 1] == '\n')
        secret_len--;
    while (shared_len > 0 &&
           (shared[shared_len - 1] == '\n' || shared[shared_len - 1] == ' '))
        shared_len--;
    json_error_t jerr;
    json_t *truth = json_loadb(truth_text, truth_len, 0, &jerr);
    if (!json_is_object(truth)) {
        fprintf(stderr, "variant_class_bench: truth.json: %s\n", jerr.text);
        return 2;
    }
    size_t n = json_object_size(truth);

    api_limits limits;
    api_limits_default(&limits);
    limits.max_body_bytes = cls_len;
    api_variant_secret vs = {(const unsigned char *)secret, secret_len};
    api_request req = {.method = "POST",
                       .path = "/grade/batch",
                       .content_type = "application/x-ndjson",
                       .body = cls,
                       .body_len = cls_len,
                       .limits = &limits,
                       .may_wait = 1,
                       .variant_secret = &vs,
                       .grader = 1};

    double rss_read = peak_rss_mib(); /* the body and truth.json read */
    double *t_var = calloc((size_t)reps, sizeof(double));
    double *t_shared = calloc((size_t)reps, sizeof(double));
    int bad = 0;
    char *answer = NULL;
    size_t answer_len = 0;
    int status = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_ms();
        api_response res;
        api_handle(&req, &res);
        t_var[r] = now_ms() - t0;
        if (r == 0) {
            status = res.status;
            answer = res.body;
            answer_len = res.body_len;
            res.body = NULL;
        }
        api_response_free(&res);
    }
    double rss_variants = peak_rss_mib();

    /* today's shared-reference batch of the same answers */
    api_buf sbody = {0};
    if (shared_body(cls, cls_len, shared, shared_len, &sbody) != 0) {
        fprintf(stderr, "variant_class_bench: cannot build the shared "
                        "body\n");
        return 2;
    }
    api_limits slimits = limits;
    slimits.max_body_bytes = sbody.len;
    api_request sreq = req;
    sreq.body = sbody.data;
    sreq.body_len = sbody.len;
    sreq.limits = &slimits;
    sreq.variant_secret = NULL;
    sreq.grader = 0;
    size_t shared_lines = 0, shared_pass = 0;
    int shared_status = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_ms();
        api_response res;
        api_handle(&sreq, &res);
        t_shared[r] = now_ms() - t0;
        if (r == 0) {
            shared_status = res.status;
            for (size_t i = 0; res.body && i < res.body_len; i++)
                shared_lines += res.body[i] == '\n';
            for (const char *s = res.body;
                 s && (s = strstr(s, "\"pass\":true,\"score\":1,")); s++)
                shared_pass++;
        }
        api_response_free(&res);
    }
    double rss_end = peak_rss_mib();

    /* the variant answer, line by line */
    size_t lines = 0, graded = 0, problems = 0;
    size_t pass_by[8] = {0}, total_by[8] = {0};
    static const char *const kinds[] = {"right", "copy", "perturbed",
                                        "mistake", "slip", NULL};
    size_t mistakes = 0, named = 0, code_known = 0, code_right = 0;
    size_t flagged = 0, tp = 0, source_right = 0, copies_truth = 0;
    json_int_t c_variants = -1, c_checked = -1, c_found = -1;
    char false_pos[4096] = "", missed[8192] = "", unnamed[8192] = "",
         wrong_code[4096] = "", wrong_source[4096] = "",
         first_problem[512] = "";
    json_t *flagged_ids = json_object();
    const char *p = answer, *end = answer ? answer + answer_len : NULL;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        if (eol > p) {
            lines++;
            json_t *doc = json_loadb(p, (size_t)(eol - p), 0, &jerr);
            json_t *copies = json_object_get(doc, "copies");
            if (copies) {
                c_variants = json_integer_value(
                    json_object_get(copies, "variants"));
                c_checked =
                    json_integer_value(json_object_get(copies, "checked"));
                c_found =
                    json_integer_value(json_object_get(copies, "found"));
                json_t *m;
                size_t i;
                json_array_foreach(json_object_get(copies, "matches"), i, m) {
                    const char *id =
                        json_string_value(json_object_get(m, "id"));
                    json_t *mm = json_object_get(m, "matches");
                    const char *src =
                        json_string_value(json_object_get(mm, "student"));
                    if (!id)
                        continue;
                    flagged++;
                    json_object_set_new(flagged_ids, id, json_true());
                    json_t *t = json_object_get(truth, id);
                    if (is_copy(kind_of(truth, id))) {
                        tp++;
                        const char *tsrc = json_string_value(
                            json_object_get(t, "source"));
                        if (src && tsrc && !strcmp(src, tsrc))
                            source_right++;
                        else
                            snprintf(wrong_source + strlen(wrong_source),
                                     sizeof wrong_source -
                                         strlen(wrong_source),
                                     " %s(matches %s of %s, max abs "
                                     "%.3g; truth %s)",
                                     id,
                                     json_string_value(
                                         json_object_get(mm, "of")),
                                     src ? src : "?",
                                     json_number_value(json_object_get(
                                         mm, "max_abs_diff")),
                                     tsrc ? tsrc : "?");
                    } else {
                        snprintf(false_pos + strlen(false_pos),
                                 sizeof false_pos - strlen(false_pos),
                                 " %s(%s, matches %s of %s)", id,
                                 kind_of(truth, id) ? kind_of(truth, id)
                                                    : "?",
                                 json_string_value(
                                     json_object_get(mm, "of")),
                                 src ? src : "?");
                    }
                }
            } else if (json_is_object(json_object_get(doc, "problem"))) {
                problems++;
                if (!first_problem[0])
                    snprintf(first_problem, sizeof first_problem, "%.*s",
                             (int)(eol - p < 400 ? eol - p : 400), p);
            } else if (doc) {
                graded++;
                const char *id =
                    json_string_value(json_object_get(doc, "id"));
                const char *kind = id ? kind_of(truth, id) : NULL;
                int pass = json_is_true(json_object_get(doc, "pass"));
                for (int k = 0; kind && kinds[k]; k++)
                    if (!strcmp(kind, kinds[k])) {
                        total_by[k]++;
                        pass_by[k] += pass;
                    }
                if (kind && !strcmp(kind, "mistake")) {
                    mistakes++;
                    json_t *t = json_object_get(truth, id);
                    const char *want =
                        json_string_value(json_object_get(t, "code"));
                    const char *got = json_string_value(json_object_get(
                        json_object_get(doc, "misconception"), "code"));
                    if (got)
                        named++;
                    else
                        snprintf(unnamed + strlen(unnamed),
                                 sizeof unnamed - strlen(unnamed),
                                 " %s(%s%s)", id,
                                 json_string_value(
                                     json_object_get(t, "mistake")),
                                 pass ? ", passed" : "");
                    if (want) {
                        code_known++;
                        if (got && !strcmp(got, want))
                            code_right++;
                        else
                            snprintf(wrong_code + strlen(wrong_code),
                                     sizeof wrong_code - strlen(wrong_code),
                                     " %s(%s)", id, got ? got : "none");
                    }
                }
            }
            json_decref(doc);
        }
        p = eol + 1;
    }
    const char *key;
    json_t *val;
    json_object_foreach(truth, key, val) {
        if (!is_copy(json_string_value(json_object_get(val, "kind"))))
            continue;
        copies_truth++;
        if (!json_object_get(flagged_ids, key))
            snprintf(missed + strlen(missed), sizeof missed - strlen(missed),
                     " %s(%s of %s)", key,
                     json_string_value(json_object_get(val, "kind")),
                     json_string_value(json_object_get(val, "source")));
    }
    double precision = flagged ? (double)tp / (double)flagged : 0;
    double recall = copies_truth ? (double)tp / (double)copies_truth : 0;

    double tv = median(t_var, reps), ts = median(t_shared, reps);
    printf("variant class: %zu students, body %.0f MB, %d repetitions\n", n,
           cls_len / 1e6, reps);
    printf("  variants batch (api_handle)      median %9.1f ms  (status "
           "%d)\n",
           tv, status);
    printf("  shared-reference batch           median %9.1f ms  (status "
           "%d, %zu lines, %zu pass; body %.0f MB)\n",
           ts, shared_status, shared_lines, shared_pass, sbody.len / 1e6);
    printf("  ratio variants / shared          %.2f\n", tv / ts);
    printf("  peak RSS                         %.0f MiB after the variant "
           "batches (%.0f MiB with the body read, before grading), %.0f "
           "MiB at the end\n",
           rss_variants, rss_read, rss_end);
    printf("  answer: %zu lines, %zu graded, %zu problem lines\n", lines,
           graded, problems);
    if (first_problem[0])
        printf("    first problem line: %s\n", first_problem);
    printf("  copies: variants %lld, checked %lld, found %lld\n",
           (long long)c_variants, (long long)c_checked, (long long)c_found);
    for (int k = 0; kinds[k]; k++)
        printf("    %-10s %4zu graded, %4zu pass\n", kinds[k], total_by[k],
               pass_by[k]);
    printf("\n| measure | figure | target |\n|---|---|---|\n");
    printf("| variants batch | %.0f ms | <= 1000 ms |\n", tv);
    printf("| shared-reference batch | %.0f ms (ratio %.2f) | — |\n", ts,
           tv / ts);
    printf("| peak RSS | %.0f MiB | — |\n", rss_variants);
    printf("| copy precision | %.3f (%zu of %zu flagged) | 1 |\n", precision,
           tp, flagged);
    printf("| copy recall | %.3f (%zu of %zu copies) | 1 |\n", recall, tp,
           copies_truth);
    printf("| source named right | %zu of %zu | — |\n", source_right, tp);
    printf("| mistakes named | %zu of %zu (dot.no_scale right %zu of %zu) "
           "| all |\n\n",
           named, mistakes, code_right, code_known);
    if (false_pos[0])
        printf("false positives:%s\n", false_pos);
    if (missed[0])
        printf("copies missed:%s\n", missed);
    if (wrong_source[0])
        printf("wrong source:%s\n", wrong_source);
    if (unnamed[0])
        printf("mistakes unnamed:%s\n", unnamed);
    if (wrong_code[0])
        printf("wrong code:%s\n", wrong_code);
    bad = status != 200 || graded != n || precision < 1 || recall < 1 ||
          named < mistakes || code_right < code_known;
    printf("row op=variant_class n=%zu batch_ms=%.3f shared_ms=%.3f "
           "ratio=%.4f rss_mib=%.1f precision=%.4f recall=%.4f named=%zu "
           "mistakes=%zu ok=%d\n",
           n, tv, ts, tv / ts, rss_variants, precision, recall, named,
           mistakes, !bad);
    json_decref(flagged_ids);
    json_decref(truth);
    api_buf_free(&sbody);
    free(answer);
    free(cls);
    free(secret);
    free(shared);
    free(truth_text);
    free(t_var);
    free(t_shared);
    return bad;
}
