/*
 * batch_copies.c — the copy check of a batch of variants
 * (batch_internal.h, copies.h, docs/variants.md "The copy report"): each
 * variant's grade leaves a sample of its fields as it is graded, and once
 * the whole body is graded the samples are checked against one another,
 * and, when the class has a roster (api_request.roster), against the
 * reference of every student on it whom the batch does not hold, drawn
 * and computed then (only when some answer is a suspect). What is found
 * is the instructor's alone: the lines' last line
 *
 *   {"copies": {"variants": 1000, "references": 1000, "checked": 131,
 *     "found": 130, "matches": [{"id": "s0007", "matches": {"student":
 *     "s0123", "id": "s0123", "of": "reference", "max_abs_diff": 2.3e-07,
 *     "entries": 512}}, ...]}}
 *
 * and, in an LMS document, a note on the copy's grade (the Gradescope
 * test only instructors see, PrairieLearn's instructor_notes), never a
 * student's text.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batch_internal.h"
#include "copies.h"
#include "fastpath.h"
#include "fields.h"
#include "grade_entries.h"
#include "limit.h"
#include "variant.h"

/* What a kept variant holds of memory, for the ledger. */
static uint64_t held_by(const api_grade_sample *s) {
    return sizeof(struct batch_variant) + sizeof *s +
           s->n_fields * sizeof *s->fields + strlen(s->variant) + 64;
}

static char *text_dup(const json_t *v, const char *dflt) {
    char buf[32];
    if (json_is_integer(v)) {
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        return strdup(buf);
    }
    return strdup(json_is_string(v) ? json_string_value(v) : dflt);
}

/* The index in b->problems of the submission's problem (its id, version
 * and route; the first submission's request is the problem's), added
 * when new; SIZE_MAX when there is no room (or memory) for one more. */
static size_t problem_of(batch *b, const json_t *submission,
                         const api_grade *grade, const api_grade_sample *s) {
    const json_t *problem = json_object_get(submission, "problem");
    const json_t *version = api_field_value(submission, "version");
    const api_route *route = api_route_find(grade->endpoint);
    char *p = text_dup(problem, ""), *v = text_dup(version, "1");
    size_t at = SIZE_MAX;
    for (size_t i = 0; p && v && i < b->n_problems && at == SIZE_MAX; i++) {
        const struct batch_problem *q = &b->problems[i];
        if (q->route == route && !strcmp(q->problem, p) &&
            !strcmp(q->version, v))
            at = i;
    }
    if (at == SIZE_MAX && p && v && route && b->raw_len > 0 &&
        b->n_problems < BATCH_PROBLEMS_MAX) {
        at = b->n_problems++;
        b->problems[at] =
            (struct batch_problem){b->raw, b->raw_len, p, v, route, s};
        return at;
    }
    free(p);
    free(v);
    return at;
}

int api_batch_keep_variant(batch *b, api_grade *grade, size_t doc,
                           const json_t *submission) {
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
                           "the samples of a batch's variants", &call->problem))
        return -1;
    b->variants_charged += bytes;
    struct batch_variant *v = &b->variants[b->n_variants++];
    memset(v, 0, sizeof *v);
    v->sample = grade->sample;
    v->suspect = !grade->pass && !grade->misconception;
    v->doc = doc;
    v->problem = problem_of(b, submission, grade, grade->sample);
    if (doc == SIZE_MAX)
        grade->sample = NULL; /* the line is written: the sample is ours */
    api_buf_append(&v->id_json, grade->id_json.data, grade->id_json.len);
    api_buf_append(&v->id_text, grade->id_text.data, grade->id_text.len);
    return 0;
}

static void free_sample(api_grade_sample *s) {
    api_grade grade = {.sample = s}; /* api_grade_free frees a sample */
    api_grade_free(&grade);
}

void api_batch_free_variants(batch *b) {
    for (size_t i = 0; i < b->n_variants; i++) {
        struct batch_variant *v = &b->variants[i];
        if (v->doc == SIZE_MAX && v->sample)
            free_sample(v->sample);
        api_buf_free(&v->id_json);
        api_buf_free(&v->id_text);
    }
    free(b->variants);
    b->variants = NULL;
    b->n_variants = b->cap_variants = 0;
    for (size_t i = 0; i < b->n_problems; i++) {
        free(b->problems[i].problem);
        free(b->problems[i].version);
    }
    b->n_problems = 0;
}

/* ------------------------------------------ the roster's references */

