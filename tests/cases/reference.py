"""Plain-Python reference implementations of attnd's computations, written
from the wire contract (docs/contract.md) and d2l, independent of lib/. Used by
gen_cases.py to compute the expected answers of tests/cases. Standard
library only (IEEE-754 doubles, the same libm as C)."""

import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "vectors"))
import attnrng  # noqa: E402

# ------------------------------------------------------------ randomness
# docs/contract.md section 7: splitmix64 seeding xoshiro256**, one implementation
# shared with the vector generators (tests/vectors/attnrng.py).
Rng = attnrng.Rng
f_true = attnrng.f_true


# ------------------------------------------------------------- masking

def visible(b, i, j, Nq, Nk, valid_lens, per_query, causal):
    """Key j visible to query i of example b (docs/contract.md "Masking")."""
    vl = Nk
    if valid_lens is not None:
        vl = valid_lens[b][i] if per_query else valid_lens[b]
    ok = j < vl
    if causal == "top_left":
        ok = ok and j <= i
    elif causal == "bottom_right":
        ok = ok and j <= i + Nk - Nq
    return ok


def masked_softmax(row, vis, fully_masked):
    """Stable softmax over the visible entries; masked weights exactly 0."""
    idx = [j for j, v in enumerate(vis) if v]
    n = len(row)
    if not idx:
        if fully_masked == "uniform":
            return [1.0 / n] * n, True
        return [0.0] * n, True
    m = max(value(row[j]) for j in idx)  # a constant: softmax is shift-free
    e = [exp(row[j] - m) if vis[j] else 0.0 for j in range(n)]
    s = sum(e)
    return [x / s for x in e], False


def attention(scores_fn, q, k, v, valid_lens=None, per_query=False,
              causal=None, fully_masked="zero"):
    """Generic attention over batched lists: q (B, Nq, .), k (B, Nk, .),
    v (B, Nk, dv). scores_fn(qrow, krow) gives one score. Returns
    (output, weights, scores with None where masked, fully masked rows)."""
    B, Nq, Nk, dv = len(q), len(q[0]), len(k[0]), len(v[0][0])
    out, weights, scores, empty = [], [], [], []
    for b in range(B):
        ob, wb, sb = [], [], []
        for i in range(Nq):
            raw = [scores_fn(q[b][i], k[b][j]) for j in range(Nk)]
            vis = [visible(b, i, j, Nq, Nk, valid_lens, per_query, causal)
                   for j in range(Nk)]
            w, is_empty = masked_softmax(raw, vis, fully_masked)
            if is_empty:
                empty.append((b, i))
            ob.append([sum(w[j] * v[b][j][c] for j in range(Nk))
                       for c in range(dv)])
            wb.append(w)
            sb.append([raw[j] if vis[j] else None for j in range(Nk)])
        out.append(ob)
        weights.append(wb)
        scores.append(sb)
    return out, weights, scores, empty


def dot_attention(q, k, v, scale=None, **mask):
    d = len(q[0][0])
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    fn = lambda a, b: sum(x * y for x, y in zip(a, b)) * scale
    return attention(fn, q, k, v, **mask) + (scale,)


def additive_attention(q, k, v, W_q, W_k, w_v, **mask):
    h = len(W_q)

    def fn(a, b):
        pq = [sum(W_q[r][c] * a[c] for c in range(len(a))) for r in range(h)]
        pk = [sum(W_k[r][c] * b[c] for c in range(len(b))) for r in range(h)]
        return sum(w_v[r] * tanh(pq[r] + pk[r]) for r in range(h))
    return attention(fn, q, k, v, **mask)


# ---------------------------------------------------- Nadaraya–Watson

def kernel_value(kernel, u):
    if kernel == "constant":
        return 1.0
    if kernel == "boxcar":
        return 1.0 if abs(u) < 1 else 0.0
    if kernel == "epanechnikov":
        return max(1 - u * u, 0.0)
    if kernel == "triangular":
        return max(1 - abs(u), 0.0)
    raise ValueError(kernel)


