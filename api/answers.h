/*
 * answers.h — what each computing route answers: the members of its 200
 * body, named with dots for nested results ("params.W_q",
 * "grads.queries", "diagnostics.scores.min"), with their batched rank,
 * their Open Inference Protocol datatype and what in the request makes
 * the route include them. POST /grade checks answer fields against this
 * table, and the Open Inference Protocol front (kserve.h) lists and names
 * its outputs from it, so both follow the routes in one place.
 *
 * Left out on purpose: diagnostics.warnings (a list of events, not numbers
 * to compare or a tensor to send) and the query echoes of nothing else.
 */
#ifndef API_ANSWERS_H
#define API_ANSWERS_H

#include <stddef.h>

typedef struct {
    const char *name;  /* dotted member path: "grads.queries" */
    unsigned rank;     /* rank for batched input; 0: a scalar number */
    int int64;         /* 1: integers (INT64 on the v2 front), else FP64 */
    int record;        /* 1: a member of every entry of an array of objects
                          (NW "history.w" is history[k].w) */
    const char *needs; /* what the request must hold for the route to
                          answer it ("\"return_scores\": true"), or NULL
                          when every successful answer has it */
} api_answer_field;

typedef struct {
    const char *route; /* "/attention/dot" */
    const api_answer_field *fields;
    size_t n;
} api_answer_table;

/* The table of the route whose path is route, or NULL for a route that
 * computes nothing (health, version, ...). */
const api_answer_table *api_answers_find(const char *route);

/* The field named exactly by the len bytes of name, or NULL. */
const api_answer_field *api_answers_field(const api_answer_table *t,
                                          const char *name, size_t len);

/* 1 when the len bytes of name are a group: some field's name is
 * name + "." + more ("grads", "diagnostics.scores", "history"). */
int api_answers_is_group(const api_answer_table *t, const char *name,
                         size_t len);

/* Longest name of one level ("max_weight"), NUL included. */
#define API_ANSWER_SEGMENT_MAX 32

/* The names one level below the group prefix (plen bytes; plen 0 for the
 * top level), each once, in table order: "grads" -> "queries", "keys",
 * ... Copies at most cap of them into names and returns how many. */
size_t api_answers_children(const api_answer_table *t, const char *prefix,
                            size_t plen, char names[][API_ANSWER_SEGMENT_MAX],
                            size_t cap);

#endif /* API_ANSWERS_H */
