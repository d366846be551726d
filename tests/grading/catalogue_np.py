"""catalogue_np.py — what class_of_300.py and mistakes_extreme.py share:
the answers of /attention/dot, /softmax/masked, /attention/additive,
/regression/nw and /attention/multihead, right and as each catalogued
mistake computes them (docs/misconceptions.md), in numpy from the
formulas (as mistakes_dot.py, mistakes_softmax.py, mistakes_additive.py,
mistakes_nw.py and mistakes_multihead.py write them), and the default
comparison of grading v1.2 ("relabs_or_rounded": numpy.isclose with rtol
1e-5, atol 1e-8, or the reference rounded to the decimals the answer
shows, at least 4), entry by entry, so that a script can tell what the
server should answer without asking it.

Answers are dicts of float64 arrays; NaN stands for JSON null. NW's
`history` is an (epochs, 3) array of [epoch, w, loss] (history_entries
reads the JSON records so). The additive, NW and multihead answers are
computed in long double (x87 extended: 64-bit mantissa, exponents to
about ±4932), then rounded to doubles, so that a product or square beyond
1e308 on the way (a bandwidth of 1e300, a projection of 1e300) does not
overflow where the result itself is a double: an entry is infinite only
when its own value is beyond the doubles.
"""
import json
import math

import numpy as np

from masked_reference import softmax_visible, visible

RTOL, ATOL, DECIMALS = 1e-5, 1e-8, 4

# ------------------------------------------------------------ comparison


def decimals_shown(x):
    """Decimals of the shortest text of the double x ('0.1235' 4, '1e-05'
    5, '1.5e-07' 8, '120.0' 0, '1e+300' 0)."""
    t = repr(float(x)).lower()
    mant, _, exp = t.partition("e")
    frac = mant.partition(".")[2].rstrip("0")
    return max(0, len(frac) - (int(exp) if exp else 0))


def entry_match(got, exp):
    """(match, rounded_k): got a float or None (null), exp a float (NaN
    for an expected null or NaN)."""
    if exp is None or (isinstance(exp, float) and math.isnan(exp)):
        return got is None, None
    if got is None:
        return False, None
    if math.isinf(exp):
        return got == exp, None
    d = abs(got - exp)
    if d <= ATOL + RTOL * abs(exp):
        return True, None
    k = max(decimals_shown(got), DECIMALS)
    if d < 0.51 * 10.0 ** -k:
        return True, k
    return False, None


def field_match(got, exp):
    """got: nested lists (None for null); exp: numpy array (NaN for null).
    True when the shapes agree and every entry matches."""
    g = np.array(got, dtype=object)
    if g.shape != exp.shape:
        return False
    return all(entry_match(a, float(b))[0]
               for a, b in zip(g.reshape(-1).tolist(), exp.reshape(-1)))


def as_float(got):
    """JSON nested lists to a float array, None as NaN."""
    return np.array(json.loads(json.dumps(got).replace("null", "NaN")),
                    dtype=float)


def max_abs_err(got, exp):
    """Over the entries where both are numbers; inf when the shapes
    differ, an error is not finite, or one of an entry's two values is
    null and the other a number (a null where a number belongs is as far
    as can be)."""
    g = as_float(got)
    if g.shape != exp.shape:
        return math.inf
    if (np.isnan(g) != np.isnan(exp)).any():
        return math.inf
    both = ~np.isnan(g) & ~np.isnan(exp)
    if not both.any():
        return 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.abs(g[both] - exp[both])
    e = np.where(np.isfinite(e), e, np.inf)
    return float(e.max())


def _ulps(*arrays):
    """A few ulps of the largest finite entry of the arrays: the server
    computes a mistake's answer in doubles in its own order, and this
    module in long double; the two may differ in their last bits, so two
    largest errors that close are a tie, "no larger"."""
    top = 0.0
    for a in arrays:
        a = np.asarray(a, float)
        fin = a[np.isfinite(a)]
        if fin.size:
            top = max(top, float(np.abs(fin).max()))
    return 8 * np.finfo(float).eps * top


