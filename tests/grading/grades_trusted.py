#!/usr/bin/python3
"""grades_trusted.py — grades a class can trust (docs/grading.md
"Comparisons", "Scores and points"): answers as students write numbers
pass, a mistake is named only where its own answer explains the
student's, scores add back exactly and stay finite, and no answer makes
an LMS document pass its size cap.

Each group below is one way grading hurt a class before comparisons had
modes; every check asserts the values a grader relies on.

    usage: /usr/bin/python3 grades_trusted.py BASE_URL
Prints TAP lines; exits 1 when a test fails.
"""
import json

import numpy as np

from grading_client import (STYLES, finish, http, post, tap, tolist,
                            written_as)

# ------------------------------------------------ the exercise and its math

rng = np.random.default_rng(2029)
Q = rng.uniform(-1, 1, (2, 3, 4)).round(2)
K = rng.uniform(-1, 1, (2, 5, 4)).round(2)
V = rng.uniform(-1, 1, (2, 5, 4)).round(2)
V[0, :, 0] = rng.uniform(-0.036, -0.032, 5)  # outputs near -0.034
V[1] *= 300                                  # and large ones
REQUEST = {"queries": Q, "keys": K, "values": V, "valid_lens": [3, 5]}


def attend(q, k, v, valid_lens):
    s = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    for b, n in enumerate(valid_lens):
        s[b, :, n:] = -np.inf
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return w @ v, w


OUTPUT, WEIGHTS = attend(Q, K, V, [3, 5])
# np.round(x, 6) of an entry near -0.034 misses it by up to 5e-7, more than
# numpy.isclose's 1e-8 + 1e-5 * 0.034 allows: the case this exercise is for
ROUND6_ERR = np.abs(np.round(OUTPUT, 6) - OUTPUT)
assert (ROUND6_ERR > 1e-8 + 1e-5 * np.abs(OUTPUT)).any(), ROUND6_ERR


def grade(answer, **members):
    body = {"endpoint": "/attention/dot", "request": tolist(REQUEST),
            "answer": tolist(answer)}
    body.update(members)
    return post("/grade", body)


# attnd's own output, to the last bit (BLAS may differ from numpy's in it)
OWN = np.array(post("/attention/dot", tolist(REQUEST))[1]["output"])

# ------------------------------------ 1. right answers as students write them

for style in STYLES:
    status, out = grade({"output": written_as(OUTPUT, style),
                         "weights": written_as(WEIGHTS, style)})
    tap(status == 200 and out["pass"] is True and out["score"] == 1,
        "a right answer written as %s passes the default comparison" % style,
        json.dumps(out)[:600])

# float32 as torch computes and rounds it: .tolist() widens each float32
# to the 17 digits of the double it is (0.3302 → 0.3301999866962433)
for decimals in (4, 6):
    f32 = np.round(OUTPUT.astype(np.float32), decimals)
    w32 = np.round(WEIGHTS.astype(np.float32), decimals)
    status, out = grade({"output": f32.astype(float), "weights":
                         w32.astype(float)})
    f = out.get("fields", {})
    tap(status == 200 and out["pass"] is True
        and f["output"].get("rounded_to") == decimals,
        "a float32 array rounded to %d decimals, widened by .tolist(), "
        "passes as the reference rounded to %d" % (decimals, decimals),
        json.dumps(out)[:600])
f32 = np.round(OUTPUT.astype(np.float32), 2).astype(float)
status, out = grade({"output": f32}, format="gradescope")
text = out["tests"][0]["output"] if status == 200 else ""
tap("the reference rounded to 2 decimals: give at least 4" in text,
    "and one rounded to 2 is told to give at least 4", text)

status, out = grade({"output": np.round(OUTPUT, 6)})
f = out.get("fields", {}).get("output", {})
tap(status == 200 and f.get("pass") is True and f.get("rounded_to") == 6,
    "np.round(x, 6) of an output holding -0.034 says it matched the "
    "reference rounded to 6 decimals", json.dumps(f))
