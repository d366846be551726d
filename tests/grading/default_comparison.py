#!/usr/bin/python3
"""default_comparison.py — the evidence for /grade's default comparison
(docs/grading.md "Comparisons"): 300 seeded exercises of
/attention/dot, outputs from 0.01 to 1,000 in size, each answered right
in the six ways students write numbers (full precision, float32,
np.round(x, 4), np.round(x, 6), "%.6g", numpy's default print) and
answered with the scale left out (dot.no_scale) in the same six ways.
Every candidate rule grades all of them, by the server, in one
/grade/batch per rule.

The default, relabs_or_rounded, must pass every right answer and fail
every wrong one; each simpler rule fails some right answers, which is why
it is not the default. With --table, the counts per rule and style.

    usage: /usr/bin/python3 default_comparison.py BASE_URL [--table]
Prints TAP lines; exits 1 when a test fails.
"""
import json
import re
import sys
import urllib.request

import numpy as np

from grading_client import BASE, finish, tap, tolist

RULES = {
    "relabs_or_rounded (the default)": None,
    "relabs 1e-5, 1e-8 (numpy.isclose)": {"mode": "relabs"},
    "relabs 1e-3, 1e-6": {"mode": "relabs", "rtol": 1e-3, "atol": 1e-6},
    "decdig 4": {"mode": "decdig", "digits": 4},
    "sigfig 4": {"mode": "sigfig", "digits": 4},
    "sigfig 6": {"mode": "sigfig", "digits": 6},
}


def numpy_print(x):
    text = np.array2string(np.asarray(x), threshold=1 << 30)
    numbers = re.findall(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?", text)
    return np.array([float(n) for n in numbers]).reshape(np.shape(x))


STYLES = {
    "full": lambda x: x,
    "float32": lambda x: x.astype(np.float32).astype(np.float64),
    "round4": lambda x: np.round(x, 4),
    "round6": lambda x: np.round(x, 6),
    "%.6g": lambda x: np.vectorize(lambda e: float("%.6g" % e))(x),
    "print": numpy_print,
}


def attend(q, k, v, valid_lens, scale):
    s = q @ k.transpose(0, 2, 1) * scale
    for b, n in enumerate(valid_lens):
        s[b, :, n:] = -np.inf
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return w @ v, w


rng = np.random.default_rng(300)
lines = []  # (kind, style, submission)
for n in range(300):
    size = 10.0 ** rng.uniform(-2, 3)
    q, k = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))
    v = rng.normal(size=(2, 5, 4)) * size
    valid_lens = [int(rng.integers(1, 6)), 5]
    request = tolist({"queries": q, "keys": k, "values": v,
                      "valid_lens": valid_lens})
    for kind, scale in (("right", 0.5), ("dot.no_scale", 1.0)):
        out, w = attend(q, k, v, valid_lens, scale)
        for style, write in STYLES.items():
            lines.append((kind, style, {
                "id": len(lines), "endpoint": "/attention/dot",
                "request": request,
                "answer": tolist({"output": write(out),
                                  "weights": write(w)})}))


def grade_all(compare):
    body = "".join(json.dumps(dict(s, compare=compare) if compare else s)
                   + "\n" for _, _, s in lines).encode()
    req = urllib.request.Request(
        BASE + "/grade/batch", data=body,
        headers={"Content-Type": "application/x-ndjson"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return [json.loads(x) for x in r.read().splitlines()]


table = {}
for rule, compare in RULES.items():
    grades = grade_all(compare)
    counts = {}
    for (kind, style, _), g in zip(lines, grades):
        c = counts.setdefault((kind, style), [0, 0, 0])
        c[0] += g.get("pass") is True
        c[1] += 1
        c[2] += (g.get("misconception") or {}).get("code") == kind
    table[rule] = counts
    right = sum(c[0] for (kind, _), c in counts.items() if kind == "right")
    wrong = sum(c[0] for (kind, _), c in counts.items() if kind != "right")
    if compare is None:
        tap(right == 1800, "the default passes all 1,800 right answers "
            "(300 exercises, six styles): %d" % right)
        tap(wrong == 0, "and none of the 1,800 answers without the scale: "
            "%d pass" % wrong)
        named = sum(c[2] for (kind, _), c in counts.items()
                    if kind != "right")
        tap(named == 1800, "and names dot.no_scale on every one of them: "
            "%d" % named)
    else:
        tap(right < 1800 and wrong == 0,
            "%s fails some right answers (%d of 1,800 pass), so it is not "
            "the default" % (rule, right))

if "--table" in sys.argv:
    print("# right answers passed, of 300 per style; wrong answers passed")
    print("# %-34s" % "rule" + "".join("%9s" % s for s in STYLES) +
          "   wrong")
    for rule, counts in table.items():
        print("# %-34s" % rule +
              "".join("%9d" % counts[("right", s)][0] for s in STYLES) +
              "%8d" % sum(counts[("dot.no_scale", s)][0] for s in STYLES))
finish()
