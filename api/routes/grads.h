/*
 * grads.h — "grad_output" on the attention routes (docs/contract.md section 9):
 * the upstream gradient dL/dO arrives with the output's shape, and the answer
 * gains "grads", dL/dX for every input and parameter X, keyed by the
 * request field that holds X.
 *
 *   grad_output: (B, Nq, d_out), or (Nq, d_out) for unbatched input, where
 *   d_out is dv (dot, additive) or W_o's rows (multihead)
 *   -> "grads": {"queries", "keys", "values", parameters...}, each of its
 *      field's shape (unbatched inputs keep rank 2).
 * A tensor that defaulted from another (multihead self-attention) has no
 * entry: its gradient is added into the field it was copied from. Each
 * gradient has the shape of a tensor that already passed --max-elements,
 * so gradients never add a 413 of their own; the work estimate triples.
 */
#ifndef API_GRADS_H
#define API_GRADS_H

#include <stddef.h>
#include <stdint.h>

#include "problem.h"
#include "tensor.h"

/* grad_output as every attention route accepts it: rank 3, or rank 2 for
 * unbatched input (the rest is a cross-field check). */
extern const api_tensor_spec api_grad_output_spec;

/* Cross-field check of a decoded grad_output g against the output's shape
 * (B, Nq, d_out), or (Nq, d_out) when batched is 0: shape_mismatch at
 * /grad_output with that exact shape as "expected" and g's as "got".
 * Returns 0 or -1 (p set). */
int api_grads_cross(const api_tensor *g, int batched, size_t B, size_t Nq,
                    size_t d_out, api_problem *p);

/* The work estimate with gradients: the forward pass's, tripled when
 * has_grad (saturating). */
uint64_t api_grads_work(uint64_t forward_work, int has_grad);

/* dst[i] += src[i] for i < n: a defaulted tensor's gradient into the
 * field it was copied from. */
void api_grads_accumulate(double *dst, const double *src, size_t n);

/* One "grads" member: its answer name ("grads." + the request field's)
 * and the gradient with that field's shape (as decoded, so rank 2 stays
 * rank 2). */
typedef struct {
    const char *name;
    const double *data;
    const size_t *shape;
    size_t rank;
} api_grad_entry;

#endif /* API_GRADS_H */
