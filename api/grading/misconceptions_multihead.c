/*
 * misconceptions_multihead.c — the known wrong implementations of
 * /attention/multihead (misconceptions.h; the table in
 * docs/misconceptions.md).
 *
 * Most are the request answered by the route with other parameters, in
 * its nn.Linear layout: W_q (h, dq), W_k (h, dk), W_v (h, dv), W_o
 * (d_out, h), biases b_q, b_k, b_v (h), b_o (d_out), H = num_heads. The
 * parameters are the request's, or the ones the route drew from the seed
 * (the reference's params.*); the altered request gives them all, so it
 * draws nothing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "misconceptions.h"
#include "mistake_request.h"

extern const api_route api_route_multihead;

enum { P_WQ, P_WK, P_WV, P_WO, P_BQ, P_BK, P_BV, P_BO, N_PARAMS };
static const char *const param_names[N_PARAMS] = {"W_q", "W_k", "W_v", "W_o",
                                                  "b_q", "b_k", "b_v", "b_o"};
static const char *const drawn_names[P_WO + 1] = {"params.W_q", "params.W_k",
                                                  "params.W_v", "params.W_o"};

/* The parameters of a request (P[i].data NULL: bias i absent) and its
 * sizes h (W_q's rows), H and d_out (W_o's rows). */
typedef struct {
    api_mistake_tensor P[N_PARAMS];
    size_t h, H, d_out;
} params;

static void params_free(params *m) {
    for (int i = 0; i < N_PARAMS; i++)
        api_mistake_tensor_free(&m->P[i]);
}

/* Read the request's parameters, or copy those the reference drew.
 * Returns 0, or -1 (m freed). */
static int params_of(api_call *call, const json_t *request,
                     const api_result *reference, params *m) {
    memset(m, 0, sizeof *m);
    int64_t H = 0;
    api_field_int(request, "num_heads", 0, &H);
    int given = api_field_value(request, "W_q") != NULL;
    for (int i = 0; i < N_PARAMS; i++) {
        api_mistake_tensor *t = &m->P[i];
        if (given) {
            if (api_mistake_tensor_read(t, call, request, param_names[i]) < 0 ||
                (i <= P_WO && !t->data)) {
                params_free(m);
                return -1;
            }
            continue;
        }
        if (i > P_WO) /* drawn parameters have no biases */
            continue;
        const api_result_item *it =
            api_result_find(reference, drawn_names[i], strlen(drawn_names[i]));
        if (!it || it->kind != API_ITEM_TENSOR || it->rank != 2 ||
            !(t->data =
                  malloc(it->shape[0] * it->shape[1] * sizeof *t->data))) {
            params_free(m);
            return -1;
        }
        t->rank = 2;
        memcpy(t->shape, it->shape, sizeof t->shape);
        t->count = it->shape[0] * it->shape[1];
        memcpy(t->data, it->data, t->count * sizeof *t->data);
    }
    m->h = m->P[P_WQ].shape[0];
    m->d_out = m->P[P_WO].shape[0];
    m->H = H > 0 ? (size_t)H : 1;
    return 0;
}

/* The request again with parameters m (those present; the rest left out,
 * with num_hiddens and seed), answered by the route. grad_output is left
 * out: the parameters' gradients would be in another layout, and the
 * output's size may change. */
static int with_params(api_call *call, const json_t *request, const params *m,
                       api_result *wrong) {
    api_mistake_request r;
    api_mistake_request_begin(&r, call, request);
    api_mistake_request_del(&r, "num_hiddens");
    api_mistake_request_del(&r, "seed");
    api_mistake_request_del(&r, "grad_output");
    for (int i = 0; i < N_PARAMS; i++) {
        const api_mistake_tensor *t = &m->P[i];
        if (t->data)
            api_mistake_request_tensor(&r, param_names[i], t->data, t->shape,
                                       t->rank);
        else
            api_mistake_request_del(&r, param_names[i]);
    }
    return api_mistake_request_answer(&r, call, &api_route_multihead, wrong);
}

