"""app.py — the benchmark's "what a user would otherwise write": attnd's
three computing endpoints as a small Flask + numpy service, written the
plain way (request.get_json, np.asarray, broadcasting as in d2l, jsonify).

    gunicorn -w 2 -b 127.0.0.1:8000 --chdir tests/bench/flask_ref app:app

Same wire format as attnd for what the benchmark sends: nested-array
tensors (batched or unbatched), valid_lens of shape (B) or (B, Nq),
explicit additive parameters W_q (h, dq), W_k (h, dk), w_v (h), Gaussian
Nadaraya-Watson with a numeric w. Masked keys get weight 0; a query that
sees no key gets all-zero weights (attnd's default).
"""
import math

import numpy as np
from flask import Flask, jsonify, request

app = Flask(__name__)


def masked_softmax(scores, valid_lens):
    """Softmax over the last axis of (B, Nq, Nk) scores; key j is visible
    to a query when j < its valid length."""
    if valid_lens is not None:
        lens = np.asarray(valid_lens, dtype=np.int64)
        if lens.ndim == 1:
            lens = lens[:, None]
        keys = np.arange(scores.shape[-1])
        visible = keys[None, None, :] < lens[:, :, None]
        scores = np.where(visible, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(scores - top)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def batched(body):
    """(q, k, v, unbatched): rank-2 tensors get a batch axis of 1."""
    q = np.asarray(body["queries"], dtype=np.float64)
    k = np.asarray(body["keys"], dtype=np.float64)
    v = np.asarray(body["values"], dtype=np.float64)
    if q.ndim == 2:
        return q[None], k[None], v[None], True
    return q, k, v, False


def answer(out, weights, unbatched, extra):
    if unbatched:
        out, weights = out[0], weights[0]
    body = {"output": out.tolist()}
    if weights is not None:
        body["weights"] = weights.tolist()
    body.update(extra)
    return jsonify(body)


@app.post("/attention/dot")
def dot():
    body = request.get_json()
    q, k, v, unbatched = batched(body)
    scale = body.get("scale") or 1.0 / math.sqrt(q.shape[-1])
    scores = q @ k.transpose(0, 2, 1) * scale
    weights = masked_softmax(scores, body.get("valid_lens"))
    out = weights @ v
    keep = body.get("return_weights", True)
    return answer(out, weights if keep else None, unbatched,
                  {"scale": scale})


@app.post("/attention/additive")
def additive():
    body = request.get_json()
    q, k, v, unbatched = batched(body)
    W_q = np.asarray(body["W_q"], dtype=np.float64)
    W_k = np.asarray(body["W_k"], dtype=np.float64)
    w_v = np.asarray(body["w_v"], dtype=np.float64)
    # d2l: features (B, Nq, Nk, h) = tanh(q W_qᵀ broadcast + k W_kᵀ)
    features = np.tanh((q @ W_q.T)[:, :, None, :] + (k @ W_k.T)[:, None, :, :])
    scores = features @ w_v
    weights = masked_softmax(scores, body.get("valid_lens"))
    out = weights @ v
    keep = body.get("return_weights", True)
    return answer(out, weights if keep else None, unbatched, {})


@app.post("/regression/nw")
def nw():
    body = request.get_json()
    x = np.asarray(body["x_train"], dtype=np.float64)
    y = np.asarray(body["y_train"], dtype=np.float64)
    xq = np.asarray(body["x_query"], dtype=np.float64)
    w = float(body.get("w", 1.0))
    u = (xq[:, None] - x[None, :]) * w
    weights = masked_softmax((-u * u / 2)[None], None)[0]
    pred = weights @ y
    result = {"predictions": pred.tolist(), "weights": weights.tolist(),
              "w": w}
    if "y_query" in body:
        yq = np.asarray(body["y_query"], dtype=np.float64)
        result["loss"] = float(0.5 * np.sum((pred - yq) ** 2))
    return jsonify(result)
