/*
 * testfs.h — file helpers shared by the data-driven test programs (the
 * case replayer, the JSON suite runner, the lab page test and the fuzz
 * corpus writer): read a whole file, list a directory in name order.
 */
#ifndef TESTFS_H
#define TESTFS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The whole file at path in a malloc'd, NUL-terminated buffer (the NUL is
 * not counted in *len); NULL when it cannot be opened. */
static inline char *test_slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)(n < 0 ? 0 : n) + 1);
    size_t got = buf ? fread(buf, 1, (size_t)(n < 0 ? 0 : n), f) : 0;
    fclose(f);
    if (!buf)
        return NULL;
    buf[got] = '\0';
    *len = got;
    return buf;
}

static inline int test_by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir without dot files, sorted by name, as a malloc'd array
 * of malloc'd names in *out (free with test_list_free); only directories
 * when dirs_only. Returns the count (0 when dir cannot be read). */
static inline size_t test_list(const char *dir, int dirs_only, char ***out) {
    DIR *d = opendir(dir);
    size_t n = 0, cap = 64;
    char **names = malloc(cap * sizeof *names);
    struct dirent *e;
    while (d && names && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (dirs_only) {
            char full[1024];
            struct stat st;
            snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
            if (stat(full, &st) != 0 || !S_ISDIR(st.st_mode))
                continue;
        }
        if (n == cap) {
            char **more = realloc(names, (cap *= 2) * sizeof *names);
            if (!more)
                break;
            names = more;
        }
        names[n++] = strdup(e->d_name);
    }
    if (d)
        closedir(d);
    if (names)
        qsort(names, n, sizeof *names, test_by_name);
    *out = names;
    return n;
}

static inline void test_list_free(char **names, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

#endif /* TESTFS_H */
