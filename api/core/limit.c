/*
 * limit.c — derived-size and work limits (see limit.h).
 */
#include "limit.h"

#include <stdio.h>

uint64_t api_work_mul(uint64_t a, uint64_t b) {
    if (a && b > UINT64_MAX / a)
        return UINT64_MAX;
    return a * b;
}

uint64_t api_work_add(uint64_t a, uint64_t b) {
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

uint64_t api_work_prod(const size_t *dims, size_t n) {
    uint64_t w = 1;
    for (size_t i = 0; i < n; i++)
        w = api_work_mul(w, dims[i]);
    return w;
}

int api_limit_elements(const char *what, const size_t *dims, size_t n,
                       size_t max_elements, api_problem *p) {
    uint64_t count = api_work_prod(dims, n);
    if (count <= max_elements)
        return 0;
    char shape[160];
    size_t len = 0;
    shape[len++] = '(';
    for (size_t i = 0; i < n && len + 24 < sizeof shape; i++)
        len += (size_t)snprintf(shape + len, sizeof shape - len, "%s%zu",
                                i ? ", " : "", dims[i]);
    snprintf(shape + len, sizeof shape - len, ")");
    return api_fail(p, API_E_PAYLOAD_TOO_LARGE, NULL,
                    "the %s would have shape %s: %llu elements, over the "
                    "limit of %zu per tensor (--max-elements)",
                    what, shape, (unsigned long long)count, max_elements);
}

int api_limit_work(uint64_t work, uint64_t max_work, api_problem *p) {
    if (work <= max_work)
        return 0;
    return api_fail(p, API_E_PAYLOAD_TOO_LARGE, NULL,
                    "this request needs about %llu multiply-adds; the limit "
                    "is %llu (--max-work)",
                    (unsigned long long)work, (unsigned long long)max_work);
}
