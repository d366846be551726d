#!/usr/bin/env python3
"""numpy_attn.py — numpy's in-process time for the same attention a payload
asks attnd for (the tensors already in memory: no JSON, no HTTP), the
anchor for attnd's compute phase and return_weights:false latency.

    usage: OPENBLAS_NUM_THREADS=1 python3 tests/bench/numpy_attn.py \
               PAYLOAD.json [passes, default 20]

Dot payloads: scores = Q Kᵀ / sqrt(d), softmax, weights V.
Additive payloads (W_q present): d2l's broadcast tanh features.
Prints one line "numpy <kind> median_ms=.. best_ms=..", plus the time
json.loads and json.dumps take for the same request and answer.
"""
import json
import math
import sys
import time

import numpy as np


def softmax(scores):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main():
    path = sys.argv[1]
    passes = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    with open(path) as f:
        text = f.read()
    t0 = time.perf_counter()
    body = json.loads(text)
    loads_ms = (time.perf_counter() - t0) * 1e3
    q = np.asarray(body["queries"], dtype=np.float64)
    k = np.asarray(body["keys"], dtype=np.float64)
    v = np.asarray(body["values"], dtype=np.float64)
    additive = "W_q" in body
    if additive:
        W_q = np.asarray(body["W_q"], dtype=np.float64)
        W_k = np.asarray(body["W_k"], dtype=np.float64)
        w_v = np.asarray(body["w_v"], dtype=np.float64)

    def run():
        if additive:
            feats = np.tanh((q @ W_q.T)[:, :, None, :] +
                            (k @ W_k.T)[:, None, :, :])
            weights = softmax(feats @ w_v)
        else:
            weights = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1]))
        return weights @ v, weights

    times = []
    for p in range(passes + 2):
        t0 = time.perf_counter()
        out, weights = run()
        if p >= 2:
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    t0 = time.perf_counter()
    json.dumps({"output": out.tolist(), "weights": weights.tolist()})
    dumps_ms = (time.perf_counter() - t0) * 1e3
    print("numpy %s median_ms=%.3f best_ms=%.3f loads_ms=%.1f dumps_ms=%.1f"
          % ("additive" if additive else "dot", times[len(times) // 2],
             times[0], loads_ms, dumps_ms))


if __name__ == "__main__":
    main()