def why_not_explained(mistake, got, ref):
    """None when the mistake's answer (float array, NaN for null) explains
    the student's field got (JSON lists) under the rule of grading v1.2
    (docs/misconceptions.md): finite at every entry the student gives a
    number for, matching the student's answer under the default
    comparison, and its largest error no larger than the reference's
    (ref, float array; ties within a few ulps of the field's largest
    entry count as no larger); else why not, in a line."""
    g = as_float(got)
    mistake = np.asarray(mistake, float)
    if g.shape != mistake.shape:
        return "the mistake's shape %s, the answer's %s" % (mistake.shape,
                                                            g.shape)
    bad = ~np.isfinite(mistake) & ~np.isnan(g)
    if bad.any():
        i = tuple(int(v) for v in np.argwhere(bad)[0])
        return ("the mistake's answer is not finite where the student gave "
                "a number: at %s it is %r, the student's %r" % (
                    list(i), float(mistake[i]), float(g[i])))
    if not field_match(got, mistake):
        flat_g, flat_m = g.reshape(-1), mistake.reshape(-1)
        for k in range(flat_m.size):
            a = None if math.isnan(flat_g[k]) else float(flat_g[k])
            if not entry_match(a, float(flat_m[k]))[0]:
                return ("the student's answer does not match the mistake's "
                        "under the default comparison: entry %d, the "
                        "student's %r, the mistake's %r" % (
                            k, a, float(flat_m[k])))
        return "the student's answer does not match the mistake's"
    em, er = max_abs_err(got, mistake), max_abs_err(got, ref)
    if not em <= er + _ulps(g, mistake):
        return ("farther than the reference: max abs err %r to the mistake, "
                "%r to the reference" % (em, er))
    return None


def explains(mistake, got, ref):
    """The rule of grading v1.2 for naming a mistake on one field
    (why_not_explained)."""
    return why_not_explained(mistake, got, ref) is None


def to_json(x):
    """float array to nested lists, NaN as None."""
    if isinstance(x, np.ndarray):
        return [to_json(v) for v in x] if x.ndim else to_json(float(x))
    x = float(x)
    return None if math.isnan(x) else x


# ------------------------------------------------------ /attention/dot

DOT_CODES = [  # the table's order
    "dot.no_scale", "dot.scale_1_over_d", "dot.scale_sqrt_dv",
    "dot.softmax_over_queries", "dot.mask_ignored", "dot.nan_rows",
    "dot.masked_fill_1e6", "dot.masked_fill_1e9",
    "dot.valid_lens_per_query", "dot.valid_lens_transposed",
    "dot.causal_top_left", "dot.causal_bottom_right", "dot.mask_inverted",
    "dot.keys_as_values", "dot.weights_unnormalised"]


def _causal(c):
    if c is True or c == "top_left":
        return "top_left"
    if c == "bottom_right":
        return "bottom_right"
    return None


def dot_parts(req):
    Q = np.asarray(req["queries"], float)
    K = np.asarray(req["keys"], float)
    V = np.asarray(req["values"], float)
    B, Nq, d = Q.shape
    Nk, dv = K.shape[1], V.shape[2]
    lens = req.get("valid_lens")
    causal = _causal(req.get("causal"))
    scale = req.get("scale")
    sc = 1 / np.sqrt(d) if scale is None else float(scale)
    return Q, K, V, B, Nq, Nk, d, dv, lens, causal, scale, sc


def _scores(Q, K, sc):
    with np.errstate(over="ignore", invalid="ignore"):
        return np.einsum("bid,bjd->bij", Q, K) * sc


def _ans(w, V):
    with np.errstate(over="ignore", invalid="ignore"):
        return {"output": w @ V, "weights": w}


def _softmax(s, vis, axis=-1):
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        return softmax_visible(s, vis, axis=axis)


def dot_right(req, reply=None):
    Q, K, V, B, Nq, Nk, d, dv, lens, causal, scale, sc = dot_parts(req)
    vis = visible(B, Nq, Nk, lens, causal)
    return _ans(_softmax(_scores(Q, K, sc), vis), V)


