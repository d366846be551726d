#!/usr/bin/python3
"""reference.py — the numbers of the documentation's examples, recomputed
with numpy from each example's inputs, without attnd: a check of what the
pages show, to run by hand when an example's numbers change
(examples.py checks that attnd prints them).

    usage: /usr/bin/python3 tests/docs/reference.py
Needs numpy (Debian's python3-numpy). Each figure is compared with the
page's expected answer; "exact" means the same double, else the largest
relative difference is printed. attnd's exp is its own (lib/vmath.c,
within 1 ulp) and numpy sums in its own order, so a difference of a few
units in the last place is what two correct implementations can show;
figures printed with fewer digits ("precision") are compared after
rounding numpy's value the same way.
"""
import math
import os
import sys
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "vectors"))
import examples  # noqa: E402
from attnrng import Rng, nw_dataset  # noqa: E402

# gen_cv.py's search is the contract's, written with numpy; it imports
# statsmodels for its own comparison only.
for name in ("statsmodels", "statsmodels.nonparametric",
             "statsmodels.nonparametric.kernel_regression"):
    sys.modules.setdefault(name, types.ModuleType(name))
sys.modules["statsmodels.nonparametric.kernel_regression"].KernelReg = None
from gen_cv import rule, search_spec  # noqa: E402

ULPS = 8  # what two correct evaluations may differ by, in units of 2^-52
failures = []


def expected_of(page, nth):
    """The parsed expected answer of the nth example of a page."""
    exs = [e for e in examples.examples(os.path.join(ROOT, page))
           if e["kind"] == "example"]
    ex = exs[nth]
    return ex, examples.Json.values(ex["expected"])


def leaves(v, path=""):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from leaves(x, path + "/" + k)
    elif isinstance(v, (list, tuple, np.ndarray)):
        for k, x in enumerate(v):
            yield from leaves(x, path + "/%d" % k)
    else:
        yield path, v


def sig(x, digits):
    return float("%.*g" % (digits, x))


def check(page, nth, ours, digits=None, doc=None):
    """Compares ours (a JSON-like value of numpy numbers) with the page's
    answer, leaf by leaf; digits: the answer's precision."""
    ex, docs = expected_of(page, nth)
    doc = docs[0] if doc is None else doc(docs)
    theirs = dict(leaves(doc))
    worst, where = 0.0, ""
    for path, x in leaves(ours):
        if path not in theirs:
            failures.append("%s:%d: %s missing from the page" % (
                page, ex["line"], path))
            continue
        t = theirs[path]
        if isinstance(x, str) or isinstance(t, str):
            if x != t:
                failures.append("%s:%d %s: page %r, numpy %r" % (
                    page, ex["line"], path, t, x))
            continue
        x = float(x)
        if digits:
            if sig(x, digits) != t:
                failures.append("%s:%d %s: page %r, numpy %r (to %d digits "
                                "%r)" % (page, ex["line"], path, t, x, digits,
                                         sig(x, digits)))
            continue
        d = abs(x - t) / max(abs(t), 1e-300) if t != x else 0.0
        if d > worst:
            worst, where = d, path
    if worst > ULPS * 2.0 ** -52:
        failures.append("%s:%d %s: page %r, numpy %r" % (
            page, ex["line"], where, theirs[where], dict(leaves(ours))[where]))
    print("%s:%d %s: %s" % (page, ex["line"], ex["title"],
                            "to %d digits" % digits if digits else
                            "exact" if worst == 0 else
                            "largest relative difference %.2g (%s)" % (
                                worst, where)))