/* The sample of the reference of vname's variant of problem q (its
 * request, template, parsed once into fp), in the layout of q's first
 * sample (expected values only; got NaN), or NULL when it cannot be had
 * (*stop set when the batch's limits or the memory budget stopped it). */
static api_grade_sample *roster_reference(batch *b,
                                          const struct batch_problem *q,
                                          const json_t *template,
                                          const api_fastpath *fp,
                                          const char *vname, int *stop) {
    api_call *call = b->call;
    const api_variant_secret *secret = call->req->variant_secret;
    api_fastpath vdoc;
    api_problem p = {0};
    unsigned char key[API_VARIANT_KEY_BYTES];
    api_variant_id id = {vname, q->problem, q->version};
    json_t *request = NULL;
    double *numbers = NULL;
    api_result result;
    memset(&result, 0, sizeof result);
    api_fastpath_begin(&vdoc, fp);
    api_grade_sample *s = NULL;
    const api_grade_sample *layout = q->layout;
    /* the sample, kept to the batch's end, and the drawn numbers, while
     * the reference is computed: both reserved first */
    api_ledger draw = {0, call->ledger->may_wait, 0};
    uint64_t kept =
        sizeof *s + layout->n_fields * sizeof *s->fields + strlen(vname) + 64;
    int room =
        api_ledger_reserve(call->ledger, kept, "the roster's references", &p) ==
            0 &&
        api_ledger_reserve(&draw,
                           api_variant_entries(template) * sizeof(double),
                           "a student's variant", &p) == 0;
    int computed =
        room && template && secret &&
        !api_variant_key(secret->bytes, secret->len, &id, key, &p) &&
        !api_variant_request(template, key, &vdoc, &request, &numbers, &p) &&
        !api_batch_compute(b, q->route, request, &vdoc, &result);
    memset(key, 0, sizeof key);
    if (computed && (s = calloc(1, sizeof *s)) &&
        (s->fields = calloc(layout->n_fields, sizeof *s->fields)) &&
        (s->variant = strdup(vname))) {
        for (size_t f = 0; f < layout->n_fields; f++) {
            const api_grade_sample_field *lf = &layout->fields[f];
            api_grade_sample_field *sf = &s->fields[s->n_fields];
            const api_result_item *it =
                api_result_find(&result, lf->name, strlen(lf->name));
            size_t count = 1;
            for (size_t d = 0; it && d < it->rank; d++)
                count *= it->shape[d];
            if (!it || it->kind != API_ITEM_TENSOR || count != lf->count ||
                !(sf->name = strdup(lf->name)))
                continue;
            s->n_fields++;
            sf->compare = lf->compare;
            sf->count = lf->count;
            sf->taken = lf->taken;
            int precision = api_result_item_precision(&result, it);
            for (size_t k = 0; k < sf->taken; k++) {
                sf->expected[k] = api_grade_as_answered(
                    it->data[api_grade_sample_index(k, sf->count)], precision);
                sf->got[k] = NAN;
            }
        }
    } else if (computed) { /* out of memory */
        if (s)
            free_sample(s);
        s = NULL;
    }
    *stop = !room || (!computed && b->stopped != GOING);
    api_ledger_settle(&draw, 0);
    api_result_free(&result);
    json_decref(request);
    api_fastpath_release(&vdoc);
    free(numbers);
    return s;
}

