#!/usr/bin/python3
"""test_formats.py — /grade's LMS formats against the published schemas
(tests/grading/schemas/, each naming the documentation page it follows):
every answer in "format": "gradescope" or "prairielearn" over HTTP, and
the documents of several submissions (graded ones and a problem) that
POST /grade/batch?format=... answers. Asserts the
values too: scores in points and in [0, 1], one test per graded field,
names, and the misconception in the text of the fields it explains.

    usage: /usr/bin/python3 test_formats.py BASE_URL
Prints TAP.
"""
import json
import os
import sys
import urllib.error
import urllib.request

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = sys.argv[1].rstrip("/")
N = 0
FAILED = 0


def tap(ok, name, why=""):
    global N, FAILED
    N += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", N, name))
    if not ok:
        FAILED += 1
        for line in str(why).splitlines()[:12]:
            print("#   " + line)


def schema(name):
    with open(os.path.join(HERE, "schemas", name)) as f:
        s = json.load(f)
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


GRADESCOPE = schema("gradescope_results.schema.json")
PRAIRIELEARN = schema("prairielearn_results.schema.json")
VALIDATORS = {"gradescope": GRADESCOPE, "prairielearn": PRAIRIELEARN}


def post(body):
    req = urllib.request.Request(
        BASE + "/grade", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type"), json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), json.load(e)


def valid(fmt, doc, name):
    errors = sorted(VALIDATORS[fmt].iter_errors(doc), key=str)
    tap(not errors, "%s: %s matches the schema" % (name, fmt),
        "\n".join(e.message for e in errors) + "\n" + json.dumps(doc)[:400])


REQ = {"queries": [[1, 2]], "keys": [[1, 0], [0, 1]], "values": [[1], [2]]}
NO_SCALE = {"output": [[1.7310585786300049]],
            "weights": [[0.2689414213699951, 0.7310585786300049]]}
SUBMISSIONS = {
    "right": ({"output": [[1.66976]], "weights": [[0.33024, 0.66976]]}, {}),
    "no_scale": (NO_SCALE, {"id": "bo", "points": {"output": 3,
                                                   "weights": 1}}),
    "half_partial": ({"weights": [[0.33024, 0.5]]},
                     {"id": 7, "credit": "partial", "points": 4}),
    "shape": ({"output": [1.66976]}, {"id": "ragged"}),
    "ragged": ({"weights": [[0.33024, [0.66976]]]}, {}),
}


def submission(answer, extra, fmt, endpoint="/attention/dot", request=REQ):
    body = {"endpoint": endpoint, "request": request, "answer": answer,
            "format": fmt}
    body.update(extra)
    return body


# 1. every submission in both formats: 200, application/json, the schema
answers = {}
for fmt in ("gradescope", "prairielearn"):
    for name, (answer, extra) in SUBMISSIONS.items():
        status, ctype, doc = post(submission(answer, extra, fmt))
        tap(status == 200 and ctype.startswith("application/json"),
            "%s: %s answers 200 JSON" % (name, fmt), "%s %s" % (status, doc))
        valid(fmt, doc, name)
        answers[fmt, name] = doc
    # NW's history (records) and diagnostics warnings (events)
    nw = {"x_train": [0, 1, 2], "y_train": [0, 1, 4], "x_query": [1],
          "fit": {"epochs": 2, "lr": 0.1}}
    history = [{"epoch": e, "w": 1, "loss": 1} for e in (1, 2)]
    status, _, doc = post(submission({"history": history}, {}, fmt,
                                     "/regression/nw", nw))
    tap(status == 200, "nw history: %s answers 200" % fmt, doc)
    valid(fmt, doc, "nw history")
    tap(len(doc.get("tests", [])) == 1 and
        " of 6 entries differ" in doc["tests"][0]["output"],
        "nw history: %s grades the records as one field" % fmt, doc)
    sat = {"queries": [[[1, 0]]], "keys": [[[1, 0], [0, 1], [50, 0]]],
           "values": [[[1], [2], [3]]], "valid_lens": [3],
           "diagnostics": True}
    status, _, doc = post(submission(
        {"diagnostics": {"warnings": [{"code": "near_uniform",
                                       "row": [0, 0]}]}}, {}, fmt,
        request=sat))
    tap(status == 200, "diagnostics.warnings: %s answers 200" % fmt, doc)
    valid(fmt, doc, "diagnostics.warnings")
    tests = doc.get("tests", [])
    tap(len(tests) == 1 and tests[0]["name"] == "diagnostics.warnings" and
        tests[0]["output"].startswith("fail: 1 of 1 entry differs; first at "
                                      "/answer/diagnostics/warnings/0"),
        "diagnostics.warnings: %s's one test says what differs" % fmt,
        tests)

# 2. the values
g = answers["gradescope", "right"]
tap(g["score"] == 2 and [t["name"] for t in g["tests"]] ==
    ["output", "weights"] and all(t["score"] == t["max_score"] == 1
                                  for t in g["tests"]),
    "gradescope: a right answer scores 2 of 2 points, a test per field", g)
tap(g["output"] == "pass: 2 of 2 fields pass, 2 of 2 points",
    "gradescope: the submission's one-line output", g["output"])
g = answers["gradescope", "no_scale"]
tap(g["score"] == 0 and [(t["name"], t["max_score"]) for t in g["tests"]] ==
    [("bo: output", 3), ("bo: weights", 1)],
    "gradescope: tests named by the id, max_score the field's points", g)
tap(all("misconception dot.no_scale: the scores were not scaled" in
        t["output"] for t in g["tests"]) and
    "misconception dot.no_scale" in g["output"],
    "gradescope: the misconception in the explained fields' output", g)
tap(g["tests"][0]["output"].startswith(
    "fail: 1 of 1 entry differs (max abs err 0.0613, max rel err 0.0367); "
    "first at /answer/output/0/0: expected 1.6697615493266569, got "
    "1.731058578630005"),
    "gradescope: a failed field's output names the first mismatch",
    g["tests"][0]["output"])
g = answers["gradescope", "half_partial"]
tap(g["score"] == 2 and g["tests"][0]["name"] == "7: weights" and
    g["tests"][0]["max_score"] == 4,
    "gradescope: partial credit, one entry of two, 2 of 4 points", g)
g = answers["gradescope", "shape"]
tap(g["tests"][0]["output"] == "fail: shape [1] where [1,1] is expected" and
    g["tests"][0]["score"] == 0,
    "gradescope: a shape error's output", g["tests"][0])
g = answers["gradescope", "ragged"]
tap(g["tests"][0]["output"] == "fail: shape [1,-1] where [1,2] is expected "
    "(rows differ at /answer/weights/0/1)",
    "gradescope: a ragged answer's output names the row", g["tests"][0])
p = answers["prairielearn", "right"]
tap(p["gradable"] is True and p["score"] == 1 and
    [(t["points"], t["max_points"], t["message"]) for t in p["tests"]] ==
    [(1, 1, "pass"), (1, 1, "pass")],
    "prairielearn: a right answer scores 1, its tests 1 of 1 point", p)
p = answers["prairielearn", "half_partial"]
tap(p["score"] == 0.5 and p["tests"][0]["points"] == 2 and
    p["tests"][0]["max_points"] == 4 and p["tests"][0]["name"] == "7: weights",
    "prairielearn: partial credit, score 0.5", p)
p = answers["prairielearn", "no_scale"]
tap(p["score"] == 0 and "format_errors" not in p and
    "misconception dot.no_scale" in p["message"],
    "prairielearn: a wrong answer is gradable, scores 0, names the mistake",
    p)

# 3. a malformed single request stays a problem+json in any format
for fmt in ("gradescope", "prairielearn"):
    status, ctype, doc = post(submission({"outptu": [[1]]}, {}, fmt))
    tap(status == 422 and ctype.startswith("application/problem+json") and
        doc.get("pointer") == "/answer/outptu",
        "%s: a malformed request is a 422 problem" % fmt, doc)

# 4. the documents of several submissions: POST /grade/batch?format=...
def batch(fmt, subs):
    body = "".join(json.dumps(x) + "\n" for x in subs).encode()
    req = urllib.request.Request(
        BASE + "/grade/batch?format=" + fmt, data=body,
        headers={"Content-Type": "application/x-ndjson"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


RIGHT = {"output": [[1.66976]], "weights": [[0.33024, 0.66976]]}
CLASS = [dict(submission(RIGHT, {"id": "ada"}, None)),
         dict(submission(NO_SCALE, {"id": "bo"}, None)),
         dict(submission({"weights": RIGHT["weights"]}, {"id": 7}, None)),
         dict(submission({"outptu": [[1]]}, {"id": "cy"}, None))]
for x in CLASS:
    del x["format"]
docs = {}
for fmt in ("gradescope", "prairielearn"):
    for name, subs in (("batch", CLASS), ("problems", CLASS[3:])):
        status, docs[fmt, name] = batch(fmt, subs)
        tap(status == 200, "%s %s: POST /grade/batch answers 200" %
            (fmt, name), docs[fmt, name])
        valid(fmt, docs[fmt, name], "%s of a batch" % name)
g = docs["gradescope", "batch"]
tap(g.get("score") == 3 and [t["name"] for t in g.get("tests", [])] ==
    ["ada: output", "ada: weights", "bo: output", "bo: weights",
     "7: weights", "cy"] and g["tests"][-1]["score"] == 0 and
    "dot.no_scale" in g["tests"][2]["output"],
    "gradescope batch: a test per field and per problem, the mistake "
    "named", g)
p = docs["prairielearn", "batch"]
tap(p.get("gradable") is True and len(p.get("format_errors", [])) == 1 and
    p["format_errors"][0].startswith("cy: not graded: unknown_field") and
    0 < p["score"] < 1,
    "prairielearn batch: gradable, the problem a format error", p)
p = docs["prairielearn", "problems"]
tap(p.get("gradable") is False and len(p.get("format_errors", [])) == 1,
    "prairielearn: a problem alone is not gradable", p)
g = docs["gradescope", "problems"]
tap(g.get("score") == 0 and g.get("output", "").startswith(
    "not graded: unknown_field at /answer/outptu"),
    "gradescope: a problem alone scores 0, the problem its output", g)

# 5. every successful grading data case, in each format: the LMS
#    schemas, and the response schemas of api/fronts/openapi.json
ROOT = os.path.dirname(os.path.dirname(HERE))
CASES = os.path.join(ROOT, "tests", "cases", "grade")
with open(os.path.join(ROOT, "api", "fronts", "openapi.json")) as f:
    COMPONENTS = json.load(f)["components"]
REFS = {"attnd": "GradeResult", "gradescope": "GradescopeResults",
        "prairielearn": "PrairieLearnResults"}
checked, wrong = 0, []
for case in sorted(os.listdir(CASES)):
    try:
        with open(os.path.join(CASES, case, "expected.json")) as f:
            if json.load(f)["status"] != 200:
                continue
        with open(os.path.join(CASES, case, "request.json")) as f:
            body = json.load(f)
    except (OSError, ValueError):
        continue
    for fmt, ref in REFS.items():
        status, _, doc = post(dict(body, format=fmt))
        openapi = jsonschema.Draft202012Validator(
            {"$ref": "#/components/schemas/" + ref,
             "components": COMPONENTS})
        errors = list(openapi.iter_errors(doc)) if status == 200 else [
            "status %d" % status]
        if fmt in VALIDATORS:
            errors += list(VALIDATORS[fmt].iter_errors(doc))
        checked += 1
        if errors:
            wrong.append("%s %s: %s" % (case, fmt, str(errors[0])[:200]))
tap(checked >= 60 and not wrong,
    "%d answers of the grade data cases match their schemas" % checked,
    "\n".join(wrong))

print("1..%d" % N)
sys.exit(1 if FAILED else 0)
