/*
 * grads.c — grad_output's shape rule and the "grads" answer (see grads.h).
 */
#include "grads.h"

#include "limit.h"

const api_tensor_spec api_grad_output_spec = {
    "grad_output", API_RANK(2) | API_RANK(3), API_TENSOR_MASKED_SCORES,
    "the output's: (B, Nq, d_out) or unbatched (Nq, d_out)", 0};

int api_grads_cross(const api_tensor *g, int batched, size_t B, size_t Nq,
                    size_t d_out, api_problem *p) {
    size_t want[3] = {B, Nq, d_out};
    const size_t *w = batched ? want : want + 1;
    size_t rank = batched ? 3 : 2;
    int same = g->rank == rank;
    for (size_t i = 0; same && i < rank; i++)
        same = g->shape[i] == w[i];
    if (same)
        return 0;
    long long expected[3];
    for (size_t i = 0; i < rank; i++)
        expected[i] = (long long)w[i];
    if (batched)
        api_fail(p, API_E_SHAPE_MISMATCH, "/grad_output",
                 "grad_output is dL/d(output) and must have the output's "
                 "shape (B, Nq, d_out) = (%zu, %zu, %zu)",
                 B, Nq, d_out);
    else
        api_fail(p, API_E_SHAPE_MISMATCH, "/grad_output",
                 "grad_output is dL/d(output) and must have the output's "
                 "shape; for unbatched input that is (Nq, d_out) = (%zu, "
                 "%zu)",
                 Nq, d_out);
    api_problem_shapes_z(p, expected, rank, g->shape, g->rank);
    return -1;
}

uint64_t api_grads_work(uint64_t forward_work, int has_grad) {
    return has_grad ? api_work_mul(forward_work, 3) : forward_work;
}

void api_grads_accumulate(double *dst, const double *src, size_t n) {
    for (size_t i = 0; i < n; i++)
        dst[i] += src[i];
}