def dot_mistakes(req, every=False, reply=None):
    """{code: answer} for the mistakes tried on req (batched requests,
    fully_masked "zero"), in the table's order; every: also those the
    table says are not tried because they change nothing or overflow.
    reply (the route's answer) is not read: nothing is drawn."""
    Q, K, V, B, Nq, Nk, d, dv, lens, causal, scale, sc = dot_parts(req)
    vis = visible(B, Nq, Nk, lens, causal)
    s = _scores(Q, K, sc)
    masks = lens is not None or causal is not None
    right_w = _softmax(s, vis)
    out = {}
    if scale is None and d != 1:
        out["dot.no_scale"] = _ans(_softmax(_scores(Q, K, 1.0), vis), V)
        out["dot.scale_1_over_d"] = _ans(
            _softmax(_scores(Q, K, 1.0 / d), vis), V)
    if scale is None and dv != d:
        out["dot.scale_sqrt_dv"] = _ans(
            _softmax(_scores(Q, K, 1 / np.sqrt(dv)), vis), V)
    out["dot.softmax_over_queries"] = _ans(_softmax(s, vis, axis=1), V)
    if masks:
        out["dot.mask_ignored"] = _ans(_softmax(s, np.ones_like(vis)), V)
    full = ~vis.any(-1)
    if full.any():
        w = right_w.copy()
        w[full] = np.nan
        out["dot.nan_rows"] = _ans(w, V)
    if masks:
        for code, fill in (("dot.masked_fill_1e6", -1e6),
                           ("dot.masked_fill_1e9", -1e9)):
            w = _softmax(np.where(vis, s, fill), np.ones_like(vis))
            if every or not np.array_equal(w, right_w):
                out[code] = _ans(w, V)
    if lens is not None and np.ndim(lens) == 1 and B > 1:
        L = np.asarray(lens)
        per_row = np.tile(L, Nq).reshape(B, Nq)
        if (per_row != np.repeat(L[:, None], Nq, axis=1)).any():
            out["dot.valid_lens_per_query"] = _ans(
                _softmax(s, visible(B, Nq, Nk, per_row, causal)), V)
    if lens is not None and np.ndim(lens) == 2 and B > 1 and Nq > 1:
        L = np.asarray(lens)
        read = L.T.reshape(-1).reshape(B, Nq)
        if (read != L).any():
            out["dot.valid_lens_transposed"] = _ans(
                _softmax(s, visible(B, Nq, Nk, read, causal)), V)
    if causal == "bottom_right" and Nq != Nk:
        out["dot.causal_top_left"] = _ans(
            _softmax(s, visible(B, Nq, Nk, lens, "top_left")), V)
    if causal == "top_left" and Nq != Nk:
        out["dot.causal_bottom_right"] = _ans(
            _softmax(s, visible(B, Nq, Nk, lens, "bottom_right")), V)
    if masks:
        out["dot.mask_inverted"] = _ans(_softmax(s, ~vis), V)
    if not np.array_equal(K, V):
        w = right_w
        with np.errstate(over="ignore", invalid="ignore"):
            out["dot.keys_as_values"] = {"output": w @ K, "weights": w}
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(s)
    if every or np.isfinite(e).all():
        out["dot.weights_unnormalised"] = _ans(np.where(vis, e, 0.0), V)
    return out


# --------------------------------------------------- /softmax/masked

SOFTMAX_CODES = ["softmax.mask_ignored", "softmax.nan_rows",
                 "softmax.masked_fill_1e6"]


def softmax_right(req, reply=None):
    S = np.asarray(req["scores"], float)
    B, Nq, Nk = S.shape
    vis = visible(B, Nq, Nk, req.get("valid_lens"), _causal(req.get("causal")))
    return {"weights": _softmax(S, vis)}


def softmax_mistakes(req, every=False, reply=None):
    S = np.asarray(req["scores"], float)
    B, Nq, Nk = S.shape
    lens, causal = req.get("valid_lens"), _causal(req.get("causal"))
    vis = visible(B, Nq, Nk, lens, causal)
    right_w = _softmax(S, vis)
    out = {}
    if lens is not None or causal is not None:
        out["softmax.mask_ignored"] = {"weights": _softmax(S, np.ones_like(vis))}
    full = ~vis.any(-1)
    if full.any():
        w = right_w.copy()
        w[full] = np.nan
        out["softmax.nan_rows"] = {"weights": w}
    if lens is not None and causal is None:
        w = _softmax(np.where(vis, S, -1e6), np.ones_like(vis))
        if every or not np.array_equal(w, right_w):
            out["softmax.masked_fill_1e6"] = {"weights": w}
    return out


# ------------------------------------------------- long double helpers

LD = np.longdouble


def _ld(x):
    return np.asarray(x, dtype=LD)


