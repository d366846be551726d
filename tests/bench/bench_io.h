/*
 * bench_io.h — what the in-process benchmarks share: a file read whole,
 * the clock, and the median of timings.
 */
#ifndef BENCH_IO_H
#define BENCH_IO_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC in milliseconds. */
static inline double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* For qsort over doubles, ascending. */
static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of ms[0 .. reps), which it sorts. */
static inline double median(double *ms, int reps) {
    qsort(ms, (size_t)reps, sizeof *ms, cmp_double);
    return ms[reps / 2];
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
