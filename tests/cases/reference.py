"""Plain-Python reference implementations of attnd's computations, written
from the wire contract (API.md) and d2l, independent of lib/. Used by
gen_cases.py to compute the expected answers of tests/cases. Standard
library only (IEEE-754 doubles, the same libm as C)."""

import math

M64 = (1 << 64) - 1


# ------------------------------------------------------------ randomness
# API.md section 7: splitmix64 seeding xoshiro256**.

def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


class Rng:
    def __init__(self, seed):
        state = seed
        self.s = []
        for _ in range(4):
            state, out = splitmix64(state)
            self.s.append(out)

    def next(self):
        s = self.s
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53

    def normals(self, n):
        out = []
        while len(out) < n:
            u1 = self.uniform()
            u2 = self.uniform()
            if u1 == 0:
                continue
            r = math.sqrt(-2 * math.log(u1))
            out.append(r * math.cos(2 * math.pi * u2))
            out.append(r * math.sin(2 * math.pi * u2))
        return out[:n]

    def xavier(self, rows, cols):
        a = math.sqrt(6 / (cols + rows))
        return [[-a + 2 * a * self.uniform() for _ in range(cols)]
                for _ in range(rows)]


# ------------------------------------------------------------- masking

def visible(b, i, j, Nq, Nk, valid_lens, per_query, causal):
    """Key j visible to query i of example b (API.md "Masking")."""
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
    m = max(row[j] for j in idx)
    e = [math.exp(row[j] - m) if vis[j] else 0.0 for j in range(n)]
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
        return sum(w_v[r] * math.tanh(pq[r] + pk[r]) for r in range(h))
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

def f_true(x):
    return 2 * math.sin(x) + x ** 0.8


def nw_dataset(n_train=50, noise=0.5, seed=0):
    rng = Rng(seed)
    x = sorted(5 * rng.uniform() for _ in range(n_train))
    z = rng.normals(n_train)
    y = [f_true(xi) + noise * zi for xi, zi in zip(x, z)]
    x_test = [i / 10 for i in range(50)]
    return x, y, x_test, [f_true(t) for t in x_test]


def self_check():
    """The contract's published values (API.md sections 4, 5 and 7)."""
    r = Rng(0)
    assert r.next() == 0x99ec5f36cb75f2b4 and r.next() == 0xbf6e1f784956452a
    r = Rng(0)
    assert [r.uniform() for _ in range(3)] == [
        0.6012629994179048, 0.7477740925472398, 0.10301998939503632]
    r = Rng(0)
    assert r.normals(3) == [-0.01410679738124918, -1.0085864725210538,
                            -1.8458950876958273]
    assert Rng(0).xavier(2, 3) == [
        [0.22185611608727585, 0.5428458386139836, -0.8697396267479146],
        [-0.18274417446004343, 0.510470366862243, 1.0948939664127075]]
    x, y, _, _ = nw_dataset()
    assert x[0] == 0.19157748800980812 and y[0] == 0.4527892370680555
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
