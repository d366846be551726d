#!/usr/bin/env python3
"""gen_payloads.py — the benchmark's request bodies, deterministic.

Writes one JSON body per payload into OUT_DIR (default build/bench/payloads)
plus index.json describing each one (route, sizes, work). Numbers are drawn
from random.Random(seed) and printed the way Python clients print them
(repr: shortest round trip), with compact separators.

    usage: python3 tests/bench/gen_payloads.py [OUT_DIR]

Payloads (shape names as in the wire contract):
  small   nw      the seed's worked example: x_train [1,2,4], y_train [0,3,1],
                  x_query [2.5], w 0.5
          dot     B=1 Nq=1 Nk=3 d=2
  medium  dot     B=2 Nq=Nk=64 d=dv=32, valid_lens (B)
          add     B=2 Nq=Nk=64 dq=dk=dv=h=32, explicit W_q, W_k, w_v,
                  valid_lens (B)
          nw      Gaussian kernel, n=m=50
  large   dot     B=4 Nq=Nk=512 d=dv=64 (7.7 MB; 25.6 MB answer)
          add     B=1 Nq=Nk=256 dq=dk=dv=h=64
  sweep   dot     B x N x N x 64 for the scaling fit
  binary  the large dot's tensors on /v2/models/attention_dot/infer: as
          JSON (large_dot_v2; large_dot_v2_fp32 with the outputs as FP32
          numbers), and as a JSON header followed by their
          little-endian FP64 bytes with every output as bytes, FP64
          (large_dot_bin64) or FP32 (large_dot_bin32); the same doubles
          as large_dot, so the answers compare bit for bit
"""
import json
import math
import os
import random
import struct
import sys

SEED = 20240611


def gauss_tensor(rng, shape, sigma=1.0):
    if len(shape) == 1:
        return [rng.gauss(0.0, sigma) for _ in range(shape[0])]
    return [gauss_tensor(rng, shape[1:], sigma) for _ in range(shape[0])]


def dumps(body):
    return json.dumps(body, separators=(",", ":"))


def dot_body(rng, B, Nq, Nk, d, dv, valid_lens=False, **extra):
    body = {
        "queries": gauss_tensor(rng, [B, Nq, d]),
        "keys": gauss_tensor(rng, [B, Nk, d]),
        "values": gauss_tensor(rng, [B, Nk, dv]),
    }
    if valid_lens:
        body["valid_lens"] = [rng.randint(1, Nk) for _ in range(B)]
    body.update(extra)
    return body


def additive_body(rng, B, Nq, Nk, d, dv, h, valid_lens=False):
    body = dot_body(rng, B, Nq, Nk, d, dv, valid_lens)
    a = math.sqrt(6.0 / (d + h))
    body["W_q"] = [[rng.uniform(-a, a) for _ in range(d)] for _ in range(h)]
    body["W_k"] = [[rng.uniform(-a, a) for _ in range(d)] for _ in range(h)]
    a = math.sqrt(6.0 / (1 + h))
    body["w_v"] = [rng.uniform(-a, a) for _ in range(h)]
    return body


def nw_body(rng, n, m):
    x = sorted(rng.uniform(0, 5) for _ in range(n))
    y = [2 * math.sin(t) + t ** 0.8 + rng.gauss(0, 0.5) for t in x]
    xq = [5.0 * i / m for i in range(m)]
    return {"x_train": x, "y_train": y, "x_query": xq, "w": 1.0,
            "kernel": "gaussian"}


V2_INFER = "/v2/models/attention_dot/infer"
V2_INPUTS = ("queries", "keys", "values")


def flat(a):
    return [x for row in a for x in flat(row)] if isinstance(a, list) \
        else [a]


def shape(a):
    return [len(a)] + shape(a[0]) if isinstance(a, list) else []


