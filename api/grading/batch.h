/*
 * batch.h — POST /grade/batch: a whole class's answers graded in one
 * request (docs/batch.md). Each submission is a /grade body with an "id";
 * the answer has one line per submission, in order, each its /grade
 * answer or its own problem; equal requests share one reference and one
 * answer per mistake (reference_cache.h).
 */
#ifndef API_BATCH_H
#define API_BATCH_H

#include <stddef.h>

#include "reference_cache.h"
#include "route.h"

/* The route table's entry (route.h). */
extern const api_route api_route_grade_batch;

/* The most submissions one batch holds (413 beyond, before any is
 * graded): each answers a line of its own, a problem line some hundred
 * bytes even for a submission of two, so the count bounds the answer as
 * the body's size cannot. A class of this size is graded in one batch;
 * more are split. */
#define API_BATCH_SUBMISSIONS_MAX 10000

/* What the last batch handled on this thread did: for tests and the
 * bench, which count what was shared. */
typedef struct {
    size_t submissions;         /* lines answered */
    size_t problems;            /* of them, problem lines */
    size_t references_computed; /* the route run for a reference */
    size_t mistakes_computed;   /* a mistake's answer computed */
    size_t requests_elided;     /* submissions whose request was not parsed */
    unsigned long long work;    /* operations counted (--max-work) */
    api_reference_cache_stats cache;
} api_batch_stats;

void api_batch_last_stats(api_batch_stats *s);

#endif /* API_BATCH_H */