def _f64(x):
    """long double to float64: beyond the doubles is ±inf, NaN stays."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return np.asarray(x, dtype=LD).astype(float)


def _masked_softmax(s, vis):
    """softmax_visible in long double, warnings off."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore",
                     divide="ignore"):
        return softmax_visible(s, vis)


def _mask_of(req, B, Nq, Nk):
    return visible(B, Nq, Nk, req.get("valid_lens"),
                   _causal(req.get("causal")))


def history_entries(records):
    """NW's history (JSON records, or None) as [[epoch, w, loss], ...]."""
    return [[r.get("epoch"), r.get("w"), r.get("loss")] for r in records]


def field_entries(name, value):
    """A field of an answer as nested lists of numbers (None for null):
    records (history) as rows of their members."""
    return history_entries(value) if name == "history" else value


def field_json(name, x):
    """A float array as the field's JSON: nested lists (non-finite
    entries null), history as records."""
    x = np.asarray(x, float)
    if name == "history":
        return [{"epoch": int(r[0]) if math.isfinite(r[0]) else None,
                 "w": float(r[1]) if math.isfinite(r[1]) else None,
                 "loss": float(r[2]) if math.isfinite(r[2]) else None}
                for r in x]
    if x.ndim:
        return [field_json(name, v) for v in x]
    return float(x) if math.isfinite(x) else None


# ------------------------------------------------- /attention/additive

ADDITIVE_CODES = ["additive.weights_transposed", "additive.no_tanh",
                  "additive.projections_swapped"]


def additive_parts(req, reply=None):
    """Q, K, V (batched, long double), W_q, W_k, w_v (the request's, or
    the drawn ones the route answered as params.*), the visible keys."""
    Q, K, V = _ld(req["queries"]), _ld(req["keys"]), _ld(req["values"])
    src = req if "W_q" in req else (reply or {}).get("params", {})
    Wq, Wk, wv = _ld(src["W_q"]), _ld(src["W_k"]), _ld(src["w_v"])
    vis = _mask_of(req, Q.shape[0], Q.shape[1], K.shape[1])
    return Q, K, V, Wq, Wk, wv, vis


def _additive(Q, K, V, Wq, Wk, wv, vis, tanh=True):
    """d2l 11.3.3: scores w_vᵀ tanh(W_q q + W_k k), W in (out, in); masked
    scores NaN (null), weights over the visible keys."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        feat = (Q @ Wq.T)[:, :, None, :] + (K @ Wk.T)[:, None, :, :]
        if tanh:
            feat = np.tanh(feat)
        s = feat @ wv
        w = _masked_softmax(s, vis)
        out = w @ V
    return {"output": _f64(out), "weights": _f64(w),
            "scores": _f64(np.where(vis, s, np.nan))}


def _in_out(W):
    """W's row-major data read as an (in, out) matrix M, used as X @ M:
    the (out, in) matrix Mᵀ."""
    h, d = W.shape
    return W.reshape(-1).reshape(d, h).T


def additive_right(req, reply=None):
    Q, K, V, Wq, Wk, wv, vis = additive_parts(req, reply)
    return _additive(Q, K, V, Wq, Wk, wv, vis)


def additive_mistakes(req, every=False, reply=None):
    """{code: answer} for the mistakes tried on req (batched); every: also
    those that change nothing. reply: the route's answer, for drawn
    parameters."""
    Q, K, V, Wq, Wk, wv, vis = additive_parts(req, reply)
    out = {}
    Eq, Ek = _in_out(Wq), _in_out(Wk)
    if every or not (np.array_equal(Eq, Wq) and np.array_equal(Ek, Wk)):
        out["additive.weights_transposed"] = _additive(Q, K, V, Eq, Ek, wv,
                                                       vis)
    out["additive.no_tanh"] = _additive(Q, K, V, Wq, Wk, wv, vis, tanh=False)
    if Wq.shape == Wk.shape and (every or not np.array_equal(Wq, Wk)):
        out["additive.projections_swapped"] = _additive(Q, K, V, Wk, Wq, wv,
                                                        vis)
    return out


# ------------------------------------------------------ /regression/nw

NW_CODES = ["nw.w_not_squared", "nw.no_half_in_kernel", "nw.no_half_in_loss",
            "nw.mean_loss", "nw.mse_loss", "nw.grad_sign",
            "nw.fit_without_leave_one_out"]

# A Gaussian kernel is its logit s(d, w), d = x − xᵢ, and ∂s/∂w; the
# weights are softmax(s) over the training points (d2l 11.2.4, seed notes
# §8 and §11).
NW_KERNELS = {
    "right": lambda d, w: (-0.5 * (d * w) ** 2, -d * d * w),
    "not_squared": lambda d, w: (-0.5 * d * d * w, -0.5 * d * d),
    "no_half": lambda d, w: (-(d * w) ** 2, -2 * d * d * w),
}
COMPACT = {  # K(u), u = (x − xᵢ)w
    "constant": lambda u: np.ones_like(u),
    "boxcar": lambda u: np.where(abs(u) < 1, LD(1), LD(0)),
    "epanechnikov": lambda u: np.maximum(1 - u * u, LD(0)),
    "triangular": lambda u: np.maximum(1 - abs(u), LD(0)),
}


def _nw(xq, xt, yt, w, kernel="right", compact=None, loo=False):
    """weights (m, n), ŷ (m, dv) and ∂ŷ/∂w (m, dv; None for a compact
    kernel), in long double; None when a query has no kernel mass."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore",
                     divide="ignore"):
        d = xq[:, None] - xt[None, :]
        if compact:
            a = COMPACT[compact](d * w)
            if loo:
                a = np.where(np.eye(len(xq), len(xt), dtype=bool), LD(0), a)
            mass = a.sum(axis=1, keepdims=True)
            if (mass == 0).any():
                return None
            a = a / mass
            return a, a @ yt, None
        s, ds = NW_KERNELS[kernel](d, w)
        if loo:
            s = np.where(np.eye(len(xq), len(xt), dtype=bool), -np.inf, s)
        s = s - s.max(axis=1, keepdims=True)
        a = np.exp(s)
        a = a / a.sum(axis=1, keepdims=True)
        ds = np.where(a > 0, ds, LD(0))  # a zero weight takes no part
        mean_ds = (a * ds).sum(axis=1, keepdims=True)
        return a, a @ yt, (a * (ds - mean_ds)) @ yt


