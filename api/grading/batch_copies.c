/*
 * batch_copies.c — the copy check of a batch of variants
 * (batch_internal.h, copies.h, docs/variants.md "The copy report"): each
 * variant's grade leaves a sample of its fields as it is graded, and once
 * the whole body is graded the samples are checked against one another.
 * What is found is the instructor's alone: the lines' last line
 *
 *   {"copies": {"variants": 1000, "checked": 131, "found": 130,
 *     "matches": [{"id": "s0007", "matches": {"student": "s0123",
 *       "id": "s0123", "of": "reference", "max_abs_diff": 2.3e-07,
 *       "entries": 512}}, ...]}}
 *
 * and, in an LMS document, a note on the copy's grade (the Gradescope
 * test only instructors see, PrairieLearn's instructor_notes), never a
 * student's text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batch_internal.h"
#include "copies.h"

/* What a kept variant holds of memory, for the ledger. */
static uint64_t held_by(const api_grade_sample *s) {
    return sizeof(struct batch_variant) + sizeof *s +
           s->n_fields * sizeof *s->fields + strlen(s->variant) + 64;
}

int api_batch_keep_variant(batch *b, api_grade *grade, size_t doc) {
    api_call *call = b->call;
    if (b->n_variants == b->cap_variants) {
        size_t cap = b->cap_variants ? 2 * b->cap_variants : 64;
        struct batch_variant *more = realloc(b->variants, cap * sizeof *more);
        if (!more)
            return api_fail(&call->problem, API_E_INTERNAL, NULL,
                            "out of memory");
        b->variants = more;
        b->cap_variants = cap;
    }
    uint64_t bytes = held_by(grade->sample) + grade->id_json.len * 2;
    if (api_ledger_reserve(call->ledger, bytes,
                           "the samples of a batch's variants",
                           &call->problem))
        return -1;
    b->variants_charged += bytes;
    struct batch_variant *v = &b->variants[b->n_variants++];
    memset(v, 0, sizeof *v);
    v->sample = grade->sample;
    v->suspect = !grade->pass && !grade->misconception;
    v->doc = doc;
    if (doc == SIZE_MAX)
        grade->sample = NULL; /* the line is written: the sample is ours */
    api_buf_append(&v->id_json, grade->id_json.data, grade->id_json.len);
    api_buf_append(&v->id_text, grade->id_text.data, grade->id_text.len);
    return 0;
}

void api_batch_free_variants(batch *b) {
    for (size_t i = 0; i < b->n_variants; i++) {
        struct batch_variant *v = &b->variants[i];
        if (v->doc == SIZE_MAX && v->sample) {
            api_grade grade = {.sample = v->sample}; /* frees the sample */
            api_grade_free(&grade);
        }
        api_buf_free(&v->id_json);
        api_buf_free(&v->id_text);
    }
    free(b->variants);
    b->variants = NULL;
    b->n_variants = b->cap_variants = 0;
}

static const char *text_of(const api_buf *b) {
    return b->data ? b->data : "";
}

/* One match of the summary line. */
static void put_match(api_buf *out, const batch *b, const api_copy_match *m) {
    const struct batch_variant *who = &b->variants[m->who];
    const struct batch_variant *src = &b->variants[m->source];
    api_buf_puts(out, "{\"id\":");
    api_buf_append(out, text_of(&who->id_json), who->id_json.len);
    api_buf_puts(out, ",\"matches\":{\"student\":");
    api_buf_json_string(out, src->sample->variant,
                        strlen(src->sample->variant));
    api_buf_puts(out, ",\"id\":");
    api_buf_append(out, text_of(&src->id_json), src->id_json.len);
    api_buf_puts(out, ",\"of\":");
    api_buf_puts(out, m->of_reference ? "\"reference\"" : "\"answer\"");
    api_buf_puts(out, ",\"max_abs_diff\":");
    api_buf_number(out, m->max_abs, 0);
    api_buf_puts(out, ",\"entries\":");
    api_buf_int(out, (long long)m->entries);
    api_buf_puts(out, "}}");
}

int api_batch_check_copies(batch *b, batch_doc_entry *doc, int array_form,
                           uint64_t *charged) {
    if (b->n_variants == 0)
        return 0;
    api_call *call = b->call;
    api_copy_entry *entries = calloc(b->n_variants, sizeof *entries);
    if (!entries)
        return api_fail(&call->problem, API_E_INTERNAL, NULL,
                        "out of memory");
    for (size_t i = 0; i < b->n_variants; i++) {
        entries[i].sample = b->variants[i].sample;
        entries[i].suspect = b->variants[i].suspect;
    }
    api_copy_match *found = NULL;
    size_t n_found = 0, checked = 0;
    int rc = api_copies_find(entries, b->n_variants, &found, &n_found,
                             &checked);
    free(entries);
    if (rc)
        return api_fail(&call->problem, API_E_INTERNAL, NULL,
                        "out of memory");
    for (size_t k = 0; doc && k < n_found; k++) {
        const struct batch_variant *who = &b->variants[found[k].who];
        const struct batch_variant *src = &b->variants[found[k].source];
        api_copy_note(&doc[who->doc].grade.copy_note, &found[k],
                      src->sample->variant, text_of(&src->id_text));
    }
    if (!doc) {
        api_buf *out = &call->out;
        api_buf_puts(out, array_form ? ",\n" : "");
        api_buf_puts(out, "{\"copies\":{\"variants\":");
        api_buf_int(out, (long long)b->n_variants);
        api_buf_puts(out, ",\"checked\":");
        api_buf_int(out, (long long)checked);
        api_buf_puts(out, ",\"found\":");
        api_buf_int(out, (long long)n_found);
        api_buf_puts(out, ",\"matches\":[");
        for (size_t k = 0; k < n_found; k++) {
            if (k)
                api_buf_putc(out, ',');
            put_match(out, b, &found[k]);
        }
        api_buf_puts(out, "]}}");
        if (!array_form)
            api_buf_putc(out, '\n');
        rc = api_batch_reserve_answer(call, charged, out->cap);
    }
    free(found);
    return rc;
}
