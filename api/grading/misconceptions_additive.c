/*
 * misconceptions_additive.c — the known wrong implementations of
 * /attention/additive (misconceptions.h): score(q, k) = w_vᵀ tanh(W_q q +
 * W_k k) (d2l 11.3.3; Bahdanau et al. 2014, appendix A.1.2), with W_q
 * (h, dq), W_k (h, dk) in nn.Linear's (out, in) layout and w_v (h).
 *
 * Each mistake is answered by a route: the request again with other
 * parameters (weights_transposed, projections_swapped), or, for no_tanh,
 * as dot-product attention of two-feature queries and keys whose product
 * is the tanh-free score exactly. Parameters drawn from a seed are taken
 * from the reference's params.*, which the route always answers for them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "invoke.h"
#include "misconceptions.h"
#include "mistake_request.h"
#include "tensor.h"

extern const api_route api_route_additive, api_route_dot;

/* The parameters the right answer used, in the route's layout. */
typedef struct {
    double *W[3]; /* W_q (h, dq), W_k (h, dk), w_v (h); malloc'd */
    size_t h, dq, dk;
    int given; /* 1: the request gives them; 0: drawn from its seed */
} additive_params;

static const char *const param_names[3] = {"W_q", "W_k", "w_v"};

static void params_free(additive_params *P) {
    for (int i = 0; i < 3; i++)
        free(P->W[i]);
}

/* A copy of n doubles, or NULL when memory runs out. */
static double *copy_of(const double *x, size_t n) {
    double *y = malloc((n ? n : 1) * sizeof *y);
    if (y && n)
        memcpy(y, x, n * sizeof *y);
    return y;
}

/* W_q, W_k and w_v: from the request when it gives them, else the drawn
 * ones of the reference (params.*). Returns 0, or -1 (nothing held). */
static int params_of(additive_params *P, api_call *call, const json_t *request,
                     const api_result *reference) {
    memset(P, 0, sizeof *P);
    P->given = api_field_value(request, "W_q") != NULL;
    size_t shape[3][2];
    for (int i = 0; i < 3; i++) {
        size_t count;
        if (P->given) {
            api_mistake_tensor t;
            api_mistake_tensor_read(&t, call, request, param_names[i]);
            P->W[i] = t.data; /* NULL when it could not be read */
            shape[i][0] = t.shape[0];
            shape[i][1] = t.rank == 2 ? t.shape[1] : 1;
            count = t.count;
        } else {
            char name[16] = "params.";
            strcat(name, param_names[i]);
            const api_result_item *it =
                api_result_find(reference, name, strlen(name));
            if (!it || it->kind != API_ITEM_TENSOR)
                break;
            shape[i][0] = it->shape[0];
            shape[i][1] = it->rank == 2 ? it->shape[1] : 1;
            count = api_result_item_count(it);
            P->W[i] = copy_of(it->data, count);
        }
        if (!P->W[i])
            break;
    }
    if (!P->W[0] || !P->W[1] || !P->W[2]) {
        params_free(P);
        return -1;
    }
    P->h = shape[0][0];
    P->dq = shape[0][1];
    P->dk = shape[1][1];
    return 0;
}

/* The tensor (shape, rank) as {"shape": [...], "data": [...]}, or NULL
 * when memory runs out. Entries are finite (a route computed or read
 * them). */
static json_t *flat_tensor(const double *data, const size_t *shape,
                           size_t rank) {
    json_t *t = json_object(), *s = json_array(), *d = json_array();
    /* set_new takes s and d (or releases them when it fails) */
    int bad =
        json_object_set_new(t, "shape", s) | json_object_set_new(t, "data", d);
    size_t count = 1;
    for (size_t i = 0; !bad && i < rank; i++) {
        count *= shape[i];
        bad = json_array_append_new(s, json_integer((json_int_t)shape[i]));
    }
    for (size_t i = 0; !bad && i < count; i++)
        bad = json_array_append_new(d, json_real(data[i]));
    if (bad) {
        json_decref(t);
        return NULL;
    }
    return t;
}

/* The request with the parameters W (W_q, W_k, w_v in the route's
 * layout) given instead of drawn or given ones, answered by the route into
 * *wrong. */
static int with_params(api_call *call, const json_t *request,
                       const additive_params *P, double *const W[3],
                       api_result *wrong) {
    json_t *altered = json_copy((json_t *)request);
    if (!altered)
        return API_MISTAKE_FAILED;
    json_object_del(altered, "num_hiddens");
    json_object_del(altered, "seed");
    const size_t shapes[3][2] = {{P->h, P->dq}, {P->h, P->dk}, {P->h, 1}};
    int bad = 0;
    for (int i = 0; i < 3 && !bad; i++)
        bad = json_object_set_new(altered, param_names[i],
                                  flat_tensor(W[i], shapes[i], i < 2 ? 2 : 1));
    int rc = bad ? -1
                 : api_invoke_result(call, &api_route_additive, altered,
                                     call->doc, NULL, wrong);
    json_decref(altered);
    return rc ? API_MISTAKE_FAILED : API_MISTAKE_ANSWERED;
}

