#!/usr/bin/python3
"""mistakes_extreme.py — a property of the named mistakes under extreme
inputs: whenever /grade names a misconception, the named mistake's own
answer (numpy, from the formulas of docs/misconceptions.md, as
catalogue_np.py computes it) is finite at every entry the student gave a
number for, matches the student's answer under the default comparison
of grading v1.2 (relabs rtol 1e-5 atol 1e-8, or rounded), and its
largest error (max abs) is no larger than the route's own answer's.

Seeded random requests to each route with a catalogue:
* /attention/dot and /softmax/masked: scores near ±709 after scaling,
  values ±1e308 and ±1e300, scores and values near underflow, subnormals
  (5e-324), rows of equal scores, scores far below d2l's −1e6 fill;
* /attention/additive: queries and projections near 1e300, w_v near
  1e300 or scaled so that scores reach ±709, or weights near one-hot,
  values ±1e308 and ±1e300, W_k near 1e-300 against keys near 1e300,
  subnormals, equal keys, drawn parameters, symmetric square W and
  W_q = W_k (mistakes that change nothing);
* /regression/nw: w from 5e-324 to 1.7e308, x far apart (every kernel
  weight but the nearest's underflows), x subnormal with w near 1e308,
  x near 1e-300, y ±1e308 and ±1e300, a loss near 1e308 (twice it
  overflows), equal x, fits (train_loo and query, w and lr extreme),
  compact kernels, bandwidth rules;
* /attention/multihead: projections near 1e150 (scores beyond 1e300),
  queries 1e300, W_v or W_o near 1e300, underflow, subnormal values,
  equal keys, weights near one-hot, drawn parameters, W_o the identity;
and on the attention routes valid_lens that mask a whole row, and causal
masks. Answers sent for each: every mistake's own answer (non-finite
entries as null), rounded to 4 decimals, as "%.6g" prints it, moved
towards the reference within numpy.isclose's tolerance, and with the
reference's entry, 0 or 99 where the mistake is not finite; and wrong
answers (99 everywhere, noise, the reference with one entry off by 1). A
request the route refuses (4xx) is skipped and counted.

    usage: /usr/bin/python3 mistakes_extreme.py BASE_URL [SEED]
Prints TAP lines, and per route the requests, refusals, answers, names and
fields checked; exits 1 when a check fails.
"""
import json
import math
import sys
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the tree
import catalogue_np as cat  # noqa: E402
from grading_client import finish, http, tap  # noqa: E402

N_DOT, N_SOFTMAX, N_ADDITIVE, N_NW, N_MULTIHEAD = 400, 200, 400, 400, 800


def jnum(x):
    """float array as JSON lists, non-finite entries as null."""
    x = np.asarray(x, float)
    if x.ndim:
        return [jnum(v) for v in x]
    return float(x) if math.isfinite(x) else None


def short(obj, n=600):
    t = json.dumps(obj)
    return t if len(t) <= n else t[:n] + "..."


# ------------------------------------------------------------ the requests

SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 709
rng = np.random.default_rng(SEED)
EXTREMES = ["scores_near_709", "scores_near_minus_709", "values_1e308",
            "values_1e300", "underflow", "subnormal", "equal_rows",
            "huge_scores", "far_below_fill", "plain"]


def draw_mask(B, Nq, Nk):
    """valid_lens (B) or (B, Nq), often with a 0 (a row fully masked),
    causal, or nothing."""
    u = rng.uniform()
    r = {}
    if u < 0.35:
        r["valid_lens"] = rng.integers(0, Nk + 1, size=B).tolist()
    elif u < 0.6:
        r["valid_lens"] = rng.integers(0, Nk + 1, size=(B, Nq)).tolist()
    elif u < 0.8:
        r["causal"] = [True, "bottom_right", "top_left"][rng.integers(3)]
    if rng.uniform() < 0.2 and "valid_lens" in r:
        r["causal"] = [True, "bottom_right"][rng.integers(2)]
    return r


