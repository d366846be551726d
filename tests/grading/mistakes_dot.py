#!/usr/bin/python3
"""mistakes_dot.py — /grade names each mistake of /attention/dot's
catalogue (docs/misconceptions.md) for an answer computed the mistaken
way, and none for a right answer, a float32-rounded one or noise.

Every answer here comes from numpy, written from the formulas: scaled
dot-product attention softmax(mask(Q Kᵀ · scale)) V (d2l 11.3.2), and each
mistake as its table row describes it.

    usage: /usr/bin/python3 mistakes_dot.py BASE_URL
Prints TAP lines; exits 1 when a test fails.
"""
import json

import numpy as np

from grading_client import finish, grader, mistake_checker, tap, tolist
from masked_reference import softmax_visible, visible

grade = grader("/attention/dot")
expect_mistake = mistake_checker(grade)


# ------------------------------------------------------------ the math

def scores_of(q, k, scale):
    return np.einsum("bid,bjd->bij", q, k) * scale


def attend(q, k, v, valid_lens=None, causal=None, scale=None):
    """The right answer: (output, weights, scale, scores with None)."""
    B, Nq, d = q.shape
    Nk = k.shape[1]
    scale = 1 / np.sqrt(d) if scale is None else scale
    s = scores_of(q, k, scale)
    vis = visible(B, Nq, Nk, valid_lens, causal)
    w = softmax_visible(s, vis)
    return w @ v, w, scale, s, vis


def masked(s, vis):
    return [[[float(x) if ok else None for x, ok in zip(r, vr)]
             for r, vr in zip(m, vm)] for m, vm in zip(s, vis)]


def tensor(x):
    return np.asarray(x).tolist()


# ------------------------------------------------------------- the requests

rng = np.random.default_rng(20240611)
B, Nq, Nk, d, dv = 2, 3, 5, 3, 2  # d != dv, Nq != Nk, d not 1 or 4
Q = rng.normal(size=(B, Nq, d))
K = rng.normal(size=(B, Nk, d))
V = rng.normal(size=(B, Nk, dv))


def request(**extra):
    r = {"queries": tensor(Q), "keys": tensor(K), "values": tensor(V)}
    r.update(extra)
    return r


def mistaken(w, v):
    return {"output": tensor(w @ v), "weights": tensor(w)}


def scale_mistake(code, x):
    s = scores_of(Q, K, x)
    w = softmax_visible(s, np.ones_like(s, bool))
    ans = mistaken(w, V)
    ans["scale"] = x
    expect_mistake(code, request(), ans, code, ["output", "weights", "scale"])


# ------------------------------------------------------------- the mistakes

# 1–3. the scale: 1 instead of 1/√d, 1/d, 1/√dv
scale_mistake("dot.no_scale", 1.0)
scale_mistake("dot.scale_1_over_d", 1.0 / d)
scale_mistake("dot.scale_sqrt_dv", 1.0 / np.sqrt(dv))

# 4. softmax along the query axis (axis 1) instead of the key axis
s = scores_of(Q, K, 1 / np.sqrt(d))
w = softmax_visible(s, np.ones_like(s, bool), axis=1)
expect_mistake("dot.softmax_over_queries", request(), mistaken(w, V),
               "dot.softmax_over_queries", ["output", "weights"])

# 4b. the mask forgotten: every key seen, as if valid_lens were absent
lens = [2, 4]
s = scores_of(Q, K, 1 / np.sqrt(d))
w = softmax_visible(s, np.ones_like(s, bool))
expect_mistake("dot.mask_ignored", request(valid_lens=lens), mistaken(w, V),
               "dot.mask_ignored", ["output", "weights"])

# 4c. masked scores -inf and a plain softmax: example 0 sees no key, so
# its rows are 0/0 = NaN, null in JSON; example 1 is right
lens = [0, 3]
_, _, sc, s, vis = attend(Q, K, V, valid_lens=lens)
with np.errstate(invalid="ignore"):
    e = np.where(vis, np.exp(s - np.where(vis, s, -np.inf).max(-1, keepdims=True)), 0.0)
    w = e / e.sum(-1, keepdims=True)
o = w @ V
nan_answer = {"output": [[[None if np.isnan(x) else x for x in row] for row in m] for m in o.tolist()],
              "weights": [[[None if np.isnan(x) else x for x in row] for row in m] for m in w.tolist()]}
