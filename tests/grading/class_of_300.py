#!/usr/bin/python3
"""class_of_300.py — a seeded class of 300 students graded in one
POST /grade/batch with the default comparison (docs/grading.md; grading
v1.2's "relabs_or_rounded"), then each submission again as a Gradescope
and a PrairieLearn document, checked against tests/grading/schemas/.

Exercises: /attention/dot under four requests (valid_lens (B); a query
that sees no key; valid_lens (B, Nq) with causal top-left; causal
bottom-right) and /softmax/masked, values scaled so that answers run
from about 1e-3 to about 1e3. Each student hands in the right answer,
one catalogued mistake's answer (docs/misconceptions.md; numpy from the
formulas, catalogue_np.py) or an honest slip (two digits swapped, a sign
flipped, a row of the other example, an entry written with 2 decimals),
in one of six styles: full precision, float32, np.round(x, 4),
np.round(x, 6), "%.6g", numpy's default print (precision 8) read back.

Checks: every right answer passes in every style; every mistake whose
answer, in that style, fails against the reference is named with its
own code (mistakes that do not change the answer beyond the style's
rounding, or answer as an earlier mistake of the table does, are left
out and listed); no slip passes and none is named.

    usage: /usr/bin/python3 class_of_300.py BASE_URL [--table]
Prints TAP lines; exits 1 when a check fails.
"""
import json
import os
import sys
from collections import Counter, defaultdict

import jsonschema
import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the tree
import catalogue_np as cat  # noqa: E402
from grading_client import (STYLES, finish, http, tap,  # noqa: E402
                            written_as)

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = "--table" in sys.argv[1:]
N_STUDENTS = 300
SLIPS = ["slip.swapped_digits", "slip.sign", "slip.other_row",
         "slip.two_decimals"]
# ------------------------------------------------------------ the exercises

rng = np.random.default_rng(300)
B, Nq, Nk, d, dv = 2, 3, 5, 4, 3
COLUMN_SCALE = np.array([0.05, 20.0, 400.0])  # entries ~0.03, ~10, ~300


def dot_request(**extra):
    r = {"queries": rng.normal(size=(B, Nq, d)).round(3).tolist(),
         "keys": rng.normal(size=(B, Nk, d)).round(3).tolist(),
         "values": (rng.normal(size=(B, Nk, dv)) * COLUMN_SCALE)
         .round(4).tolist()}
    r.update(extra)
    return r


EXERCISES = {
    "dot.lens": ("/attention/dot", dot_request(valid_lens=[2, 4])),
    "dot.empty_row": ("/attention/dot", dot_request(valid_lens=[0, 3])),
    "dot.lens2_causal": ("/attention/dot", dot_request(
        valid_lens=[[1, 4, 2], [5, 3, 4]], causal=True)),
    "dot.bottom_right": ("/attention/dot",
                         dot_request(causal="bottom_right")),
    "softmax.lens": ("/softmax/masked", {
        "scores": (rng.normal(size=(B, Nq, Nk)) * 3).round(3).tolist(),
        "valid_lens": [[0, 2, 5], [3, 1, 4]]}),
}
# the mistakes each exercise is meant for (every one of the dot table)
MEANT = {
    "dot.lens": ["dot.no_scale", "dot.scale_1_over_d", "dot.scale_sqrt_dv",
                 "dot.softmax_over_queries", "dot.mask_ignored",
                 "dot.valid_lens_per_query", "dot.mask_inverted",
                 "dot.keys_as_values", "dot.weights_unnormalised"],
    "dot.empty_row": ["dot.nan_rows", "dot.masked_fill_1e6",
                      "dot.masked_fill_1e9"],
    "dot.lens2_causal": ["dot.valid_lens_transposed",
                         "dot.causal_bottom_right"],
    "dot.bottom_right": ["dot.causal_top_left"],
    "softmax.lens": ["softmax.mask_ignored", "softmax.nan_rows",
                     "softmax.masked_fill_1e6"],
}
REF, MISTAKES = {}, {}
for ex, (endpoint, request) in EXERCISES.items():
    right, wrong, _ = cat.ROUTES[endpoint]
    REF[ex] = right(request)
    MISTAKES[ex] = wrong(request)


# ------------------------------------------------------------ the styles

def styled(x, style):
    """x (float array, NaN for null) as a student in style writes it,
    as JSON lists."""
    return cat.to_json(written_as(x, style))


# ------------------------------------------------------------ the slips

