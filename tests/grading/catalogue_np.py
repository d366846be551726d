"""catalogue_np.py — what class_of_300.py and mistakes_extreme.py share:
the answers of /attention/dot and /softmax/masked, right and as each
catalogued mistake computes them (docs/misconceptions.md), in numpy from
the formulas (as mistakes_dot.py and mistakes_softmax.py write them), and
the default comparison of grading v1.2 ("relabs_or_rounded": numpy.isclose
with rtol 1e-5, atol 1e-8, or the reference rounded to the decimals the
answer shows, at least 4), entry by entry, so that a script can tell
what the server should answer without asking it.

Answers are dicts of float64 arrays; NaN stands for JSON null.
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


def explains(mistake, got, ref):
    """The rule of grading v1.2 for naming a mistake on one field: its
    answer finite at every entry the student gives a number for, matching
    the student's answer, and strictly closer than the reference."""
    g = as_float(got)
    if g.shape != mistake.shape:
        return False
    given = ~np.isnan(g)
    if not np.isfinite(mistake[given]).all():
        return False
    if not field_match(got, mistake):
        return False
    return max_abs_err(got, mistake) < max_abs_err(got, ref)


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


def dot_right(req):
    Q, K, V, B, Nq, Nk, d, dv, lens, causal, scale, sc = dot_parts(req)
    vis = visible(B, Nq, Nk, lens, causal)
    return _ans(_softmax(_scores(Q, K, sc), vis), V)


def dot_mistakes(req, every=False):
    """{code: answer} for the mistakes tried on req (batched requests,
    fully_masked "zero"), in the table's order; every: also those the
    table says are not tried because they change nothing or overflow."""
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


def softmax_right(req):
    S = np.asarray(req["scores"], float)
    B, Nq, Nk = S.shape
    vis = visible(B, Nq, Nk, req.get("valid_lens"), _causal(req.get("causal")))
    return {"weights": _softmax(S, vis)}


def softmax_mistakes(req, every=False):
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


ROUTES = {"/attention/dot": (dot_right, dot_mistakes, DOT_CODES),
          "/softmax/masked": (softmax_right, softmax_mistakes, SOFTMAX_CODES)}


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