static int by_string(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The variant names of the roster (a group's id for its members), each
 * once, sorted; *n their count. NULL when memory runs out. */
static const char **roster_variants(const api_roster *roster, size_t *n) {
    const char **names = malloc((roster->n ? roster->n : 1) * sizeof *names);
    if (!names)
        return NULL;
    for (size_t r = 0; r < roster->n; r++)
        names[r] = roster->groups[r] ? roster->groups[r] : roster->ids[r];
    qsort(names, roster->n, sizeof *names, by_string);
    size_t k = 0;
    for (size_t r = 0; r < roster->n; r++)
        if (k == 0 || strcmp(names[k - 1], names[r]))
            names[k++] = names[r];
    *n = k;
    return names;
}

/* e[*n] = entry, e grown as needed (*cap). Returns 0, or -1 when memory
 * runs out. */
static int add_entry(api_copy_entry **e, size_t *n, size_t *cap,
                     api_copy_entry entry) {
    if (*n == *cap) {
        size_t more = *cap ? 2 * *cap : 64;
        api_copy_entry *grown = realloc(*e, more * sizeof **e);
        if (!grown)
            return -1;
        *e = grown;
        *cap = more;
    }
    (*e)[(*n)++] = entry;
    return 0;
}

/* Whether the copy check stops now: the batch's time (--compute-timeout)
 * is spent, its client has gone, or the server is stopping. The check,
 * the roster's references with it, runs after the last submission, on
 * the batch's own time. */
static int check_stops(void *ctx) {
    const batch *b = ctx;
    unsigned timeout_s = b->call->limits->compute_timeout_s;
    return api_limit_cut_short() ||
           (timeout_s > 0 && api_batch_elapsed_s(b) >= timeout_s);
}

/* The references of problem q's variants on the roster that the batch
 * does not hold, added to e. Returns 0, or -1 when memory runs out;
 * *incomplete set when the batch's limits or the memory budget stopped
 * them short. */
static int add_roster_references(batch *b, size_t q, const char **names,
                                 size_t n_names, api_copy_entry **e, size_t *n,
                                 size_t *cap, int *incomplete) {
    const struct batch_problem *problem = &b->problems[q];
    const char **held =
        malloc((b->n_variants ? b->n_variants : 1) * sizeof *held);
    api_fastpath fp = {0};
    json_error_t error;
    json_t *template =
        held ? api_fastpath_load(&fp, api_route_fast_fields(problem->route),
                                 problem->raw, problem->raw_len,
                                 JSON_DECODE_ANY | JSON_ALLOW_NUL |
                                     JSON_REJECT_DUPLICATES,
                                 NULL, &error)
             : NULL;
    int rc = template ? 0 : -1;
    size_t n_held = 0;
    for (size_t i = 0; rc == 0 && i < b->n_variants; i++)
        if (b->variants[i].problem == q)
            held[n_held++] = b->variants[i].sample->variant;
    if (rc == 0)
        qsort(held, n_held, sizeof *held, by_string);
    for (size_t r = 0; rc == 0 && r < n_names && !*incomplete; r++) {
        if (bsearch(&names[r], held, n_held, sizeof *held, by_string))
            continue;
        if (check_stops(b)) { /* each reference is a variant drawn */
            *incomplete = 1;
            break;
        }
        int stop = 0;
        api_grade_sample *s =
            roster_reference(b, problem, template, &fp, names[r], &stop);
        *incomplete |= stop;
        if (s && add_entry(e, n, cap, (api_copy_entry){s, 0, q})) {
            free_sample(s);
            rc = -1;
        }
    }
    json_decref(template);
    api_fastpath_release(&fp);
    free(held);
    return rc;
}

/* The copy check's entries: the batch's variants, then the reference of
 * every variant on the roster that the batch does not hold, of each
 * problem some answer to check answers (api_copy_checkable). Returns the count
 * (*entries malloc'd; entries past b->n_variants own their samples), or
 * SIZE_MAX when memory runs out (what was drawn freed). *incomplete set when
 * the batch's limits or the memory budget stopped the roster's references
 * short. */
static size_t gather(batch *b, api_copy_entry **entries, int *incomplete) {
    const api_roster *roster = b->call->req->roster;
    api_copy_entry *e = NULL;
    size_t n = 0, cap = 0, n_names = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < b->n_variants; i++)
        rc = add_entry(&e, &n, &cap,
                       (api_copy_entry){b->variants[i].sample,
                                        b->variants[i].suspect,
                                        b->variants[i].problem});
    const char **names = NULL;
    for (size_t q = 0; rc == 0 && roster && q < b->n_problems && !*incomplete;
         q++) {
        int suspects = 0;
        for (size_t i = 0; i < b->n_variants && !suspects; i++)
            suspects = e[i].problem == q && api_copy_checkable(&e[i]);
        if (!suspects)
            continue;
        if (!names && !(names = roster_variants(roster, &n_names)))
            rc = -1;
        else
            rc = add_roster_references(b, q, names, n_names, &e, &n, &cap,
                                       incomplete);
    }
    free(names);
    if (rc) {
        for (size_t i = b->n_variants; i < n; i++)
            free_sample((api_grade_sample *)e[i].sample);
        free(e);
        return SIZE_MAX;
    }
    *entries = e;
    return n;
}

/* ------------------------------------------------------ the report */

static const char *text_of(const api_buf *b) {
    return b->data ? b->data : "";
}

/* One match of the summary line. */
static void put_match(api_buf *out, const batch *b, const api_copy_entry *e,
                      const api_copy_match *m) {
    const struct batch_variant *who = &b->variants[m->who];
    api_buf_puts(out, "{\"id\":");
    api_buf_append(out, text_of(&who->id_json), who->id_json.len);
    api_buf_puts(out, ",\"matches\":{\"student\":");
    const char *source = e[m->source].sample->variant;
    api_buf_json_string(out, source, strlen(source));
    if (m->source < b->n_variants) { /* a submission of the batch */
        const struct batch_variant *src = &b->variants[m->source];
        api_buf_puts(out, ",\"id\":");
        api_buf_append(out, text_of(&src->id_json), src->id_json.len);
    }
    api_buf_puts(out, ",\"of\":");
    api_buf_puts(out, m->of_reference ? "\"reference\"" : "\"answer\"");
    api_buf_puts(out, ",\"max_abs_diff\":");
    api_buf_number(out, m->max_abs, 0);
    api_buf_puts(out, ",\"entries\":");
    api_buf_int(out, (long long)m->entries);
    api_buf_puts(out, "}}");
}

/* The distinct variants of entries[0 .. n): a group's members share
 * one. Returns SIZE_MAX when memory runs out. */
static size_t distinct_variants(const api_copy_entry *entries, size_t n) {
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names)
        return SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        names[i] = entries[i].sample->variant;
    qsort(names, n, sizeof *names, by_string);
    size_t distinct = n > 0;
    for (size_t i = 1; i < n; i++)
        distinct += strcmp(names[i], names[i - 1]) != 0;
    free(names);
    return distinct;
}