def target_scores(kind, shape):
    """scaled scores for kind (None: no target)."""
    if kind == "scores_near_709":
        return 709 + rng.uniform(-3, 3, size=shape)
    if kind == "scores_near_minus_709":
        return -709 + rng.uniform(-3, 3, size=shape)
    if kind == "huge_scores":
        return rng.choice([-1, 1], size=shape) * 10.0 ** rng.uniform(
            250, 300, size=shape)
    if kind == "far_below_fill":
        return -1.5e6 + rng.uniform(-800, 800, size=shape)
    return None


def dot_request(kind):
    B, Nq, Nk = rng.integers(1, 3), rng.integers(1, 4), rng.integers(1, 5)
    d, dv = rng.integers(1, 4), rng.integers(1, 4)
    Q = rng.normal(size=(B, Nq, d))
    K = rng.normal(size=(B, Nk, d))
    V = rng.normal(size=(B, Nk, dv))
    S = target_scores(kind, (B, Nq, Nk))
    if S is not None:
        # d = 1 makes the scores exactly q·k/1: q = 1, k = target
        Q = np.ones((B, Nq, 1)) * rng.choice([1.0, -1.0])
        K = (S[:, :1, :].transpose(0, 2, 1) * Q[:, :1, :1]).copy()
        if rng.uniform() < 0.5:  # each query its own row of targets: Nq 1
            Q, K = Q[:, :1], K
    if kind == "values_1e308":
        V = rng.choice([-1, 1], size=V.shape) * 1e308 * rng.uniform(
            0.5, 1.79, size=V.shape)
    elif kind == "values_1e300":
        V = rng.choice([-1, 1], size=V.shape) * 1e300
    elif kind == "underflow":
        Q = Q * 1e-160
        K = K * 1e-160
        V = V * 1e-300
    elif kind == "subnormal":
        V = rng.choice([-1, 0, 1], size=V.shape) * 5e-324
        Q = Q * 1e-200
    elif kind == "equal_rows":
        K = np.repeat(K[:, :1], K.shape[1], axis=1)
    B, Nq = Q.shape[0], Q.shape[1]
    Nk = K.shape[1]
    r = {"queries": Q.tolist(), "keys": K.tolist(), "values": V.tolist()}
    r.update(draw_mask(B, Nq, Nk))
    return r


def softmax_request(kind):
    B, Nq, Nk = rng.integers(1, 3), rng.integers(1, 4), rng.integers(1, 6)
    S = target_scores(kind, (B, Nq, Nk))
    if S is None:
        S = rng.normal(size=(B, Nq, Nk))
        if kind == "values_1e308":
            S = rng.choice([-1, 1], size=S.shape) * 1e308
        elif kind == "values_1e300":
            S = S * 1e300
        elif kind == "underflow":
            S = S * 1e-300
        elif kind == "subnormal":
            S = rng.choice([-1, 0, 1], size=S.shape) * 5e-324
        elif kind == "equal_rows":
            S = np.repeat(S[:, :, :1], Nk, axis=2)
    r = {"scores": S.tolist()}
    r.update(draw_mask(B, Nq, Nk))
    return r


def params_kind(kind, h, dq, dk):
    """W_q (h, dq), W_k (h, dk), w_v (h) of an additive request."""
    Wq = rng.normal(size=(h, dq))
    Wk = rng.normal(size=(h, dk))
    wv = rng.normal(size=h)
    if kind == "huge_w_v":
        wv = rng.choice([-1, 1], size=h) * 10.0 ** rng.uniform(250, 300,
                                                               size=h)
    elif kind == "scores_near_709":
        wv = wv / np.abs(wv).sum() * rng.choice([1, -1]) * rng.uniform(
            700, 750)
    elif kind == "peaked":  # weights near one-hot, the rest tiny
        wv = wv * 10.0 ** rng.uniform(0.7, 1.7)
    elif kind == "nearly_uniform":  # mistakes within a few tolerances
        wv = wv * 10.0 ** rng.uniform(-6, -4)
    elif kind == "huge_projections":
        Wq = Wq * 10.0 ** rng.uniform(295, 305)
        Wk = Wk * 10.0 ** rng.uniform(295, 305)
    elif kind == "underflow":
        Wk = Wk * 1e-300
    elif kind == "square_symmetric" and dq == dk == h:
        Wq = Wq + Wq.T
    return Wq, Wk, wv