/* Heads split interleaved: head t takes the projected features t, t + H,
 * t + 2H, … (a reshape to (…, h/H, H)), and the heads are merged back the
 * same way. That is the route's contiguous split of parameters whose
 * feature n = t·(h/H) + s is the original feature s·H + t: rows of W_q,
 * W_k, W_v and entries of b_q, b_k, b_v permuted, columns of W_o with
 * them. */
static int heads_interleaved(api_call *call, const json_t *request,
                             const api_result *reference, api_result *wrong) {
    params m;
    if (params_of(call, request, reference, &m))
        return API_MISTAKE_FAILED;
    size_t h = m.h, H = m.H, per = h / H;
    if (H == 1 || per == 1) { /* the two splits agree */
        params_free(&m);
        return API_MISTAKE_NOT_APPLICABLE;
    }
    params p;
    memset(&p, 0, sizeof p);
    p.h = h;
    p.H = H;
    p.d_out = m.d_out;
    int rc = API_MISTAKE_ANSWERED;
    for (int i = 0; i < N_PARAMS && rc == API_MISTAKE_ANSWERED; i++) {
        const api_mistake_tensor *src = &m.P[i];
        api_mistake_tensor *dst = &p.P[i];
        if (!src->data)
            continue;
        *dst = *src;
        dst->data = malloc(src->count * sizeof *dst->data);
        if (!dst->data) {
            rc = API_MISTAKE_FAILED;
            break;
        }
        if (i == P_BO) {
            memcpy(dst->data, src->data, src->count * sizeof *dst->data);
            continue;
        }
        size_t cols = i <= P_WO ? src->shape[1] : 1;
        for (size_t t = 0; t < H; t++)
            for (size_t s = 0; s < per; s++) {
                size_t n = t * per + s, o = s * H + t;
                if (i == P_WO) /* (d_out, h): column n from column o */
                    for (size_t r = 0; r < m.d_out; r++)
                        dst->data[r * h + n] = src->data[r * h + o];
                else /* (h, cols): row n from row o */
                    memcpy(dst->data + n * cols, src->data + o * cols,
                           cols * sizeof *dst->data);
            }
    }
    if (rc == API_MISTAKE_ANSWERED)
        rc = with_params(call, request, &p, wrong);
    params_free(&p);
    params_free(&m);
    return rc;
}

/* The reference's weights (B, H, Nq, Nk) averaged over the heads: (B, Nq,
 * Nk), or (Nq, Nk) unbatched. With one head only the head axis is gone,
 * which is what PyTorch answers then too. */
static int weights_averaged(api_call *call, const json_t *request,
                            const api_result *reference, api_result *wrong) {
    (void)call;
    (void)request;
    const api_result_item *w = api_result_find(reference, "weights", 7);
    if (!w || w->kind != API_ITEM_TENSOR || w->rank < 3)
        return API_MISTAKE_NOT_APPLICABLE;
    size_t r = w->rank, heads = w->shape[r - 3];
    size_t B = r == 4 ? w->shape[0] : 1,
           plane = w->shape[r - 2] * w->shape[r - 1];
    double *avg = api_mistake_result_start(wrong, reference, B * plane);
    if (!avg)
        return API_MISTAKE_FAILED;
    for (size_t b = 0; b < B; b++)
        for (size_t e = 0; e < plane; e++) {
            double sum = 0;
            for (size_t t = 0; t < heads; t++)
                sum += w->data[(b * heads + t) * plane + e];
            avg[b * plane + e] = sum / (double)heads;
        }
    size_t shape[3] = {B, w->shape[r - 2], w->shape[r - 1]};
    size_t o = r == 4 ? 0 : 1; /* unbatched: no batch axis */
    api_result_tensor(wrong, "weights", avg, shape + o, 3 - o);
    return API_MISTAKE_ANSWERED;
}

/* Scores divided by √h instead of √(h/H): the route's answer with W_q and
 * b_q divided by √H, since Q' enters only the scores, Q'_t K'_tᵀ. */
