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
import sys

import numpy as np

from grading_client import STYLES, finish, http, tap, tolist, written_as

RULES = {
    "relabs_or_rounded (the default)": None,
    "relabs 1e-5, 1e-8 (numpy.isclose)": {"mode": "relabs"},
    "relabs 1e-3, 1e-6": {"mode": "relabs", "rtol": 1e-3, "atol": 1e-6},
    "decdig 4": {"mode": "decdig", "digits": 4},
    "sigfig 4": {"mode": "sigfig", "digits": 4},
    "sigfig 6": {"mode": "sigfig", "digits": 6},
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
        for style in STYLES:
            lines.append((kind, style, {
                "id": len(lines), "endpoint": "/attention/dot",
                "request": request,
                "answer": tolist({"output": written_as(out, style),
                                  "weights": written_as(w, style)})}))


def grade_all(compare):
    body = "".join(json.dumps(dict(s, compare=compare) if compare else s)
                   + "\n" for _, _, s in lines).encode()
    status, answer = http("/grade/batch", body, "application/x-ndjson")
    assert status == 200, answer[:300]
    return [json.loads(x) for x in answer.splitlines()]


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
    print("# %-34s" % "rule" + "".join("%12s" % s for s in STYLES) +
          "   wrong")
    for rule, counts in table.items():
        print("# %-34s" % rule +
              "".join("%12d" % counts[("right", s)][0] for s in STYLES) +
              "%8d" % sum(counts[("dot.no_scale", s)][0] for s in STYLES))
finish()
