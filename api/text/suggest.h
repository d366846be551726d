/*
 * suggest.h — "did you mean `valid_lens`?": the known name closest to a
 * misspelt one, by Levenshtein edit distance (case-insensitive).
 */
#ifndef API_SUGGEST_H
#define API_SUGGEST_H

#include <stddef.h>

/* A known name close to the n_key bytes of key: the shortest name that
 * contains key (3 bytes or more, case-insensitive: "lens" gives
 * "valid_lens"), else the name with the smallest edit distance (ties: the
 * earlier name) if that is at most a third of the longer length, rounded
 * up ("valid_len" gives "valid_lens", "query" gives "queries", "dropout"
 * nothing). NULL when no name is close or n == 0. Only the first 64 bytes
 * of key are compared, so the cost is bounded. */
const char *api_suggest(const char *key, size_t n_key, const char *const *names,
                        size_t n);

/* names[0 … n-1] as "a, b, c" into out (cap bytes), for a detail's list
 * of known names; names that do not fit are left out. Returns out. */
const char *api_join_names(char *out, size_t cap, const char *const *names,
                           size_t n);

/* Room for api_did_you_mean's text. */
#define API_SUGGEST_TEXT 96

/* "; did you mean `valid_lens`?" for the close name api_suggest finds, or
 * "." when there is none, into out (API_SUGGEST_TEXT bytes), for a detail
 * that goes on: "unknown field `x` in /attention/dot%s Known fields: ...".
 * Returns out. */
const char *api_did_you_mean(char out[API_SUGGEST_TEXT], const char *key,
                             size_t n_key, const char *const *names, size_t n);

/* Edit distance (insertions, deletions, substitutions; ASCII case folded)
 * between a (na bytes) and b (nb bytes), both at most 64 bytes (longer
 * inputs are cut to 64). */
size_t api_edit_distance(const char *a, size_t na, const char *b, size_t nb);

#endif /* API_SUGGEST_H */