def binary_payloads(out, body, **info):
    """The tensors of a dot body on the v2 front, as JSON data and as
    binary tensor data (Triton's extension: Inference-Header-Content-Length
    bytes of JSON header, then each input's bytes in "inputs" order).
    Returns their index entries; a binary entry has "file" (its body),
    "header_bytes" (the header's length) and "output_datatype"."""
    entries = []
    tensors = [(k, shape(body[k]), flat(body[k])) for k in V2_INPUTS]
    inputs = [{"name": k, "shape": s, "datatype": "FP64", "data": v}
              for k, s, v in tensors]
    for name, extra in (("large_dot_v2", {}),
                        ("large_dot_v2_fp32",
                         {"parameters": {"output_datatype": "FP32"}})):
        text = dumps(dict({"inputs": inputs}, **extra))
        with open(os.path.join(out, name + ".json"), "w") as f:
            f.write(text)
        entries.append(dict(info, name=name, route=V2_INFER, bytes=len(text)))
    blobs = [struct.pack("<%dd" % len(v), *v) for _, _, v in tensors]
    for name, dt in (("large_dot_bin64", "FP64"), ("large_dot_bin32", "FP32")):
        params = {"binary_data_output": True}
        if dt != "FP64":  # FP64 is the default
            params["output_datatype"] = dt
        header = dumps({
            "inputs": [{"name": k, "shape": s, "datatype": "FP64",
                        "parameters": {"binary_data_size": len(b)}}
                       for (k, s, _), b in zip(tensors, blobs)],
            "parameters": params}).encode()
        data = header + b"".join(blobs)
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(data)
        entries.append(dict(info, name=name, route=V2_INFER, bytes=len(data),
                            file=name + ".bin", header_bytes=len(header),
                            output_datatype=dt))
    return entries


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/bench/payloads"
    os.makedirs(out, exist_ok=True)
    rng = random.Random(SEED)
    payloads = []

    def emit(name, route, body, **info):
        text = dumps(body)
        with open(os.path.join(out, name + ".json"), "w") as f:
            f.write(text)
        info.update(name=name, route=route, bytes=len(text))
        payloads.append(info)

    emit("small_nw", "/regression/nw",
         {"x_train": [1, 2, 4], "y_train": [0, 3, 1], "x_query": [2.5],
          "w": 0.5}, n=3, m=1)
    emit("small_dot", "/attention/dot", dot_body(rng, 1, 1, 3, 2, 2),
         B=1, Nq=1, Nk=3, d=2, dv=2)
    emit("medium_dot", "/attention/dot",
         dot_body(rng, 2, 64, 64, 32, 32, valid_lens=True),
         B=2, Nq=64, Nk=64, d=32, dv=32)
    emit("medium_add", "/attention/additive",
         additive_body(rng, 2, 64, 64, 32, 32, 32, valid_lens=True),
         B=2, Nq=64, Nk=64, d=32, dv=32, h=32)
    emit("medium_nw", "/regression/nw", nw_body(rng, 50, 50), n=50, m=50)
    large_dot = dot_body(rng, 4, 512, 512, 64, 64)
    emit("large_dot", "/attention/dot", large_dot,
         B=4, Nq=512, Nk=512, d=64, dv=64)
    emit("large_dot_nw", "/attention/dot",
         dot_body(rng, 4, 512, 512, 64, 64, return_weights=False),
         B=4, Nq=512, Nk=512, d=64, dv=64)
    emit("large_add", "/attention/additive",
         additive_body(rng, 1, 256, 256, 64, 64, 64),
         B=1, Nq=256, Nk=256, d=64, dv=64, h=64)
    for B, N in [(1, 64), (1, 128), (2, 128), (1, 256), (2, 256), (4, 256),
                 (1, 512), (2, 512), (4, 512), (1, 1024)]:
        emit("sweep_dot_%d_%d" % (B, N), "/attention/dot",
             dot_body(rng, B, N, N, 64, 64), B=B, Nq=N, Nk=N, d=64, dv=64)

    payloads.extend(binary_payloads(out, large_dot,
                                    B=4, Nq=512, Nk=512, d=64, dv=64))

    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump(payloads, f, indent=1)
    for p in payloads:
        print("%-18s %-20s %10d bytes" % (p["name"], p["route"], p["bytes"]))


if __name__ == "__main__":
    main()