def slip(kind, ans, r):
    """The right answer ans with one honest slip in its first field."""
    f = next(iter(ans))
    x = np.array(ans[f], float)
    flat = x.reshape(-1)
    finite = np.flatnonzero(np.isfinite(flat) & (np.abs(flat) > 0.01))
    i = int(r.choice(finite))
    if kind == "slip.swapped_digits":
        # two adjacent digits of "%.4f" swapped, the first two that differ
        t = list("%.4f" % flat[i])
        for j in range(len(t) - 1):
            if t[j].isdigit() and t[j + 1].isdigit() and t[j] != t[j + 1]:
                t[j], t[j + 1] = t[j + 1], t[j]
                break
        flat[i] = float("".join(t))
    elif kind == "slip.sign":
        flat[i] = -flat[i]
    elif kind == "slip.other_row":
        x[0, 0] = x[1, 0]  # query 0 of example 0 answered from example 1
    elif kind == "slip.two_decimals":
        cand = [k for k in finite if abs(np.round(flat[k], 2) - flat[k]) > 1e-3]
        flat[cand[0] if cand else i] = np.round(flat[cand[0] if cand else i], 2)
    out = dict(ans)
    out[f] = x
    return out


# ------------------------------------------------------------ the class

combos = []  # (exercise, kind): every one at least once in every style
for ex in EXERCISES:
    combos.append((ex, "right"))
    combos += [(ex, m) for m in MEANT[ex] if m in MISTAKES[ex]]
    combos.append((ex, SLIPS[len(combos) % len(SLIPS)]))
plan = [(ex, kind, st) for ex, kind in combos for st in STYLES]
r = np.random.default_rng(3000)
while len(plan) < N_STUDENTS:
    ex = list(EXERCISES)[r.integers(len(EXERCISES))]
    u = r.uniform()
    if u < 0.5:
        kind = "right"
    elif u < 0.85:
        kind = MEANT[ex][r.integers(len(MEANT[ex]))]
    else:
        kind = SLIPS[r.integers(len(SLIPS))]
    plan.append((ex, kind, STYLES[r.integers(len(STYLES))]))
plan = plan[:N_STUDENTS]
order = r.permutation(len(plan))
plan = [plan[i] for i in order]

students = []
for n, (ex, kind, st) in enumerate(plan, 1):
    endpoint, request = EXERCISES[ex]
    if kind == "right":
        raw = REF[ex]
    elif kind.startswith("slip."):
        raw = slip(kind, REF[ex], r)
    else:
        raw = MISTAKES[ex][kind]
    answer = {f: styled(v, st) for f, v in raw.items()}
    # what v1.2 should do with it, from the numpy model
    expect = cat.expected_name(endpoint, request, answer, REF[ex],
                               MISTAKES[ex])
    students.append({"id": "s%03d" % n, "ex": ex, "kind": kind, "style": st,
                     "endpoint": endpoint, "request": request,
                     "answer": answer, "expect": expect})


def submission(s, fields=True, **extra):
    body = {"id": s["id"], "endpoint": s["endpoint"],
            "request": s["request"], "answer": s["answer"]}
    if fields:
        body["fields"] = sorted(s["answer"])
    body.update(extra)
    return body


# ------------------------------------------------------------ one batch

def batch(fields):
    lines = "".join(json.dumps(submission(s, fields)) + "\n"
                    for s in students).encode()
    status, body = http("/grade/batch", lines, "application/x-ndjson")
    if status != 200:
        return status, body, []
    return status, body, [json.loads(l) for l in body.splitlines() if l]


status, body, grades = batch(True)
fields_ok = status == 200 and not any(
    "problem" in g and g["problem"].get("pointer") == "/fields"
    for g in grades)
tap(fields_ok, "POST /grade/batch takes a \"fields\" member (grading v1.2)",
    "%s %s" % (status, body[:300].decode(errors="replace")))
USE_FIELDS = fields_ok
if not fields_ok:
    print("# graded again without \"fields\"")
    status, body, grades = batch(False)
tap(status == 200 and len(grades) == N_STUDENTS,
    "300 submissions, one POST /grade/batch: 200 and 300 lines",
    "%s %s" % (status, body[:300].decode(errors="replace")))
by_id = {g.get("id"): g for g in grades}
tap([g.get("id") for g in grades] == [s["id"] for s in students],
    "the lines come back in the order sent, each with its id")


def outcome(s, g):
    if g is None:
        return "missing"
    if "problem" in g:
        return "problem"
    if g.get("pass") is True:
        return "passed"
    mc = g.get("misconception")
    if isinstance(mc, dict):
        return "named_ok" if mc.get("code") == s["kind"] else "named_wrong"
    return "failed_unnamed"


