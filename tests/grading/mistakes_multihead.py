#!/usr/bin/python3
"""mistakes_multihead.py — /grade names each mistake of
/attention/multihead's catalogue (docs/misconceptions.md) for an answer
computed the mistaken way, and none for a right answer, a float32-rounded
one or noise.

The answers come from numpy, written from the formulas of d2l 11.5 and
PyTorch's nn.MultiheadAttention: Q' = q W_qᵀ + b_q (and K', V'), head t
takes features t·h/H … (t+1)·h/H − 1, softmax(mask(Q'_t K'_tᵀ / √(h/H)))
V'_t, heads concatenated, output = concat W_oᵀ + b_o; and each mistake as
its table row describes it.

    usage: /usr/bin/python3 mistakes_multihead.py BASE_URL
Prints TAP lines; exits 1 when a test fails.
"""
import json

import numpy as np

from grading_client import finish, grader, mistake_checker, post, tap, tolist
from masked_reference import softmax_visible, visible

grade = grader("/attention/multihead")
expect_mistake = mistake_checker(grade)


def tensor(x):
    return np.asarray(x).tolist()


# ------------------------------------------------------------ the math

def multihead(q, k, v, P, H, valid_lens=None, interleaved=False,
              scale_h=False, project=True):
    """(output, weights (B, H, Nq, Nk)) for parameters P (W_q, W_k, W_v,
    W_o and the biases present)."""
    B, Nq, _ = q.shape
    Nk = k.shape[1]
    h = P["W_q"].shape[0]
    per = h // H
    zero = np.zeros(h)
    Qp = q @ P["W_q"].T + P.get("b_q", zero)
    Kp = k @ P["W_k"].T + P.get("b_k", zero)
    Vp = v @ P["W_v"].T + P.get("b_v", zero)

    def split(X):
        n = X.shape[1]
        if interleaved:  # head t: features t, t + H, t + 2H, ...
            return X.reshape(B, n, per, H).transpose(0, 3, 1, 2)
        return X.reshape(B, n, H, per).transpose(0, 2, 1, 3)

    Qh, Kh, Vh = split(Qp), split(Kp), split(Vp)
    s = Qh @ Kh.transpose(0, 1, 3, 2) / np.sqrt(h if scale_h else per)
    vis = visible(B, Nq, Nk, valid_lens)[:, None]
    w = softmax_visible(s, np.broadcast_to(vis, s.shape))
    O = w @ Vh  # (B, H, Nq, per)
    if interleaved:  # merged back the same way: feature s·H + t
        concat = O.transpose(0, 2, 3, 1).reshape(B, Nq, h)
    else:
        concat = O.transpose(0, 2, 1, 3).reshape(B, Nq, h)
    if not project:
        return concat, w
    d_out = P["W_o"].shape[0]
    return concat @ P["W_o"].T + P.get("b_o", np.zeros(d_out)), w


# ------------------------------------------------------------- the requests

rng = np.random.default_rng(7)
B, Nq, Nk, dq, dk, dv, h, H, d_out = 2, 3, 4, 3, 5, 2, 6, 3, 5
Q = rng.normal(size=(B, Nq, dq))
K = rng.normal(size=(B, Nk, dk))
V = rng.normal(size=(B, Nk, dv))
P = {"W_q": rng.normal(size=(h, dq)) / 2, "W_k": rng.normal(size=(h, dk)) / 2,
     "W_v": rng.normal(size=(h, dv)), "W_o": rng.normal(size=(d_out, h)),
     "b_q": rng.normal(size=h) / 4, "b_k": rng.normal(size=h) / 4,
     "b_v": rng.normal(size=h) / 4, "b_o": rng.normal(size=d_out) / 4}
LENS = [2, 4]


def request(**extra):
    r = {"queries": tensor(Q), "keys": tensor(K), "values": tensor(V),
         "num_heads": H, "valid_lens": LENS}
    r.update({name: tensor(x) for name, x in P.items()})
    r.update(extra)
    return r


def answer(out, w):
    return {"output": tensor(out), "weights": tensor(w)}


right_out, right_w = multihead(Q, K, V, P, H, LENS)

# ------------------------------------------------------------- the mistakes

# 1. heads split interleaved (and merged back so), given parameters
out, w = multihead(Q, K, V, P, H, LENS, interleaved=True)
expect_mistake("multihead.heads_interleaved", request(), answer(out, w),
               "multihead.heads_interleaved", ["output", "weights"])

