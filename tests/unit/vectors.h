/*
 * vectors.h — reader for the committed reference vectors in tests/vectors/
 * (format: tests/vectors/vecfile.py). A file is a list of cases; a case is
 * a list of named row-major tensors of doubles:
 *     case NAME
 *     FIELD RANK D0 ... D(RANK-1)
 *     numbers ...
 *     end
 * with '#' comment lines between entries. Paths are relative to the
 * repository root, where `make test` runs the suites.
 */
#ifndef VECTORS_H
#define VECTORS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VEC_MAX_FIELDS 32
#define VEC_MAX_RANK 4

typedef struct {
    char name[64];
    size_t rank;
    size_t dims[VEC_MAX_RANK];
    size_t count; /* product of dims (1 for rank 0) */
    double *data; /* malloc'd */
} vec_tensor;

typedef struct {
    char name[64];
    size_t n;
    vec_tensor fields[VEC_MAX_FIELDS];
} vec_case;

static inline void vec_case_free(vec_case *c) {
    for (size_t i = 0; i < c->n; i++)
        free(c->fields[i].data);
    c->n = 0;
}

/* Skips blank and '#' lines; reads one word into buf. 0 at end of file. */
static inline int vec_word(FILE *f, char *buf, size_t size) {
    for (;;) {
        int ch = fgetc(f);
        while (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r')
            ch = fgetc(f);
        if (ch == EOF)
            return 0;
        if (ch == '#') {
            while (ch != '\n' && ch != EOF)
                ch = fgetc(f);
            continue;
        }
        size_t n = 0;
        while (ch != EOF && ch != ' ' && ch != '\n' && ch != '\t' &&
               ch != '\r') {
            if (n + 1 < size)
                buf[n++] = (char)ch;
            ch = fgetc(f);
        }
        buf[n] = '\0';
        return 1;
    }
}

/* Reads the next case into *c. Returns 1 on success, 0 at the end of the
 * file, -1 on a malformed file. */
static inline int vec_read_case(FILE *f, vec_case *c) {
    char word[64];
    c->n = 0;
    if (!vec_word(f, word, sizeof word))
        return 0;
    if (strcmp(word, "case") != 0 || !vec_word(f, c->name, sizeof c->name))
        return -1;
    for (;;) {
        if (!vec_word(f, word, sizeof word))
            return -1;
        if (strcmp(word, "end") == 0)
            return 1;
        if (c->n == VEC_MAX_FIELDS)
            return -1;
        vec_tensor *t = &c->fields[c->n];
        memcpy(t->name, word, sizeof t->name);
        if (fscanf(f, "%zu", &t->rank) != 1 || t->rank > VEC_MAX_RANK)
            return -1;
        t->count = 1;
        for (size_t d = 0; d < t->rank; d++) {
            if (fscanf(f, "%zu", &t->dims[d]) != 1)
                return -1;
            t->count *= t->dims[d];
        }
        t->data = malloc((t->count ? t->count : 1) * sizeof(double));
        if (!t->data)
            return -1;
        c->n++;
        for (size_t i = 0; i < t->count; i++) {
            if (fscanf(f, "%lf", &t->data[i]) != 1)
                return -1;
        }
    }
}

/* The field called name, or NULL. */
static inline const vec_tensor *vec_get(const vec_case *c, const char *name) {
    for (size_t i = 0; i < c->n; i++) {
        if (strcmp(c->fields[i].name, name) == 0)
            return &c->fields[i];
    }
    return NULL;
}

/* Its data, or NULL when the field is absent. */
static inline const double *vec_data(const vec_case *c, const char *name) {
    const vec_tensor *t = vec_get(c, name);
    return t ? t->data : NULL;
}

#endif /* VECTORS_H */
