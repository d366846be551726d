/*
 * nw.c — Nadaraya–Watson kernel regression as attention pooling (d2l 11.2;
 * Nadaraya 1964, Watson 1964): ŷ(x) = Σᵢ α(x, xᵢ) yᵢ with
 * α(x, xᵢ) = K((x − xᵢ)w) / Σⱼ K((x − xⱼ)w); the squared loss, its analytic
 * derivative in w for the Gaussian kernel, and gradient descent on w
 * (d2l 11.2.4).
 */
#include "attn_internal.h"

#include <math.h>
#include <stdlib.h>

#define NO_SKIP ((size_t)-1)

/* Half the distance |x − xᵢ| / 2, computed without overflow even when the
 * two points are more than DBL_MAX apart. */
static double half_distance(double x, double xi) {
    double d = x - xi;
    return isfinite(d) ? fabs(d) * 0.5 : fabs(0.5 * x - 0.5 * xi);
}

double attn_nw_scaled_difference(double x, double xi, double w) {
    double d = x - xi;
    return isfinite(d) ? d * w : x * w - xi * w;
}

/* (a + b)·w for half distances a, b ≥ 0, without overflow of the sum. */
static double scaled_sum(double a, double b, double w) {
    double sum = a + b;
    return isfinite(sum) ? sum * w : a * w + b * w;
}

double attn_nw_kernel_value(attn_kernel kernel, double u) {
    double k;
    switch (kernel) {
    case ATTN_KERNEL_BOXCAR:
        return fabs(u) < 1.0 ? 1.0 : 0.0;
    case ATTN_KERNEL_EPANECHNIKOV:
        k = 1.0 - u * u;
        return k > 0.0 ? k : 0.0;
    case ATTN_KERNEL_TRIANGULAR:
        k = 1.0 - fabs(u);
        return k > 0.0 ? k : 0.0;
    case ATTN_KERNEL_CONSTANT:
    case ATTN_KERNEL_GAUSSIAN:
        break;
    }
    return 1.0;
}

/* The weights of one query x over x_train (n), skipping index `skip` (its
 * weight is 0; NO_SKIP for none): alpha (n). For the Gaussian, the logits
 * sᵢ = −((x − xᵢ)w)²/2 enter a softmax shifted by their maximum, written as
 *   sᵢ − s_max = −2 ((hᵢ − h_min)w) ((hᵢ + h_min)w),  hᵢ = |x − xᵢ|/2,
 * which is exactly 0 for the nearest points and never inf − inf, so a huge
 * w gives weight to the nearest points instead of 0/0. shifted (n, may be
 * NULL) receives sᵢ − s_max. Returns ATTN_E_ZERO_MASS when every kernel
 * value is 0 (compact kernels only). */
static attn_status nw_row(double *alpha, double *shifted, double x,
                          const double *x_train, size_t n, size_t skip,
                          attn_kernel kernel, double w) {
    double mass = 0.0;
    if (kernel == ATTN_KERNEL_GAUSSIAN) {
        double h_min = INFINITY;
        for (size_t i = 0; i < n; i++) {
            alpha[i] = half_distance(x, x_train[i]);
            if (i != skip && alpha[i] < h_min)
                h_min = alpha[i];
        }
        for (size_t i = 0; i < n; i++) {
            double h = alpha[i], s = 0.0;
            if (h != h_min && i != skip)
                s = -2.0 * ((h - h_min) * w) * scaled_sum(h, h_min, w);
            alpha[i] = s;
            if (shifted)
                shifted[i] = s;
        }
        attn_exp_n(alpha, alpha, n);
        if (skip != NO_SKIP)
            alpha[skip] = 0.0;
        for (size_t i = 0; i < n; i++)
            mass += alpha[i];
    } else {
        for (size_t i = 0; i < n; i++) {
            alpha[i] =
                i == skip
                    ? 0.0
                    : attn_nw_kernel_value(
                          kernel, attn_nw_scaled_difference(x, x_train[i], w));
            mass += alpha[i];
        }
        if (mass == 0.0)
            return ATTN_E_ZERO_MASS;
    }
    for (size_t i = 0; i < n; i++)
        alpha[i] /= mass;
    return ATTN_OK;
}

