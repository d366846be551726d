#!/usr/bin/python3
"""mistakes_softmax.py — /grade names each mistake of /softmax/masked's
catalogue (docs/misconceptions.md) for an answer computed the mistaken
way, and none for a right answer, a float32-rounded one or noise.

Every answer here comes from numpy, written from the formulas: the
softmax along the keys over the visible entries, masked ones 0 (d2l
11.3.1); d2l's own masked_softmax, −1e6 for the masked scores, is the
book's code line by line.

    usage: /usr/bin/python3 mistakes_softmax.py BASE_URL
Prints TAP lines; exits 1 when a test fails.
"""
import numpy as np

from grading_client import finish, grader, mistake_checker, tap
from masked_reference import softmax_visible, visible

grade = grader("/softmax/masked")
expect_mistake = mistake_checker(grade)


# ------------------------------------------------------------ the math

def d2l_masked_softmax(X, valid_lens):
    """d2l 11.3.1's masked_softmax, the book's PyTorch lines in numpy
    (torch.repeat_interleave is np.repeat; softmax subtracts the row's
    largest entry, as torch.softmax does)."""
    X = np.array(X, dtype=float)
    valid_lens = np.asarray(valid_lens, dtype=float)
    shape = X.shape
    if valid_lens.ndim == 1:
        valid_lens = np.repeat(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = X.reshape(-1, shape[-1])
    mask = np.arange(shape[-1])[None, :] < valid_lens[:, None]
    X[~mask] = -1e6
    e = np.exp(X - X.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).reshape(shape)


def with_nulls(w):
    return [[[None if np.isnan(x) else float(x) for x in row] for row in m]
            for m in w]


# ------------------------------------------------------------- the inputs

rng = np.random.default_rng(20261202)
B, Nq, Nk = 2, 3, 5
S = rng.normal(size=(B, Nq, Nk))


def request(**extra):
    r = {"scores": S.tolist()}
    r.update(extra)
    return r


lens = [0, 3]  # example 0 sees no key

# 1-4: right answers pass; rounded ones under a tight tolerance and noise
# are not explained
right = softmax_visible(S, visible(B, Nq, Nk, lens))
g = grade(request(valid_lens=lens), {"weights": right})
tap(g["pass"] is True and "misconception" not in g,
    "the right answer passes with no misconception member", g)
rounded = right.astype(np.float32).astype(np.float64)
g = grade(request(valid_lens=lens), {"weights": rounded})
tap(g["pass"] is True, "a float32-rounded right answer passes", g)
g = grade(request(valid_lens=lens), {"weights": rounded}, rtol=1e-13, atol=0)
tap(g["pass"] is False and g.get("misconception", "absent") is None,
    "a float32-rounded right answer fails at rtol=1e-13, atol=0 with "
    "misconception null", g)
g = grade(request(valid_lens=lens), {"weights": rng.uniform(size=S.shape)})
tap(g["pass"] is False and g.get("misconception", "absent") is None,
    "random numbers fail with misconception null", g)

# 5-6: the mask forgotten, under valid_lens and under causal
w = softmax_visible(S, np.ones_like(S, bool))
expect_mistake("softmax.mask_ignored", request(valid_lens=[2, 4]),
               {"weights": w}, "softmax.mask_ignored", ["weights"])
expect_mistake("softmax.mask_ignored (causal)", request(causal=True),
               {"weights": w}, "softmax.mask_ignored", ["weights"])

# 7: masked scores −inf and a plain softmax: example 0's rows are 0/0
vis = visible(B, Nq, Nk, lens)
with np.errstate(invalid="ignore"):
    x = np.where(vis, S, -np.inf)
    e = np.exp(x - x.max(-1, keepdims=True))
    w = e / e.sum(-1, keepdims=True)
assert np.isnan(w[0]).all() and not np.isnan(w[1]).any()
expect_mistake("softmax.nan_rows", request(valid_lens=lens),
               {"weights": with_nulls(w)}, "softmax.nan_rows", ["weights"])

# 8-11: d2l's masked_softmax, valid_lens (B), (B, Nq) and unbatched
w = d2l_masked_softmax(S, lens)
tap(np.allclose(w[0], 1 / Nk) and np.allclose(w[1], right[1]),
    "d2l's masked_softmax: uniform rows where no key is seen, else right")
expect_mistake("softmax.masked_fill_1e6 (valid_lens (B))",
               request(valid_lens=lens), {"weights": w},
               "softmax.masked_fill_1e6", ["weights"])
lens2 = [[1, 0, 5], [0, 2, 4]]
expect_mistake("softmax.masked_fill_1e6 (valid_lens (B, Nq))",
               request(valid_lens=lens2),
               {"weights": d2l_masked_softmax(S, lens2)},
               "softmax.masked_fill_1e6", ["weights"])
w = d2l_masked_softmax(S[None, 1], [[0, 1, 2]])[0]
expect_mistake("softmax.masked_fill_1e6 (unbatched, valid_lens (Nq))",
               {"scores": S[1].tolist(), "valid_lens": [0, 1, 2]},
               {"weights": w}, "softmax.masked_fill_1e6", ["weights"])

# 12-13: scores far below −1e6, where the fill outweighs the visible keys
# in every row that masks one: no row is fully masked, yet d2l's answer
# differs
far = -2e6 + S
w = d2l_masked_softmax(far, [2, 3])
tap(w[:, :, 3].min() > 0.1, "with scores near −2e6 the −1e6 fill takes "
    "the weight", w[:, :, 3])
expect_mistake("softmax.masked_fill_1e6 (far scores)",
               {"scores": far.tolist(), "valid_lens": [2, 3]},
               {"weights": w}, "softmax.masked_fill_1e6", ["weights"])

# 14: fully_masked "uniform" accepts d2l's answer for these scores
g = grade(request(valid_lens=lens, fully_masked="uniform"),
          {"weights": d2l_masked_softmax(S, lens)})
tap(g["pass"] is True, "with fully_masked \"uniform\" d2l's answer passes", g)

finish()
