#!/usr/bin/python3
"""The seed note's self_attention(x, d_k) (note 2, section 4.6), run
verbatim with numpy, against POST /attention/self of a running attnd; one
TAP line per check.

The note's code is below as the note prints it: the function (with its
np.random.seed(42) inside) and its test lines (seq_len 4, d_model 8,
d_k 4). The note draws x unseeded, from whatever state the generator is
in; here np.random.seed(0) comes first so x is the same on every run.
The same x goes to /attention/self with "d_k": 4, "seed": 42, and:

  - W_Q, W_K, W_V are numpy's to the bit (NumPy's legacy generator,
    docs/contract.md section 7);
  - the note's printed np.round(w, 2) is the same text;
  - Q, K, V and the scaled scores are numpy's to the bit, and the output
    is attnd's weights times V to the bit, when numpy's BLAS is attnd's
    (OpenBLAS); the weights and the output agree with numpy's to 1e-15
    relative (the weights differ by a few ulp: numpy's exp on AVX512F is
    its own SIMD exp, not libm's, and numpy sums the 4 exponentials of a
    row left to right, attnd in pairs; the worst ulp is printed);
  - batches, masks, the trace and the gradients (against central finite
    differences of the note's computation) agree as well.

Needs numpy: without it every check fails (no skip).
usage: /usr/bin/python3 tests/integration/notes_self_attention.py BASE_URL
"""
import contextlib
import io
import json
import sys
import urllib.error
import urllib.request

BASE = sys.argv[1].rstrip("/")
n = failed = 0


def check(name, ok, detail=""):
    global n, failed
    n += 1
    failed += not ok
    print("%s %d - %s" % ("ok" if ok else "not ok", n, name))
    if not ok and detail:
        print("#   " + str(detail)[:800].replace("\n", "\n#   "))


try:
    import numpy as np
except ImportError as e:
    check("numpy is importable by /usr/bin/python3 (python3-numpy)", False,
          e)
    print("1..%d" % n)
    sys.exit(1)

# ---------------------------------------------------------------- the note
NOTES_FUNCTION = '''
import numpy as np

def self_attention(x, d_k):
    """
    x: (seq_len, d_model)  假设已经嵌入好了
    d_k: 每个头的维度
    """
    d_model = x.shape[-1]
    # 随机初始化权重（实际训练时这些是参数）
    np.random.seed(42)
    W_Q = np.random.randn(d_model, d_k) * 0.1
    W_K = np.random.randn(d_model, d_k) * 0.1
    W_V = np.random.randn(d_model, d_k) * 0.1

    Q = x @ W_Q   # (seq_len, d_k)
    K = x @ W_K
    V = x @ W_V

    # 注意力分数
    score = Q @ K.T  # (seq_len, seq_len)
    score /= np.sqrt(d_k)

    # Softmax
    exp_s = np.exp(score - np.max(score, axis=-1, keepdims=True))
    attn_weights = exp_s / np.sum(exp_s, axis=-1, keepdims=True)

    # 加权求和
    output = attn_weights @ V  # (seq_len, d_k)
    return output, attn_weights
'''

NOTES_TEST = '''
# 测试
seq_len, d_model, d_k = 4, 8, 4
x = np.random.randn(seq_len, d_model)
out, w = self_attention(x, d_k)
print("输出形状:", out.shape)    # (4, 4)
print("注意力权重:\\n", np.round(w, 2))
'''

notes = {}
exec(NOTES_FUNCTION, notes)
np.random.seed(0)  # the note draws x unseeded; fixed here
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    exec(NOTES_TEST, notes)
x, out, w = notes["x"], notes["out"], notes["w"]
# the weights as the note draws them (its lines, outside the function)
np.random.seed(42)
W_Q = np.random.randn(8, 4) * 0.1
W_K = np.random.randn(8, 4) * 0.1
W_V = np.random.randn(8, 4) * 0.1