static int kernel_ok(attn_kernel kernel) {
    switch (kernel) {
    case ATTN_KERNEL_GAUSSIAN:
    case ATTN_KERNEL_CONSTANT:
    case ATTN_KERNEL_BOXCAR:
    case ATTN_KERNEL_EPANECHNIKOV:
    case ATTN_KERNEL_TRIANGULAR:
        return 1;
    }
    return 0;
}

/* Overflow checks of the (m, n), (n, dv) and (m, dv) tensors. */
static attn_status nw_sizes(size_t m, size_t n, size_t dv) {
    size_t t;
    if (attn_size_mul(&t, m, n) != ATTN_OK ||
        attn_size_mul(&t, n, dv) != ATTN_OK ||
        attn_size_mul(&t, m, dv) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    return ATTN_OK;
}

attn_status attn_nw_predict(double *pred, double *weights,
                            const double *x_query, const double *x_train,
                            const double *y_train, attn_kernel kernel, double w,
                            size_t m, size_t n, size_t dv, attn_fault *fault) {
    attn_fault_clear(fault);
    if (!pred || !weights || !x_query || !x_train || !y_train)
        return ATTN_E_INVALID_ARG;
    if (m == 0 || n == 0 || dv == 0 || !kernel_ok(kernel) || !isfinite(w) ||
        !(w > 0.0))
        return ATTN_E_INVALID_ARG;
    attn_status st = nw_sizes(m, n, dv);
    if (st != ATTN_OK)
        return st;
    /* 1. weights[q, :] = α(x_query[q], ·) */
    for (size_t q = 0; q < m; q++) {
        if (attn_deadline_passed())
            return ATTN_E_DEADLINE;
        st = nw_row(weights + q * n, NULL, x_query[q], x_train, n, NO_SKIP,
                    kernel, w);
        if (st != ATTN_OK)
            return attn_fault_at(fault, q, st);
    }
    /* 2. pred = weights · y_train, (m, n) x (n, dv); a non-finite
     * prediction is blamed on its query */
    st = attn_pool_values(pred, weights, y_train, 1, m, n, dv, fault);
    if (st == ATTN_E_NONFINITE && fault)
        fault->index /= dv;
    return st;
}

/* Loss Σ ½(ŷ − y)² over queries (m) with targets (m, dv) and, when grad is
 * not NULL, ∂loss/∂w (Gaussian). loo: query q is x_train[q] and leaves out
 * training pair q. alpha, shifted: (n) scratch. With sᵢ = −((x − xᵢ)w)²/2,
 * ∂sᵢ/∂w = 2sᵢ/w, and the shift by s_max cancels in
 * ∂αᵢ/∂w = αᵢ(∂sᵢ/∂w − Σⱼ αⱼ ∂sⱼ/∂w), so the shifted logits are used. */
static attn_status nw_loss_eval(double *loss, double *grad,
                                const double *x_query, const double *y_query,
                                size_t m, const double *x_train,
                                const double *y_train, size_t n, size_t dv,
                                attn_kernel kernel, double w, int loo,
                                double *alpha, double *shifted,
                                attn_fault *fault) {
    double sum_loss = 0.0, sum_grad = 0.0;
    for (size_t q = 0; q < m; q++) {
        if (attn_deadline_passed())
            return ATTN_E_DEADLINE;
        attn_status st = nw_row(alpha, shifted, x_query[q], x_train, n,
                                loo ? q : NO_SKIP, kernel, w);
        if (st != ATTN_OK)
            return attn_fault_at(fault, q, st);
        /* mean of ∂s/∂w under α; zero-weight terms are skipped because their
         * shifted logit may be -inf */
        double mean_ds = 0.0;
        if (grad) {
            for (size_t i = 0; i < n; i++) {
                if (alpha[i] != 0.0)
                    mean_ds += alpha[i] * (2.0 * shifted[i] / w);
            }
        }
        for (size_t c = 0; c < dv; c++) {
            double y_hat = 0.0, dy_hat = 0.0;
            for (size_t i = 0; i < n; i++) {
                if (alpha[i] == 0.0)
                    continue;
                double yi = y_train[i * dv + c];
                y_hat += alpha[i] * yi;
                if (grad)
                    dy_hat += alpha[i] * (2.0 * shifted[i] / w - mean_ds) * yi;
            }
            double r = y_hat - y_query[q * dv + c];
            sum_loss += 0.5 * r * r;
            sum_grad += r * dy_hat;
        }
        if (!isfinite(sum_loss) || !isfinite(sum_grad))
            return attn_fault_at(fault, q, ATTN_E_NONFINITE);
    }
    *loss = sum_loss;
    if (grad)
        *grad = sum_grad;
    return ATTN_OK;
}

/* Scratch for nw_loss_eval: alpha and shifted, 2n doubles. */
static attn_status nw_scratch(double **scratch, size_t n) {
    size_t count, bytes;
    if (attn_size_mul(&count, n, 2) != ATTN_OK ||
        attn_size_mul(&bytes, count, sizeof(double)) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    *scratch = malloc(bytes);
    return *scratch ? ATTN_OK : ATTN_E_NOMEM;
}

attn_status attn_nw_loss(double *loss, double *grad_w, const double *x_query,
                         const double *y_query, const double *x_train,
                         const double *y_train, attn_kernel kernel, double w,
                         size_t m, size_t n, size_t dv, attn_fault *fault) {
    attn_fault_clear(fault);
    if (!loss || !x_query || !y_query || !x_train || !y_train)
        return ATTN_E_INVALID_ARG;
    if (m == 0 || n == 0 || dv == 0 || !kernel_ok(kernel) || !isfinite(w) ||
        !(w > 0.0))
        return ATTN_E_INVALID_ARG;
    if (grad_w && kernel != ATTN_KERNEL_GAUSSIAN)
        return ATTN_E_INVALID_ARG;
    double *scratch;
    attn_status st = nw_sizes(m, n, dv);
    if (st == ATTN_OK)
        st = nw_scratch(&scratch, n);
    if (st != ATTN_OK)
        return st;
    st = nw_loss_eval(loss, grad_w, x_query, y_query, m, x_train, y_train, n,
                      dv, kernel, w, 0, scratch, scratch + n, fault);
    free(scratch);
    return st;
}

attn_status attn_nw_fit(double *w_out, attn_nw_epoch *history, double w0,
                        double lr, size_t epochs, attn_nw_fit_data data,
                        const double *x_train, const double *y_train,
                        const double *x_query, const double *y_query, size_t n,
                        size_t m, size_t dv, attn_fault *fault) {
    attn_fault_clear(fault);
    if (!w_out || !history || !x_train || !y_train || n == 0 || dv == 0 ||
        epochs == 0)
        return ATTN_E_INVALID_ARG;
    if (!isfinite(w0) || !(w0 > 0.0) || !isfinite(lr) || !(lr > 0.0))
        return ATTN_E_INVALID_ARG;
    int loo;
    switch (data) {
    case ATTN_NW_FIT_TRAIN_LOO:
        if (n < 2)
            return ATTN_E_TOO_FEW;
        loo = 1;
        x_query = x_train;
        y_query = y_train;
        m = n;
        break;
    case ATTN_NW_FIT_QUERY:
        if (!x_query || !y_query || m == 0)
            return ATTN_E_INVALID_ARG;
        loo = 0;
        break;
    default:
        return ATTN_E_INVALID_ARG;
    }
    double *scratch;
    attn_status st = nw_sizes(m, n, dv);
    if (st == ATTN_OK)
        st = nw_scratch(&scratch, n);
    if (st != ATTN_OK)
        return st;

    double w = w0;
    for (size_t e = 0; e < epochs && st == ATTN_OK; e++) {
        double loss, grad;
        /* 1. loss and ∂loss/∂w at the current w */
        st = nw_loss_eval(&loss, &grad, x_query, y_query, m, x_train, y_train,
                          n, dv, ATTN_KERNEL_GAUSSIAN, w, loo, scratch,
                          scratch + n, fault);
        if (st != ATTN_OK)
            break;
        history[e].epoch = e + 1;
        history[e].w = w;
        history[e].loss = loss;
        history[e].grad_w = grad;
        /* 2. the step w ← w − lr · ∂loss/∂w must keep w finite and > 0 */
        double next = w - lr * grad;
        if (!isfinite(next) || !(next > 0.0))
            st = attn_fault_at(fault, e + 1, ATTN_E_BAD_STEP);
        w = next;
    }
    free(scratch);
    if (st == ATTN_OK)
        *w_out = w;
    return st;
}
