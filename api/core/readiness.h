/*
 * readiness.h — what the server tells the api about itself, for the
 * routes and fronts that report it: whether it takes work (api_set_ready,
 * api.h) and how many threads answer and compute (api_set_threads).
 */
#ifndef API_READINESS_H
#define API_READINESS_H

#include "api.h"

/* The HTTP threads api_set_threads was last given (1 before). */
int api_http_threads(void);

/* The BLAS threads api_set_threads settled on (1 before). */
int api_blas_threads_set(void);

#endif /* API_READINESS_H */
