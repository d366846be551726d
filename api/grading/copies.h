/*
 * copies.h — copied answers across variants (contract section 13b,
 * docs/variants.md "The copy report"): in a batch where each student
 * answers their own variant, an answer that is neither right for its own
 * variant nor a named mistake of it is checked against every other
 * student's reference and every other submission of the batch; a match
 * under the question's own comparison names the student whose variant
 * (or answer) it is.
 *
 * What is compared is each grade's sample (grade_result.h): up to 256
 * entries of each field, evenly spaced, the same entries for every
 * variant. Candidates are found through an index, not by comparing every
 * pair: each field's sampled entries are summed, the sums of every
 * reference and every answer sorted, and a suspect looks only between
 * its own sum minus and plus the farthest its entries may be from a
 * match (the comparison's reach, summed); each candidate is then checked
 * entry by entry. So a class of n costs O(n log n) plus the candidates.
 *
 * Precision comes first: a grade that passes, or whose failure a named
 * mistake explains, is never flagged; nor is an answer that its own
 * reference matches on the sample (its error lies outside it), nor one
 * with too few distinct numbers to belong to any one variant (zeros,
 * uniform weights), which two students can reach apart. Students who
 * share a variant (a group) are never each other's copies.
 */
#ifndef API_COPIES_H
#define API_COPIES_H

#include <stddef.h>

#include "grade_result.h"

/* One graded submission of a variant, as the copy check reads it. */
typedef struct {
    const api_grade_sample *sample; /* its sample (NULL: not a variant) */
    int suspect;    /* 1: failed, and no mistake of the catalogue explains it */
    size_t problem; /* entries of one problem only are compared */
} api_copy_entry;

/* A copy found: entries[who]'s answer matches entries[source]'s
 * reference (of_reference 1: the right answer of source's variant) or
 * answer (0), every sampled entry within the comparison; max_abs is the
 * largest difference over the `entries` compared. */
typedef struct {
    size_t who, source;
    int of_reference;
    double max_abs;
    size_t entries;
} api_copy_match;

/* 1 when e is checked for copies: a suspect whose sample its own
 * reference does not match, of enough distinct numbers (above). */
int api_copy_checkable(const api_copy_entry *e);

/* The most candidates a suspect's answer is compared with entry by entry.
 * An honest class's sums differ, so a suspect has a few; answers made
 * alike on purpose (equal sums, entries that differ only late) would
 * make the check quadratic: past this many, the closest are left
 * unchecked and the check says it is incomplete. */
#define API_COPY_CANDIDATES_MAX 32

/* Why a copy check stopped short (api_copies_find's *cut): nothing, its
 * stop function (the batch's time limit, a client gone), or a suspect
 * with more candidates than API_COPY_CANDIDATES_MAX. */
typedef enum {
    API_COPY_WHOLE = 0,
    API_COPY_STOPPED,
    API_COPY_CROWDED
} api_copy_cut;

/* Check entries[0 .. n) for copies: into *matches (malloc'd, at most one
 * per suspect: a reference's match before an answer's, an answer that is
 * no suspect's before a suspect's, which may be a copy of it, then the
 * closest), *n_matches of them, in the order of who; *checked the
 * suspects checked. stop (NULL: never), asked before each suspect, ends
 * the check when it returns non-zero; *cut says whether and why the check
 * stopped short (API_COPY_STOPPED wins over API_COPY_CROWDED). Returns 0,
 * or -1 when memory runs out (nothing found). */
int api_copies_find(const api_copy_entry *entries, size_t n,
                    int (*stop)(void *ctx), void *ctx, api_copy_match **matches,
                    size_t *n_matches, size_t *checked, api_copy_cut *cut);

/* The instructor's line about m (no newline): "copy: matches the
 * reference of s0123's variant (max abs difference 2.3e-07 over 512
 * sampled entries)"; source_id names entries[m->source]. */
void api_copy_note(api_buf *out, const api_copy_match *m,
                   const char *source_variant, const char *source_id);

#endif /* API_COPIES_H */