static int scale_sqrt_h(api_call *call, const json_t *request,
                        const api_result *reference, api_result *wrong) {
    params m;
    if (params_of(call, request, reference, &m))
        return API_MISTAKE_FAILED;
    if (m.H == 1) {
        params_free(&m);
        return API_MISTAKE_NOT_APPLICABLE;
    }
    double f = 1 / sqrt((double)m.H);
    static const int scaled[2] = {P_WQ, P_BQ};
    for (int k = 0; k < 2; k++) {
        api_mistake_tensor *t = &m.P[scaled[k]];
        for (size_t e = 0; t->data && e < t->count; e++)
            t->data[e] *= f;
    }
    int rc = with_params(call, request, &m, wrong);
    params_free(&m);
    return rc;
}

/* output = the concatenated heads (B, Nq, h): the route's answer with W_o
 * the identity (h, h) and no b_o. */
static int no_output_projection(api_call *call, const json_t *request,
                                const api_result *reference,
                                api_result *wrong) {
    params m;
    if (params_of(call, request, reference, &m))
        return API_MISTAKE_FAILED;
    size_t h = m.h;
    api_mistake_tensor *W_o = &m.P[P_WO];
    int identity = m.d_out == h && !m.P[P_BO].data;
    for (size_t r = 0; identity && r < h; r++)
        for (size_t c = 0; identity && c < h; c++)
            identity = W_o->data[r * h + c] == (r == c);
    double *eye = identity ? NULL : calloc(h * h, sizeof *eye);
    int rc = identity ? API_MISTAKE_NOT_APPLICABLE : API_MISTAKE_FAILED;
    if (eye) {
        for (size_t r = 0; r < h; r++)
            eye[r * h + r] = 1;
        free(W_o->data);
        W_o->data = eye;
        W_o->shape[0] = W_o->shape[1] = h;
        W_o->count = h * h;
        api_mistake_tensor_free(&m.P[P_BO]);
        rc = with_params(call, request, &m, wrong);
    }
    params_free(&m);
    return rc;
}

const api_misconception api_misconceptions_multihead[] = {
    {"multihead.heads_interleaved",
     "the heads took interleaved features (head t got features t, t + H, "
     "t + 2H, …): head t takes the contiguous block t·h/H … (t + 1)·h/H − 1 "
     "of each projection, a reshape to (B, N, H, h/H) (d2l 11.5, "
     "transpose_qkv; PyTorch nn.MultiheadAttention)",
     NULL, heads_interleaved},
    {"multihead.weights_averaged",
     "the weights were averaged over the heads (PyTorch's "
     "average_attn_weights=True): the answer gives each head's weights, "
     "shape (B, H, Nq, Nk) (d2l 11.5; docs/contract.md section 6)",
     NULL, weights_averaged},
    {"multihead.scale_sqrt_h",
     "the scores were divided by √h, the whole hidden size: each head's "
     "scores Q'_t K'_tᵀ are divided by √(h/H), the size of one head "
     "(d2l 11.5; Vaswani et al. 2017, 3.2.2)",
     NULL, scale_sqrt_h},
    {"multihead.no_output_projection",
     "the output projection was left out (output = the concatenated "
     "heads): output = concat(head_1, …, head_H) W_oᵀ + b_o (d2l 11.5; "
     "Vaswani et al. 2017, 3.2.2)",
     NULL, no_output_projection},
};
const size_t api_misconceptions_multihead_count =
    sizeof api_misconceptions_multihead /
    sizeof api_misconceptions_multihead[0];
_Static_assert(
    sizeof api_misconceptions_multihead /
            sizeof api_misconceptions_multihead[0] ==
        API_MISCONCEPTIONS_MULTIHEAD_N,
    "the multihead catalogue's length is not API_MISCONCEPTIONS_MULTIHEAD_N "
    "(misconceptions.h): change it with docs/misconceptions.md "
    "and tests/grading/catalogue_np.py");
