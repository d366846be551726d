/*
 * size.c — overflow-checked size arithmetic. Every buffer size in the
 * library is computed with these before anything is allocated.
 */
#include "attn.h"

#include <stdint.h>

attn_status attn_size_mul(size_t *out, size_t a, size_t b) {
    if (a != 0 && b > SIZE_MAX / a)
        return ATTN_E_OVERFLOW;
    *out = a * b;
    return ATTN_OK;
}

attn_status attn_size_add(size_t *out, size_t a, size_t b) {
    if (b > SIZE_MAX - a)
        return ATTN_E_OVERFLOW;
    *out = a + b;
    return ATTN_OK;
}

attn_status attn_size_prod(size_t *out, const size_t *dims, size_t n) {
    size_t p = 1;
    for (size_t i = 0; i < n; i++) {
        if (dims[i] == 0) { /* the product is 0 whatever the other dims */
            *out = 0;
            return ATTN_OK;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (attn_size_mul(&p, p, dims[i]) != ATTN_OK)
            return ATTN_E_OVERFLOW;
    }
    *out = p;
    return ATTN_OK;
}
