#!/usr/bin/python3
"""mistakes_extreme.py — a property of the named mistakes under extreme
inputs: whenever /grade names a misconception, the named mistake's own
answer (numpy, from the formulas of docs/misconceptions.md, as
catalogue_np.py computes it) is finite at every entry the student gave a
number for, matches the student's answer under the default comparison
of grading v1.2 (relabs rtol 1e-5 atol 1e-8, or rounded), and is strictly
closer to it (max abs error) than the route's own answer.

Seeded random requests to /attention/dot and /softmax/masked: scores
near ±709 after scaling, values ±1e308 and ±1e300, scores and values
near underflow, subnormals (5e-324), rows of equal scores, valid_lens
that mask a whole row, causal masks. Answers sent for each: every
mistake's own answer (non-finite entries as null), the same with the
reference where the mistake is not finite, and wrong answers (99
everywhere, noise). A request the route refuses (4xx) is skipped and
counted.

    usage: /usr/bin/python3 mistakes_extreme.py BASE_URL
Prints TAP lines; exits 1 when a check fails.
"""
import json
import math
import sys
import time
import urllib.error
import urllib.request

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the tree
import catalogue_np as cat  # noqa: E402

BASE = (sys.argv[1] if len(sys.argv) > 1 else
        "http://127.0.0.1:8080").rstrip("/")
N_DOT, N_SOFTMAX = 400, 200
_counts = {"run": 0, "failed": 0}


def tap(ok, name, detail=""):
    _counts["run"] += 1
    if not ok:
        _counts["failed"] += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", _counts["run"], name))
    if not ok and detail:
        for line in str(detail).splitlines()[:24]:
            print("#   " + line)