status, out = grade({"output": OUTPUT})
tap("rounded_to" not in out["fields"]["output"],
    "a full-precision answer is not said to be rounded",
    json.dumps(out["fields"]["output"]))
status, out = grade({"output": np.round(OUTPUT, 2)})
tap(status == 200 and out["pass"] is False,
    "rounded to 2 decimals, the same answer fails (fewer than 4 decimals)",
    json.dumps(out)[:400])
status, out = grade({"output": np.round(OUTPUT, 6)}, rtol=1e-5, atol=1e-8)
tap(status == 200 and out["pass"] is False,
    "rtol and atol given without compare are numpy.isclose's rule alone: "
    "np.round(x, 6) fails it", json.dumps(out)[:400])

# ---------------------------------------- 2. a question's own comparison

for mode, answer, want in [
        ({"mode": "sigfig", "digits": 3},
         np.vectorize(lambda e: float("%.3g" % e))(OUTPUT), True),
        ({"mode": "sigfig", "digits": 3}, OUTPUT * 1.01, False),
        ({"mode": "decdig", "digits": 2}, np.round(OUTPUT, 2), True),
        ({"mode": "relabs", "rtol": 1e-2, "atol": 0}, OUTPUT * 1.009, True),
        ({"mode": "ulp", "ulps": 0}, OWN, True),
        ({"mode": "ulp", "ulps": 4},
         np.nextafter(np.nextafter(OWN, 1e9), 1e9), True),
        ({"mode": "ulp", "ulps": 1},
         np.nextafter(np.nextafter(OWN, 1e9), 1e9), False)]:
    status, out = grade({"output": answer}, compare=mode)
    tap(status == 200 and out["pass"] is want,
        "compare %s: %s" % (json.dumps(mode), "passes" if want else "fails"),
        json.dumps(out)[:400])

status, out = grade({"output": np.round(OUTPUT, 2), "weights":
                     np.round(WEIGHTS, 2)},
                    compare={"output": {"mode": "decdig", "digits": 2}})
tap(status == 200 and out["fields"]["output"]["pass"] is True
    and out["fields"]["weights"]["pass"] is False,
    "compare per field: output by decdig 2 passes, weights by the default "
    "fails", json.dumps(out)[:400])
status, out = grade({"output": OUTPUT}, compare="sigfog")
tap(status == 422 and out.get("pointer") == "/compare"
    and "sigfig" in out.get("detail", ""),
    "an unknown mode is 422 at /compare, listing the modes", json.dumps(out))
status, out = grade({"output": OUTPUT},
                    compare={"mode": "sigfig", "rtol": 1e-3})
tap(status == 422 and out.get("pointer") == "/compare/rtol",
    "a number the mode does not read is 422 at it", json.dumps(out))
status, out = grade({"output": OUTPUT}, compare={"outptu": "sigfig"})
tap(status == 422 and out.get("pointer") == "/compare/outptu",
    "a field compare names that the endpoint has not is 422 at it",
    json.dumps(out))
status, out = grade({"output": OUTPUT, "extra": 1},
                    fields=["output", "weights"])
f = out.get("fields", {})
tap(status == 200 and list(f) == ["output", "weights"]
    and f["weights"] == {"pass": False, "score": 0, "error": "missing"}
    and out["points"] == {"earned": 1, "possible": 2},
    "fields: a member not listed is passed over, a listed one missing "
    "fails", json.dumps(out)[:400])

# ------------------------------------------------ the student's text

status, out = grade({"output": np.round(OUTPUT, 2)}, format="gradescope")
text = out["tests"][0]["output"] if status == 200 else ""
tap("the reference rounded to 2 decimals: give at least 4" in text,
    "an answer rounded to 2 decimals is told to give at least 4", text)
status, out = grade({"output": OUTPUT + 1}, show_expected=False)
first = out["fields"]["output"]["first_mismatch"]
tap(status == 200 and "expected" not in first and "got" in first,
    "show_expected false: the first mismatch quotes no reference value",
    json.dumps(first))
