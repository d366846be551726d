#!/usr/bin/python3
"""The catalogue of mistakes of /attention/additive (docs/misconceptions.md):
for each, an answer computed the mistaken way here, in numpy, from the
formula (not from attnd's code), is named by POST /grade; the right answer
is not, and neither are a float32-rounded right answer under a tolerance it
misses nor random numbers.
  usage: /usr/bin/python3 mistakes_additive.py BASE_URL   (TAP on stdout)
"""

import numpy as np

from grading_client import check, finish, grader, mistake_checker, post, tolist

grade = grader("/attention/additive")
expect_mistake = mistake_checker(grade)


# ------------------------------------------------------------ the maths

def masked_softmax(scores, valid_lens):
    """softmax over keys; keys j >= valid_lens[b] get weight 0 exactly."""
    s = scores.copy()
    if valid_lens is not None:
        Nk = s.shape[-1]
        hide = np.arange(Nk)[None, None, :] >= np.asarray(
            valid_lens)[:, None, None]
        s = np.where(hide, -np.inf, s)
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


def additive(Q, K, V, Wq, Wk, wv, valid_lens=None, tanh=True):
    """d2l 11.3.3: scores = w_vᵀ tanh(W_q q + W_k k), W in (out, in)."""
    feat = (Q @ Wq.T)[:, :, None, :] + (K @ Wk.T)[:, None, :, :]
    if tanh:
        feat = np.tanh(feat)
    scores = feat @ wv
    weights = masked_softmax(scores, valid_lens)
    return {"output": weights @ V, "weights": weights, "scores": scores}


def in_out(W):
    """W's row-major data read as an (in, out) matrix M, used as X @ M:
    the (out, in) matrix Mᵀ."""
    h, d = W.shape
    return W.reshape(-1).reshape(d, h).T


def grad_fd(f, W, G):
    """d(Σ f(W)·G)/dW by central differences."""
    g = np.zeros_like(W)
    eps = 1e-6
    for idx in np.ndindex(W.shape):
        Wp, Wm = W.copy(), W.copy()
        Wp[idx] += eps
        Wm[idx] -= eps
        g[idx] = ((f(Wp) * G).sum() - (f(Wm) * G).sum()) / (2 * eps)
    return g


# ----------------------------------------------------------- the inputs

rng = np.random.default_rng(11)
B, Nq, Nk, d, dv, h = 2, 3, 4, 3, 2, 5
Q = rng.normal(size=(B, Nq, d))
K = rng.normal(size=(B, Nk, d))
V = rng.normal(size=(B, Nk, dv))
Wq = rng.normal(size=(h, d))
Wk = rng.normal(size=(h, d))
wv = rng.normal(size=h)
lens = [3, 4]
base = {"queries": Q.tolist(), "keys": K.tolist(), "values": V.tolist(),
        "W_q": Wq.tolist(), "W_k": Wk.tolist(), "w_v": wv.tolist()}

right = additive(Q, K, V, Wq, Wk, wv)
ow = {k: right[k] for k in ("output", "weights")}

# 1-4: right answers pass, rounded ones and noise are not explained
g = grade(base, ow)
check(g["pass"] is True and "misconception" not in g,
      "the right answer passes with no misconception member", g)
f32 = {k: v.astype(np.float32).astype(np.float64) for k, v in ow.items()}
g = grade(base, f32)
check(g["pass"] is True and "misconception" not in g,
      "a float32-rounded right answer passes with the default tolerances", g)
g = grade(base, f32, rtol=1e-13, atol=0)
check(g["pass"] is False and g.get("misconception", "absent") is None,
      "a float32-rounded right answer fails at rtol=1e-13, atol=0 with "
      "misconception null", g)
noise = {k: rng.normal(size=v.shape) for k, v in ow.items()}
g = grade(base, noise)
check(g["pass"] is False and g.get("misconception", "absent") is None,
      "random numbers fail with misconception null", g)

# 5: additive.weights_transposed, given (h, dq) with h != dq
wt = additive(Q, K, V, in_out(Wq), in_out(Wk), wv)
check(not np.allclose(wt["output"], right["output"], rtol=1e-3),
      "weights_transposed changes the output for these inputs")
expect_mistake("W read as (in, out)", base,
               {k: wt[k] for k in ("output", "weights")},
               "additive.weights_transposed", ["output", "weights"])

