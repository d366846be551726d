#!/usr/bin/python3
"""The catalogue of mistakes of /regression/nw (docs/misconceptions.md):
for each, an answer computed the mistaken way here, in numpy, from the
formula (not from attnd's code), is named by POST /grade; the right answer
is not, and neither are a float32-rounded right answer under a tolerance it
misses nor random numbers.
  usage: /usr/bin/python3 mistakes_nw.py BASE_URL   (TAP on stdout)
"""

import numpy as np

from grading_client import check, finish, grader, mistake_checker, post, tolist

grade = grader("/regression/nw")
expect_mistake = mistake_checker(grade)


# ------------------------------------------------------------ the maths
# A kernel is its logit s(d, w) with d = x − xᵢ, and ∂s/∂w; the weights are
# softmax(s) over the training points (d2l 11.2.4, seed notes §8 and §11).

def right_kernel(d, w):
    return -0.5 * (d * w) ** 2, -d * d * w


def not_squared_kernel(d, w):  # exp(−½ d² w)
    return -0.5 * d * d * w, -0.5 * d * d


def no_half_kernel(d, w):  # exp(−(d w)²)
    return -(d * w) ** 2, -2 * d * d * w


def nw(xq, xt, yt, w, kernel, loo=False):
    """weights (m, n), ŷ (m, dv) and ∂ŷ/∂w (m, dv)."""
    d = xq[:, None] - xt[None, :]
    s, ds = kernel(d, w)
    if loo:
        s = np.where(np.eye(len(xq), len(xt), dtype=bool), -np.inf, s)
    s = s - s.max(axis=1, keepdims=True)
    a = np.exp(s)
    a /= a.sum(axis=1, keepdims=True)
    mean_ds = (a * ds).sum(axis=1, keepdims=True)
    return a, a @ yt, (a * (ds - mean_ds)) @ yt


def loss_grad(xq, yq, xt, yt, w, kernel, reduce, sign=1.0, loo=False):
    """the loss ½Σ(ŷ − y)² reduced by `reduce` ("half_sum" right, "sum",
    "mean", "mse" as PyTorch's nn.MSELoss()), and sign · its derivative in
    w."""
    _, yhat, dyhat = nw(xq, xt, yt, w, kernel, loo)
    r = yhat - yq
    c = {"half_sum": 0.5, "sum": 1.0, "mean": 0.5 / r.size,
         "mse": 1.0 / r.size}[reduce]
    return c * (r * r).sum(), sign * 2 * c * (r * dyhat).sum()


def fit(xt, yt, w, lr, epochs, kernel, reduce, sign=1.0, loo=True):
    """gradient descent on w over the training pairs, each predicted from
    the others (loo): history and the final w."""
    history = []
    for e in range(epochs):
        loss, g = loss_grad(xt, yt, xt, yt, w, kernel, reduce, sign, loo)
        history.append({"epoch": e + 1, "w": w, "loss": loss})
        w = w - lr * g
        assert w > 0, "the descent left w > 0"
    return history, w


def answer(req, kernel=right_kernel, reduce="half_sum", sign=1.0, loo=True):
    """every field of the answer to req, computed with the given mistake."""
    xt, yt = np.array(req["x_train"]), np.array(req["y_train"])
    xq = np.array(req["x_query"])
    w = req.get("w", 1.0)
    out = {}
    if "fit" in req:
        f = req["fit"]
        out["history"], w = fit(xt, yt, w, f["lr"], f["epochs"], kernel,
                                reduce, sign, loo)
    a, yhat, _ = nw(xq, xt, yt, w, kernel)
    out.update(predictions=yhat, weights=a, w=w)
    if "y_query" in req:
        out["loss"], out["grad_w"] = loss_grad(
            xq, np.array(req["y_query"]), xt, yt, w, kernel, reduce, sign)
    return out


def differs(a, b, what):
    ok = any(not np.allclose(np.asarray(a[k], dtype=float),
                             np.asarray(b[k], dtype=float), rtol=1e-3)
             for k in ("predictions", "loss", "grad_w") if k in a)
    check(ok, f"{what} differs from the right answer for these inputs")


# ----------------------------------------------------------- the inputs

rng = np.random.default_rng(5)
xt = np.sort(rng.uniform(0, 5, 8))
yt = np.stack([2 * np.sin(xt) + xt ** 0.8, np.cos(xt)], axis=1)
xq = np.linspace(0.3, 4.7, 5)
yq = np.stack([2 * np.sin(xq) + xq ** 0.8, np.cos(xq)], axis=1) + 0.1
plain = {"x_train": xt.tolist(), "y_train": yt.tolist(),
         "x_query": xq.tolist(), "y_query": yq.tolist(), "w": 1.7}
fitted = dict(plain, w=1.2, fit={"epochs": 4, "lr": 0.02})
ALL = ["predictions", "weights", "w", "loss", "grad_w", "history"]

# 1-5: right answers pass, rounded ones and noise are not explained
right = answer(plain)
g = grade(plain, right)
check(g["pass"] is True and "misconception" not in g,
      "the right answer passes with no misconception member", g)