status, out = grade({"output": OUTPUT + 1}, show_expected=False,
                    format="prairielearn")
tap(status == 200 and "expected" not in json.dumps(out["tests"])
    and "got" in out["tests"][0]["output"],
    "show_expected false: nor does the LMS text", json.dumps(out)[:400])
status, out = grade({"output": OUTPUT + 1}, show_expected=False)
field = out["fields"]["output"]
tap(status == 200 and field["max_abs_err"] is None
    and field["max_rel_err"] is None,
    "show_expected false: no error size, which with got gives the value",
    json.dumps(field))
status, out = grade({"output": np.round(OUTPUT, 2)}, show_expected=False,
                    format="gradescope")
text = out["tests"][0]["output"] if status == 200 else ""
tap(status == 200 and text.startswith("fail: ") and "err" not in text
    and "rounded to" not in text and "got " in text,
    "show_expected false: nor error sizes or the rounding hint in the text",
    text)
status, out = grade({"output": [[["x"] * 4] * 3] * 2}, format="gradescope")
text = out["tests"][0]["output"] if status == 200 else ""
tap("max abs err" not in text and text.startswith("fail: 24 of 24"),
    "entries that are not numbers are not told an error of 0", text)
status, out = grade({"output": OUTPUT}, points={"output": 3, "weights": 1})
tap(status == 200 and out["points"] == {"earned": 3, "possible": 4}
    and out["fields"]["weights"] == {"pass": False, "score": 0,
                                     "error": "missing"},
    "a rubric's field the answer leaves out fails as missing, the rest "
    "graded", json.dumps(out)[:400])

# ------------------------------------------ names the request cannot answer

TR = {"src": [[1, 0, 2, -1], [0, 1, 1, 0], [2, 2, 0, 1]], "num_heads": 2,
      "num_layers": 1, "dim_feedforward": 8, "seed": 0}
for member, value, pointer in [
        ("fields", ["output", "state_dict.layers.0.linear1.weigth"],
         "/fields/1"),
        ("points", {"output": 1, "state_dict.layers.7.norm1.bias": 3},
         "/points/state_dict.layers.7.norm1.bias"),
        ("compare", {"grads.state_dict.layers.0.norm1.bias": "ulp"},
         "/compare/grads.state_dict.layers.0.norm1.bias")]:
    status, out = post("/grade", {"endpoint": "/transformer/encoder",
                                  "request": TR, "answer": {"output": [[0]]},
                                  member: value})
    tap(status == 422 and out.get("pointer") == pointer,
        "a %s name this request's answer lacks is 422 at it, not a field "
        "missing for every student" % member, json.dumps(out)[:300])
GR = dict(REQUEST, grad_output=np.ones_like(OUTPUT))
status, own = post("/attention/dot", tolist(GR))
for given in ({"queries": own["grads"]["queries"]},
              {"queries": own["grads"]["queries"], "keys": None}):
    status, out = post("/grade", {"endpoint": "/attention/dot",
                                  "request": tolist(GR),
                                  "answer": {"grads": given},
                                  "fields": ["grads"], "points": 3})
    f = out.get("fields", {})
    tap(status == 200 and list(f) == ["grads.queries", "grads.keys",
                                      "grads.values"]
        and f["grads.queries"]["pass"] is True
        and f["grads.keys"] == f["grads.values"] ==
        {"pass": False, "score": 0, "error": "missing"}
        and out["points"] == {"earned": 1, "possible": 3},
        "a listed group stands for each of its fields: grads given as %s "
        "has keys and values missing" % sorted(given),
        json.dumps(out)[:500])
status, out = post("/grade", {"endpoint": "/attention/dot",
                              "request": tolist(GR),
                              "answer": {"output": tolist(OUTPUT),
                                         "grads": own["grads"]},
                              "fields": ["output", "grads"],
                              "points": {"output": 1, "grads": 3}})
tap(status == 200 and out["points"] == {"earned": 4, "possible": 4}
    and [f["score"] for f in out["fields"].values()] == [1, 1, 1, 1],
    "a group's points are split over its fields: output 1 and grads 3 "
    "make 4", json.dumps(out)[:400])