# 6: ... with grad_output: the mistaken code's gradients with respect to
# the parameters as given
G = rng.normal(size=(B, Nq, dv))
req = dict(base, grad_output=G.tolist())
gq = grad_fd(lambda W: additive(Q, K, V, in_out(W), in_out(Wk), wv)["output"],
             Wq, G)
gk = grad_fd(lambda W: additive(Q, K, V, in_out(Wq), in_out(W), wv)["output"],
             Wk, G)
g_right = grad_fd(lambda W: additive(Q, K, V, W, Wk, wv)["output"], Wq, G)
g = grade(req, {"grads": {"W_q": g_right}})
check(g["pass"] is True,
      "the central-difference gradient of the right output passes", g)
expect_mistake("W read as (in, out), with its gradients", req,
               {"output": wt["output"], "grads": {"W_q": gq, "W_k": gk}},
               "additive.weights_transposed",
               ["output", "grads.W_q", "grads.W_k"])

# 7: ... with the parameters drawn from a seed (the route answers them)
drawn_req = {"queries": Q.tolist(), "keys": K.tolist(), "values": V.tolist(),
             "num_hiddens": 4, "seed": 7}
status, drawn = post("/attention/additive", drawn_req)
P = {k: np.array(v) for k, v in drawn["params"].items()}
check(status == 200 and P["W_q"].shape == (4, d),
      "a seed draws W_q (4, 3), answered as params.W_q")
dwt = additive(Q, K, V, in_out(P["W_q"]), in_out(P["W_k"]), P["w_v"])
expect_mistake("drawn W read as (in, out)", drawn_req,
               {"output": dwt["output"], "weights": dwt["weights"]},
               "additive.weights_transposed", ["output", "weights"])

# 8: additive.no_tanh, with valid_lens and the scores
req = dict(base, valid_lens=lens, return_scores=True)
nt = additive(Q, K, V, Wq, Wk, wv, valid_lens=lens, tanh=False)
scores = nt["scores"].copy().tolist()
for b in range(B):
    for i in range(Nq):
        for j in range(lens[b], Nk):
            scores[b][i][j] = None  # masked scores are null
expect_mistake("tanh left out", req,
               {"output": nt["output"], "weights": nt["weights"],
                "scores": scores},
               "additive.no_tanh", ["output", "weights", "scores"])

# 9: additive.no_tanh with drawn parameters
dnt = additive(Q, K, V, P["W_q"], P["W_k"], P["w_v"], tanh=False)
expect_mistake("tanh left out, drawn parameters", drawn_req,
               {"output": dnt["output"]}, "additive.no_tanh", ["output"])

# 10: additive.no_tanh, unbatched (Nq, d) with a scalar valid_lens
req = {"queries": Q[1].tolist(), "keys": K[1].tolist(),
       "values": V[1].tolist(), "W_q": Wq.tolist(), "W_k": Wk.tolist(),
       "w_v": wv.tolist(), "valid_lens": 2}
u = additive(Q[1:], K[1:], V[1:], Wq, Wk, wv, valid_lens=[2], tanh=False)
expect_mistake("tanh left out, unbatched", req,
               {"output": u["output"][0], "weights": u["weights"][0]},
               "additive.no_tanh", ["output", "weights"])

# 11: additive.projections_swapped
sw = additive(Q, K, V, Wk, Wq, wv)
expect_mistake("W_q applied to keys, W_k to queries", base,
               {k: sw[k] for k in ("output", "weights")},
               "additive.projections_swapped", ["output", "weights"])

# 12: ... and its gradients: the student's W_q is the matrix on the keys
req = dict(base, grad_output=G.tolist())
sq = grad_fd(lambda W: additive(Q, K, V, Wk, W, wv)["output"], Wq, G)
expect_mistake("swapped projections, with the gradient of W_q", req,
               {"output": sw["output"], "grads": {"W_q": sq}},
               "additive.projections_swapped", ["output", "grads.W_q"])

# 13: not tried where it cannot arise: dq != dk (and h = 1, d = 1 for
# weights_transposed): an answer computed swapped-like is not named
Q1 = rng.normal(size=(B, Nq, 2))
Wq1 = rng.normal(size=(h, 2))
req = {"queries": Q1.tolist(), "keys": K.tolist(), "values": V.tolist(),
       "W_q": Wq1.tolist(), "W_k": Wk.tolist(), "w_v": wv.tolist()}
r1 = additive(Q1, K, V, Wq1, Wk, wv)
g = grade(req, {"output": r1["output"] + 0.1})
check(g["pass"] is False and g.get("misconception", "absent") is None,
      "dq != dk: a shifted output is not explained", g)

finish()