def softmax(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def nw(x_train, y_train, x_query, w, y_query=None):
    x_train, y_train = np.array(x_train, float), np.array(y_train, float)
    xq = np.array(x_query, float)
    a = softmax(-((xq[:, None] - x_train[None, :]) * w) ** 2 / 2)
    pred = a @ y_train
    out = {"predictions": pred, "weights": a, "w": w}
    if y_query is not None:
        r = pred - np.array(y_query, float)
        out["loss"] = 0.5 * float(r @ r)
        # d pred / dw: Σ a_i y_i ds_i − pred Σ a_i ds_i, s = −(u w)²/2
        ds = -((xq[:, None] - x_train[None, :]) ** 2) * w
        dpred = (a * ds) @ y_train - pred * (a * ds).sum(axis=1)
        out["grad_w"] = float(r @ dpred)
    return out


def dot(q, k, v, valid_lens=None, scale=None):
    q, k, v = (np.array(t, float) for t in (q, k, v))
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if valid_lens is not None:
        mask = np.arange(k.shape[-2])[None, None, :] >= \
            np.array(valid_lens)[:, None, None]
        s = np.where(mask, -np.inf, s)
    a = softmax(s)
    return {"output": a @ v, "weights": a, "scale": scale}


def main():
    # README: the seed's worked example, and one step of fit
    base = dict(x_train=[1, 2, 4], y_train=[0, 3, 1], x_query=[2.5])
    r0 = nw(w=0.5, y_query=[3], **base)
    check("README.md", 0, r0)
    w1 = 0.5 - 0.1 * r0["grad_w"]
    r1 = nw(w=w1, y_query=[3], **base)
    r1["history"] = [{"epoch": 1, "w": 0.5, "loss": r0["loss"]}]
    check("README.md", 1, r1)
    # the same pairs over TLS, in the v2 front, with a token
    check("docs/class.md", 0, {k: r0[k] for k in ("predictions", "weights",
                                                  "w")})
    check("docs/kserve.md", 0, {"outputs": [
        {"data": r0["predictions"]}, {"data": [r0["loss"]]},
        {"data": [r0["grad_w"]]}]})

    # attention.md: d2l's toy with valid_lens [2, 4]
    keys = np.ones((2, 10, 2))
    values = np.tile(np.arange(40.0).reshape(10, 4), (2, 1, 1))
    check("docs/attention.md", 0,
          dot([[[1, 1]], [[1, 1]]], keys, values, valid_lens=[2, 4]))
    # additive attention with drawn parameters (h = 4, seed 0)
    rng = Rng(0)
    wq, wk, wv = (np.array(rng.xavier(4, 3)), np.array(rng.xavier(4, 2)),
                  np.array(rng.xavier(1, 4))[0])
    q, k = np.array([[1.0, 2, 3]]), np.array([[1.0, 0], [0, 1], [1, 1]])
    feat = np.tanh((q @ wq.T)[:, None, :] + (k @ wk.T)[None, :, :])
    a = softmax(feat @ wv)
    check("docs/attention.md", 1, {
        "output": [a @ np.array([[1.0], [2], [3]])], "weights": [a],
        "params": {"W_q": wq, "W_k": wk, "w_v": wv}}, digits=6)
    # multi-head self-attention, two heads, h = 4, seed 0
    rng = Rng(0)
    x = np.array([[1.0, 0], [0, 1], [1, 1]])
    wq, wk, wv, wo = (np.array(rng.xavier(4, d)) for d in (2, 2, 2, 4))
    qh, kh, vh = (np.stack(np.split(x @ m.T, 2, axis=1))
                  for m in (wq, wk, wv))
    a = softmax(qh @ np.swapaxes(kh, 1, 2) / math.sqrt(2))
    heads = np.concatenate(list(a @ vh), axis=1)
    check("docs/attention.md", 2, {
        "output": heads @ wo.T, "weights": a,
        "params": {"W_q": wq, "W_k": wk, "W_v": wv, "W_o": wo}}, digits=4)
    # the masked softmax
    s = np.array([[[0.5, 1.5, -1, 2], [3, 0, 0, 1]]])
    s[:, :, 2:] = -np.inf
    check("docs/attention.md", 3, {"weights": softmax(s)})
    s = np.array([[1.0, 2, 3]] * 3)
    s[np.triu_indices(3, 1)] = -np.inf
    check("docs/attention.md", 4, {"weights": softmax(s)}, digits=4)

    # encoding.md: P for 3 steps, d = 4
    i = np.arange(3.0)[:, None]
    j = np.arange(2.0)[None, :]
    ang = i / 10000 ** (2 * j / 4)
    p = np.empty((3, 4))
    p[:, 0::2], p[:, 1::2] = np.sin(ang), np.cos(ang)
    check("docs/encoding.md", 0, {"P": p})

    # gradients.md: the hand-checked case, then the central difference
    def grads(q, k, v, g):
        q, k, v, g = (np.array(t, float) for t in (q, k, v, g))
        sc = 1 / math.sqrt(q.shape[1])
        a = softmax(q @ k.T * sc)
        dw = g @ v.T
        ds = a * (dw - (a * dw).sum(axis=1, keepdims=True))
        return {"output": a @ v, "weights": a, "scale": sc,
                "grads": {"queries": sc * ds @ k, "keys": sc * ds.T @ q,
                          "values": a.T @ g}}
    check("docs/gradients.md", 0,
          grads([[1, 0]], [[1, 1], [1, 1]], [[1], [3]], [[1]]))
    k = np.array([[1.0, 1], [2, 0]])
    out = []
    for e in (1e-6, -1e-6):
        kk = k.copy()
        kk[1, 0] += e
        out.append(dot([[1, 0]], kk, [[1], [4]])["output"][0, 0])
    g = grads([[1, 0]], k, [[1], [4]], [[1]])["grads"]["keys"][1, 0]
    # the difference of two outputs is as exact as the outputs' last bits:
    # numpy and attnd may differ by 1e-10 there, and by 1e-16 in g
    fd = (out[0] - out[1]) / 2e-6
    ex, docs = expected_of("docs/gradients.md", 1)
    print("docs/gradients.md:%d: difference %r (page %r), gradient %r "
          "(page %r)" % (ex["line"], fd, docs[0], g, docs[1]))
    if abs(fd - docs[0]) > 1e-9 or abs(g - docs[1]) > 8 * 2.0 ** -52:
        failures.append("docs/gradients.md:%d" % ex["line"])

    # grading.md: the reference output and weights, and the errors
    ref = dot([[1, 2]], [[1, 0], [0, 1]], [[1], [2]])
    out, wts = ref["output"][0, 0], ref["weights"][0]
    check("docs/grading.md", 0, {"fields": {
        "output": {"max_abs_err": abs(1.66976 - out),
                   "max_rel_err": abs(1.66976 - out) / out},
        "weights": {"max_abs_err": abs(0.33 - wts[0]),
                    "max_rel_err": abs(0.33 - wts[0]) / wts[0],
                    "first_mismatch": {"expected": wts[0]}}}})
    ex, _ = expected_of("docs/grading.md", 1)
    ada = max(abs(1.66976 - out), abs(0.33024 - wts[0]),
              abs(0.66976 - wts[1]))
    bo = max(abs(1.5 - out), abs(0.5 - wts[0]), abs(0.5 - wts[1]))
    table = examples.text_lines(ex["expected"])
    print("docs/grading.md:%d: ada %r, bo %r" % (ex["line"], ada, bo))
    if float(table[1].split("\t")[3]) != ada or \
            abs(float(table[2].split("\t")[3]) - bo) > 4 * 2.0 ** -52:
        failures.append("docs/grading.md:%d" % ex["line"])

    # regression.md: the dataset, Silverman's rule, cross-validation
    xs, ys = nw_dataset(3)
    check("docs/regression.md", 0, {"x_train": xs, "y_train": ys})
    xt = [1, 2, 4, 7]
    w = 1 / rule(np.array(xt, float), 0.9)
    check("docs/regression.md", 1, nw(xt, [0, 3, 1, 2], [2.5], w))
    x50, y50 = (np.array(a) for a in nw_dataset(50))
    h, _ = search_spec(x50, y50, "gaussian")
    ex, docs = expected_of("docs/regression.md", 2)
    print("docs/regression.md:%d: cv h %r (page %r)" % (
        ex["line"], h, docs[0]["h"]))
    if abs(h - docs[0]["h"]) > 1e-6 * h:
        failures.append("docs/regression.md:%d cv h" % ex["line"])
    # the predictions at the page's w (the search's last bits aside)
    check("docs/regression.md", 2,
          {"predictions": nw(x50, y50, [1, 2.5, 4],
                             docs[0]["w"])["predictions"]})

    print("%d figures differ" % len(failures) if failures else
          "every figure checked agrees")
    for f in failures:
        print("  " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