def nw_weights(x_query, x_train, kernel, w):
    rows = []
    for x in x_query:
        if kernel == "gaussian":
            s = [-((x - xi) * w) ** 2 / 2 for xi in x_train]
            m = max(s)
            e = [math.exp(t - m) for t in s]
        else:
            e = [kernel_value(kernel, (x - xi) * w) for xi in x_train]
        tot = sum(e)
        if tot == 0:
            raise ZeroDivisionError("zero kernel mass")
        rows.append([t / tot for t in e])
    return rows


def nw_predict(x_query, x_train, y_train, kernel, w):
    """y_train: list of rows (n, dv). Returns (pred (m, dv), weights)."""
    a = nw_weights(x_query, x_train, kernel, w)
    dv = len(y_train[0])
    pred = [[sum(a[q][i] * y_train[i][c] for i in range(len(x_train)))
             for c in range(dv)] for q in range(len(x_query))]
    return pred, a


def nw_loss_grad(x_query, y_query, x_train, y_train, kernel, w):
    """loss = Σ ½(ŷ − y)²; grad_w from the analytic derivative (Gaussian):
    ∂sᵢ/∂w = −(x − xᵢ)² w, ∂αᵢ/∂w = αᵢ(∂sᵢ/∂w − Σⱼ αⱼ ∂sⱼ/∂w)."""
    pred, a = nw_predict(x_query, x_train, y_train, kernel, w)
    dv = len(y_train[0])
    loss = 0.0
    grad = 0.0
    for q, x in enumerate(x_query):
        ds = [-((x - xi) ** 2) * w for xi in x_train]
        mean = sum(a[q][i] * ds[i] for i in range(len(x_train)))
        da = [a[q][i] * (ds[i] - mean) for i in range(len(x_train))]
        for c in range(dv):
            r = pred[q][c] - y_query[q][c]
            loss += 0.5 * r * r
            grad += r * sum(da[i] * y_train[i][c] for i in range(len(x_train)))
    return loss, grad


def nw_loo_loss_grad(x_train, y_train, w):
    loss = grad = 0.0
    n = len(x_train)
    for i in range(n):
        xs = [x_train[j] for j in range(n) if j != i]
        ys = [y_train[j] for j in range(n) if j != i]
        l, g = nw_loss_grad([x_train[i]], [y_train[i]], xs, ys, "gaussian", w)
        loss += l
        grad += g
    return loss, grad


def nw_fit(w, lr, epochs, data, x_train, y_train, x_query=None, y_query=None):
    history = []
    for e in range(1, epochs + 1):
        if data == "train_loo":
            loss, grad = nw_loo_loss_grad(x_train, y_train, w)
        else:
            loss, grad = nw_loss_grad(x_query, y_query, x_train, y_train,
                                      "gaussian", w)
        history.append({"epoch": e, "w": w, "loss": loss})
        w = w - lr * grad
    return w, history


# ------------------------------------------------------------- dataset

def nw_dataset(n_train=50, noise=0.5, seed=0):
    """attnrng.nw_dataset plus the test grid x = 0, 0.1, ..., 4.9."""
    x, y = attnrng.nw_dataset(n_train, noise, seed)
    x_test = [i / 10 for i in range(50)]
    return x, y, x_test, [f_true(t) for t in x_test]


# ------------------------------------------- masked softmax (section 10)

def softmax_masked(scores, valid_lens=None, per_query=False, causal=None,
                   fully_masked="zero"):
    """scores (B, Nq, Nk) -> weights (B, Nq, Nk): masked_softmax row by row
    under the contract's masks (as d2l's masked_softmax, without a fill
    value: masked weights are exactly 0)."""
    Nq, Nk = len(scores[0]), len(scores[0][0])
    return [[masked_softmax(row, [visible(b, i, j, Nq, Nk, valid_lens,
                                         per_query, causal)
                                 for j in range(Nk)], fully_masked)[0]
             for i, row in enumerate(sb)]
            for b, sb in enumerate(scores)]


# ------------------------------------- positional encoding (section 10)

def positional_encoding(num_steps, D):
    """P[i, 2j] = sin(i / 10000^(2j/D)), P[i, 2j+1] = cos(the same)."""
    P = []
    for i in range(num_steps):
        row = []
        for c in range(D):
            angle = i / 10000.0 ** ((c - c % 2) / D)
            row.append(math.sin(angle) if c % 2 == 0 else math.cos(angle))
        P.append(row)
    return P