def _nw_loss(xq, yq, xt, yt, w, kernel, compact, reduce, sign, loo=False):
    """the loss ½Σ(ŷ − y)² reduced by `reduce` ("half_sum" right, "sum",
    "mean", "mse" as PyTorch's nn.MSELoss()) and sign · its derivative in
    w (None for a compact kernel), long double."""
    r = _nw(xq, xt, yt, w, kernel, compact, loo)
    if r is None:
        return None, None
    _, yhat, dyhat = r
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        res = yhat - yq
        c = {"half_sum": LD(0.5), "sum": LD(1), "mean": LD(0.5) / res.size,
             "mse": LD(1) / res.size}[reduce]
        loss = c * (res * res).sum()
        grad = None if dyhat is None else sign * 2 * c * (res * dyhat).sum()
    return loss, grad


def nw_parts(req, reply=None):
    """x_train, y_train (n, dv), x_query, y_query (m, dv) or None (long
    double), the kernel, whether y_train was (n), and the w the route
    started from (the request's number, else the rule's, as the reply
    gives it: history[0].w with fit, w without)."""
    xt, yt, xq = _ld(req["x_train"]), _ld(req["y_train"]), _ld(req["x_query"])
    flat = yt.ndim == 1
    yt = yt[:, None] if flat else yt
    yq = req.get("y_query")
    if yq is not None:
        yq = _ld(yq)
        yq = yq[:, None] if yq.ndim == 1 else yq
    kernel = req.get("kernel", "gaussian")
    w = req.get("w", 1.0)
    if isinstance(w, str):
        w = (reply["history"][0]["w"] if "fit" in req else reply["w"])
    return xt, yt, xq, yq, kernel, flat, float(w)


