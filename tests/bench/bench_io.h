/*
 * bench_io.h — what the in-process benchmarks share: a file read whole,
 * and the comparison qsort sorts timings with.
 */
#ifndef BENCH_IO_H
#define BENCH_IO_H

#include <stdio.h>
#include <stdlib.h>

/* For qsort over doubles, ascending. */
static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The file at path, malloc'd and NUL-terminated (*len bytes before the
 * NUL), or NULL when it cannot be read. */
static inline char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    fclose(f);
    if (s)
        s[n] = '\0';
    *len = s ? (size_t)n : 0;
    return s;
}

#endif /* BENCH_IO_H */