# ------------------------------------- NW bandwidth rules (section 4)

def quantile_linear(xs, p):
    """numpy.quantile's default ("linear") on sorted xs."""
    pos = (len(xs) - 1) * p
    lo = math.floor(pos)
    if lo >= len(xs) - 1:
        return xs[-1]
    return xs[lo] + (xs[lo + 1] - xs[lo]) * (pos - lo)


def bandwidth_rule(x, rule):
    """h by Scott (1.059) or Silverman (0.9) · A · n^(-1/5), A = min(sample
    std, IQR/1.349), std alone when the IQR is 0. Raises ValueError for
    fewer than 2 distinct points."""
    if len(set(x)) < 2:
        raise ValueError("fewer than 2 distinct points")
    n = len(x)
    xs = sorted(x)
    mean = sum(xs) / n
    sd = math.sqrt(sum((t - mean) ** 2 for t in xs) / (n - 1))
    iqr = quantile_linear(xs, 0.75) - quantile_linear(xs, 0.25)
    A = min(sd, iqr / 1.349) if iqr > 0 else sd
    return {"scott": 1.059, "silverman": 0.9}[rule] * A * n ** -0.2


def nw_loo_sse(x, y, kernel, h):
    """Σᵢ Σ_c (y[i][c] − ŷ₋ᵢ(xᵢ)[c])², ŷ₋ᵢ from the other n − 1 pairs with
    kernel argument (xᵢ − xⱼ)/h; inf when some xᵢ has zero kernel mass."""
    total = 0.0
    for i in range(len(x)):
        others = [j for j in range(len(x)) if j != i]
        try:
            w = nw_weights([x[i]], [x[j] for j in others], kernel, 1.0 / h)[0]
        except ZeroDivisionError:
            return math.inf
        for c in range(len(y[0])):
            pred = sum(a * y[j][c] for a, j in zip(w, others))
            total += (y[i][c] - pred) ** 2
    return total


def bandwidth_cv(x, y, kernel):
    """The contract's "cv": the least nw_loo_sse over 200 log-spaced h in
    [smallest positive gap / 20, 100 · range] (first minimum on ties), then
    golden-section search between the best point's neighbours until the
    bracket is within 1e-6 of its midpoint; the best h evaluated."""
    xs = sorted(x)
    gap = min(b - a for a, b in zip(xs, xs[1:]) if b > a)
    lo, hi = gap / 20, 100 * (xs[-1] - xs[0])
    step = math.log(hi / lo) / 199
    grid = [hi if k == 199 else lo * math.exp(step * k) for k in range(200)]
    scores = [nw_loo_sse(x, y, kernel, h) for h in grid]
    best = min(range(200), key=lambda k: (scores[k], k))
    best_h, best_f = grid[best], scores[best]
    invphi = (math.sqrt(5) - 1) / 2
    a, b = grid[max(best - 1, 0)], grid[min(best + 1, 199)]
    c, d = b - invphi * (b - a), a + invphi * (b - a)
    fc, fd = nw_loo_sse(x, y, kernel, c), nw_loo_sse(x, y, kernel, d)
    while True:
        for h, f in ((c, fc), (d, fd)):
            if f < best_f:
                best_h, best_f = h, f
        if not b - a > 1e-6 * 0.5 * (a + b):
            return best_h
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - invphi * (b - a)
            fc = nw_loo_sse(x, y, kernel, c)
        else:
            a, c, fc = c, d, fd
            d = a + invphi * (b - a)
            fd = nw_loo_sse(x, y, kernel, d)


def self_check():
    """The contract's published values (docs/contract.md sections 4, 5 and 7)."""
    attnrng.check_golden()
    xt, yt = [1, 2, 4], [[0], [3], [1]]
    pred, a = nw_predict([2.5], xt, yt, "gaussian", 0.5)
    close = lambda p, q: abs(p - q) <= 1e-15 + 1e-13 * abs(q)
    assert all(map(close, a[0], [0.304504342420284, 0.39099131515943186,
                                 0.304504342420284]))
    assert close(pred[0][0], 1.4774782878985795)
    loss, grad = nw_loss_grad([2.5], [[3]], xt, yt, "gaussian", 0.5)
    assert close(loss, 1.1590361819101205) and close(grad, -0.9063461621648087)
    w, _ = nw_fit(0.5, 0.1, 1, "query", xt, yt, [2.5], [[3]])
    assert close(w, 0.5906346162164808)
    assert close(nw_predict([2.5], xt, yt, "gaussian", 1)[0][0][0],
                 1.940292211914573)
    assert close(nw_predict([2.5], xt, yt, "gaussian", 2)[0][0][0],
                 2.9116578899297596)


