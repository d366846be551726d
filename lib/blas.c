/*
 * blas.c — what libattn knows of the BLAS it calls (see attn.h): the
 * library's name, version and build text, and its thread setting. Only
 * lib/ includes <cblas.h>; OpenBLAS's extras only under OPENBLAS_VERSION.
 */
#include <cblas.h>

#include "attn.h"

attn_blas_info attn_blas_about(void) {
#ifdef OPENBLAS_VERSION
    attn_blas_info info = {"OpenBLAS", OPENBLAS_VERSION, openblas_get_config()};
#else
    attn_blas_info info = {"cblas", "", ""};
#endif
    return info;
}

int attn_blas_set_threads(int n) {
#ifdef OPENBLAS_VERSION
    openblas_set_num_threads(n);
    return openblas_get_num_threads();
#else
    (void)n;
    return -1;
#endif
}

int attn_blas_threads(void) {
#ifdef OPENBLAS_VERSION
    return openblas_get_num_threads();
#else
    return -1;
#endif
}
