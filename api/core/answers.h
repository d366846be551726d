/*
 * answers.h — what each computing route answers: the members of its 200
 * body, named with dots for nested results ("params.W_q",
 * "grads.queries", "diagnostics.scores.min"), with their batched rank,
 * their Open Inference Protocol datatype and what in the request makes
 * the route include them. Each route's table is part of its entry in the
 * route table (route.h). POST /grade checks answer fields against it, and
 * the Open Inference Protocol front (kserve.h) lists and names its outputs
 * from it, so both follow the routes in one place.
 *
 * Left out on purpose: diagnostics.warnings (a list of events, not a
 * tensor to send; /grade compares it entry by entry on its own) and the
 * query echoes of nothing else.
 */
#ifndef API_ANSWERS_H
#define API_ANSWERS_H

#include <stddef.h>

typedef struct {
    const char *name;  /* dotted member path: "grads.queries" */
    unsigned rank;     /* rank for batched input; 0: a scalar number */
    int int64;         /* 1: integers (INT64 on the v2 front), else FP64 */
    int record;        /* 1: a member of every entry of an array of objects
                          (NW "history.w" is history[k].w);
                          API_ANSWER_TENSORS: an object of tensors under
                          literal keys (below) */
    const char *needs; /* what the request must hold for the route to
                          answer it ("\"return_scores\": true"), or NULL
                          when every successful answer has it */
} api_answer_field;

typedef struct {
    const api_answer_field *fields;
    size_t n;
} api_answer_table;

/* record = API_ANSWER_TENSORS: the member is an object of tensors under
 * literal keys that may hold dots, a TENSORS item (result.h): a PyTorch
 * state_dict ("layers.0.linear1.weight"), a Transformer's trace
 * ("self_attention.Q"). Its keys depend on the request, so the table
 * names only the member (rank 0: the members' ranks differ); /grade
 * grades each key as a field of its own named "<member>.<key>"
 * ("grads.state_dict.layers.0.linear1.weight"). */
#define API_ANSWER_TENSORS 2

/* A table of the fields of the array f. */
#define API_ANSWER_TABLE(f)                                                    \
    { f, sizeof f / sizeof f[0] }

/* What the request must hold for a member to be answered (needs). */
#define API_ANSWER_ALWAYS NULL
#define API_ANSWER_WEIGHTS "\"return_weights\" not false"
#define API_ANSWER_SCORES "\"return_scores\": true"
#define API_ANSWER_DIAG "\"diagnostics\": true"
#define API_ANSWER_GRADS "grad_output"
#define API_ANSWER_TRACE "\"trace\": true"
#define API_ANSWER_DRAWN "num_hiddens (and seed) instead of given parameters"

/* The diagnostics members (diagnostics.h) for rows of rank r: dot and
 * additive (B, Nq), multihead (B, H, Nq). */
#define API_ANSWER_DIAGNOSTICS(r)                                              \
    {"diagnostics.scores.min", 0, 0, 0, API_ANSWER_DIAG},                      \
        {"diagnostics.scores.max", 0, 0, 0, API_ANSWER_DIAG},                  \
        {"diagnostics.scores.mean", 0, 0, 0, API_ANSWER_DIAG},                 \
        {"diagnostics.scores.std", 0, 0, 0, API_ANSWER_DIAG},                  \
        {"diagnostics.entropy", r, 0, 0, API_ANSWER_DIAG},                     \
        {"diagnostics.max_weight", r, 0, 0, API_ANSWER_DIAG}, {                \
        "diagnostics.argmax", r, 1, 0, API_ANSWER_DIAG                         \
    }

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