expect_mistake("dot.nan_rows", request(valid_lens=lens), nan_answer,
               "dot.nan_rows", ["output", "weights"])

# 5. masked scores replaced by -1e6, softmax over all keys: example 0
# sees no key (valid_len 0) and gets uniform weights; the −1e9 fill gives
# the same answer here, and the first in the table is named
lens = [0, 3]
_, _, sc, s, vis = attend(Q, K, V, valid_lens=lens)
w = softmax_visible(np.where(vis, s, -1e6), np.ones_like(vis))
expect_mistake("dot.masked_fill_1e6", request(valid_lens=lens),
               mistaken(w, V), "dot.masked_fill_1e6", ["output", "weights"])

# 6. the −1e9 fill: example 1's visible scores lie near −1.7e6, below the
# −1e6 fill (which would put its weight on the masked keys) but far
# above −1e9 (whose answer there is the right one); example 0 sees no key
Qf = Q.copy()
Kf = K.copy()
Qf[1] = 1000.0 + 0.01 * rng.normal(size=(Nq, d))
Kf[1] = -1000.0 + 0.001 * rng.normal(size=(Nk, d))
req_far = {"queries": tensor(Qf), "keys": tensor(Kf), "values": tensor(V),
           "valid_lens": lens}
_, _, sc, s, vis = attend(Qf, Kf, V, valid_lens=lens)
assert s[1].max() < -1.5e6 and s[1].min() > -2e6
w = softmax_visible(np.where(vis, s, -1e9), np.ones_like(vis))
expect_mistake("dot.masked_fill_1e9", req_far, mistaken(w, V),
               "dot.masked_fill_1e9", ["output", "weights"])
# and there the −1e6 fill is told apart
w6 = softmax_visible(np.where(vis, s, -1e6), np.ones_like(vis))
tap(np.abs(w6[1] - w[1]).max() > 0.1,
    "dot.masked_fill_1e9: the -1e6 fill differs from it in example 1")
expect_mistake("dot.masked_fill_1e6 (far scores)", req_far, mistaken(w6, V),
               "dot.masked_fill_1e6", ["output", "weights"])

# 7. valid_lens (B) read per query row: valid_lens.repeat(Nq), so the
# flattened row r = b·Nq + q gets valid_lens[r mod B]
lens = np.array([1, 4])
per_row = np.tile(lens, Nq).reshape(B, Nq)
assert (per_row != np.repeat(lens[:, None], Nq, axis=1)).any()
_, w, *_ = attend(Q, K, V, valid_lens=per_row)
expect_mistake("dot.valid_lens_per_query", request(valid_lens=tensor(lens)),
               mistaken(w, V), "dot.valid_lens_per_query",
               ["output", "weights"])

# 8. valid_lens (B, Nq) flattened column-major (valid_lens.T.reshape(-1))
# and read back row by row
lens2 = np.array([[1, 2, 3], [4, 5, 2]])
read = lens2.T.reshape(-1).reshape(B, Nq)
_, w, *_ = attend(Q, K, V, valid_lens=read)
expect_mistake("dot.valid_lens_transposed",
               request(valid_lens=tensor(lens2)), mistaken(w, V),
               "dot.valid_lens_transposed", ["output", "weights"])

# 9–10. the causal alignment swapped (Nq = 3 ≠ Nk = 5)
_, w, *_ = attend(Q, K, V, causal="top_left")
expect_mistake("dot.causal_top_left", request(causal="bottom_right"),
               mistaken(w, V), "dot.causal_top_left", ["output", "weights"])
_, w, *_ = attend(Q, K, V, causal="bottom_right")
expect_mistake("dot.causal_bottom_right", request(causal=True),
               mistaken(w, V), "dot.causal_bottom_right",
               ["output", "weights"])

# 11. the mask inverted: the hidden keys attended to, the visible left out
lens = [2, 3]
_, _, sc, s, vis = attend(Q, K, V, valid_lens=lens)
w = softmax_visible(s, ~vis)
expect_mistake("dot.mask_inverted", request(valid_lens=lens), mistaken(w, V),
               "dot.mask_inverted", ["output", "weights"])

# 12. the keys averaged instead of the values: output (B, Nq, d), whose
# shape is not the right one's (d ≠ dv); the weights given are right
_, w, *_ = attend(Q, K, V)
expect_mistake("dot.keys_as_values", request(),
               {"output": tensor(w @ K), "weights": tensor(w)},
               "dot.keys_as_values", ["output"])