# ---------------------------------------------------------------- helpers
def post(body):
    req = urllib.request.Request(BASE + "/attention/self",
                                 json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def same_bits(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def max_ulp(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return int(np.max(np.abs(a.view(np.int64) - b.view(np.int64))))


def rel(a, b):
    """max |a − b| / max |b|: relative to the tensor's scale."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def numpy_blas_is_openblas():
    """numpy on Debian links libblas.so.3, an alternative that may be
    OpenBLAS (attnd's) or another BLAS: look at what this process loaded."""
    try:
        with open("/proc/self/maps") as f:
            return "openblas" in f.read()
    except OSError:
        return False


def reference(x, W_Q, W_K, W_V, scale, visible=None):
    """The note's computation for (B, N, d_model) x, with a mask (B, N, N)
    of visible keys (masked weights exactly 0)."""
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    s = Q @ np.swapaxes(K, -1, -2) * scale
    if visible is not None:
        s = np.where(visible, s, -np.inf)
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))
    a = e / np.sum(e, axis=-1, keepdims=True)
    return a @ V, a


# ------------------------------------------------- the note, reproduced
status, ans = post({"x": x.tolist(), "d_k": 4, "seed": 42, "trace": True})
check("POST /attention/self with the note's x, d_k 4, seed 42 is 200",
      status == 200, ans)
if status != 200:
    print("1..%d" % n)
    sys.exit(1)
params = ans.get("params", {})
for name, want in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
    check("params.%s is np.random.randn(8, 4) * 0.1 after np.random.seed(42)"
          ", to the bit" % name, same_bits(params.get(name), want),
          (params.get(name), want.tolist()))
aw, ao = np.array(ans["weights"]), np.array(ans["output"])
ours = io.StringIO()
with contextlib.redirect_stdout(ours):
    print("输出形状:", ao.shape)
    print("注意力权重:\n", np.round(aw, 2))
check("the note's printout (shape, np.round(w, 2)) is the same text",
      ours.getvalue() == printed.getvalue(),
      "numpy:\n%s\nattnd:\n%s" % (printed.getvalue(), ours.getvalue()))
print("# the note's printout:\n# " +
      printed.getvalue().strip().replace("\n", "\n# "))

tr = ans.get("trace", {})
Q, K, V = x @ W_Q, x @ W_K, x @ W_V
score = Q @ K.T
score /= np.sqrt(4)
openblas = numpy_blas_is_openblas()
print("# numpy's BLAS is %s" % ("OpenBLAS, as attnd's" if openblas else
                               "not OpenBLAS"))
exact = [("Q", Q), ("K", K), ("V", V), ("scaled", score)]
for name, want in exact:
    got = tr.get(name)
    if openblas:
        check("trace.%s is numpy's to the bit (the same dgemm)" % name,
              same_bits(got, want), "max ulp %d" % max_ulp(got, want))
    else:
        check("trace.%s is numpy's to 1e-15" % name, rel(got, want) <= 1e-15,
              rel(got, want))
if openblas:
    check("output is attnd's weights @ V in numpy to the bit",
          same_bits(ao, aw @ np.array(tr["V"])), max_ulp(ao, aw @ V))
check("weights agree with the note's to 1e-15 relative, entry by entry",
      float(np.max(np.abs(aw - w) / w)) <= 1e-15,
      float(np.max(np.abs(aw - w) / w)))
check("output agrees with the note's to 1e-15 relative", rel(ao, out) <= 1e-15,
      rel(ao, out))
print("# weights: max %d ulp from numpy's (%s); output: max %d ulp, "
      "%.3g relative to its largest entry" %
      (max_ulp(aw, w), "exact" if same_bits(aw, w) else
       "numpy's SIMD exp and left-to-right row sum", max_ulp(ao, out),
       rel(ao, out)))
check("each weight row sums to 1 (1e-15)",
      float(np.max(np.abs(aw.sum(-1) - 1))) <= 1e-15)
check("scale is 1/sqrt(d_k) = 0.5", ans.get("scale") == 0.5, ans.get("scale"))

# trace: every name, in the computation's order, and its values
names = list(tr.keys())
check("trace has Q, K, V, QK, scaled, masked, weights, weighted_values in "
      "that order", names == ["Q", "K", "V", "QK", "scaled", "masked",
                              "weights", "weighted_values"], names)
check("trace.QK is Q Kᵀ (1e-15) and scaled = QK · 0.5 exactly",
      rel(tr["QK"], Q @ K.T) <= 1e-15 and
      same_bits(np.array(tr["QK"]) * 0.5, tr["scaled"]))
check("without a mask, trace.masked = trace.scaled; trace.weights = weights;"
      " trace.weighted_values = output",
      tr["masked"] == tr["scaled"] and tr["weights"] == ans["weights"] and
      tr["weighted_values"] == ans["output"])

# precision: the same answer printed with 6 digits
status, a6 = post({"x": x.tolist(), "d_k": 4, "seed": 42, "precision": 6})
check("precision 6 prints each number with 6 significant digits",
      status == 200 and a6["weights"] == [[float("%.6g" % v) for v in row]
                                          for row in ans["weights"]], a6)

# --------------------------------------- given weights = drawn weights
status, given = post({"x": x.tolist(), "W_Q": W_Q.tolist(),
                      "W_K": W_K.tolist(), "W_V": W_V.tolist()})
check("W_Q, W_K, W_V given in the note's (d_model, d_k) layout: the same "
      "answer, no params", status == 200 and "params" not in given and
      given["output"] == ans["output"] and given["weights"] == ans["weights"],
      given)

# init_std and another seed
np.random.seed(7)
Wq7 = np.random.randn(8, 3) * 0.5
status, a7 = post({"x": x.tolist(), "d_k": 3, "seed": 7, "init_std": 0.5,
                   "return_weights": False})
check("seed 7, init_std 0.5, d_k 3: W_Q = randn(8, 3) * 0.5 to the bit; "
      "no weights", status == 200 and same_bits(a7["params"]["W_Q"], Wq7) and
      "weights" not in a7 and np.array(a7["output"]).shape == (4, 3), a7)
status, amax = post({"x": x.tolist(), "d_k": 2, "seed": 2**32 - 1})
np.random.seed(2**32 - 1)
check("seed 2^32 - 1 is np.random.seed's largest",
      status == 200 and same_bits(amax["params"]["W_Q"],
                                  np.random.randn(8, 2) * 0.1), amax)

# ------------------------------------------------- batches and masks
rng = np.random.RandomState(3)
xb = rng.randn(3, 5, 6)
Wq, Wk, Wv = (rng.randn(6, 4) for _ in range(3))
vl = np.array([5, 2, 1])
causal = np.tril(np.ones((5, 5), dtype=bool))
visible = (np.arange(5)[None, None, :] < vl[:, None, None]) & causal
ro, rw = reference(xb, Wq, Wk, Wv, 0.3, visible)
status, ab = post({"x": xb.tolist(), "W_Q": Wq.tolist(), "W_K": Wk.tolist(),
                   "W_V": Wv.tolist(), "valid_lens": vl.tolist(),
                   "causal": True, "scale": 0.3, "trace": True})
check("batched (3, 5, 6) with valid_lens and causal: output and weights as "
      "numpy's (1e-14)", status == 200 and rel(ab["output"], ro) <= 1e-14 and
      rel(ab["weights"], rw) <= 1e-14, ab if status != 200 else
      (rel(ab["output"], ro), rel(ab["weights"], rw)))
if status == 200:
    masked = np.array([[[np.nan if v is None else v for v in row]
                        for row in ex] for ex in ab["trace"]["masked"]])
    check("masked weights are exactly 0 and trace.masked is null there",
          bool(np.all(np.array(ab["weights"])[~visible] == 0)) and
          bool(np.all(np.isnan(masked[~visible]))) and
          not np.any(np.isnan(masked[visible])))
    check("batched trace keeps the batch axis: Q (3, 5, 4), QK (3, 5, 5)",
          np.array(ab["trace"]["Q"]).shape == (3, 5, 4) and
          np.array(ab["trace"]["QK"]).shape == (3, 5, 5))

# ------------------------------------- PyTorch's attn_mask, key padding
# a float attn_mask (B, N, N) with null (-inf) entries, and key padding
fm = rng.randn(3, 5, 5)
hide = rng.rand(3, 5, 5) < 0.3
hide[:, :, 0] = False
kpm = np.zeros((3, 5), dtype=bool)
kpm[1, 3:] = True
kvis = ~hide & ~kpm[:, None, :]


def reference_float(xv, q, k, v, scale, add, vis):
    """The note's computation with a float mask added to the scaled scores
    and the keys vis hides at -inf."""
    Q, K, V = xv @ q, xv @ k, xv @ v
    s = Q @ np.swapaxes(K, -1, -2) * scale + add
    s = np.where(vis, s, -np.inf)
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))
    a = e / np.sum(e, axis=-1, keepdims=True)
    return a @ V, a, Q @ np.swapaxes(K, -1, -2) * scale


