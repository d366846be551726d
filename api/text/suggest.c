/*
 * suggest.c — closest known field name by Levenshtein distance
 * (Wagner & Fischer 1974, two-row dynamic programme).
 */
#include "suggest.h"

#include <ctype.h>
#include <stdio.h>
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

/* Whether the n_key bytes of key occur in name, ignoring case. */
static int contains(const char *name, const char *key, size_t n_key) {
    size_t len = strlen(name);
    for (size_t at = 0; at + n_key <= len; at++) {
        size_t i = 0;
        while (i < n_key && tolower((unsigned char)name[at + i]) ==
                                tolower((unsigned char)key[i]))
            i++;
        if (i == n_key)
            return 1;
    }
    return 0;
}

const char *api_suggest(const char *key, size_t n_key, const char *const *names,
                        size_t n) {
    const char *best = NULL;
    /* 1. a name that holds the key whole: "lens" is valid_lens */
    for (size_t i = 0; n_key >= 3 && i < n; i++)
        if (contains(names[i], key, n_key) &&
            (!best || strlen(names[i]) < strlen(best)))
            best = names[i];
    if (best)
        return best;
    /* 2. the nearest name, if it is near */
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(names[i]);
        size_t d = api_edit_distance(key, n_key, names[i], len);
        size_t longer = len > n_key ? len : n_key;
        size_t close = (longer + 2) / 3;
        if (d <= close && d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    return best;
}

const char *api_join_names(char *out, size_t cap, const char *const *names,
                           size_t n) {
    size_t len = 0;
    if (cap == 0)
        return out;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t need = strlen(names[i]) + (i ? 2 : 0);
        if (len + need + 1 > cap)
            continue;
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? ", " : "",
                                names[i]);
    }
    return out;
}

const char *api_did_you_mean(char out[API_SUGGEST_TEXT], const char *key,
                             size_t n_key, const char *const *names, size_t n) {
    const char *best = api_suggest(key, n_key, names, n);
    if (best)
        snprintf(out, API_SUGGEST_TEXT, "; did you mean `%.64s`?", best);
    else
        snprintf(out, API_SUGGEST_TEXT, ".");
    return out;
}