COLS = ["passed", "named_ok", "named_wrong", "failed_unnamed", "problem"]
table = defaultdict(Counter)
excluded = defaultdict(list)
fails = defaultdict(list)
for s in students:
    g = by_id.get(s["id"])
    o = outcome(s, g)
    kind_row = s["kind"] if not s["kind"].startswith("slip.") else "slip"
    table[(s["ex"], kind_row, s["style"])][o] += 1
    e = s["expect"]
    if s["kind"] == "right":
        group = "right answers"
        ok = o == "passed" and "misconception" not in g
    elif s["kind"].startswith("slip."):
        group = "slips"
        ok = o == "failed_unnamed"
        if e is None or e[0] is not None:
            excluded["slip the model does not fail, or names"].append(
                s["id"])
            continue
    else:
        group = "mistakes"
        if e is None:
            excluded["%s: no change beyond the rounding of %s"
                     % (s["kind"], s["style"])].append(s["id"])
            continue
        if e[0] != s["kind"]:
            excluded["%s: answers as %s for %s"
                     % (s["kind"], e[0], s["ex"])].append(s["id"])
            continue
        ok = o == "named_ok" and sorted(g["misconception"].get(
            "fields", [])) == sorted(e[1])
    if not ok:
        fails[(group, s["kind"], s["style"])].append(
            (s["id"], s["ex"], o, json.dumps(
                {k: g.get(k) for k in ("pass", "misconception", "problem")}
                if g else None)[:300]))

tested = Counter()
left_out = {i for ids in excluded.values() for i in ids}
for s in students:
    if s["id"] in left_out:
        continue
    tested[("right answers" if s["kind"] == "right" else
            "slips" if s["kind"].startswith("slip.") else "mistakes",
            s["kind"], s["style"])] += 1
for key in sorted(tested):
    group, kind, st = key
    what = {"right answers": "passes, no misconception member",
            "slips": "fails, misconception null",
            "mistakes": "named with its own code on the fields it "
                        "explains"}[group]
    bad = fails.get(key, [])
    tap(not bad, "%s in style %s: %s (%d students)" % (kind, st, what,
                                                       tested[key]),
        "\n".join("%s (%s): %s %s" % b for b in bad[:4]))
for why, ids in sorted(excluded.items()):
    print("# left out: %s: %s" % (why, " ".join(ids)))
covered = {s["kind"] for s in students}
for ex in EXERCISES:
    for m in MEANT[ex]:
        if m not in MISTAKES[ex]:
            print("# not tried on %s: %s" % (ex, m))
tap(set(cat.DOT_CODES) <= covered,
    "every mistake of /attention/dot's table is in the class",
    sorted(set(cat.DOT_CODES) - covered))

# ------------------------------------------------------------ LMS documents


def schema(name):
    with open(os.path.join(HERE, "schemas", name)) as f:
        s = json.load(f)
    return jsonschema.Draft202012Validator(s)


VALIDATORS = {"gradescope": schema("gradescope_results.schema.json"),
              "prairielearn": schema("prairielearn_results.schema.json")}
for fmt, v in VALIDATORS.items():
    bad_status, bad_schema, bad_text = [], [], []
    for s in students:
        st, body = http("/grade", json.dumps(
            submission(s, USE_FIELDS, format=fmt)).encode())
        if st != 200:
            bad_status.append("%s: %s %s" % (s["id"], st, body[:200]))
            continue
        doc = json.loads(body)
        errs = sorted(v.iter_errors(doc), key=str)
        if errs:
            bad_schema.append("%s: %s" % (s["id"], errs[0].message[:200]))
        g = by_id.get(s["id"]) or {}
        mc = g.get("misconception")
        if isinstance(mc, dict):
            texts = [t.get("output", "") for t in doc.get("tests", [])]
            if not any(mc["code"] in t for t in texts):
                bad_text.append("%s: %s not in %s" % (s["id"], mc["code"],
                                                      texts))
    tap(not bad_status, "%s: POST /grade answers 200 for all 300" % fmt,
        "\n".join(bad_status[:5]))
    tap(not bad_schema, "%s: all 300 documents match the schema" % fmt,
        "\n".join(bad_schema[:5]))
    tap(not bad_text, "%s: a named mistake is in its tests' text" % fmt,
        "\n".join(bad_text[:5]))

# ------------------------------------------------------------ the table

if TABLE:
    print("# confusion table: true kind x style (rows), outcome (columns)")
    print("# %-18s %-26s %-11s %6s %8s %11s %14s %7s" % (
        "exercise", "true kind", "style", *COLS))
    for key in sorted(table, key=lambda k: (k[0], k[1] != "right",
                                            k[1] == "slip", k[1],
                                            STYLES.index(k[2]))):
        c = table[key]
        print("# %-18s %-26s %-11s %6d %8d %11d %14d %7d" % (
            *key, *(c[o] for o in COLS)))
    tot = defaultdict(Counter)
    for key, c in table.items():
        k = "right" if key[1] == "right" else (
            "slip" if key[1] == "slip" else "mistake")
        tot[k].update(c)
    for k in ("right", "mistake", "slip"):
        print("# %-45s %-11s %6d %8d %11d %14d %7d" % (
            "total " + k, "", *(tot[k][o] for o in COLS)))

finish()
