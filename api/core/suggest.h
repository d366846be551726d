/*
 * suggest.h — "did you mean `valid_lens`?": the known name closest to a
 * misspelt one, by Levenshtein edit distance (case-insensitive).
 */
#ifndef API_SUGGEST_H
#define API_SUGGEST_H

#include <stddef.h>

/* The name in names[0 … n-1] with the smallest edit distance to the n_key
 * bytes of key (ties: the earlier name), or NULL when n == 0. Only the
 * first 64 bytes of key are compared, so the cost is bounded. */
const char *api_suggest(const char *key, size_t n_key, const char *const *names,
                        size_t n);

/* Edit distance (insertions, deletions, substitutions; ASCII case folded)
 * between a (na bytes) and b (nb bytes), both at most 64 bytes (longer
 * inputs are cut to 64). */
size_t api_edit_distance(const char *a, size_t na, const char *b, size_t nb);

#endif /* API_SUGGEST_H */
