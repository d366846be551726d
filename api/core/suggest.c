/*
 * suggest.c — closest known field name by Levenshtein distance
 * (Wagner & Fischer 1974, two-row dynamic programme).
 */
#include "suggest.h"

#include <ctype.h>
#include <string.h>

#define SUGGEST_MAX 64

size_t api_edit_distance(const char *a, size_t na, const char *b, size_t nb) {
    if (na > SUGGEST_MAX)
        na = SUGGEST_MAX;
    if (nb > SUGGEST_MAX)
        nb = SUGGEST_MAX;
    size_t prev[SUGGEST_MAX + 1], cur[SUGGEST_MAX + 1];
    for (size_t j = 0; j <= nb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= na; i++) {
        cur[0] = i;
        int ca = tolower((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= nb; j++) {
            int cb = tolower((unsigned char)b[j - 1]);
            size_t best = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            cur[j] = best;
        }
        memcpy(prev, cur, (nb + 1) * sizeof *prev);
    }
    return prev[nb];
}

const char *api_suggest(const char *key, size_t n_key, const char *const *names,
                        size_t n) {
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        size_t d = api_edit_distance(key, n_key, names[i], strlen(names[i]));
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    return best;
}