fmj = [[[None if hide[b, i, j] else float(fm[b, i, j]) for j in range(5)]
        for i in range(5)] for b in range(3)]
mo, mw, msc = reference_float(xb, Wq, Wk, Wv, 0.3, fm, kvis)
status, am = post({"x": xb.tolist(), "W_Q": Wq.tolist(), "W_K": Wk.tolist(),
                   "W_V": Wv.tolist(), "attn_mask": fmj,
                   "key_padding_mask": kpm.tolist(), "scale": 0.3,
                   "trace": True})
check("a float attn_mask (B, N, N) with nulls and key_padding_mask (B, N): "
      "output and weights as numpy's (1e-14)",
      status == 200 and rel(am["output"], mo) <= 1e-14 and
      rel(am["weights"], mw) <= 1e-14, am if status != 200 else
      (rel(am["output"], mo), rel(am["weights"], mw)))
if status == 200:
    tm = np.array([[[np.nan if v is None else v for v in row]
                    for row in ex] for ex in am["trace"]["masked"]])
    want = np.where(kvis, msc + fm, np.nan)
    check("  trace.masked = scaled + attn_mask, null where hidden (1e-14)",
          bool(np.array_equal(np.isnan(tm), np.isnan(want))) and
          rel(np.nan_to_num(tm), np.nan_to_num(want)) <= 1e-14 and
          bool(np.all(np.array(am["weights"])[~kvis] == 0)))
