/*
 * answers.c — lookups in a route's table of answer members (see
 * answers.h); the tables are in the routes' entries.
 */
#include "answers.h"

#include <string.h>

const api_answer_field *api_answers_field(const api_answer_table *t,
                                          const char *name, size_t len) {
    for (size_t i = 0; i < t->n; i++)
        if (strlen(t->fields[i].name) == len &&
            !memcmp(t->fields[i].name, name, len))
            return &t->fields[i];
    return NULL;
}

int api_answers_is_group(const api_answer_table *t, const char *name,
                         size_t len) {
    for (size_t i = 0; i < t->n; i++) {
        const char *f = t->fields[i].name;
        if (strlen(f) > len && !memcmp(f, name, len) && f[len] == '.')
            return 1;
    }
    return 0;
}

size_t api_answers_children(const api_answer_table *t, const char *prefix,
                            size_t plen, char names[][API_ANSWER_SEGMENT_MAX],
                            size_t cap) {
    size_t n = 0;
    for (size_t i = 0; i < t->n && n < cap; i++) {
        const char *f = t->fields[i].name;
        if (plen && (strncmp(f, prefix, plen) != 0 || f[plen] != '.'))
            continue;
        const char *seg = plen ? f + plen + 1 : f;
        size_t len = strcspn(seg, ".");
        if (len >= API_ANSWER_SEGMENT_MAX)
            continue;
        int seen = 0;
        for (size_t k = 0; k < n && !seen; k++)
            seen = strlen(names[k]) == len && !memcmp(names[k], seg, len);
        if (seen)
            continue;
        memcpy(names[n], seg, len);
        names[n][len] = '\0';
        n++;
    }
    return n;
}
