/*
 * memory_budget.c — the default memory budget (see memory_budget.h).
 */
#include "memory_budget.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

/* The number in the file at path, or 0 when it is absent, "max", or so
 * large that it means no limit (cgroup v1 writes 2^63 rounded to a page). */
static uint64_t read_limit(const char *path) {
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    char text[64] = "";
    int ok = fgets(text, sizeof text, f) != NULL;
    fclose(f);
    unsigned long long v;
    if (!ok || strncmp(text, "max", 3) == 0 || sscanf(text, "%llu", &v) != 1)
        return 0;
    return v >= (1ULL << 60) ? 0 : (uint64_t)v;
}

uint64_t srv_cgroup_memory_limit(void) {
    uint64_t v2 = read_limit("/sys/fs/cgroup/memory.max");
    if (v2 > 0)
        return v2;
    return read_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes");
}

uint64_t srv_memory_budget_default(const char **source) {
    uint64_t limit = srv_cgroup_memory_limit();
    if (limit > 0) {
        *source = "3/4 of the cgroup memory limit";
        return limit / 4 * 3;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    *source = "half of RAM";
    if (pages <= 0 || page <= 0)
        return (uint64_t)1 << 30; /* unknown: 1 GiB */
    return (uint64_t)pages * (uint64_t)page / 2;
}

uint64_t srv_memory_budget(uint64_t option, const char **source) {
    if (option == SRV_MEMORY_BUDGET_AUTO)
        return srv_memory_budget_default(source);
    *source = "--memory-budget";
    return option;
}