bm = np.triu(np.ones((5, 5), dtype=bool), 1)  # a boolean (N, N): causal
status, ac = post({"x": xb.tolist(), "W_Q": Wq.tolist(), "W_K": Wk.tolist(),
                   "W_V": Wv.tolist(), "attn_mask": bm.tolist(),
                   "scale": 0.3})
status2, ac2 = post({"x": xb.tolist(), "W_Q": Wq.tolist(), "W_K": Wk.tolist(),
                     "W_V": Wv.tolist(), "causal": True, "scale": 0.3})
check("a boolean attn_mask (N, N), true above the diagonal, answers as "
      "causal: true", status == 200 and status2 == 200 and
      ac["output"] == ac2["output"] and ac["weights"] == ac2["weights"])
Gm = rng.randn(3, 5, 4)
status, amg = post({"x": xb.tolist(), "W_Q": Wq.tolist(), "W_K": Wk.tolist(),
                    "W_V": Wv.tolist(), "attn_mask": fmj,
                    "key_padding_mask": kpm.tolist(), "scale": 0.3,
                    "grad_output": Gm.tolist()})
for what, body, pointer in (
        ("attn_mask (N, N + 1)", {"attn_mask": np.zeros((5, 6)).tolist()},
         "/attn_mask"),
        ("key_padding_mask (B, N - 1)",
         {"key_padding_mask": np.zeros((3, 4), dtype=bool).tolist()},
         "/key_padding_mask")):
    b = {"x": xb.tolist(), "W_Q": Wq.tolist(), "W_K": Wk.tolist(),
         "W_V": Wv.tolist()}
    b.update(body)
    st, e = post(b)
    check("%s is shape_mismatch at %s" % (what, pointer),
          st == 422 and e.get("code") == "shape_mismatch" and
          e.get("pointer") == pointer, e)

# ------------------------------------------------------- gradients
G = rng.randn(3, 5, 4)
status, ag = post({"x": xb.tolist(), "W_Q": Wq.tolist(), "W_K": Wk.tolist(),
                   "W_V": Wv.tolist(), "valid_lens": vl.tolist(),
                   "causal": True, "scale": 0.3, "grad_output": G.tolist()})