ADDITIVE_KINDS = ["plain", "queries_1e300", "huge_w_v", "scores_near_709",
                  "peaked", "nearly_uniform",
                  "huge_projections", "values_1e308", "values_1e300",
                  "underflow", "subnormal", "equal_rows", "drawn",
                  "square_symmetric"]


def additive_request(kind):
    B, Nq, Nk = rng.integers(1, 3), rng.integers(1, 4), rng.integers(1, 5)
    if kind in ("peaked", "nearly_uniform"):  # a mistake may then come
        B, Nq = 1, 1                         # near the reference
    dq, dv, h = rng.integers(1, 4), rng.integers(1, 3), rng.integers(1, 5)
    dk = dq if rng.uniform() < 0.6 else rng.integers(1, 4)
    if kind == "square_symmetric":
        dk = h = dq
    Q = rng.normal(size=(B, Nq, dq))
    K = rng.normal(size=(B, Nk, dk))
    V = rng.normal(size=(B, Nk, dv))
    if kind == "queries_1e300":
        Q = Q * 1e300
        K = K * 10.0 ** rng.choice([0, 300])
    elif kind == "values_1e308":
        V = rng.choice([-1, 1], size=V.shape) * 1e308 * rng.uniform(
            0.5, 1.79, size=V.shape)
    elif kind == "values_1e300":
        V = rng.choice([-1, 1], size=V.shape) * 1e300
    elif kind == "underflow":  # W_k near 1e-300 times keys near 1e300
        K, V = K * 1e300, V * 1e-300
    elif kind == "subnormal":
        V = rng.choice([-1, 0, 1], size=V.shape) * 5e-324
        Q = rng.choice([-1, 0, 1], size=Q.shape) * 5e-324
    elif kind == "equal_rows":
        K = np.repeat(K[:, :1], Nk, axis=1)
    elif kind == "nearly_uniform":  # columns of other sizes: an error of
        V = V * 10.0 ** rng.uniform(-2, 3, size=dv)  # a large one may hide
    r = {"queries": Q.tolist(), "keys": K.tolist(), "values": V.tolist()}
    if kind == "drawn":
        r.update(num_hiddens=int(h), seed=int(rng.integers(0, 1000)))
    else:
        Wq, Wk, wv = params_kind(kind, h, dq, dk)
        if Wq.shape == Wk.shape and rng.uniform() < 0.15:
            Wk = Wq.copy()  # projections_swapped changes nothing
        r.update(W_q=Wq.tolist(), W_k=Wk.tolist(), w_v=wv.tolist())
    r.update(draw_mask(B, Nq, Nk))
    if rng.uniform() < 0.4:
        r["return_scores"] = True
    return r


NW_KINDS = ["plain", "w_huge", "w_tiny", "far_apart", "values_1e308",
            "values_1e300", "underflow", "subnormal", "equal_x", "fit",
            "fit_extreme", "compact", "rule", "loss_near_overflow"]