# 1b. the same with drawn parameters (num_hiddens, seed; self-attention):
# the parameters the route draws are read from its own answer
drawn_req = {"queries": tensor(Q), "num_heads": H, "num_hiddens": h,
             "seed": 11}
status, drawn = post("/attention/multihead", drawn_req)
if status != 200:
    tap(False, "multihead.heads_interleaved (drawn parameters)", drawn)
else:
    Pd = {name: np.array(x) for name, x in drawn["params"].items()}
    ok_out, ok_w = multihead(Q, Q, Q, Pd, H)
    tap(np.allclose(ok_out, drawn["output"], rtol=1e-12, atol=1e-14),
        "the numpy reference reproduces the drawn parameters' answer")
    out, w = multihead(Q, Q, Q, Pd, H, interleaved=True)
    expect_mistake("multihead.heads_interleaved (drawn parameters)",
                   drawn_req, answer(out, w), "multihead.heads_interleaved",
                   ["output", "weights"])
    out, w = multihead(Q, Q, Q, Pd, H, scale_h=True)
    expect_mistake("multihead.scale_sqrt_h (drawn parameters)", drawn_req,
                   answer(out, w), "multihead.scale_sqrt_h",
                   ["output", "weights"])

# 2. the weights averaged over the heads: (B, Nq, Nk); the output is right
expect_mistake("multihead.weights_averaged", request(),
               answer(right_out, right_w.mean(axis=1)),
               "multihead.weights_averaged", ["weights"])
# unbatched: (Nq, Nk)
req1 = request(queries=tensor(Q[0]), keys=tensor(K[0]), values=tensor(V[0]),
               valid_lens=3)
o1, w1 = multihead(Q[:1], K[:1], V[:1], P, H, [3])
expect_mistake("multihead.weights_averaged (unbatched)", req1,
               answer(o1[0], w1[0].mean(axis=0)),
               "multihead.weights_averaged", ["weights"])

# 3. the scores divided by √h instead of √(h/H)
out, w = multihead(Q, K, V, P, H, LENS, scale_h=True)
expect_mistake("multihead.scale_sqrt_h", request(), answer(out, w),
               "multihead.scale_sqrt_h", ["output", "weights"])

# 4. no output projection: output = the concatenated heads (B, Nq, h),
# another shape than (B, Nq, d_out); the weights are right
out, w = multihead(Q, K, V, P, H, LENS, project=False)
expect_mistake("multihead.no_output_projection", request(), answer(out, w),
               "multihead.no_output_projection", ["output"])

# ------------------------------------------- right answers, rounding, noise

for label, req, (out, w) in [
        ("given parameters, valid_lens", request(), (right_out, right_w)),
        ("drawn parameters", drawn_req,
         multihead(Q, Q, Q, Pd, H) if status == 200 else (right_out, right_w)),
]:
    g = grade(req, answer(out, w))
    tap(g.get("pass") is True and "misconception" not in g,
        "right answer (%s): pass, no misconception member" % label,
        json.dumps(g)[:400])
    f32 = answer(out.astype(np.float32).astype(float),
                 w.astype(np.float32).astype(float))
    g = grade(req, f32)
    tap(g.get("pass") is True and "misconception" not in g,
        "float32-rounded right answer (%s) passes the default tolerances"
        % label, json.dumps(g)[:400])
    g = grade(req, f32, rtol=1e-13, atol=0)
    tap(g.get("pass") is False and "misconception" in g
        and g["misconception"] is None,
        "float32-rounded right answer (%s) fails at rtol 1e-13, atol 0 "
        "with misconception null" % label, json.dumps(g)[:400])
    noise = answer(rng.normal(size=out.shape), rng.uniform(size=w.shape))
    g = grade(req, noise)
    tap(g.get("pass") is False and "misconception" in g
        and g["misconception"] is None,
        "random noise (%s): misconception null" % label, json.dumps(g)[:400])

# one head: PyTorch's averaged weights are the one head's, without the
# head axis; that shape is the mistake named
req_one = request(num_heads=1)
out, w = multihead(Q, K, V, P, 1, LENS)
expect_mistake("multihead.weights_averaged (one head)", req_one,
               answer(out, w[:, 0]), "multihead.weights_averaged",
               ["weights"])

finish()