def http(path, body, ctype="application/json"):
    req = urllib.request.Request(BASE + path, data=body,
                                 headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def jnum(x):
    """float array as JSON lists, non-finite entries as null."""
    x = np.asarray(x, float)
    if x.ndim:
        return [jnum(v) for v in x]
    return float(x) if math.isfinite(x) else None


def short(obj, n=600):
    t = json.dumps(obj)
    return t if len(t) <= n else t[:n] + "..."


# ------------------------------------------------------------ the requests

rng = np.random.default_rng(709)
EXTREMES = ["scores_near_709", "scores_near_minus_709", "values_1e308",
            "values_1e300", "underflow", "subnormal", "equal_rows",
            "huge_scores", "far_below_fill", "plain"]


def draw_mask(B, Nq, Nk):
    """valid_lens (B) or (B, Nq), often with a 0 (a row fully masked),
    causal, or nothing."""
    u = rng.uniform()
    r = {}
    if u < 0.35:
        r["valid_lens"] = rng.integers(0, Nk + 1, size=B).tolist()
    elif u < 0.6:
        r["valid_lens"] = rng.integers(0, Nk + 1, size=(B, Nq)).tolist()
    elif u < 0.8:
        r["causal"] = [True, "bottom_right", "top_left"][rng.integers(3)]
    if rng.uniform() < 0.2 and "valid_lens" in r:
        r["causal"] = [True, "bottom_right"][rng.integers(2)]
    return r


def target_scores(kind, shape):
    """scaled scores for kind (None: no target)."""
    if kind == "scores_near_709":
        return 709 + rng.uniform(-3, 3, size=shape)
    if kind == "scores_near_minus_709":
        return -709 + rng.uniform(-3, 3, size=shape)
    if kind == "huge_scores":
        return rng.choice([-1, 1], size=shape) * 10.0 ** rng.uniform(
            250, 300, size=shape)
    if kind == "far_below_fill":
        return -1.5e6 + rng.uniform(-800, 800, size=shape)
    return None


def dot_request(kind):
    B, Nq, Nk = rng.integers(1, 3), rng.integers(1, 4), rng.integers(1, 5)
    d, dv = rng.integers(1, 4), rng.integers(1, 4)
    Q = rng.normal(size=(B, Nq, d))
    K = rng.normal(size=(B, Nk, d))
    V = rng.normal(size=(B, Nk, dv))
    S = target_scores(kind, (B, Nq, Nk))
    if S is not None:
        # d = 1 makes the scores exactly q·k/1: q = 1, k = target
        Q = np.ones((B, Nq, 1)) * rng.choice([1.0, -1.0])
        K = (S[:, :1, :].transpose(0, 2, 1) * Q[:, :1, :1]).copy()
        if rng.uniform() < 0.5:  # each query its own row of targets: Nq 1
            Q, K = Q[:, :1], K
    if kind == "values_1e308":
        V = rng.choice([-1, 1], size=V.shape) * 1e308 * rng.uniform(
            0.5, 1.79, size=V.shape)
    elif kind == "values_1e300":
        V = rng.choice([-1, 1], size=V.shape) * 1e300
    elif kind == "underflow":
        Q = Q * 1e-160
        K = K * 1e-160
        V = V * 1e-300
    elif kind == "subnormal":
        V = rng.choice([-1, 0, 1], size=V.shape) * 5e-324
        Q = Q * 1e-200
    elif kind == "equal_rows":
        K = np.repeat(K[:, :1], K.shape[1], axis=1)
    B, Nq = Q.shape[0], Q.shape[1]
    Nk = K.shape[1]
    r = {"queries": Q.tolist(), "keys": K.tolist(), "values": V.tolist()}
    r.update(draw_mask(B, Nq, Nk))
    return r


def softmax_request(kind):
    B, Nq, Nk = rng.integers(1, 3), rng.integers(1, 4), rng.integers(1, 6)
    S = target_scores(kind, (B, Nq, Nk))
    if S is None:
        S = rng.normal(size=(B, Nq, Nk))
        if kind == "values_1e308":
            S = rng.choice([-1, 1], size=S.shape) * 1e308
        elif kind == "values_1e300":
            S = S * 1e300
        elif kind == "underflow":
            S = S * 1e-300
        elif kind == "subnormal":
            S = rng.choice([-1, 0, 1], size=S.shape) * 5e-324
        elif kind == "equal_rows":
            S = np.repeat(S[:, :, :1], Nk, axis=2)
    r = {"scores": S.tolist()}
    r.update(draw_mask(B, Nq, Nk))
    return r


# ------------------------------------------------------------ one request

stats = {"requests": 0, "refused": 0, "answers": 0, "named": 0,
         "refused_by": {}}
FIELDS = {"/attention/dot": ["output", "weights"],
          "/softmax/masked": ["weights"]}


def check_request(endpoint, kind, request):
    stats["requests"] += 1
    status, body = http(endpoint, json.dumps(request).encode())
    if status >= 400:
        stats["refused"] += 1
        code = (json.loads(body) or {}).get("code", status) \
            if body.startswith(b"{") else status
        stats["refused_by"][code] = stats["refused_by"].get(code, 0) + 1
        return
    got_ref = json.loads(body)
    fields = FIELDS[endpoint]
    ref = {f: cat.as_float(got_ref[f]) for f in fields}
    right, wrong, codes = cat.ROUTES[endpoint]
    mistakes = wrong(request)
    every = wrong(request, every=True)
    answers = {}
    for code, ans in mistakes.items():
        answers[code + " (own answer)"] = {f: jnum(ans[f]) for f in fields}
        for label in ("reference", "0"):
            mixed = {}
            for f in fields:
                m = np.asarray(ans[f], float)
                if m.shape == ref[f].shape and label == "reference":
                    fill = np.where(np.isfinite(ref[f]), ref[f], 0.0)
                else:
                    fill = 0.0
                mixed[f] = jnum(np.where(np.isfinite(m), m, fill))
            answers["%s (%s where not finite)" % (code, label)] = mixed
    answers["99 everywhere"] = {f: jnum(np.full(ref[f].shape, 99.0))
                                for f in fields}
    answers["noise"] = {f: jnum(rng.normal(size=ref[f].shape))
                        for f in fields}
    answers["reference, first entry +1"] = {}
    for f in fields:
        x = np.where(np.isfinite(ref[f]), ref[f], 0.0).reshape(-1).copy()
        x[0] += 1.0
        answers["reference, first entry +1"][f] = jnum(
            x.reshape(ref[f].shape))
    names = list(answers)
    lines = "".join(json.dumps({"id": i, "endpoint": endpoint,
                                "request": request, "answer": answers[n]})
                    + "\n" for i, n in enumerate(names)).encode()
    status, body = http("/grade/batch", lines, "application/x-ndjson")
    if status != 200:
        tap(False, "%s %s: POST /grade/batch answers 200" % (endpoint, kind),
            "%s %s\nrequest: %s" % (status, body[:300], short(request)))
        return
    problems = []
    for line in body.splitlines():
        g = json.loads(line)
        name = names[g["id"]]
        stats["answers"] += 1
        if "problem" in g:
            problems.append("%s: %s" % (name, short(g["problem"], 300)))
            continue
        mc = g.get("misconception")
        if not isinstance(mc, dict):
            continue
        stats["named"] += 1
        code, mfields = mc.get("code"), mc.get("fields", [])
        why = None
        if code not in every:
            why = "%s is not a mistake tried for this request" % code
        else:
            for f in mfields:
                if f not in fields:
                    why = "field %s is not graded" % f
                    break
                m = np.asarray(every[code][f], float)
                got = answers[name][f]
                gf = cat.as_float(got)
                if m.shape != gf.shape:
                    why = "%s: the mistake's shape %s, the answer's %s" % (
                        f, m.shape, gf.shape)
                elif not np.isfinite(m[~np.isnan(gf)]).all():
                    why = ("%s: the mistake's answer is not finite where the "
                           "student gave a number: %s" % (f, short(jnum(m),
                                                                   300)))
                elif not cat.field_match(got, m):
                    why = ("%s: the student's answer does not match the "
                           "mistake's under the default comparison" % f)
                elif not (cat.max_abs_err(got, m)
                          < cat.max_abs_err(got, ref[f])):
                    why = ("%s: not strictly closer: max abs err %g to the "
                           "mistake, %g to the reference" % (
                               f, cat.max_abs_err(got, m),
                               cat.max_abs_err(got, ref[f])))
                if why:
                    break
        if why:
            problems.append("%s named %s on %s: %s\n  answer: %s\n"
                            "  reference: %s" % (
                                name, code, mfields, why,
                                short(answers[name], 300), short(got_ref,
                                                                 300)))
    tap(not problems,
        "%s %s: every named mistake is finite, matches and is closer "
        "(%d answers)" % (endpoint, kind, len(names)),
        "request: %s\n%s" % (short(request, 400), "\n".join(problems[:3])))


t0 = time.time()
for i in range(N_DOT):
    kind = EXTREMES[i % len(EXTREMES)]
    check_request("/attention/dot", kind, dot_request(kind))
for i in range(N_SOFTMAX):
    kind = EXTREMES[i % len(EXTREMES)]
    check_request("/softmax/masked", kind, softmax_request(kind))
print("# %d requests, %d refused by the route (%s), %d answers graded, "
      "%d named a mistake, %.1f s" % (
          stats["requests"], stats["refused"],
          ", ".join("%s: %d" % kv for kv in sorted(
              stats["refused_by"].items(), key=str)),
          stats["answers"], stats["named"], time.time() - t0))
tap(stats["requests"] > stats["refused"],
    "some requests were graded (%d of %d)" % (
        stats["requests"] - stats["refused"], stats["requests"]))
print("1..%d" % _counts["run"])
sys.exit(1 if _counts["failed"] else 0)
