/*
 * limit.h — the derived-size and work limits (docs/contract.md "Limits"): every
 * tensor a request makes (outputs, weights, parameters) is bounded by
 * --max-elements, and the estimated scalar operations by --max-work.
 * Estimates saturate at UINT64_MAX instead of wrapping.
 */
#ifndef API_LIMIT_H
#define API_LIMIT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "problem.h"

/* Operations counted for one exp, sin or cos (a range reduction and a
 * polynomial of about ten terms): kernels and encodings that evaluate one
 * per entry count this many per entry, not one. */
#define API_WORK_EXP 20

/* Operations counted for one feature of additive attention, tanh(pq +
 * pk) and its product with w_v: measured on 2 cores, the largest additive
 * request that 2³³ admitted at 1 per feature (Nq = Nk = 2048, h = 2000)
 * took 18 s, against under a second for the largest dot; at 4 it takes
 * about 4 s, inside --compute-timeout. */
#define API_WORK_TANH 4

/* Operations counted for one number drawn into fresh memory (a seeded
 * Transformer's parameters): measured on 2 cores, 26 ns each, writing
 * pages never touched before being most of it; at 64, the 2³³ of the
 * default --max-work admit about 134 million, some 3.5 s. */
#define API_WORK_DRAW 64

/* a·b and a + b, saturating at UINT64_MAX. */
uint64_t api_work_mul(uint64_t a, uint64_t b);
uint64_t api_work_add(uint64_t a, uint64_t b);

/* Product of dims[0 … n-1], saturating. */
uint64_t api_work_prod(const size_t *dims, size_t n);

/* 413 payload_too_large when the derived tensor `what` with shape
 * dims[0 … n-1] has more than max_elements entries (no pointer: no single
 * field is at fault). Returns 0 or -1. */
int api_limit_elements(const char *what, const size_t *dims, size_t n,
                       size_t max_elements, api_problem *p);

/* 413 payload_too_large when work (estimated multiply-adds) exceeds
 * max_work. Returns 0 or -1. */
int api_limit_work(uint64_t work, uint64_t max_work, api_problem *p);

/* 413 payload_too_large when an answer of answer_bytes of text (cost.h)
 * is more than max_bytes, the bound --max-elements sets (cost.h,
 * api_cost_answer_max): a small request must not buy an answer of
 * gigabytes (drawn parameters of a large num_hiddens, weights and scores
 * both at --max-elements). Names --max-elements. Returns 0 or -1. */
int api_limit_answer(uint64_t answer_bytes, uint64_t max_bytes,
                     size_t max_elements, api_problem *p);

/* The fastest any route computes, in counted operations per second (a
 * product on every core of a large machine): a request whose estimate
 * needs longer than --compute-timeout even at this speed is refused up
 * front, the same on every machine. */
#define API_OPS_PER_SECOND_MAX 5e10

/* 413 payload_too_large when work would take more than timeout_s seconds
 * at API_OPS_PER_SECOND_MAX (timeout_s 0: no limit). Returns 0 or -1. */
int api_limit_time(uint64_t work, unsigned timeout_s, api_problem *p);

/* Start this thread's compute time limit: lib/'s loops stop timeout_s
 * seconds from now (attn_deadline_set); 0 clears it. */
void api_limit_deadline_start(unsigned timeout_s);

/* From now on this thread's computations stop at their next check once
 * *abandoned is non-zero (the client has gone: api_request.abandoned,
 * attn_deadline_watch); NULL clears it. */
void api_limit_watch(const atomic_int *abandoned);

/* The flag in force on this thread (api_limit_watch), or NULL. */
const atomic_int *api_limit_abandoned(void);

/* 1 when this thread's work should stop now whatever its time limit:
 * its client has gone (api_limit_watch's flag) or the server is stopping
 * (api_cancel_computing). For loops of the API's own, which lib/'s
 * deadline does not reach. */
int api_limit_cut_short(void);

/* api_limit_cut_short, or this thread's time limit
 * (api_limit_deadline_start) has passed: what lib/'s loops check, for the
 * API's own loops that can take long (grading's comparisons). */
int api_limit_time_is_up(void);

/* The 503 overloaded of a computation stopped at its time limit
 * (ATTN_E_DEADLINE), naming --compute-timeout. Returns -1. */
int api_limit_deadline_passed(api_problem *p);

#endif /* API_LIMIT_H */
