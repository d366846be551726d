#!/usr/bin/python3
"""trace_check.py — "trace": true on /attention/dot, /attention/multihead,
/attention/additive and /regression/nw (docs/trace.md), against numpy.

For each request the answer's trace is recomputed from the request alone
(and, for the steps after the softmax, from the trace's own earlier
tensors) and compared:
  * exactly where attnd and numpy make the same roundings (NW's distances
    and scores, the heads split out of the projections, the masked
    entries, and every trace tensor that is the answer's own: weights,
    weighted values, output, predictions);
  * within 1e-13 of the magnitude of the terms elsewhere (a product's
    |A|·|B|, a softmax's 1): BLAS and numpy sum in different orders.
Then: the answer without trace is the same, member for member, double for
double (the trace changes nothing); tensor_format and precision apply to
the trace; /grade passes attnd's own traced answer; wrong types are 422;
a trace over --max-elements, --max-work or the memory budget is 413 while
the same request without it is answered.

    usage: /usr/bin/python3 trace_check.py BASE_URL
(needs numpy; ATTND in the environment for the daemons with small limits)
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import numpy as np

BASE = sys.argv[1]
N = 0
FAILED = 0


def ok(cond, what, *why):
    global N, FAILED
    N += 1
    if cond:
        print(f"ok {N} - {what}")
    else:
        FAILED += 1
        print(f"not ok {N} - {what}")
        for line in why:
            print(f"#   {str(line)[:400]}")


def post(path, body, base=None):
    data = json.dumps(body).encode()
    req = urllib.request.Request((base or BASE) + path, data=data,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def arr(x):
    """A JSON tensor (nested lists with nulls) as a float array, null → nan."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, dict):
        return np.array([np.nan if v is None else v for v in x["data"]],
                        dtype=float).reshape(x["shape"])
    return np.array(json.loads(json.dumps(x).replace("null", "NaN")),
                    dtype=float)


def same(got, want):
    """Exactly the same doubles, nan (null) where want has nan."""
    got, want = np.asarray(got, float), np.asarray(want, float)
    return got.shape == want.shape and bool(
        np.all((got == want) | (np.isnan(got) & np.isnan(want))))


def close(got, want, mag, tol=1e-13):
    """|got - want| <= tol * mag entrywise (mag: the terms' magnitude)."""
    got, want = np.asarray(got, float), np.asarray(want, float)
    if got.shape != want.shape:
        return False
    return bool(np.all(np.abs(got - want) <= tol * np.asarray(mag) + 1e-300))


def worst(got, want):
    got, want = np.asarray(got, float), np.asarray(want, float)
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if got.size == 0:
        return "empty"
    return f"max |diff| {np.nanmax(np.abs(got - want)):.3e}"


def without_trace(ans):
    return {k: v for k, v in ans.items() if k != "trace"}


def check_unchanged(path, body, ans, what):
    """The answer without trace equals the traced one minus its trace."""
    plain = dict(body)
    plain.pop("trace", None)
    st, a0 = post(path, plain)
    ok(st == 200 and a0 == without_trace(ans),
       f"{what}: the answer without trace is the same, double for double",
       f"status {st}", sorted(set(a0) ^ set(without_trace(ans))) if
       isinstance(a0, dict) else a0)


