/*
 * transformer_internal.h — what transformer.c shares with
 * transformer_backward.c and transformer_trace.c; not part of the public
 * interface (lib/attn.h).
 */
#ifndef ATTN_TRANSFORMER_INTERNAL_H
#define ATTN_TRANSFORMER_INTERNAL_H

#include "attn.h"

#include <stddef.h>

/* Arguments shared by the forward and backward passes: sizes (no zero,
 * H dividing E, nothing overflowing, every BLAS dimension an int), eps,
 * the activation, memory for a decoder and every used parameter given. */
attn_status attn_xf_check(const attn_xf_config *cfg, const double *x,
                          const double *memory, const double *const *params);

/* The input of block k in layer l (B, N, E), before its norm when
 * norm_first: the layer's input for k = 0, else block k − 1's output. */
const double *attn_xf_block_x(const attn_xf_tape *tape,
                              const attn_xf_config *cfg, const double *x,
                              size_t l, size_t k);

/* y = x·Wᵀ + b (nn.Linear): x (rows, din), W (dout, din), b (dout) -> y
 * (rows, dout), one cblas_dgemm (sizes checked by attn_xf_check). */
void attn_xf_linear(double *y, const double *x, const double *W,
                    const double *b, size_t rows, size_t din, size_t dout);

/* The multi-head parameters of the self- (cross 0) or cross-attention
 * (cross 1) block of one layer's params: PyTorch's packed in_proj_weight
 * (3E, E) = [W_q; W_k; W_v] and in_proj_bias (3E) split by rows, and
 * out_proj. */
attn_multihead_params attn_xf_mha_params(const double *const *p, int cross,
                                         size_t E);

#endif /* ATTN_TRANSFORMER_INTERNAL_H */
