/*
 * batch_answer.c — the answer of POST /grade/batch (batch_internal.h,
 * docs/batch.md): a submission's problem line, and for ?format=gradescope
 * or prairielearn the one LMS document of the whole batch (grade_lms.h),
 * written once every submission is graded.
 *
 * The answer grows with the batch, so each growth of it is reserved in
 * the request's ledger (budget.h) before it is made: many problem lines,
 * or a document of many tests, cannot hold more than the budget allows.
 */
#include <stdlib.h>

#include "batch_internal.h"

void api_batch_put_problem_line(api_buf *line, const char *id,
                                const api_problem *p) {
    api_buf_puts(line, "{\"id\":");
    api_buf_puts(line, id);
    api_buf_puts(line, ",\"problem\":");
    api_problem_write(line, p);
    api_buf_putc(line, '}');
}

int api_batch_reserve_answer(api_call *call, uint64_t *charged, uint64_t now) {
    if (now <= *charged)
        return 0;
    if (api_ledger_reserve(call->ledger, now - *charged, "the batch's answer",
                           &call->problem))
        return -1;
    *charged = now;
    return 0;
}

/* An LMS document's buffer growth, reserved before it is made
 * (api_buf.before_grow): the document of a whole class is written at
 * once, after its submissions are graded. */
typedef struct {
    api_call *call;
    uint64_t *charged; /* of the answer, api_batch_reserve_answer */
    int refused;       /* call->problem says why */
} document_growth;

static int reserve_document(void *ctx, size_t cap, size_t new_cap) {
    document_growth *g = ctx;
    if (api_batch_reserve_answer(g->call, g->charged,
                                 *g->charged + (new_cap - cap))) {
        g->refused = 1;
        return -1;
    }
    return 0;
}

/* The LMS document of the batch's n submissions into out. Returns 0, or
 * -2 when it cannot be held in API_LMS_DOC_MAX bytes (nothing written). */
static int write_document(api_grade_format fmt, batch_doc_entry *entries,
                          size_t n, api_buf *out) {
    api_grade_item *items = calloc(n ? n : 1, sizeof *items);
    if (!items) {
        out->failed = 1;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        batch_doc_entry *e = &entries[i];
        if (e->graded) {
            items[i].grade = &e->grade;
            items[i].id =
                e->grade.has_id
                    ? (e->grade.id_text.data ? e->grade.id_text.data : "")
                    : NULL;
            items[i].id_len = e->grade.id_text.len;
        } else {
            items[i].problem = &e->problem;
            items[i].problem_points = e->points;
            items[i].problem_visibility = e->visibility;
            items[i].id = e->has_id ? (e->id.data ? e->id.data : "") : NULL;
            items[i].id_len = e->id.len;
        }
    }
    int rc = api_grade_write_lms(fmt, items, n, out);
    free(items);
    return rc == -2 ? -2 : 0;
}

void api_batch_free_document(batch_doc_entry *entries, size_t n) {
    for (size_t i = 0; i < n; i++) {
        api_grade_free(&entries[i].grade);
        api_buf_free(&entries[i].id);
    }
    free(entries);
}

int api_batch_write_document(api_call *call, uint64_t *charged,
                             api_grade_format fmt, batch_doc_entry *entries,
                             size_t n) {
    document_growth growth = {call, charged, 0};
    call->out.before_grow = reserve_document;
    call->out.grow_ctx = &growth;
    int too_long = write_document(fmt, entries, n, &call->out);
    call->out.before_grow = NULL;
    call->out.grow_ctx = NULL;
    if (growth.refused)
        return -1; /* the budget's 503 or 413, not "out of memory" */
    if (too_long)
        return api_fail(&call->problem, API_E_PAYLOAD_TOO_LARGE, NULL,
                        "the %s document of these %zu submissions would "
                        "pass %d bytes even with every test's text left "
                        "out and its name cut (too many tests): grade "
                        "them in smaller batches",
                        fmt == API_GRADE_FORMAT_GRADESCOPE ? "gradescope"
                                                           : "prairielearn",
                        n, API_LMS_DOC_MAX);
    return 0;
}