def _nw_answer(req, reply=None, kernel="right", reduce="half_sum", sign=1.0,
               loo=True):
    """every field of the answer to req computed with the given mistake;
    None when the mistaken fit leaves w > 0 or overflows, or a query has
    no mass."""
    xt, yt, xq, yq, kname, flat, w = nw_parts(req, reply)
    compact = None if kname == "gaussian" else kname
    out = {}
    if "fit" in req:
        f = req["fit"]
        epochs, lr = f.get("epochs", 5), float(f.get("lr", 0.5))
        data = f.get("data", "train_loo")
        hist = []
        for e in range(epochs):
            if data == "query":
                loss, g = _nw_loss(xq, yq, xt, yt, LD(w), kernel, compact,
                                   reduce, sign)
            else:
                loss, g = _nw_loss(xt, yt, xt, yt, LD(w), kernel, compact,
                                   reduce, sign, loo)
            if loss is None:
                return None
            loss, g = float(_f64(loss)), float(_f64(g))
            if not (math.isfinite(loss) and math.isfinite(g)):
                return None
            hist.append([e + 1, w, loss])
            w = w - lr * g  # w is a double between the steps
            if not (math.isfinite(w) and w > 0):
                return None
        out["history"] = np.array(hist, float).reshape(-1, 3)
    r = _nw(xq, xt, yt, LD(w), kernel, compact)
    if r is None:
        return None
    a, yhat, _ = r
    out["predictions"] = _f64(yhat[:, 0] if flat else yhat)
    out["weights"] = _f64(a)
    out["w"] = np.array(w)
    if yq is not None:
        loss, g = _nw_loss(xq, yq, xt, yt, LD(w), kernel, compact, reduce,
                           sign)
        out["loss"] = _f64(loss)
        if g is not None:
            out["grad_w"] = _f64(g)
    return out


def nw_right(req, reply=None):
    return _nw_answer(req, reply)


def nw_mistakes(req, every=False, reply=None):
    """{code: answer} for the mistakes tried on req; every: also those
    that change nothing (a kernel mistake at w = 1, a mean over one
    entry). A mistaken fit that fails has no answer. reply: the route's
    answer, for a bandwidth rule's w."""
    _, yt, xq, yq, kname, _, w = nw_parts(req, reply)
    gaussian = kname == "gaussian"
    fit = req.get("fit")
    rule = req.get("w") if isinstance(req.get("w"), str) else None
    todo = []
    if gaussian and rule != "cv":
        if every or fit or math.sqrt(w) != w:
            todo.append(("nw.w_not_squared", dict(kernel="not_squared")))
        if every or fit or math.sqrt(2.0) * w != w:
            todo.append(("nw.no_half_in_kernel", dict(kernel="no_half")))
    if yq is not None or fit:
        todo.append(("nw.no_half_in_loss", dict(reduce="sum")))
        dv = yt.shape[1]
        entries = []
        if yq is not None:
            entries.append(len(xq) * dv)
        if fit:
            entries.append((len(xq) if fit.get("data") == "query"
                            else len(yt)) * dv)
        if every or max(entries) > 1:
            todo.append(("nw.mean_loss", dict(reduce="mean")))
            todo.append(("nw.mse_loss", dict(reduce="mse")))
    if fit or (gaussian and yq is not None):
        if every or fit or float(reply.get("grad_w", 0)) != 0:
            todo.append(("nw.grad_sign", dict(sign=-1.0)))
    if fit and fit.get("data", "train_loo") == "train_loo":
        todo.append(("nw.fit_without_leave_one_out", dict(loo=False)))
    out = {}
    for code, how in todo:
        ans = _nw_answer(req, reply, **how)
        if ans is not None:
            out[code] = ans
    return out


# ------------------------------------------------ /attention/multihead

MULTIHEAD_CODES = ["multihead.heads_interleaved", "multihead.weights_averaged",
                   "multihead.scale_sqrt_h", "multihead.no_output_projection"]
MH_PARAMS = ["W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o"]


def multihead_parts(req, reply=None):
    """q, k, v (batched, long double; keys default to the queries, values
    to the keys), the parameters (the request's, or the drawn ones the
    route answered as params.*), H and the visible keys."""
    q = _ld(req["queries"])
    k = _ld(req["keys"]) if "keys" in req else q
    v = _ld(req["values"]) if "values" in req else k
    src = req if "W_q" in req else (reply or {}).get("params", {})
    P = {n: _ld(src[n]) for n in MH_PARAMS if n in src}
    vis = _mask_of(req, q.shape[0], q.shape[1], k.shape[1])
    return q, k, v, P, int(req["num_heads"]), vis