def nw_request(kind):
    n, m = int(rng.integers(2, 7)), int(rng.integers(1, 5))
    dv = int(rng.integers(1, 3))
    xt = rng.uniform(0, 5, n)
    xq = rng.uniform(-1, 6, m)
    yt = rng.normal(size=(n, dv))
    yq = rng.normal(size=(m, dv))
    w = float(10.0 ** rng.uniform(-1, 1))
    if kind == "w_huge":
        w = float(rng.choice([1e300, 1e308, 1.7e308, 1e154, 1e10]))
    elif kind == "w_tiny":
        w = float(rng.choice([1e-300, 5e-324, 1e-160, 1e-10]))
    elif kind == "far_apart":  # every kernel value but the nearest's is 0
        xt = rng.uniform(-1, 1, n) * 10.0 ** rng.uniform(3, 300)
        xq = rng.uniform(-1, 1, m) * 10.0 ** rng.uniform(3, 300)
        w = float(10.0 ** rng.uniform(-2, 2))
    elif kind == "values_1e308":
        yt = rng.choice([-1, 1], size=yt.shape) * 1e308 * rng.uniform(
            0.5, 1.79, size=yt.shape)
        yq = rng.choice([-1, 1], size=yq.shape) * 1e308 * rng.uniform(
            0.5, 1.79, size=yq.shape)
    elif kind == "values_1e300":
        yt, yq = yt * 1e300, yq * 1e300
    elif kind == "underflow":  # x near 1e-300, w near 1e300
        xt, xq = xt * 1e-300, xq * 1e-300
        w = w * 1e300
        if rng.uniform() < 0.3:
            yt, yq = yt * 1e-300, yq * 1e-300
    elif kind == "subnormal":  # x subnormal, w near the largest double
        xt = rng.integers(0, 2000, n) * 5e-324
        xq = rng.integers(0, 2000, m) * 5e-324
        w = float(rng.uniform(0.5, 1.7)) * 1e308 / float(
            rng.choice([1, 1e3, 1e6]))
        if rng.uniform() < 0.3:
            yt = rng.choice([-1, 0, 1], size=yt.shape) * 5e-324
    elif kind == "equal_x":
        xt = np.full(n, xt[0])
    elif kind == "loss_near_overflow":  # ½Σ(ŷ − y)² near 1e308
        yt = rng.uniform(-1, 1, size=yt.shape) * 1e150
        yq = rng.choice([-1, 1], size=yq.shape) * rng.choice([
            rng.uniform(0.6, 1.3), rng.uniform(1.35, 1.85)]) * 1e154 / np.sqrt(
                yq.size)  # twice the loss may overflow
    r = {"x_train": xt.tolist(),
         "y_train": (yt[:, 0] if dv == 1 and rng.uniform() < 0.5
                     else yt).tolist(),
         "x_query": xq.tolist(), "w": w}
    if kind == "loss_near_overflow" or (kind != "fit"
                                        and rng.uniform() < 0.85) and not (
            kind in ("values_1e308", "values_1e300")
            and rng.uniform() < 0.5):
        r["y_query"] = (yq[:, 0] if np.ndim(r["y_train"]) == 1
                        else yq).tolist()
    if kind in ("fit", "fit_extreme") or rng.uniform() < 0.15:
        data = "query" if "y_query" in r and rng.uniform() < 0.4 \
            else "train_loo"
        r["fit"] = {"epochs": int(rng.integers(1, 5)),
                    "lr": float(10.0 ** rng.uniform(-3, 0)), "data": data}
        if kind == "fit_extreme":
            r["w"] = float(rng.choice([1e-300, 1e300, 1e-8, 1e8, 5e-324]))
            r["fit"]["lr"] = float(rng.choice([1e-300, 1e-3, 1.0, 1e300]))
    if kind == "compact":
        r["kernel"] = str(rng.choice(["boxcar", "epanechnikov", "triangular",
                                      "constant"]))
        r["w"] = float(10.0 ** rng.uniform(-1.5, 0))
    if kind == "rule":
        r["w"] = str(rng.choice(["scott", "silverman"]))
    return r


MULTIHEAD_KINDS = ["plain", "large_projections", "queries_1e300", "peaked",
                   "nearly_uniform",
                   "large_values", "large_output", "underflow", "subnormal",
                   "equal_rows", "drawn", "identity_out"]