def softmax_rows(masked):
    """Softmax over the last axis with nan = masked (weight 0); a fully
    masked row is left nan (its policy decides)."""
    m = np.where(np.isnan(masked), -np.inf, masked)
    mx = np.max(m, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        e = np.exp(m - mx)
        return e / e.sum(axis=-1, keepdims=True)


def visible(B, Nq, Nk, valid_lens=None, causal=False, batched=True):
    """(B, Nq, Nk) booleans: key j visible to query i of example b."""
    vis = np.ones((B, Nq, Nk), bool)
    j = np.arange(Nk)
    if valid_lens is not None:
        vl = np.asarray(valid_lens)
        if not batched:
            vl = vl[None] if vl.ndim == 1 else vl.reshape(1)
        if vl.ndim == 1:
            vis &= j[None, None, :] < vl[:, None, None]
        else:
            vis &= j[None, None, :] < vl[:, :, None]
    if causal:
        vis &= j[None, None, :] <= np.arange(Nq)[None, :, None]
    return vis


def mask_json(m):
    """A mask as the request gives it: booleans, or float64 with NaN for
    null (−∞)."""
    flat = m
    while isinstance(flat, list):
        flat = flat[0]
    if isinstance(flat, bool):
        return np.asarray(m, bool)
    return arr(m)


def with_masks(body, vis, H, batched=True):
    """vis (B, Nq, Nk) of valid_lens and causal, with PyTorch's masks of
    body: -> (visible (B, H, Nq, Nk), added (B, H, Nq, Nk)). attn_mask
    (Nq, Nk) for all, (B·H, Nq, Nk) per example and head (unbatched (H,
    Nq, Nk)), else (B, Nq, Nk) per example; booleans true = hidden, floats
    added, null hidden; key_padding_mask (B, Nk) true = padding."""
    B, Nq, Nk = vis.shape
    v = np.broadcast_to(vis[:, None], (B, H, Nq, Nk)).copy()
    add = np.zeros((B, H, Nq, Nk))
    if body.get("attn_mask") is not None:
        a = mask_json(body["attn_mask"])
        if a.ndim == 2:
            a = np.broadcast_to(a, (B, H, Nq, Nk))
        elif a.shape[0] == B * H:
            a = a.reshape(B, H, Nq, Nk)
        else:
            a = np.broadcast_to(a[:, None], (B, H, Nq, Nk))
        if a.dtype == bool:
            v &= ~a
        else:
            v &= ~np.isnan(a)
            add = np.where(np.isnan(a), 0.0, a)
    if body.get("key_padding_mask") is not None:
        k = np.asarray(body["key_padding_mask"], bool)
        k = k if batched else k[None]
        v &= ~k[:, None, None, :]
    return v, add


def check_weights(tr, vis, what, heads=False):
    """weights = softmax of masked where a row sees a key; masked null
    exactly where the mask hides. vis: (B, Nq, Nk), or (B, H, Nq, Nk)
    with heads."""
    masked, w = arr(tr["masked"]), arr(tr["weights"])
    v = vis[:, None] if heads and vis.ndim == 3 else vis
    v = np.broadcast_to(v, masked.shape)
    ok(bool(np.all(np.isnan(masked) == ~v)),
       f"{what}: masked is null exactly where the mask hides a key")
    rows = v.any(axis=-1)
    ref = softmax_rows(masked)
    ok(close(w[rows], ref[rows], 1.0),
       f"{what}: weights = softmax(masked) over the visible keys",
       worst(w[rows], ref[rows]))
    ok(bool(np.all(w[~v & rows[..., None]] == 0)),
       f"{what}: masked weights are exactly 0")


# ------------------------------------------------------------------ dot

def dot_case(what, body, batched=True):
    st, ans = post("/attention/dot", body)
    ok(st == 200 and "trace" in ans, f"dot {what}: 200 with a trace",
       st, ans)
    if st != 200:
        return None
    tr = ans["trace"]
    ok(list(tr) == ["QK", "scaled", "masked", "weights", "weighted_values"],
       f"dot {what}: the steps in the order computed", list(tr))
    q, k, v = (np.asarray(body[n], float) for n in ("queries", "keys",
                                                     "values"))
    if not batched:
        q, k, v = q[None], k[None], v[None]
    scale = body.get("scale", 1 / math.sqrt(q.shape[-1]))
    QK, scaled = arr(tr["QK"]), arr(tr["scaled"])
    if not batched:
        QK, scaled = QK[None], scaled[None]
    mag = np.abs(q) @ np.abs(k).transpose(0, 2, 1)
    ok(close(QK, q @ k.transpose(0, 2, 1), mag),
       f"dot {what}: QK = Q Kᵀ", worst(QK, q @ k.transpose(0, 2, 1)))
    ok(close(scaled, QK * scale, mag * scale),
       f"dot {what}: scaled = QK · scale ({scale:.6g})",
       worst(scaled, QK * scale))
    ok(ans["scale"] == scale or "scale" in body,
       f"dot {what}: the scale answered is the one used")
    vis = visible(q.shape[0], q.shape[1], k.shape[1], body.get("valid_lens"),
                  body.get("causal", False), batched)
    vis, add = with_masks(body, vis, 1, batched)
    vis, add = vis[:, 0], add[:, 0]
    trb = {n: (arr(x)[None] if not batched else arr(x)) for n, x in tr.items()}
    ok(same(trb["masked"][vis[...]], (scaled + add)[vis]),
       f"dot {what}: masked = scaled (+ a float attn_mask) where visible, "
       "exactly")
    check_weights(trb, vis, f"dot {what}")
    ok(same(arr(tr["weights"]), arr(ans["weights"])) and
       same(arr(tr["weighted_values"]), arr(ans["output"])),
       f"dot {what}: trace.weights and weighted_values are the answer's "
       "weights and output")
    wv = arr(ans["weights"]).reshape(trb["weights"].shape) @ v
    ok(close(trb["weighted_values"], wv, np.abs(trb["weights"]) @ np.abs(v)),
       f"dot {what}: weighted_values = weights · V")
    if "scores" in ans:  # the scores before a float mask is added
        sc = arr(ans["scores"]).reshape(trb["masked"].shape)
        ok(same(np.isnan(sc), ~vis) and same(sc[vis] + add[vis],
                                             trb["masked"][vis]),
           f"dot {what}: return_scores' scores (+ a float attn_mask) are "
           "trace.masked")
    check_unchanged("/attention/dot", body, ans, f"dot {what}")
    return ans


rng = np.random.default_rng(20)
r = lambda *s: np.round(rng.standard_normal(s), 6).tolist()  # noqa: E731

dot_case("batched, per-example valid_lens", {
    "queries": r(2, 3, 5), "keys": r(2, 4, 5), "values": r(2, 4, 2),
    "valid_lens": [2, 4], "trace": True})
dot_case("causal, per-query valid_lens, scale, scores, diagnostics, grads",
         {"queries": r(2, 4, 3), "keys": r(2, 4, 3), "values": r(2, 4, 3),
          "valid_lens": [[1, 2, 3, 4], [4, 4, 2, 1]], "causal": True,
          "scale": 0.3, "return_scores": True, "diagnostics": True,
          "grad_output": r(2, 4, 3), "trace": True})
dot_case("unbatched", {"queries": r(3, 4), "keys": r(5, 4),
                       "values": r(5, 2), "valid_lens": 3, "trace": True},
         batched=False)
a = dot_case("fully masked row under uniform", {
    "queries": r(1, 2, 2), "keys": r(1, 3, 2), "values": r(1, 3, 1),
    "valid_lens": [0], "fully_masked": "uniform", "trace": True})
if a:
    ok(a["trace"]["masked"] == [[[None] * 3] * 2] and
       bool(np.all(arr(a["trace"]["weights"]) == 1 / 3)),
       "dot fully masked: masked all null, weights the policy's 1/Nk")
def float_mask(*shape, hide=0.3):
    """A float attn_mask with null (−∞) entries; key 0 never hidden."""
    m = np.round(rng.standard_normal(shape), 6)
    h = rng.random(shape) < hide
    h[..., 0] = False
    return np.where(h, None, m).tolist()


def bool_mask(*shape, hide=0.4):
    h = rng.random(shape) < hide
    h[..., 0] = False
    return h.tolist()


dot_case("float attn_mask (Nq, Nk) with nulls, key_padding_mask", {
    "queries": r(2, 3, 4), "keys": r(2, 5, 4), "values": r(2, 5, 2),
    "attn_mask": float_mask(3, 5),
    "key_padding_mask": [[False] * 5, [False, False, True, True, True]],
    "trace": True})
dot_case("float attn_mask per example (B, Nq, Nk), causal, scores", {
    "queries": r(2, 4, 3), "keys": r(2, 4, 3), "values": r(2, 4, 3),
    "attn_mask": float_mask(2, 4, 4), "causal": True, "return_scores": True,
    "trace": True})
dot_case("boolean attn_mask, unbatched, valid_lens", {
    "queries": r(3, 2), "keys": r(4, 2), "values": r(4, 1),
    "attn_mask": bool_mask(3, 4), "valid_lens": 3, "trace": True},
    batched=False)
# a larger one, through the pipelined path (B·Nq·Nk >= 2^18)
dot_case("pipelined (1, 520, 520)", {
    "queries": r(1, 520, 4), "keys": r(1, 520, 4), "values": r(1, 520, 1),
    "valid_lens": [300], "trace": True})

# ------------------------------------------------------------ multihead

def proj(x, W, b=None):
    y = x @ np.asarray(W, float).T
    return y + np.asarray(b, float) if b is not None else y


def mh_case(what, body, batched=True):
    st, ans = post("/attention/multihead", body)
    ok(st == 200 and "trace" in ans, f"multihead {what}: 200 with a trace",
       st, ans)
    if st != 200:
        return
    tr = ans["trace"]
    names = ["Q", "K", "V", "Q_heads", "K_heads", "V_heads", "QK", "scaled",
             "masked", "weights", "weighted_values", "concat", "output"]
    ok(list(tr) == names, f"multihead {what}: the steps in order", list(tr))
    P = ans.get("params", body)
    q = np.asarray(body["queries"], float)
    k = np.asarray(body.get("keys", body["queries"]), float)
    v = np.asarray(body.get("values", body.get("keys", body["queries"])),
                   float)
    t = {n: arr(x) for n, x in tr.items()}
    if not batched:
        q, k, v = q[None], k[None], v[None]
        t = {n: x[None] for n, x in t.items()}
    H = body["num_heads"]
    B, Nq, Nk = q.shape[0], q.shape[1], k.shape[1]
    for n, x, W, bn in (("Q", q, P["W_q"], "b_q"), ("K", k, P["W_k"], "b_k"),
                        ("V", v, P["W_v"], "b_v")):
        ref = proj(x, W, body.get(bn))
        mag = np.abs(x) @ np.abs(np.asarray(W, float)).T + \
            (np.abs(body[bn]) if bn in body else 0)
        ok(close(t[n], ref, mag), f"multihead {what}: {n} = x·W{n[0].lower()}ᵀ"
           f"{' + b' if bn in body else ''}", worst(t[n], ref))
    h = t["Q"].shape[-1]
    dh = h // H

    def split(x):
        return x.reshape(B, x.shape[1], H, dh).transpose(0, 2, 1, 3)
    ok(same(t["Q_heads"], split(t["Q"])) and same(t["K_heads"], split(t["K"]))
       and same(t["V_heads"], split(t["V"])),
       f"multihead {what}: the heads are the projections' column blocks, "
       "exactly")
    Qh, Kh, Vh = t["Q_heads"], t["K_heads"], t["V_heads"]
    mag = np.abs(Qh) @ np.abs(Kh).transpose(0, 1, 3, 2)
    ok(close(t["QK"], Qh @ Kh.transpose(0, 1, 3, 2), mag),
       f"multihead {what}: QK = Q_t K_tᵀ per head")
    ok(close(t["scaled"], t["QK"] / math.sqrt(dh), mag / math.sqrt(dh)),
       f"multihead {what}: scaled = QK / √(h/H)")
    vis = visible(B, Nq, Nk, body.get("valid_lens"), body.get("causal", False),
                  batched)
    vh, add = with_masks(body, vis, H, batched)
    ok(same(t["masked"][vh], (t["scaled"] + add)[vh]),
       f"multihead {what}: masked = scaled (+ a float attn_mask) where "
       "visible, head by head")
    check_weights(t, vh, f"multihead {what}", heads=True)
    ok(close(t["weighted_values"], t["weights"] @ Vh,
             np.abs(t["weights"]) @ np.abs(Vh)),
       f"multihead {what}: weighted_values = weights · V_t")
    ok(same(t["concat"], t["weighted_values"].transpose(0, 2, 1, 3)
            .reshape(B, Nq, h)),
       f"multihead {what}: concat is the heads side by side, exactly")
    Wo = np.asarray(P["W_o"], float)
    ref = proj(t["concat"], Wo, body.get("b_o"))
    ok(close(t["output"], ref, np.abs(t["concat"]) @ np.abs(Wo).T +
             (np.abs(body["b_o"]) if "b_o" in body else 0)),
       f"multihead {what}: output = concat·W_oᵀ (+ b_o)", worst(t["output"],
                                                               ref))
    ok(same(arr(tr["output"]), arr(ans["output"])) and
       same(arr(tr["weights"]), arr(ans["weights"])),
       f"multihead {what}: trace.output and weights are the answer's")
    check_unchanged("/attention/multihead", body, ans, f"multihead {what}")


mh_case("given parameters and biases, valid_lens", {
    "queries": r(2, 3, 4), "keys": r(2, 5, 3), "values": r(2, 5, 2),
    "num_heads": 3, "W_q": r(6, 4), "W_k": r(6, 3), "W_v": r(6, 2),
    "W_o": r(5, 6), "b_q": r(6), "b_k": r(6), "b_v": r(6), "b_o": r(5),
    "valid_lens": [3, 5], "trace": True})
mh_case("drawn self-attention, causal, diagnostics, grads", {
    "queries": r(2, 4, 3), "num_heads": 2, "num_hiddens": 4, "seed": 7,
    "causal": True, "diagnostics": True, "grad_output": r(2, 4, 4),
    "trace": True})
mh_case("unbatched", {"queries": r(3, 2), "keys": r(4, 2), "values": r(4, 2),
                      "num_heads": 1, "W_q": r(2, 2), "W_k": r(2, 2),
                      "W_v": r(2, 2), "W_o": r(2, 2), "valid_lens": [1, 2, 4],
                      "trace": True}, batched=False)

mh_case("per-head float attn_mask (B·H, Nq, Nk), key_padding_mask", {
    "queries": r(2, 3, 4), "keys": r(2, 5, 3), "values": r(2, 5, 2),
    "num_heads": 2, "W_q": r(4, 4), "W_k": r(4, 3), "W_v": r(4, 2),
    "W_o": r(3, 4), "attn_mask": float_mask(4, 3, 5),
    "key_padding_mask": [[False, False, False, False, True],
                         [False, True, False, True, False]],
    "trace": True})
mh_case("per-head boolean attn_mask, causal self-attention", {
    "queries": r(2, 4, 4), "num_heads": 2, "num_hiddens": 4, "seed": 3,
    "attn_mask": bool_mask(4, 4, 4), "causal": True, "trace": True})
mh_case("per-example float attn_mask (B, Nq, Nk), 3 heads", {
    "queries": r(2, 3, 3), "keys": r(2, 4, 3), "values": r(2, 4, 3),
    "num_heads": 3, "W_q": r(6, 3), "W_k": r(6, 3), "W_v": r(6, 3),
    "W_o": r(2, 6), "attn_mask": float_mask(2, 3, 4), "trace": True})
mh_case("unbatched per-head float attn_mask (H, Nq, Nk)", {
    "queries": r(3, 2), "keys": r(4, 2), "values": r(4, 2), "num_heads": 2,
    "W_q": r(2, 2), "W_k": r(2, 2), "W_v": r(2, 2), "W_o": r(2, 2),
    "attn_mask": float_mask(2, 3, 4), "key_padding_mask": [False, True,
                                                            False, False],
    "trace": True}, batched=False)

# ------------------------------------------------------------- additive

def add_case(what, body, batched=True):
    st, ans = post("/attention/additive", body)
    ok(st == 200 and "trace" in ans, f"additive {what}: 200 with a trace",
       st, ans)
    if st != 200:
        return
    tr = ans["trace"]
    ok(list(tr) == ["Q", "K", "features", "scores", "masked", "weights",
                    "weighted_values"],
       f"additive {what}: the steps in order", list(tr))
    P = ans.get("params", body)
    q, k, v = (np.asarray(body[n], float) for n in ("queries", "keys",
                                                     "values"))
    t = {n: arr(x) for n, x in tr.items()}
    if not batched:
        q, k, v = q[None], k[None], v[None]
        t = {n: x[None] for n, x in t.items()}
    Wq, Wk, wv = (np.asarray(P[n], float) for n in ("W_q", "W_k", "w_v"))
    for n, x, W in (("Q", q, Wq), ("K", k, Wk)):
        ok(close(t[n], x @ W.T, np.abs(x) @ np.abs(W).T),
           f"additive {what}: {n} = x·W_{n.lower()}ᵀ")
    Q, K = t["Q"], t["K"]
    pre = Q[:, :, None, :] + K[:, None, :, :]
    mag = np.abs(Q)[:, :, None, :] + np.abs(K)[:, None, :, :] + 1
    ok(close(t["features"], np.tanh(pre), mag),
       f"additive {what}: features = tanh(Q_i + K_j)",
       worst(t["features"], np.tanh(pre)))
    ok(close(t["scores"], t["features"] @ wv, np.abs(t["features"]) @
             np.abs(wv)), f"additive {what}: scores = features · w_v")
    vis = visible(q.shape[0], q.shape[1], k.shape[1], body.get("valid_lens"),
                  body.get("causal", False), batched)
    vis, add = with_masks(body, vis, 1, batched)
    vis, add = vis[:, 0], add[:, 0]
    ok(same(t["masked"][vis], (t["scores"] + add)[vis]),
       f"additive {what}: masked = scores (+ a float attn_mask) where "
       "visible")
    check_weights(t, vis, f"additive {what}")
    ok(same(arr(tr["weights"]), arr(ans["weights"])) and
       same(arr(tr["weighted_values"]), arr(ans["output"])),
       f"additive {what}: trace.weights and weighted_values are the "
       "answer's")
    if "scores" in ans:  # the scores before a float mask is added
        sc = arr(ans["scores"]).reshape(t["masked"].shape)
        ok(same(np.isnan(sc), ~vis) and same(sc[vis] + add[vis],
                                             t["masked"][vis]),
           f"additive {what}: return_scores' scores (+ a float attn_mask) "
           "are trace.masked")
    check_unchanged("/attention/additive", body, ans, f"additive {what}")


add_case("given parameters, valid_lens, scores", {
    "queries": r(2, 3, 4), "keys": r(2, 5, 3), "values": r(2, 5, 2),
    "W_q": r(6, 4), "W_k": r(6, 3), "w_v": r(6), "valid_lens": [2, 5],
    "return_scores": True, "trace": True})
# projections beyond ±170: the forward's tanh form, not its exp form
add_case("projections beyond 170 (tanh itself), causal", {
    "queries": r(1, 3, 2), "keys": r(1, 3, 2), "values": r(1, 3, 1),
    "W_q": (np.asarray(r(4, 2)) * 400).tolist(), "W_k": r(4, 2),
    "w_v": r(4), "causal": True, "trace": True})
add_case("drawn, unbatched, grads", {
    "queries": r(2, 3), "keys": r(4, 3), "values": r(4, 2),
    "num_hiddens": 5, "seed": 11, "grad_output": r(2, 2), "trace": True},
    batched=False)

add_case("float attn_mask with nulls, key_padding_mask, scores", {
    "queries": r(2, 3, 4), "keys": r(2, 5, 3), "values": r(2, 5, 2),
    "W_q": r(6, 4), "W_k": r(6, 3), "w_v": r(6),
    "attn_mask": float_mask(2, 3, 5),
    "key_padding_mask": [[False, False, True, False, False], [False] * 5],
    "return_scores": True, "trace": True})
add_case("boolean attn_mask (Nq, Nk), unbatched", {
    "queries": r(3, 3), "keys": r(4, 3), "values": r(4, 2),
    "W_q": r(5, 3), "W_k": r(5, 3), "w_v": r(5),
    "attn_mask": bool_mask(3, 4), "trace": True}, batched=False)

# ------------------------------------------------------------------- NW

def nw_case(what, body):
    st, ans = post("/regression/nw", body)
    ok(st == 200 and "trace" in ans, f"nw {what}: 200 with a trace", st, ans)
    if st != 200:
        return None
    tr = ans["trace"]
    ok(list(tr) == ["distances", "scores", "weights", "predictions"],
       f"nw {what}: the steps in order", list(tr))
    xq, xt = (np.asarray(body[n], float) for n in ("x_query", "x_train"))
    w = ans["w"]
    d = xq[:, None] - xt[None, :]
    ok(same(arr(tr["distances"]), d), f"nw {what}: distances = x_q − x_t, "
       "exactly")
    u = d * w
    kernel = body.get("kernel", "gaussian")
    with np.errstate(over="ignore"):
        ref = {"gaussian": -(u * u) / 2,
               "constant": np.ones_like(u),
               "boxcar": (np.abs(u) < 1).astype(float),
               "epanechnikov": np.maximum(1 - u * u, 0),
               "triangular": np.maximum(1 - np.abs(u), 0)}[kernel]
    ref = np.where(ref == -np.inf, np.nan, ref)
    s = arr(tr["scores"])
    ok(same(s, ref), f"nw {what}: scores are the {kernel} kernel's, exactly "
       f"(at w = {w})", worst(s, ref))
    wt = arr(tr["weights"])
    if kernel == "gaussian":
        finite = ~np.isnan(s).all(axis=1)
        ok(close(wt[finite], softmax_rows(s)[finite], 1.0),
           f"nw {what}: weights = softmax over j of the scores")
    else:
        ok(close(wt, s / s.sum(axis=1, keepdims=True), 1.0),
           f"nw {what}: weights = scores / Σ scores")
    y = np.asarray(body["y_train"], float)
    pred = wt @ y
    ok(close(arr(tr["predictions"]), pred, np.abs(wt) @ np.abs(y)),
       f"nw {what}: predictions = weights · y_train")
    ok(same(arr(tr["weights"]), arr(ans["weights"])) and
       same(arr(tr["predictions"]), arr(ans["predictions"])),
       f"nw {what}: trace.weights and predictions are the answer's")
    check_unchanged("/regression/nw", body, ans, f"nw {what}")
    return ans


XT = np.round(np.sort(rng.uniform(0, 5, 12)), 4).tolist()
YT = np.round(rng.standard_normal(12), 4).tolist()
XQ = [0.25, 1.5, 2.75, 4.0, 6.5]
nw_case("gaussian, y_query", {"x_train": XT, "y_train": YT, "x_query": XQ,
                              "w": 1.7, "y_query": [0, 1, 0, 1, 0],
                              "trace": True})
for kern in ("constant", "boxcar", "epanechnikov", "triangular"):
    nw_case(kern, {"x_train": XT, "y_train": YT, "x_query": XQ[:4],
                   "kernel": kern, "w": 0.9, "trace": True})
a = nw_case("fit (train_loo): the final w", {
    "x_train": XT, "y_train": YT, "x_query": XQ, "w": 1.0,
    "fit": {"epochs": 4, "lr": 0.3}, "trace": True})
if a:
    ok(a["w"] != 1.0 and a["w"] != a["history"][-1]["w"], "nw fit: the trace is at the w the fit ends with, "
       f"{a['w']} (not the starting 1.0)")
nw_case("y_train (n, 2), bandwidth rule", {
    "x_train": XT, "y_train": np.round(rng.standard_normal((12, 2)), 3)
    .tolist(), "x_query": XQ, "w": "silverman", "trace": True})
a = nw_case("scores beyond −DBL_MAX print null", {
    "x_train": [0, 1e200], "y_train": [1, 2], "x_query": [1], "w": 1,
    "trace": True})
if a:
    ok(a["trace"]["scores"] == [[-0.5, None]] and
       a["weights"] == [[1, 0]],
       "nw: a −inf score is null, its weight 0, the rest finite",
       a["trace"])

# --------------------------------------------- formats, errors, grading

SMALL = {"queries": [[1, 2], [0, 1]], "keys": [[1, 0], [0, 1], [1, 1]],
         "values": [[1], [2], [3]], "valid_lens": [2, 3], "trace": True}
st, a = post("/attention/dot", dict(SMALL, tensor_format="flat"))
ok(st == 200 and a["trace"]["masked"] == {
    "shape": [2, 3], "data": [a["trace"]["scaled"]["data"][0],
                              a["trace"]["scaled"]["data"][1], None] +
    a["trace"]["scaled"]["data"][3:]} and a["trace"]["QK"] == {
        "shape": [2, 3], "data": [1, 2, 3, 0, 1, 1]},
   'tensor_format "flat": trace tensors are {"shape", "data"}, null kept',
   a)
st, a = post("/attention/dot", dict(SMALL, precision=3))
ok(st == 200 and a["trace"]["scaled"] == [[0.707, 1.41, 2.12],
                                          [0, 0.707, 0.707]]
   and a["trace"]["weights"] == a["weights"],
   "precision 3 rounds the trace as the other tensors", a.get("trace"))

for bad in (1, "yes", [True]):
    st, a = post("/attention/dot", dict(SMALL, trace=bad))
    ok(st == 422 and a.get("code") == "wrong_type" and
       a.get("pointer") == "/trace", f"trace {json.dumps(bad)}: 422 "
       "wrong_type at /trace", st, a)
for path, body in (("/attention/multihead", {"queries": [[1.0]],
                                             "num_heads": 1,
                                             "num_hiddens": 1}),
                   ("/attention/additive", {"queries": [[1.0]],
                                            "keys": [[1.0]],
                                            "values": [[1.0]],
                                            "num_hiddens": 1}),
                   ("/regression/nw", {"x_train": [1], "y_train": [1],
                                       "x_query": [1]})):
    st, a = post(path, dict(body, trace="no"))
    ok(st == 422 and a.get("pointer") == "/trace",
       f"{path}: trace \"no\" is 422 at /trace", st, a)
    st, a = post(path, dict(body, trace=None))
    ok(st == 200 and "trace" not in a, f"{path}: trace null is absent", st)
    st, a = post(path, dict(body, trace=False))
    ok(st == 200 and "trace" not in a, f"{path}: trace false: no trace")

# /grade: attnd's own traced answer passes, field by field
for path, body in (("/attention/dot", SMALL),
                   ("/attention/multihead", {
                       "queries": r(1, 2, 2), "num_heads": 2,
                       "num_hiddens": 2, "seed": 1, "valid_lens": [1],
                       "trace": True}),
                   ("/attention/additive", {
                       "queries": r(2, 2), "keys": r(3, 2), "values": r(3, 1),
                       "num_hiddens": 2, "seed": 2, "valid_lens": 2,
                       "trace": True}),
                   ("/regression/nw", {"x_train": XT, "y_train": YT,
                                       "x_query": XQ, "trace": True})):
    st, own = post(path, body)
    st, g = post("/grade", {"endpoint": path, "request": body,
                            "answer": own})
    traced = [f for f in g.get("fields", {}) if f.startswith("trace.")]
    ok(st == 200 and g.get("pass") is True and len(traced) == len(own["trace"]),
       f"/grade {path}: attnd's own traced answer passes ({len(traced)} "
       "trace fields graded)", st, g)
st, own = post("/attention/dot", SMALL)
bad = json.loads(json.dumps(own))
bad["trace"]["masked"][0][2] = 0
st, g = post("/grade", {"endpoint": "/attention/dot", "request": SMALL,
                        "answer": bad})
ok(st == 200 and g["pass"] is False and
   g["fields"]["trace.masked"]["pass"] is False and
   g["fields"]["trace.QK"]["pass"] is True,
   "/grade: a number where the masked step has null fails trace.masked "
   "alone", g.get("fields", {}).get("trace.masked"))
plain = {k: v for k, v in SMALL.items() if k != "trace"}
st, g = post("/grade", {"endpoint": "/attention/dot", "request": plain,
                        "answer": {"trace": own["trace"]}})
ok(st == 422 and "trace" in g.get("detail", ""),
   "/grade: a trace answered for a request without one is 422, naming "
   "\"trace\": true", st, g)

# -------------------------------------------------------------- limits

# features (1, 64, 64, 4100) = 16.8 M > the default 16 Mi elements
big = {"queries": [[[0.5]] * 64], "keys": [[[0.25]] * 64],
       "values": [[[1.0]] * 64], "num_hiddens": 4100, "seed": 1}
st, a = post("/attention/additive", big)
ok(st == 200, "additive (1, 64, 64) with h = 4100 is answered", st)
st, a = post("/attention/additive", dict(big, trace=True))
ok(st == 413 and a.get("code") == "payload_too_large" and
   "trace.features" in a.get("detail", ""),
   "its trace: features (1, 64, 64, 4100) over --max-elements is 413, "
   "naming trace.features", st, a)

ATTND = os.environ.get("ATTND")
ok(ATTND is not None, "ATTND names the binary for the small-limit daemons")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "http"))
from daemon import start  # noqa: E402