/* ------------------------------------------------ weights_transposed */

/* W's data, row-major, read as an (in, out) = (d, h) matrix M and used as
 * X @ M: the same projection as the (out, in) matrix Mᵀ, so
 * E[c, i] = M[i, c] = W.flat[i·h + c]. E is (h, d). */
static void as_in_out(double *E, const double *W, size_t h, size_t d) {
    for (size_t c = 0; c < h; c++)
        for (size_t i = 0; i < d; i++)
            E[c * d + i] = W[i * h + c];
}

/* The gradient of the mistaken projection with respect to the data as
 * given (h, d): dL/dW.flat[i·h + c] = dL/dM[i, c] = dL/dE[c, i], from
 * dL/dE (h, d) in place; scratch holds h·d doubles. */
static void grad_as_given(double *g, double *scratch, size_t h, size_t d) {
    for (size_t c = 0; c < h; c++)
        for (size_t i = 0; i < d; i++)
            scratch[i * h + c] = g[c * d + i];
    memcpy(g, scratch, h * d * sizeof *g);
}

static int weights_transposed(api_call *call, const json_t *request,
                              const api_result *reference, api_result *wrong) {
    additive_params P;
    if (params_of(&P, call, request, reference))
        return API_MISTAKE_FAILED;
    size_t h = P.h, d[2] = {P.dq, P.dk};
    double *E[3] = {malloc(h * d[0] * sizeof(double)),
                    malloc(h * d[1] * sizeof(double)), P.W[2]};
    double *scratch = malloc(h * (d[0] > d[1] ? d[0] : d[1]) * sizeof(double));
    int rc = API_MISTAKE_FAILED;
    if (E[0] && E[1] && scratch) {
        as_in_out(E[0], P.W[0], h, d[0]);
        as_in_out(E[1], P.W[1], h, d[1]);
        /* h = 1, d = 1 or a symmetric square W: the same matrices */
        if (!memcmp(E[0], P.W[0], h * d[0] * sizeof(double)) &&
            !memcmp(E[1], P.W[1], h * d[1] * sizeof(double)))
            rc = API_MISTAKE_NOT_APPLICABLE;
        else
            rc = with_params(call, request, &P, E, wrong);
    }
    /* grads.W_q and grads.W_k as the mistaken code's autograd gives them:
     * with respect to the data it was given. The data lies in wrong's own
     * arena (api_result_keep), so it is rewritten in place. */
    static const char *const grads[2] = {"grads.W_q", "grads.W_k"};
    for (int i = 0; rc == API_MISTAKE_ANSWERED && i < 2; i++) {
        const api_result_item *it =
            api_result_find(wrong, grads[i], strlen(grads[i]));
        if (it && it->kind == API_ITEM_TENSOR)
            grad_as_given((double *)it->data, scratch, h, d[i]);
    }
    free(E[0]);
    free(E[1]);
    free(scratch);
    params_free(&P);
    return rc;
}

/* ----------------------------------------------- projections_swapped */

static int projections_swapped(api_call *call, const json_t *request,
                               const api_result *reference, api_result *wrong) {
    additive_params P;
    if (params_of(&P, call, request, reference))
        return API_MISTAKE_FAILED;
    int rc;
    if (P.dq != P.dk || !memcmp(P.W[0], P.W[1], P.h * P.dq * sizeof(double))) {
        rc = API_MISTAKE_NOT_APPLICABLE; /* cannot arise, or the same */
    } else if (P.given) {
        /* the request's own values, swapped (a shallow copy: fast-path
         * placeholders stay the same values) */
        json_t *altered = json_copy((json_t *)request);
        json_t *wq = json_object_get(request, "W_q");
        json_t *wk = json_object_get(request, "W_k");
        rc = !altered || json_object_set(altered, "W_q", wk) ||
                     json_object_set(altered, "W_k", wq) ||
                     api_invoke_result(call, &api_route_additive, altered,
                                       call->doc, NULL, wrong)
                 ? API_MISTAKE_FAILED
                 : API_MISTAKE_ANSWERED;
        json_decref(altered);
    } else {
        double *swapped[3] = {P.W[1], P.W[0], P.W[2]};
        rc = with_params(call, request, &P, swapped, wrong);
    }
    /* the route's grads.W_k is the gradient of the matrix the student
     * applied to the keys, which the student calls W_q */
    for (size_t i = 0; rc == API_MISTAKE_ANSWERED && i < wrong->n; i++) {
        const char *name = wrong->items[i].name;
        if (!strcmp(name, "grads.W_q"))
            wrong->items[i].name = "grads.W_k";
        else if (!strcmp(name, "grads.W_k"))
            wrong->items[i].name = "grads.W_q";
    }
    params_free(&P);
    return rc;
}

/* ----------------------------------------------------------- no_tanh */

/* Members of an additive request that mean the same to /attention/dot. */
static const char *const shared_members[] = {
    "values",       "valid_lens",     "causal",
    "fully_masked", "return_weights", "return_scores",
    "diagnostics",  "tensor_format",  "precision",
};