def multihead_request(kind):
    B, Nq, Nk = rng.integers(1, 3), rng.integers(1, 4), rng.integers(1, 5)
    if kind in ("peaked", "nearly_uniform"):  # a mistake may then come
        B, Nq = 1, 1                         # near the reference
    dq, dk, dv = rng.integers(1, 4), rng.integers(1, 4), rng.integers(1, 4)
    H = int(rng.choice([1, 2, 3]))
    h = H * int(rng.integers(1, 4))
    d_out = h if kind == "identity_out" else int(rng.integers(1, 5))
    self_attention = rng.uniform() < 0.2
    if self_attention:
        dk = dv = dq
        Nk = Nq
    Q = rng.normal(size=(B, Nq, dq))
    K = rng.normal(size=(B, Nk, dk))
    V = rng.normal(size=(B, Nk, dv))
    if self_attention:
        K = V = Q
    P = {"W_q": rng.normal(size=(h, dq)), "W_k": rng.normal(size=(h, dk)),
         "W_v": rng.normal(size=(h, dv)), "W_o": rng.normal(size=(d_out, h))}
    if rng.uniform() < 0.4:
        P.update(b_q=rng.normal(size=h), b_k=rng.normal(size=h),
                 b_v=rng.normal(size=h), b_o=rng.normal(size=d_out))
    if kind == "large_projections":
        e = rng.uniform(140, 160)
        P["W_q"] = P["W_q"] * 10.0 ** e
        P["W_k"] = P["W_k"] * 10.0 ** rng.uniform(140, 160)
    elif kind == "queries_1e300":
        Q = Q * 1e300
    elif kind == "peaked":  # weights near one-hot, the rest tiny
        P["W_q"] = P["W_q"] * 10.0 ** rng.uniform(0.3, 1.2)
        P["W_k"] = P["W_k"] * 10.0 ** rng.uniform(0.3, 1.2)
    elif kind == "nearly_uniform":  # mistakes within a few tolerances
        P["W_q"] = P["W_q"] * 10.0 ** rng.uniform(-6, -4)
    elif kind == "large_values":
        P["W_v"] = P["W_v"] * 10.0 ** rng.uniform(290, 308)
    elif kind == "large_output":
        P["W_o"] = P["W_o"] * 10.0 ** rng.uniform(290, 308)
    elif kind == "underflow":
        Q, K, V = Q * 1e-160, K * 1e-160, V * 1e-300
    elif kind == "subnormal":
        V = rng.choice([-1, 0, 1], size=V.shape) * 5e-324
        P.pop("b_v", None)
        P.pop("b_o", None)
    elif kind == "equal_rows":
        K = np.repeat(K[:, :1], Nk, axis=1)
    elif kind == "identity_out":
        P["W_o"] = np.eye(h)
        P.pop("b_o", None)
    r = {"queries": Q.tolist(), "num_heads": H}
    if not self_attention:
        r.update(keys=K.tolist(), values=V.tolist())
    if kind == "drawn":
        r.update(num_hiddens=h, seed=int(rng.integers(0, 1000)))
    else:
        r.update({k: v.tolist() for k, v in P.items()})
    lens = draw_mask(B, Nq, Nk)
    r.update(lens)
    if rng.uniform() < 0.1:
        r["return_weights"] = False
    return r


# ------------------------------------------------------------ one request

# the fields graded, as the route answers them (those present)
FIELDS = {"/attention/dot": ["output", "weights"],
          "/softmax/masked": ["weights"],
          "/attention/additive": ["output", "weights", "scores"],
          "/regression/nw": ["predictions", "weights", "w", "loss", "grad_w",
                             "history"],
          "/attention/multihead": ["output", "weights"]}
stats = {e: {"requests": 0, "refused": 0, "answers": 0, "named": 0,
             "checks": 0, "refused_by": {}, "refused_kinds": {},
             "named_kinds": {}, "codes": {}} for e in FIELDS}