def small_daemon(*args):
    proc, port, log = start(ATTND, *args)
    return proc, f"http://127.0.0.1:{port}"


if ATTND:
    # dot (1, 64, 64), d = 64, dv = 1: forward 64·64·65 = 266240 operations;
    # the trace's Q Kᵀ and masked step add 64·64·65 more
    dot64 = {"queries": r(1, 64, 64), "keys": r(1, 64, 64),
             "values": r(1, 64, 1)}
    proc, base = small_daemon("--max-work", "400000")
    try:
        st, a = post("/attention/dot", dot64, base)
        ok(st == 200, "--max-work 400000: dot (1, 64, 64), d = 64 is answered",
           st, a)
        st, a = post("/attention/dot", dict(dot64, trace=True), base)
        ok(st == 413 and a.get("code") == "payload_too_large" and
           "work" in a.get("detail", ""),
           "  with trace (532480 operations) it is 413 over --max-work",
           st, a)
    finally:
        proc.terminate()
        proc.wait()
    # dot (1, 150, 150), d = dv = 1: without trace under 1.5 MB of working
    # set and answer; the trace's three (150, 150) tensors and the two it
    # prints again take it past a 2 MB budget
    dot150 = {"queries": r(1, 150, 1), "keys": r(1, 150, 1),
              "values": r(1, 150, 1)}
    proc, base = small_daemon("--memory-budget", "2M")
    try:
        st, a = post("/attention/dot", dot150, base)
        ok(st == 200, "--memory-budget 2M: dot (1, 150, 150) is answered",
           st, a)
        st, a = post("/attention/dot", dict(dot150, trace=True), base)
        ok(st == 413 and a.get("code") == "payload_too_large",
           "  with trace it is 413: the trace is charged to the budget",
           st, a)
        st, a = post("/attention/dot", dot150, base)
        ok(st == 200, "  and the daemon still answers without it", st)
    finally:
        proc.terminate()
        proc.wait()

print(f"1..{N}")
sys.exit(1 if FAILED else 0)
