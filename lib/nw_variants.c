/*
 * nw_variants.c — the Nadaraya–Watson fit as known wrong implementations
 * run it (nw_variants.h): the right Gaussian loss and derivative at
 * w_eff = T(w), then the student's scale, sign and chain rule, in plain
 * loops.
 */
#include "nw_variants.h"

#include "attn_internal.h"

#include <math.h>
#include <stdlib.h>

double attn_nw_w_eff(attn_nw_w_map map, double w) {
    switch (map) {
    case ATTN_NW_W_NOT_SQUARED:
        return sqrt(w);
    case ATTN_NW_W_NO_HALF:
        return sqrt(2.0) * w;
    case ATTN_NW_W_RIGHT:
        break;
    }
    return w;
}

double attn_nw_w_eff_slope(attn_nw_w_map map, double w) {
    switch (map) {
    case ATTN_NW_W_NOT_SQUARED:
        return 0.5 / sqrt(w);
    case ATTN_NW_W_NO_HALF:
        return sqrt(2.0);
    case ATTN_NW_W_RIGHT:
        break;
    }
    return 1.0;
}

/* Σ ½(ŷ − y)² over the m queries (targets (m, dv)) and its derivative in
 * w, Gaussian kernel: eᵢ = ½((x − xᵢ)w)², αᵢ = softmax(−e)ᵢ over the
 * training points but `skip` (query q skips training pair q when loo),
 * ∂αᵢ/∂w = αᵢ(Σⱼ αⱼ ∂eⱼ/∂w − ∂eᵢ/∂w), ∂eᵢ/∂w = (x − xᵢ)² w (seed notes
 * §11). e (n) is scratch. */
static attn_status loss_and_grad(double *loss, double *grad, const double *xq,
                                 const double *yq, size_t m,
                                 const double *x_train, const double *y_train,
                                 size_t n, size_t dv, double w, int loo,
                                 double *e) {
    double sum_loss = 0.0, sum_grad = 0.0;
    for (size_t q = 0; q < m; q++) {
        if (attn_deadline_passed())
            return ATTN_E_DEADLINE;
        size_t skip = loo ? q : (size_t)-1;
        double e_min = INFINITY;
        for (size_t i = 0; i < n; i++) {
            double u = (xq[q] - x_train[i]) * w;
            e[i] = 0.5 * u * u;
            if (i != skip && e[i] < e_min)
                e_min = e[i];
        }
        double mass = 0.0, mean_de = 0.0;
        for (size_t i = 0; i < n; i++) {
            double a = i == skip ? 0.0 : exp(-(e[i] - e_min));
            mass += a;
            mean_de += a * (2.0 * e[i] / w);
        }
        mean_de /= mass;
        for (size_t c = 0; c < dv; c++) {
            double y_hat = 0.0, dy_hat = 0.0;
            for (size_t i = 0; i < n; i++) {
                if (i == skip)
                    continue;
                double a = exp(-(e[i] - e_min)) / mass;
                double yi = y_train[i * dv + c];
                y_hat += a * yi;
                dy_hat += a * (mean_de - 2.0 * e[i] / w) * yi;
            }
            double r = y_hat - yq[q * dv + c];
            sum_loss += 0.5 * r * r;
            sum_grad += r * dy_hat;
        }
    }
    if (!isfinite(sum_loss) || !isfinite(sum_grad))
        return ATTN_E_NONFINITE;
    *loss = sum_loss;
    *grad = sum_grad;
    return ATTN_OK;
}

attn_status attn_nw_fit_variant(double *w_out, attn_nw_epoch *history,
                                double w0, double lr, size_t epochs,
                                attn_nw_fit_data data, const double *x_train,
                                const double *y_train, const double *x_query,
                                const double *y_query, size_t n, size_t m,
                                size_t dv, const attn_nw_variant *v,
                                attn_fault *fault) {
    attn_fault_clear(fault);
    if (!w_out || !history || !x_train || !y_train || !v || n == 0 || dv == 0 ||
        epochs == 0)
        return ATTN_E_INVALID_ARG;
    if (!isfinite(w0) || !(w0 > 0.0) || !isfinite(lr) || !(lr > 0.0) ||
        v->map > ATTN_NW_W_NO_HALF)
        return ATTN_E_INVALID_ARG;
    int loo;
    switch (data) {
    case ATTN_NW_FIT_TRAIN_LOO:
        if (n < 2)
            return ATTN_E_TOO_FEW;
        loo = v->loo;
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
    size_t t, bytes;
    if (attn_size_mul(&t, m, dv) != ATTN_OK ||
        attn_size_mul(&t, n, dv) != ATTN_OK ||
        attn_size_mul(&bytes, n, sizeof(double)) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    double *e = malloc(bytes);
    if (!e)
        return ATTN_E_NOMEM;

    attn_status st = ATTN_OK;
    double w = w0;
    for (size_t epoch = 1; epoch <= epochs && st == ATTN_OK; epoch++) {
        double loss, grad;
        /* 1. the right loss and derivative at w_eff, then the student's */
        st = loss_and_grad(&loss, &grad, x_query, y_query, m, x_train, y_train,
                           n, dv, attn_nw_w_eff(v->map, w), loo, e);
        if (st != ATTN_OK) {
            if (st == ATTN_E_NONFINITE)
                attn_fault_at(fault, epoch, st);
            break;
        }
        loss *= v->loss_scale;
        grad *= v->loss_scale * v->grad_sign * attn_nw_w_eff_slope(v->map, w);
        history[epoch - 1].epoch = epoch;
        history[epoch - 1].w = w;
        history[epoch - 1].loss = loss;
        /* 2. the student's step */
        double next = w - lr * grad;
        if (!isfinite(next) || !(next > 0.0))
            st = attn_fault_at(fault, epoch, ATTN_E_BAD_STEP);
        w = next;
    }
    free(e);
    if (st == ATTN_OK)
        *w_out = w;
    return st;
}