right_fit = answer(fitted)
g = grade(fitted, right_fit)
check(g["pass"] is True and "misconception" not in g,
      "the right answer of a fit passes with no misconception member", g)


def f32(v):
    if isinstance(v, list):
        return [{k: f32(x) for k, x in r.items()} for r in v]
    return np.float64(np.float32(v)) if np.isscalar(v) else \
        np.asarray(v, dtype=np.float32).astype(np.float64)


rounded = {k: (v if k == "history" else f32(v)) for k, v in right_fit.items()}
rounded["history"] = [dict(r, w=f32(r["w"]), loss=f32(r["loss"]))
                      for r in right_fit["history"]]
g = grade(fitted, rounded)
check(g["pass"] is True and "misconception" not in g,
      "a float32-rounded right answer passes with the default tolerances", g)
g = grade(fitted, rounded, rtol=1e-13, atol=0)
check(g["pass"] is False and g.get("misconception", "absent") is None,
      "a float32-rounded right answer fails at rtol=1e-13, atol=0 with "
      "misconception null", g)
noise = {"predictions": rng.normal(size=yq.shape),
         "weights": rng.uniform(size=(5, 8)), "loss": 3.5, "grad_w": -0.25}
g = grade(plain, noise)
check(g["pass"] is False and g.get("misconception", "absent") is None,
      "random numbers fail with misconception null", g)

# 6-29: each mistake, without a fit and with one
CASES = [
    ("nw.w_not_squared", "exp(−½(x − xᵢ)²·w)",
     dict(kernel=not_squared_kernel), ["predictions", "weights", "loss",
                                       "grad_w"]),
    ("nw.no_half_in_kernel", "exp(−((x − xᵢ)w)²)",
     dict(kernel=no_half_kernel), ["predictions", "weights", "loss",
                                   "grad_w"]),
    ("nw.no_half_in_loss", "loss Σ(ŷ − y)²", dict(reduce="sum"),
     ["loss", "grad_w"]),
    ("nw.mean_loss", "the mean loss", dict(reduce="mean"),
     ["loss", "grad_w"]),
    ("nw.mse_loss", "PyTorch's MSELoss, mean((ŷ − y)²)", dict(reduce="mse"),
     ["loss", "grad_w"]),
    ("nw.grad_sign", "∂loss/∂w negated", dict(sign=-1.0), ["grad_w"]),
]
for code, what, how, fields in CASES:
    wrong = answer(plain, **how)
    differs(wrong, right, what)
    expect_mistake(what, plain, wrong, code, fields)
    wrong = answer(fitted, **how)
    differs(wrong, right_fit, what + " in a fit")
    expect_mistake(what + " in a fit", fitted, wrong, code, ALL)

# 30-31: nw.fit_without_leave_one_out: w grows, each point predicting
# itself
wrong = answer(fitted, loo=False)
check(wrong["w"] > 1.2 and wrong["history"][-1]["loss"] <
      wrong["history"][0]["loss"],
      "without leave-one-out the fit's w grows and its loss falls")
expect_mistake("training predictions keeping their own term", fitted, wrong,
               "nw.fit_without_leave_one_out", ALL)

# 32: a fit with only the training pairs: no loss or grad_w answered
train_only = {k: v for k, v in fitted.items() if k != "y_query"}
wrong = answer(train_only, reduce="mean")
expect_mistake("the mean loss in a fit on train_loo alone", train_only,
               wrong, "nw.mean_loss", ["predictions", "weights", "w",
                                       "history"])

# 33-34: a bandwidth rule: the w the route chose, used the mistaken way
scott = dict(plain, w="scott")
status, ref = post("/regression/nw", scott)
check(status == 200 and ref["w"] > 0, "\"scott\" picks a w", ref)
wrong = answer(dict(plain, w=ref["w"]), kernel=no_half_kernel)
expect_mistake("exp(−((x − xᵢ)w)²) at the scott w", scott, wrong,
               "nw.no_half_in_kernel",
               ["predictions", "weights", "loss", "grad_w"])

# 35: ... and a fit starting from it (history[0].w)
scott_fit = dict(fitted, w="scott")
wrong = answer(dict(fitted, w=ref["w"]), kernel=not_squared_kernel)
expect_mistake("exp(−½(x − xᵢ)²·w) in a fit from the scott w", scott_fit,
               wrong, "nw.w_not_squared", ALL)

# 36-37: what no mistake explains: a loss three times too large; with a
# compact kernel only the loss mistakes are tried
one = dict(plain, w=1.0)
g = grade(one, dict(answer(one), loss=answer(one)["loss"] * 3))
check(g["pass"] is False and g.get("misconception", "absent") is None,
      "a loss three times too large is not explained", g)
box = dict(plain, kernel="boxcar", w=0.5)
status, ref = post("/regression/nw", box)
g = grade(box, {"loss": ref["loss"] * 2})
m = g.get("misconception") or {}
check(m.get("code") == "nw.no_half_in_loss" and m.get("fields") == ["loss"],
      "boxcar kernel: a doubled loss is nw.no_half_in_loss", g)

finish()