# ------------------------------------------------ gradients (section 9)
# Reverse-mode automatic differentiation over scalars: the forward
# references above run unchanged on Var entries (masked_softmax and the
# score functions call exp/tanh below), and L = Σ grad_output ⊙ output is
# differentiated back to every leaf. Independent of lib/'s hand-written
# backward passes.

class Var:
    """A scalar in the computation graph: value v, parents [(Var, ∂self/∂p)]."""
    __slots__ = ("v", "parents", "grad")

    def __init__(self, v, parents=()):
        self.v = float(v)
        self.parents = parents
        self.grad = 0.0

    def __add__(self, o):
        if isinstance(o, Var):
            return Var(self.v + o.v, ((self, 1.0), (o, 1.0)))
        return Var(self.v + o, ((self, 1.0),))

    __radd__ = __add__

    def __sub__(self, o):
        if isinstance(o, Var):
            return Var(self.v - o.v, ((self, 1.0), (o, -1.0)))
        return Var(self.v - o, ((self, 1.0),))

    def __rsub__(self, o):
        return Var(o - self.v, ((self, -1.0),))

    def __mul__(self, o):
        if isinstance(o, Var):
            return Var(self.v * o.v, ((self, o.v), (o, self.v)))
        return Var(self.v * o, ((self, o),))

    __rmul__ = __mul__

    def __truediv__(self, o):
        if isinstance(o, Var):
            return Var(self.v / o.v,
                       ((self, 1.0 / o.v), (o, -self.v / (o.v * o.v))))
        return Var(self.v / o, ((self, 1.0 / o),))

    def __rtruediv__(self, o):
        return Var(o / self.v, ((self, -o / (self.v * self.v)),))

    def __neg__(self):
        return Var(-self.v, ((self, -1.0),))


def value(x):
    return x.v if isinstance(x, Var) else x


def exp(x):
    if isinstance(x, Var):
        e = math.exp(x.v)
        return Var(e, ((x, e),))
    return math.exp(x)


def tanh(x):
    if isinstance(x, Var):
        t = math.tanh(x.v)
        return Var(t, ((x, 1.0 - t * t),))
    return math.tanh(x)