/* rows (count / d rows of d features) projected onto u, as two features
 * per row: [x·u, 1] when first, else [1, x·u]. out holds 2·rows doubles. */
static void linear_feature(double *out, const double *x, size_t rows, size_t d,
                           const double *u, int first) {
    for (size_t r = 0; r < rows; r++) {
        double s = 0;
        for (size_t i = 0; i < d; i++)
            s += x[r * d + i] * u[i];
        out[2 * r + !first] = s;
        out[2 * r + first] = 1;
    }
}

/* Without tanh the score is linear: w_vᵀ(W_q q + W_k k) = u·q + v·k with
 * u = W_qᵀ w_v and v = W_kᵀ w_v, which is the dot product of q' = [u·q, 1]
 * and k' = [1, v·k]. So dot-product attention of q' and k' with scale 1,
 * the same values and the same masking answers the mistaken computation:
 * output, weights, scores and diagnostics (no grads). */
static int no_tanh(api_call *call, const json_t *request,
                   const api_result *reference, api_result *wrong) {
    additive_params P;
    if (params_of(&P, call, request, reference))
        return API_MISTAKE_FAILED;
    api_mistake_tensor tq, tk;
    api_mistake_tensor_read(&tq, call, request, "queries");
    api_mistake_tensor_read(&tk, call, request, "keys");
    double *q = tq.data, *k = tk.data; /* NULL when not read */
    size_t rq = q ? tq.count / P.dq : 0, rk = k ? tk.count / P.dk : 0;
    double *u = calloc(P.dq + P.dk, sizeof(double)), *v = u ? u + P.dq : NULL;
    double *q2 = malloc((2 * rq + 1) * sizeof(double));
    double *k2 = malloc((2 * rk + 1) * sizeof(double));
    json_t *dot = json_object();
    int rc = API_MISTAKE_FAILED;
    if (q && k && u && q2 && k2 && dot) {
        for (size_t c = 0; c < P.h; c++) {
            for (size_t i = 0; i < P.dq; i++)
                u[i] += P.W[0][c * P.dq + i] * P.W[2][c];
            for (size_t i = 0; i < P.dk; i++)
                v[i] += P.W[1][c * P.dk + i] * P.W[2][c];
        }
        linear_feature(q2, q, rq, P.dq, u, 1);
        linear_feature(k2, k, rk, P.dk, v, 0);
        tq.shape[tq.rank - 1] = 2;
        tk.shape[tk.rank - 1] = 2;
        int bad = json_object_set_new(dot, "queries",
                                      flat_tensor(q2, tq.shape, tq.rank)) ||
                  json_object_set_new(dot, "keys",
                                      flat_tensor(k2, tk.shape, tk.rank)) ||
                  json_object_set_new(dot, "scale", json_real(1.0));
        for (size_t i = 0;
             !bad && i < sizeof shared_members / sizeof shared_members[0];
             i++) {
            json_t *m = json_object_get(request, shared_members[i]);
            if (m)
                bad = json_object_set(dot, shared_members[i], m);
        }
        if (!bad && !api_invoke_result(call, &api_route_dot, dot, call->doc,
                                       NULL, wrong))
            rc = API_MISTAKE_ANSWERED;
    }
    json_decref(dot);
    free(q);
    free(k);
    free(u);
    free(q2);
    free(k2);
    params_free(&P);
    return rc;
}

const api_misconception api_misconceptions_additive[] = {
    {"additive.weights_transposed",
     "W_q and W_k were read as (in, out) matrices, X @ W with W's data "
     "reshaped to (dq, h) and (dk, h): they are nn.Linear weights in (out, "
     "in) layout, W_q (h, dq) and W_k (h, dk), so the features are W_q q + "
     "W_k k, X Wᵀ for rows X (d2l 11.3.3; seed notes §16)",
     NULL, weights_transposed},
    {"additive.no_tanh",
     "the tanh was left out, w_vᵀ(W_q q + W_k k): the score is w_vᵀ tanh(W_q "
     "q + W_k k), and without the tanh the query's term cancels in the "
     "softmax (d2l 11.3.3; Bahdanau et al. 2014, appendix A.1.2)",
     NULL, no_tanh},
    {"additive.projections_swapped",
     "W_q was applied to the keys and W_k to the queries: the score is "
     "w_vᵀ tanh(W_q q + W_k k), W_q for the query, W_k for the key (d2l "
     "11.3.3; Bahdanau et al. 2014, appendix A.1.2)",
     NULL, projections_swapped},
};
const size_t api_misconceptions_additive_count =
    sizeof api_misconceptions_additive / sizeof api_misconceptions_additive[0];
_Static_assert(
    sizeof api_misconceptions_additive /
            sizeof api_misconceptions_additive[0] ==
        API_MISCONCEPTIONS_ADDITIVE_N,
    "the additive catalogue's length is not API_MISCONCEPTIONS_ADDITIVE_N "
    "(misconceptions.h): change it with docs/misconceptions.md "
    "and tests/grading/catalogue_np.py");