check("grad_output: grads has x, W_Q, W_K, W_V", status == 200 and
      sorted(ag.get("grads", {})) == ["W_K", "W_Q", "W_V", "x"], ag)


def loss(xv, q, k, v):
    return float(np.sum(G * reference(xv, q, k, v, 0.3, visible)[0]))


def central(f, arr, h=1e-6):
    g = np.zeros_like(arr)
    for i in np.ndindex(arr.shape):
        old = arr[i]
        arr[i] = old + h
        up = f()
        arr[i] = old - h
        down = f()
        arr[i] = old
        g[i] = (up - down) / (2 * h)
    return g


if status == 200:
    args = {"x": xb.copy(), "W_Q": Wq.copy(), "W_K": Wk.copy(),
            "W_V": Wv.copy()}

    def f():
        return loss(args["x"], args["W_Q"], args["W_K"], args["W_V"])

    for name in ("x", "W_Q", "W_K", "W_V"):
        fd = central(f, args[name])
        got = np.array(ag["grads"][name])
        err = float(np.max(np.abs(got - fd)) / max(1.0, np.max(np.abs(fd))))
        check("grads.%s agrees with central finite differences (1e-7)" % name,
              got.shape == fd.shape and err <= 1e-7, err)

# the gradients with the float attn_mask and key padding
if status == 200:
    margs = {"x": xb.copy(), "W_Q": Wq.copy(), "W_K": Wk.copy(),
             "W_V": Wv.copy()}

    def fmask():
        return float(np.sum(Gm * reference_float(
            margs["x"], margs["W_Q"], margs["W_K"], margs["W_V"], 0.3, fm,
            kvis)[0]))
    for name in ("x", "W_Q", "W_K", "W_V"):
        fd = central(fmask, margs[name])
        got = np.array(amg["grads"][name])
        err = float(np.max(np.abs(got - fd)) / max(1.0, np.max(np.abs(fd))))
        check("with attn_mask and key_padding_mask, grads.%s agrees with "
              "central finite differences (1e-7)" % name,
              got.shape == fd.shape and err <= 1e-7, err)
else:
    check("grad_output with attn_mask and key_padding_mask is 200", False,
          amg)

# ------------------------------------------------------------- errors
for what, body, code, pointer in (
        ("d_model of W_Q against x", {"x": x.tolist(), "W_Q": W_Q[:5].tolist(),
                                       "W_K": W_K.tolist(),
                                       "W_V": W_V.tolist()},
         "shape_mismatch", "/W_Q"),
        ("W_V's shape against W_Q's", {"x": x.tolist(), "W_Q": W_Q.tolist(),
                                       "W_K": W_K.tolist(),
                                       "W_V": W_V[:, :2].tolist()},
         "shape_mismatch", "/W_V"),
        ("neither weights nor d_k", {"x": x.tolist()}, "missing_field",
         "/d_k"),
        ("seed beyond 2^32 - 1", {"x": x.tolist(), "d_k": 4,
                                  "seed": 2**32}, "invalid_value", "/seed"),
        ("negative seed", {"x": x.tolist(), "d_k": 4, "seed": -1},
         "invalid_value", "/seed"),
        ("d_k 0", {"x": x.tolist(), "d_k": 0}, "invalid_value", "/d_k"),
        ("grad_output of the wrong shape", {"x": x.tolist(), "d_k": 4,
                                            "grad_output": [[1.0] * 4] * 3},
         "shape_mismatch", "/grad_output"),
        ("x of rank 1", {"x": [1, 2, 3], "d_k": 2}, "shape_mismatch", "/x")):
    status, e = post(body)
    check("422 %s at %s: %s" % (code, pointer, what),
          status == 422 and e.get("code") == code and
          e.get("pointer") == pointer, (status, e))
status, e = post({"x": x.tolist(), "W_Q": W_Q[:5].tolist(),
                  "W_K": W_K.tolist(), "W_V": W_V.tolist()})
check("the W_Q mismatch names the expected shape (8, -1) and the one got",
      e.get("expected") == [8, -1] and e.get("got") == [5, 4], e)

print("1..%d" % n)
sys.exit(1 if failed else 0)
