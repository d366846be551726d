#!/usr/bin/env python3
"""variant_class.py — a class of 1,000 students, each answering their own
variant of the medium dot (docs/variants.md), for variant_class_bench.c.

    usage: variant_class.py OUT_DIR ATTND

Writes, deterministically (random.Random(33), numpy seeded 33):
  OUT_DIR/dot/request.json  the problem: queries, keys, values each drawn
                            normal [2, 64, 32], round 2; valid_lens [40, 64]
  OUT_DIR/roster.csv        s0001 .. s1000
  OUT_DIR/secret            a fixed 32-character course secret
  OUT_DIR/handouts.ndjson   `attnd variants` of that problem
  OUT_DIR/shared_request.json  s0001's drawn request (the shared-reference
                            batch every submission carries)
  OUT_DIR/class.ndjson      the submissions, shuffled: each
                            {"id","problem":"dot","version":"1","endpoint",
                            "request": the MARKED template, "answer"}
  OUT_DIR/truth.json        {id: {"kind", "style"?, "source"?, "code"?}}

The mix: 10% copies of another student's right answer (the source one of
the "right" students), 3% copies perturbed x*(1 + u*1e-6), u in [-1, 1],
20% mistakes of the catalogue on the student's own variant (no 1/sqrt(d):
dot.no_scale; the mask forgotten; the keys used as values), 5% honest
slips (one output entry + 0.1), the rest right, written in the six
styles of tests/grading/grading_client.py (full precision, float32,
np.round(x, 4), np.round(x, 6), "%.6g", numpy's print). Each reference is
numpy's, which agrees with attnd to ~1e-15.
"""
import json
import os
import random
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "grading"))
from grading_client import STYLES, written_as as styled  # noqa: E402

N = 1000
SECRET = "vc-bench-secret-0123456789abcdef"  # 32 characters
SHAPE = [2, 64, 32]
VALID_LENS = [40, 64]
MISTAKES = (("no_scale", "dot.no_scale"), ("no_mask", None),
            ("keys_as_values", None))


def attention(q, k, v, valid_lens, scale=True, mask=True, values=None):
    d = q.shape[-1]
    scores = q @ np.swapaxes(k, -1, -2)
    if scale:
        scores = scores / np.sqrt(d)
    if mask:
        for b, n in enumerate(valid_lens):
            scores[b, :, n:] = -1e6
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ (v if values is None else values), w


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: variant_class.py OUT_DIR ATTND")
    out, attnd = sys.argv[1], sys.argv[2]
    rng = random.Random(33)
    nrng = np.random.RandomState(33)
    os.makedirs(os.path.join(out, "dot"), exist_ok=True)
    mark = {"draw": {"shape": SHAPE, "distribution": "normal", "round": 2}}
    template = {"queries": mark, "keys": mark, "values": mark,
                "valid_lens": VALID_LENS}
    with open(os.path.join(out, "dot", "request.json"), "w") as f:
        json.dump(template, f)
    ids = ["s%04d" % (i + 1) for i in range(N)]
    with open(os.path.join(out, "roster.csv"), "w") as f:
        f.write("".join(i + "\n" for i in ids))
    with open(os.path.join(out, "secret"), "w") as f:
        f.write(SECRET)
    handouts = subprocess.run(
        [attnd, "variants", "--question", os.path.join(out, "dot"),
         "--roster", os.path.join(out, "roster.csv"),
         "--secret-file", os.path.join(out, "secret")],
        check=True, capture_output=True, text=True).stdout
    with open(os.path.join(out, "handouts.ndjson"), "w") as f:
        f.write(handouts)
    requests = {}
    for line in handouts.splitlines():
        h = json.loads(line)
        requests[h["student"]] = h["request"]
    assert sorted(requests) == ids, "attnd variants: not one per student"
    with open(os.path.join(out, "shared_request.json"), "w") as f:
        json.dump(requests["s0001"], f, separators=(",", ":"))

    # the kinds, shuffled
    n_copy, n_pert, n_mis, n_slip = N // 10, N * 3 // 100, N // 5, N // 20
    kinds = (["copy"] * n_copy + ["perturbed"] * n_pert +
             ["mistake"] * n_mis + ["slip"] * n_slip)
    kinds += ["right"] * (N - len(kinds))
    rng.shuffle(kinds)
    kind_of = dict(zip(ids, kinds))
    right_ids = [i for i in ids if kind_of[i] == "right"]

    truth, answers = {}, {}
    refs = {}
    for sid in ids:
        r = requests[sid]
        q, k, v = (np.array(r[m], dtype=float)
                   for m in ("queries", "keys", "values"))
        refs[sid] = (q, k, v)
    # right answers first (copies need them)
    mis_i = 0
    for sid in ids:
        kind = kind_of[sid]
        q, k, v = refs[sid]
        t = {"kind": kind}
        if kind == "right":
            style = rng.choice(STYLES)
            o, w = attention(q, k, v, VALID_LENS)
            answers[sid] = (styled(o, style), styled(w, style))
            t["style"] = style
        elif kind == "mistake":
            name, code = MISTAKES[mis_i % len(MISTAKES)]
            mis_i += 1
            if name == "no_scale":
                o, w = attention(q, k, v, VALID_LENS, scale=False)
            elif name == "no_mask":
                o, w = attention(q, k, v, VALID_LENS, mask=False)
            else:
                o, w = attention(q, k, v, VALID_LENS, values=k)
            answers[sid] = (o, w)
            t["mistake"] = name
            if code:
                t["code"] = code
        elif kind == "slip":
            o, w = attention(q, k, v, VALID_LENS)
            o = o.copy()
            idx = tuple(int(nrng.randint(0, s)) for s in o.shape)
            o[idx] += 0.1
            answers[sid] = (o, w)
        truth[sid] = t
    for sid in ids:
        kind = kind_of[sid]
        if kind not in ("copy", "perturbed"):
            continue
        src = rng.choice(right_ids)
        o, w = answers[src]
        if kind == "perturbed":
            o = o * (1 + nrng.uniform(-1, 1, o.shape) * 1e-6)
            w = w * (1 + nrng.uniform(-1, 1, w.shape) * 1e-6)
        answers[sid] = (o, w)
        truth[sid]["source"] = src

    order = list(ids)
    rng.shuffle(order)
    tmpl = json.dumps(template, separators=(",", ":"))
    with open(os.path.join(out, "class.ndjson"), "w") as f:
        for sid in order:
            o, w = answers[sid]
            f.write('{"id":"%s","problem":"dot","version":"1",'
                    '"endpoint":"/attention/dot","request":%s,'
                    '"answer":{"output":%s,"weights":%s}}\n'
                    % (sid, tmpl, json.dumps(o.tolist(), separators=(",", ":")),
                       json.dumps(w.tolist(), separators=(",", ":"))))
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=0, sort_keys=True)
    counts = {}
    for t in truth.values():
        key = t["kind"] + ("/" + t["mistake"] if "mistake" in t else "")
        counts[key] = counts.get(key, 0) + 1
    print("variant class: %d submissions in %s (%s)" % (
        N, out, ", ".join("%s %d" % kv for kv in sorted(counts.items()))))


if __name__ == "__main__":
    main()