# ... and with the request's tensors in the {"shape", "data"} form
def flat(x):
    x = np.asarray(x)
    return {"shape": list(x.shape), "data": x.reshape(-1).tolist()}


expect_mistake("dot.keys_as_values ({\"shape\", \"data\"} request)",
               {"queries": flat(Q), "keys": flat(K), "values": flat(V)},
               {"output": tensor(w @ K), "weights": tensor(w)},
               "dot.keys_as_values", ["output"])
lens2 = np.array([[1, 2, 3], [4, 5, 2]])
_, w, *_ = attend(Q, K, V, valid_lens=lens2.T.reshape(-1).reshape(B, Nq))
expect_mistake("dot.valid_lens_transposed ({\"shape\", \"data\"} "
               "request)",
               {"queries": flat(Q), "keys": flat(K), "values": flat(V),
                "valid_lens": flat(lens2)}, mistaken(w, V),
               "dot.valid_lens_transposed", ["output", "weights"])

# 13. exp of the scaled scores, not divided by their sum (unbatched, with
# a scalar valid_lens: the answers drop the batch axis)
lens = 3
_, _, sc, s, vis = attend(Q[:1], K[:1], V[:1], valid_lens=[lens])
w = np.where(vis, np.exp(s), 0.0)
expect_mistake("dot.weights_unnormalised (unbatched)",
               {"queries": tensor(Q[0]), "keys": tensor(K[0]),
                "values": tensor(V[0]), "valid_lens": lens},
               {"output": tensor((w @ V[:1])[0]), "weights": tensor(w[0])},
               "dot.weights_unnormalised", ["output", "weights"])

# ------------------------------------------- right answers, rounding, noise

# requests under which most mistakes apply: masks of each kind, a fully
# masked row (valid_len 0), a causal mask with Nq ≠ Nk
cases = [
    ("plain", {}, {}),
    ("valid_lens (B)", {"valid_lens": [0, 3]}, {"valid_lens": [0, 3]}),
    ("valid_lens (B, Nq) and causal",
     {"valid_lens": [[1, 2, 0], [5, 3, 4]], "causal": True,
      "return_scores": True},
     {"valid_lens": [[1, 2, 0], [5, 3, 4]], "causal": "top_left"}),
    ("causal bottom_right", {"causal": "bottom_right"},
     {"causal": "bottom_right"}),
]
for label, extra, math in cases:
    req = request(**extra)
    out, w, sc, s, vis = attend(Q, K, V, **math)
    right = {"output": tensor(out), "weights": tensor(w), "scale": sc}
    if extra.get("return_scores"):
        right["scores"] = masked(s, vis)
    g = grade(req, right)
    tap(g.get("pass") is True and "misconception" not in g,
        "right answer (%s): pass, no misconception member" % label,
        json.dumps(g)[:400])
    f32 = {"output": tensor(out.astype(np.float32).astype(float)),
           "weights": tensor(w.astype(np.float32).astype(float)),
           "scale": float(np.float32(sc))}
    g = grade(req, f32)
    tap(g.get("pass") is True and "misconception" not in g,
        "float32-rounded right answer (%s) passes the default tolerances"
        % label, json.dumps(g)[:400])
    g = grade(req, f32, rtol=1e-13, atol=0)
    tap(g.get("pass") is False and "misconception" in g
        and g["misconception"] is None,
        "float32-rounded right answer (%s) fails at rtol 1e-13, atol 0 "
        "with misconception null" % label, json.dumps(g)[:400])
    noise = {"output": tensor(rng.normal(size=out.shape)),
             "weights": tensor(rng.uniform(size=w.shape))}
    g = grade(req, noise)
    tap(g.get("pass") is False and "misconception" in g
        and g["misconception"] is None,
        "random noise (%s): misconception null" % label, json.dumps(g)[:400])

# a mistake that cannot arise is not named: the request's own scale
req = request(scale=0.5)
out, w, *_ = attend(Q, K, V, scale=1.0)
g = grade(req, {"output": tensor(out), "weights": tensor(w)})
tap(g.get("pass") is False and g.get("misconception") is None,
    "scale given: the unscaled answer names no scaling mistake",
    json.dumps(g.get("misconception")))

finish()