/* Why the report is incomplete, or NULL when it is not. */
static const char *incomplete_because(int references_short, api_copy_cut cut) {
    if (references_short)
        return "the batch's limits (--max-work, --compute-timeout) or the "
               "memory budget stopped the roster's references short";
    if (cut == API_COPY_STOPPED)
        return "the batch's time limit (--compute-timeout) stopped the "
               "check before every suspect was compared";
    if (cut == API_COPY_CROWDED)
        return "some suspects' answers are alike to more than 32 others' "
               "(equal sums): only the first 32 were compared";
    return NULL;
}

int api_batch_check_copies(batch *b, batch_doc_entry *doc, int array_form,
                           uint64_t *charged) {
    if (b->n_variants == 0)
        return 0;
    api_call *call = b->call;
    api_copy_entry *entries = NULL;
    int references_short = 0;
    size_t n = gather(b, &entries, &references_short);
    api_copy_match *found = NULL;
    size_t n_found = 0, checked = 0;
    api_copy_cut cut = API_COPY_WHOLE;
    size_t references =
        n == SIZE_MAX ? SIZE_MAX : distinct_variants(entries, n);
    int rc = references == SIZE_MAX
                 ? -1
                 : api_copies_find(entries, n, check_stops, b, &found, &n_found,
                                   &checked, &cut);
    if (rc) {
        if (n != SIZE_MAX)
            for (size_t i = b->n_variants; i < n; i++)
                free_sample((api_grade_sample *)entries[i].sample);
        free(entries);
        return api_fail(&call->problem, API_E_INTERNAL, NULL, "out of memory");
    }
    const char *incomplete = incomplete_because(references_short, cut);
    for (size_t k = 0; doc && k < n_found; k++) {
        const struct batch_variant *who = &b->variants[found[k].who];
        const char *source_id =
            found[k].source < b->n_variants
                ? text_of(&b->variants[found[k].source].id_text)
                : NULL;
        api_copy_note(&doc[who->doc].grade.copy_note, &found[k],
                      entries[found[k].source].sample->variant, source_id);
    }
    if (!doc) {
        api_buf *out = &call->out;
        api_buf_puts(out, array_form ? ",\n" : "");
        api_buf_puts(out, "{\"copies\":{\"variants\":");
        api_buf_int(out, (long long)b->n_variants);
        api_buf_puts(out, ",\"references\":");
        api_buf_int(out, (long long)references);
        if (incomplete) {
            api_buf_puts(out, ",\"incomplete\":");
            api_buf_json_string(out, incomplete, strlen(incomplete));
        }
        api_buf_puts(out, ",\"checked\":");
        api_buf_int(out, (long long)checked);
        api_buf_puts(out, ",\"found\":");
        api_buf_int(out, (long long)n_found);
        api_buf_puts(out, ",\"matches\":[");
        for (size_t k = 0; k < n_found; k++) {
            if (k)
                api_buf_putc(out, ',');
            put_match(out, b, entries, &found[k]);
        }
        api_buf_puts(out, "]}}");
        if (!array_form)
            api_buf_putc(out, '\n');
        rc = api_batch_reserve_answer(call, charged, out->cap);
    }
    for (size_t i = b->n_variants; i < n; i++)
        free_sample((api_grade_sample *)entries[i].sample);
    free(entries);
    free(found);
    return rc;
}
