/*
 * project.c — a linear projection y = x·Wᵀ (nn.Linear without bias, W in
 * its (h, din) weight layout) done in blocks of cblas_dgemm, with the
 * calling thread's deadline (deadline.c) checked between blocks: one
 * projection of a large h (additive attention's num_hiddens) is seconds
 * of work and gigabytes of writes, which must stop near the time limit
 * instead of running to its end.
 */
#include "attn_internal.h"

#include <cblas.h>

/* Multiply-adds of one block: about 10 ms on one core, so a request stops
 * within that of its deadline, while each dgemm stays large enough for
 * BLAS to run at full speed. */
#define PROJECT_OPS_PER_BLOCK ((size_t)1 << 24)

attn_status attn_project_rows(double *y, const double *x, const double *W,
                              size_t rows, size_t din, size_t h) {
    /* outputs per block: a block of output columns (rows of W), then as
     * many rows of x as fit beside them */
    size_t outputs =
        PROJECT_OPS_PER_BLOCK / din ? PROJECT_OPS_PER_BLOCK / din : 1;
    size_t cols = h < outputs ? h : outputs;
    size_t per = outputs / cols ? outputs / cols : 1;
    for (size_t c0 = 0; c0 < h; c0 += cols) {
        size_t nc = h - c0 < cols ? h - c0 : cols;
        for (size_t r0 = 0; r0 < rows; r0 += per) {
            if (attn_deadline_passed())
                return ATTN_E_DEADLINE;
            size_t nr = rows - r0 < per ? rows - r0 : per;
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nr,
                        (int)nc, (int)din, 1.0, x + r0 * din, (int)din,
                        W + c0 * din, (int)din, 0.0, y + r0 * h + c0, (int)h);
        }
    }
    return ATTN_OK;
}