def backward(root):
    """Accumulate d root / d x into x.grad for every Var x below root."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for p, _ in node.parents:
            if id(p) not in seen:
                stack.append((p, False))
    root.grad = 1.0
    for node in reversed(order):
        for p, local in node.parents:
            p.grad += node.grad * local


def leaves(t):
    """Nested lists of floats -> the same nesting of fresh Vars."""
    if isinstance(t, list):
        return [leaves(x) for x in t]
    return Var(t)


def grads_of(t):
    if isinstance(t, list):
        return [grads_of(x) for x in t]
    return t.grad + 0.0


def values_of(t):
    if isinstance(t, list):
        return [values_of(x) for x in t]
    return value(t)


def flatten(t):
    if isinstance(t, list):
        return [y for x in t for y in flatten(x)]
    return [t]


def gradients(forward, inputs, grad_output):
    """forward(*Var tensors) -> output (nested); returns (output values,
    [dL/d input] for L = Σ grad_output ⊙ output)."""
    xs = [leaves(t) for t in inputs]
    out = forward(*xs)
    terms = [o * g for o, g in zip(flatten(out), flatten(grad_output))
             if isinstance(o, Var)]
    loss = Var(0.0)
    for t in terms:
        loss = loss + t
    backward(loss)
    return values_of(out), [grads_of(x) for x in xs]


# --------------------------------------------------- multi-head (section 6)

def linear(x, W, b=None):
    """x (N, din) · Wᵀ (+ b): nn.Linear with W (dout, din)."""
    out = []
    for row in x:
        y = []
        for r, wr in enumerate(W):
            acc = sum(wr[c] * row[c] for c in range(len(row)))
            y.append(acc + b[r] if b is not None else acc)
        out.append(y)
    return out


def multihead_attention(q, k, v, W_q, W_k, W_v, W_o, H, b_q=None, b_k=None,
                        b_v=None, b_o=None, **mask):
    """d2l 11.5 MultiHeadAttention / nn.MultiheadAttention on batched
    lists: returns (output (B, Nq, d_out), weights (B, H, Nq, Nk), scores
    (B, H, Nq, Nk) with None where masked, fully masked (b, i) rows)."""
    h = len(W_q)
    dh = h // H
    scale = 1.0 / math.sqrt(dh)
    B = len(q)
    Qp = [linear(q[b], W_q, b_q) for b in range(B)]
    Kp = [linear(k[b], W_k, b_k) for b in range(B)]
    Vp = [linear(v[b], W_v, b_v) for b in range(B)]
    fn = lambda a, c: sum(x * y for x, y in zip(a, c)) * scale
    head_out, weights, scores, empty = [], [], [], []
    for t in range(H):
        cut = lambda X: [[row[t * dh:(t + 1) * dh] for row in e] for e in X]
        o, w, s, e = attention(fn, cut(Qp), cut(Kp), cut(Vp), **mask)
        head_out.append(o)
        weights.append(w)
        scores.append(s)
        empty = e
    out = []
    for b in range(B):
        concat = [[x for t in range(H) for x in head_out[t][b][i]]
                  for i in range(len(q[b]))]
        out.append(linear(concat, W_o, b_o))
    weights = [[weights[t][b] for t in range(H)] for b in range(B)]
    scores = [[scores[t][b] for t in range(H)] for b in range(B)]
    return out, weights, scores, empty


# -------------------------------------------------- diagnostics (section 8)

def diagnostics(weights, scores, heads=False, batched=True):
    """weights, scores: (B, Nq, Nk) or, with heads, (B, H, Nq, Nk); scores
    None where masked (the references' third result). The contract's
    diagnostics object, rows dropped to (Nq) / (H, Nq) when not batched."""
    if not heads:
        weights = [[w] for w in weights]
        scores = [[s] for s in scores]
    seen = []
    ent, peak, arg, warn = [], [], [], []
    for b, (wb, sb) in enumerate(zip(weights, scores)):
        eb, pb, ab = [], [], []
        for t, (wt, st) in enumerate(zip(wb, sb)):
            et, pt, at = [], [], []
            for i, (w, s) in enumerate(zip(wt, st)):
                vis = [j for j, x in enumerate(s) if x is not None]
                seen.extend(s[j] for j in vis)
                row = ([b] if batched else []) + ([t] if heads else []) + [i]
                if not vis:
                    et.append(0.0)
                    pt.append(0.0)
                    at.append(-1)
                    warn.append({"code": "fully_masked", "row": row})
                    continue
                e = 0.0
                for j in vis:
                    if w[j] > 0:
                        e -= w[j] * math.log(w[j])
                best = max(w[j] for j in vis)
                et.append(e + 0.0)
                pt.append(best)
                at.append(min(j for j in vis if w[j] == best))
                if best > 0.99:
                    warn.append({"code": "saturated", "row": row})
                elif len(vis) >= 2 and e >= 0.99 * math.log(len(vis)):
                    warn.append({"code": "near_uniform", "row": row})
            eb.append(et)
            pb.append(pt)
            ab.append(at)
        ent.append(eb if heads else eb[0])
        peak.append(pb if heads else pb[0])
        arg.append(ab if heads else ab[0])
    if not batched:
        ent, peak, arg = ent[0], peak[0], arg[0]
    if len(warn) > 100:
        warn = warn[:100] + [{"code": "truncated", "count": len(warn) - 100}]
    stats = {"min": None, "max": None, "mean": None, "std": None}
    if seen:
        total = 0.0
        for x in seen:
            total += x
        mean = total / len(seen)
        ss = 0.0
        for x in seen:
            ss += (x - mean) * (x - mean)
        stats = {"min": min(seen), "max": max(seen), "mean": mean,
                 "std": math.sqrt(ss / len(seen))}
    return {"scores": stats, "entropy": ent, "max_weight": peak,
            "argmax": arg, "warnings": warn}