status, out = post("/grade", {"endpoint": "/attention/dot",
                              "request": tolist(GR),
                              "answer": {"output": tolist(OUTPUT),
                                         "grads": {"querys": own["grads"][
                                             "queries"]}},
                              "fields": ["output", "grads"],
                              "points": {"output": 1, "grads.queries": 2}})
tap(status == 200 and out["points"] == {"earned": 1, "possible": 3}
    and out["fields"]["grads.queries"]["error"] == "missing",
    "a member of a listed group takes points of its own, and a misspelt "
    "member is passed over, the one meant missing", json.dumps(out)[:400])
status, out = grade({"output": OUTPUT}, fields=["output", "grads"])
tap(status == 422 and out.get("pointer") == "/fields/1"
    and "grad_output" in out.get("detail", ""),
    "a group the request does not compute names the input it needs",
    json.dumps(out))
status, out = post("/grade", {"endpoint": "/transformer/encoder",
                              "request": TR, "answer": {"output": [[0]]},
                              "fields": ["state_dict.k%d" % i + ".a" * 9
                                         for i in range(3)]})
tap(status == 422 and out.get("pointer") == "/fields/0"
    and "at most 8 dots" in out.get("detail", ""),
    "a name in fields has at most 8 dots (the sets built from them stay "
    "small)", json.dumps(out)[:300])
status, out = post("/grade", {"endpoint": "/transformer/encoder",
                              "request": TR, "answer": {"output": [[0]]},
                              "fields": ["state_dict.%04d" % i + "b" * 250
                                         for i in range(1100)]})
# each name is 265 bytes: the 990th passes 262,144
tap(status == 422 and out.get("pointer") == "/fields/989"
    and "bytes in all" in out.get("detail", ""),
    "the names in fields come to at most 256 KiB", json.dumps(out)[:300])
status, out = grade({"output": OUTPUT}, fields=["output"] * 4097)
tap(status == 422 and out.get("pointer") == "/fields",
    "fields lists at most 4096 names", json.dumps(out)[:300])

# ------------------------------------------------ 3. exact scores

DIAG = dict(REQUEST, return_scores=True, diagnostics=True)
status, own = post("/attention/dot", tolist(DIAG))
seven = {"output": own["output"], "weights": own["weights"],
         "scale": own["scale"], "scores": own["scores"],
         "diagnostics": {k: own["diagnostics"][k] for k in
                         ("entropy", "max_weight", "argmax", "scores")}}
body = {"endpoint": "/attention/dot", "request": tolist(DIAG),
        "answer": seven, "points": 1}
status, out = post("/grade", body)
tap(status == 200 and len(out["fields"]) >= 7
    and out["points"] == {"earned": 1, "possible": 1} and out["score"] == 1,
    "1 point over %d fields adds back to exactly 1"
    % len(out.get("fields", {})), json.dumps(out.get("points")))
status, out = post("/grade", dict(body, format="gradescope"))
tap(status == 200 and out["score"] == 1,
    "and Gradescope's score is exactly 1", json.dumps(out.get("score")))
status, out = post("/grade", dict(body, format="prairielearn"))
tap(status == 200 and out["score"] == 1,
    "and PrairieLearn's score is exactly 1", json.dumps(out.get("score")))
status, out = grade({"output": OUTPUT, "weights": WEIGHTS},
                    points={"output": 0.1, "weights": 0.2})
tap(status == 200 and out["points"] == {"earned": 0.3, "possible": 0.3},
    "points 0.1 and 0.2 add up to 0.3", json.dumps(out.get("points")))

status, out = grade({"output": OUTPUT, "weights": WEIGHTS + 1},
                    points={"output": 1, "weights": 1e-300})
tap(status == 200 and out["pass"] is False and out["score"] < 1
    and out["points"]["earned"] < out["points"]["possible"],
    "a field that loses 1e-300 of 1 point keeps a failing score below 1",
    json.dumps(out.get("points")))