def nudged(f, m, r):
    """m moved by 0.9 of numpy.isclose's tolerance towards r (where the
    shapes agree; else up): it still matches m, and may come nearer the
    reference than m does. NW's epochs stay whole."""
    with np.errstate(over="ignore", invalid="ignore"):
        step = 0.9 * (cat.ATOL + cat.RTOL * np.abs(m))
        toward = np.sign(r - m) if r.shape == m.shape else np.ones_like(m)
        x = m + step * np.nan_to_num(toward)
    if f == "history":
        x[:, 0] = m[:, 0]
    return x


def spliced(f, m, r):
    """the reference where it matches m under numpy.isclose's tolerance
    (taken at m), m elsewhere (where the shapes agree; else m): m shows
    only where it must, and its error may exceed the reference's."""
    if r.shape != m.shape:
        return m
    with np.errstate(over="ignore", invalid="ignore"):
        close = np.abs(r - m) <= cat.ATOL + cat.RTOL * np.abs(m)
    return np.where(close & np.isfinite(r), r, m)


def fill_answers(code, ans, fields, ref):
    """the mistake's own answer (non-finite entries null); the same
    rounded to 4 decimals, as "%.6g" prints it, moved towards the
    reference within the tolerance, and with the reference's entries
    where they match it; and with the reference's entry (where the shapes
    agree and it is finite), 0 or 99 where it is not finite."""
    out = {code + " (own answer)": {f: cat.field_json(f, ans[f])
                                    for f in fields}}
    styles = {"rounded to 4 decimals": lambda f, m: np.where(
                  np.abs(m) < 1e15, np.round(np.where(np.abs(m) < 1e15, m, 0),
                                             4), m),
              "as %.6g": lambda f, m: np.vectorize(
                  lambda v: float("%.6g" % v))(m) if m.size else m,
              "moved towards the reference": lambda f, m: nudged(
                  f, m, ref[f]),
              "the reference where it matches": lambda f, m: spliced(
                  f, m, ref[f])}
    for label, style in styles.items():
        out["%s (%s)" % (code, label)] = {
            f: cat.field_json(f, style(f, np.asarray(ans[f], float)))
            for f in fields}
    for label in ("reference", "0", "99"):
        mixed = {}
        for f in fields:
            m = np.asarray(ans[f], float)
            if label == "reference" and m.shape == ref[f].shape:
                fill = np.where(np.isfinite(ref[f]), ref[f], 0.0)
            else:
                fill = 99.0 if label == "99" else 0.0
            mixed[f] = cat.field_json(f, np.where(np.isfinite(m), m, fill))
        out["%s (%s where not finite)" % (code, label)] = mixed
    return out