def _multihead(q, k, v, P, H, vis, interleaved=False, scale_h=False,
               project=True):
    """output and weights (B, H, Nq, Nk), d2l 11.5 and PyTorch's
    nn.MultiheadAttention: Q' = q W_qᵀ + b_q (and K', V'), head t takes
    features t·h/H … (t+1)·h/H − 1 (interleaved: t, t + H, …),
    softmax(mask(Q'_t K'_tᵀ / √(h/H))) V'_t (√h with scale_h), heads
    concatenated, output = concat W_oᵀ + b_o (without project: concat)."""
    B, Nq, _ = q.shape
    h = P["W_q"].shape[0]
    per = h // H
    zero = np.zeros(h, dtype=LD)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        Qp = q @ P["W_q"].T + P.get("b_q", zero)
        Kp = k @ P["W_k"].T + P.get("b_k", zero)
        Vp = v @ P["W_v"].T + P.get("b_v", zero)

        def split(X):
            n = X.shape[1]
            if interleaved:
                return X.reshape(B, n, per, H).transpose(0, 3, 1, 2)
            return X.reshape(B, n, H, per).transpose(0, 2, 1, 3)

        Qh, Kh, Vh = split(Qp), split(Kp), split(Vp)
        s = Qh @ Kh.transpose(0, 1, 3, 2) / np.sqrt(LD(h if scale_h else per))
        w = _masked_softmax(s, np.broadcast_to(vis[:, None], s.shape))
        O = w @ Vh
        if interleaved:
            concat = O.transpose(0, 2, 3, 1).reshape(B, Nq, h)
        else:
            concat = O.transpose(0, 2, 1, 3).reshape(B, Nq, h)
        if project:
            d_out = P["W_o"].shape[0]
            out = concat @ P["W_o"].T + P.get("b_o", np.zeros(d_out, LD))
        else:
            out = concat
    return {"output": _f64(out), "weights": _f64(w)}


def multihead_right(req, reply=None):
    q, k, v, P, H, vis = multihead_parts(req, reply)
    return _multihead(q, k, v, P, H, vis)


def multihead_mistakes(req, every=False, reply=None):
    """{code: answer} for the mistakes tried on req (batched); every: also
    those the table says are not tried. reply: the route's answer, for
    drawn parameters."""
    q, k, v, P, H, vis = multihead_parts(req, reply)
    h = P["W_q"].shape[0]
    right = _multihead(q, k, v, P, H, vis)
    out = {}
    if every or (H != 1 and H != h):
        out["multihead.heads_interleaved"] = _multihead(
            q, k, v, P, H, vis, interleaved=True)
    if every or req.get("return_weights", True) is not False:
        out["multihead.weights_averaged"] = {
            "output": right["output"],
            "weights": _f64(_ld(right["weights"]).mean(axis=1))}
    if every or H != 1:
        out["multihead.scale_sqrt_h"] = _multihead(q, k, v, P, H, vis,
                                                   scale_h=True)
    W_o = P["W_o"]
    identity = (W_o.shape == (h, h) and "b_o" not in P
                and np.array_equal(W_o, np.eye(h)))
    if every or not identity:
        ans = _multihead(q, k, v, P, H, vis, project=False)
        out["multihead.no_output_projection"] = ans
    return out


ROUTES = {"/attention/dot": (dot_right, dot_mistakes, DOT_CODES),
          "/softmax/masked": (softmax_right, softmax_mistakes, SOFTMAX_CODES),
          "/attention/additive": (additive_right, additive_mistakes,
                                  ADDITIVE_CODES),
          "/regression/nw": (nw_right, nw_mistakes, NW_CODES),
          "/attention/multihead": (multihead_right, multihead_mistakes,
                                   MULTIHEAD_CODES)}


def expected_name(endpoint, request, answer, ref=None, mistakes=None):
    """What grading v1.2 should name for answer (JSON lists per field):
    None when it passes; else (code or None, failed fields), the mistake
    explaining the most failed fields, the first in the table among
    equals."""
    right, wrong, codes = ROUTES[endpoint]
    ref = right(request) if ref is None else ref
    mistakes = wrong(request) if mistakes is None else mistakes
    failed = [f for f in answer if not field_match(answer[f], ref[f])]
    if not failed:
        return None
    best, best_n = None, 0
    for code in codes:
        if code not in mistakes:
            continue
        n = sum(1 for f in failed
                if explains(mistakes[code][f], answer[f], ref[f]))
        if n > best_n:
            best, best_n = code, n
    return best, failed