status, out = grade({"output": OUTPUT}, points=5e-324)
tap(status == 422 and out.get("pointer") == "/points",
    "points too small to share (5e-324) are 422 at /points", json.dumps(out))

status, out = grade({"output": OUTPUT, "weights": WEIGHTS + 1},
                    points={"output": 1e16 - 2, "weights": 2},
                    format="gradescope")
tap(status == 200 and "1e+16 of 1e+16" not in out.get("output", "")
    and "9999999999999998 of 1e+16" in out.get("output", ""),
    "a short score is not printed as full marks", out.get("output"))

# ------------------------------------------------ 4. finite points

status, out = grade({"output": OUTPUT, "weights": WEIGHTS},
                    points={"output": 1e308, "weights": 1e308})
tap(status == 422 and out.get("pointer") == "/points",
    "points whose total overflows a double are 422 at /points",
    json.dumps(out))
status, out = grade({"output": OUTPUT, "weights": WEIGHTS}, points=1e308)
tap(status == 200 and out["points"] == {"earned": 1e308, "possible": 1e308},
    "1e308 points split over two fields stay finite", json.dumps(out))

# ------------------------------------------------ 5. documents within caps

long_string = "x" * 1_100_000
body = {"endpoint": "/attention/dot", "request": tolist(REQUEST),
        "answer": {"output": [[[long_string, 0, 0, 0]] + [[0] * 4] * 2,
                              [[0] * 4] * 3]},
        "format": "prairielearn"}
status, doc = http("/grade", json.dumps(body).encode())
parsed = json.loads(doc)
tap(len(doc) < 1_000_000 and "more bytes" in doc.decode(),
    "a 1.1 MB string in an answer makes a PrairieLearn document of %d "
    "bytes, the string cut with a marker" % len(doc), doc[:300])
tap(parsed["score"] == 0 and parsed["gradable"] is True,
    "and the document still grades it (score 0)", doc[:300])

# --------------------------------------- 6. a mistake named only where it explains

# scores near 709: exp(score) is finite, the unnormalised output is not
big = {"queries": [[708.0]], "keys": [[1.0], [0.0]], "values": [[10.0], [2.0]]}
status, out = post("/grade", {"endpoint": "/attention/dot", "request": big,
                              "answer": {"output": [[99]]}})
tap(status == 200 and out["misconception"] is None,
    "an answer of 99 where dot.weights_unnormalised overflows to inf names "
    "no mistake", json.dumps(out.get("misconception")))
huge = {"queries": [[1.0, 2.0]], "keys": [[1.0, 0.0], [0.0, 1.0]],
        "values": [[-1e308], [1.0]]}
for wrong in (7, -5e307, 0):
    status, out = post("/grade", {"endpoint": "/attention/dot",
                                  "request": huge,
                                  "answer": {"output": [[wrong]]}})
    tap(status == 200 and out["misconception"] is None,
        "values of -1e308: a wrong answer of %g names no mistake" % wrong,
        json.dumps(out.get("misconception")))
# the same mistake, where its answer is finite, is still named
small = {"queries": [[2.0]], "keys": [[1.0], [0.0]], "values": [[10.0], [2.0]]}
w = np.exp([2.0, 0.0])
status, out = post("/grade", {"endpoint": "/attention/dot", "request": small,
                              "answer": {"output": [[w @ [10.0, 2.0]]],
                                         "weights": [list(w)]}})
tap(status == 200 and (out["misconception"] or {}).get("code")
    == "dot.weights_unnormalised",
    "where its answer is finite, dot.weights_unnormalised is named",
    json.dumps(out.get("misconception")))
# a mistake must match under the field's own comparison
status, out = post("/grade", {"endpoint": "/attention/dot", "request": small,
                              "answer": {"output": [[round(w @ [10, 2], 1)]]},
                              "compare": {"mode": "ulp", "ulps": 0}})
tap(status == 200 and out["misconception"] is None,
    "under ulp 0, a rounded copy of the mistake's answer is not it",
    json.dumps(out.get("misconception")))

finish()