def check_request(endpoint, kind, request):
    st = stats[endpoint]
    st["requests"] += 1
    status, body = http(endpoint, json.dumps(request).encode())
    if status >= 400:
        st["refused"] += 1
        code = (json.loads(body) or {}).get("code", status) \
            if body.startswith(b"{") else status
        st["refused_by"][code] = st["refused_by"].get(code, 0) + 1
        st["refused_kinds"][kind] = st["refused_kinds"].get(kind, 0) + 1
        return
    got_ref = json.loads(body)
    fields = [f for f in FIELDS[endpoint] if f in got_ref]
    ref = {f: cat.as_float(cat.field_entries(f, got_ref[f])) for f in fields}
    right, wrong, codes = cat.ROUTES[endpoint]
    mistakes = wrong(request, reply=got_ref)
    every = wrong(request, every=True, reply=got_ref)
    answers = {}
    for code, ans in mistakes.items():
        answers.update(fill_answers(code, ans, fields, ref))
    answers["99 everywhere"] = {f: cat.field_json(f, np.full(ref[f].shape,
                                                             99.0))
                                for f in fields}
    answers["noise"] = {f: cat.field_json(f, rng.normal(size=ref[f].shape))
                        for f in fields}
    answers["reference, first entry +1"] = {}
    for f in fields:
        x = np.where(np.isfinite(ref[f]), ref[f], 0.0).reshape(-1).copy()
        x[-1 if f == "history" else 0] += 1.0
        answers["reference, first entry +1"][f] = cat.field_json(
            f, x.reshape(ref[f].shape))
    # the same answer once
    seen, names = set(), []
    for n, a in answers.items():
        t = json.dumps(a, sort_keys=True)
        if t not in seen:
            seen.add(t)
            names.append(n)
    lines = "".join(json.dumps({"id": i, "endpoint": endpoint,
                                "request": request, "answer": answers[n]})
                    + "\n" for i, n in enumerate(names)).encode()
    status, body = http("/grade/batch", lines, "application/x-ndjson")
    if status != 200:
        tap(False, "%s %s: POST /grade/batch answers 200" % (endpoint, kind),
            "%s %s\nrequest: %s" % (status, body[:300], short(request)))
        return
    problems = []
    for line in body.splitlines():
        g = json.loads(line)
        name = names[g["id"]]
        st["answers"] += 1
        if "problem" in g:
            problems.append("%s: %s" % (name, short(g["problem"], 300)))
            continue
        mc = g.get("misconception")
        if not isinstance(mc, dict):
            continue
        st["named"] += 1
        st["named_kinds"][kind] = st["named_kinds"].get(kind, 0) + 1
        code, mfields = mc.get("code"), mc.get("fields", [])
        st["codes"][code] = st["codes"].get(code, 0) + 1
        why = None
        if code not in every:
            why = "%s is not a mistake tried for this request" % code
        elif not mfields:
            why = "it explains no field"
        for f in mfields if not why else []:
            st["checks"] += 1
            if f not in fields:
                why = "field %s is not graded" % f
            elif f not in every[code]:
                why = "%s: the mistake does not answer it" % f
            else:
                got = cat.field_entries(f, answers[name][f])
                why = cat.why_not_explained(every[code][f], got, ref[f])
                why = why and "%s: %s" % (f, why)
            if why:
                break
        if why:
            problems.append("%s named %s on %s: %s\n  answer: %s\n"
                            "  reference: %s" % (
                                name, code, mfields, why,
                                short(answers[name], 300), short(got_ref,
                                                                 300)))
    tap(not problems,
        "%s %s: every named mistake is finite, matches and is no farther "
        "than the reference (%d answers)" % (endpoint, kind, len(names)),
        "request: %s\n%s" % (short(request, 400), "\n".join(problems[:3])))


PLAN = [("/attention/dot", N_DOT, EXTREMES, dot_request),
        ("/softmax/masked", N_SOFTMAX, EXTREMES, softmax_request),
        ("/attention/additive", N_ADDITIVE, ADDITIVE_KINDS, additive_request),
        ("/regression/nw", N_NW, NW_KINDS, nw_request),
        ("/attention/multihead", N_MULTIHEAD, MULTIHEAD_KINDS,
         multihead_request)]
for endpoint, count, kinds, make in PLAN:
    t0 = time.time()
    for i in range(count):
        kind = kinds[i % len(kinds)]
        check_request(endpoint, kind, make(kind))
    st = stats[endpoint]
    print("# %s: %d requests, %d refused by the route (%s), %d answers "
          "graded, %d named a mistake, %d fields checked, %.1f s" % (
              endpoint, st["requests"], st["refused"],
              ", ".join("%s: %d" % kv for kv in sorted(
                  st["refused_by"].items(), key=str)),
              st["answers"], st["named"], st["checks"], time.time() - t0))
    print("#   refused: %s" % ", ".join(
        "%s %d" % kv for kv in sorted(st["refused_kinds"].items())))
    print("#   named, by kind of request: %s" % ", ".join(
        "%s %d" % kv for kv in sorted(st["named_kinds"].items())))
    print("#   named: %s" % ", ".join(
        "%s %d" % kv for kv in sorted(st["codes"].items())))
    tap(st["requests"] > st["refused"],
        "%s: some requests were graded (%d of %d)" % (
            endpoint, st["requests"] - st["refused"], st["requests"]))
finish()
