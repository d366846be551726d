#!/usr/bin/python3
"""test_formats.py — /grade's LMS formats against the published schemas
(tests/grading/schemas/, each naming the documentation page it follows):
every answer in "format": "gradescope" or "prairielearn" over HTTP, and
the documents of several submissions (graded ones and a problem) that
POST /grade/batch?format=... answers. Asserts the
values too: scores in points and in [0, 1], every one finite and within
its maximum, one test per graded field, names, and the misconception in
the text of the fields it explains; that advice for the grader never
reaches the student's text (a hidden Gradescope test, PrairieLearn's
"instructor_notes"); each test's visibility; the 1 MB cap on a document
of 2,000 submissions and on a 1.1 MB string; sums over submissions that
add back exactly.

    usage: /usr/bin/python3 test_formats.py BASE_URL
Prints TAP.
"""
import json
import math
import os
import sys
import urllib.error
import urllib.request

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cases"))
import catalogue  # noqa: E402  (tests/cases/catalogue.py)
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


def bounded(fmt, doc):
    """Every score and points value finite and in [0, its maximum]."""
    def ok(x, hi=None):
        return (isinstance(x, (int, float)) and math.isfinite(x) and x >= 0
                and (hi is None or x <= hi))
    if fmt == "gradescope":
        return ok(doc.get("score")) and all(
            ok(t.get("max_score")) and ok(t.get("score"), t["max_score"])
            for t in doc.get("tests", []))
    return ("score" not in doc or ok(doc["score"], 1)) and all(
        ok(t.get("max_points")) and ok(t.get("points"), t["max_points"])
        for t in doc.get("tests", []))


def valid(fmt, doc, name):
    errors = sorted(VALIDATORS[fmt].iter_errors(doc), key=str)
    if not errors and not bounded(fmt, doc):
        errors = [ValueError("a score or points value not finite or out "
                             "of [0, its maximum]")]
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


# 6. who reads what: the student's text never carries advice for the
#    grader; that goes where students do not look (docs/grading.md "LMS
#    formats", docs/misconceptions.md "Who reads what")
ADVICE = ("grade with", "to accept", "graded request", "fully_masked\": "
          "\"uniform\" in")


def advice_in(text):
    return [a for a in ADVICE if a in text]


entries = catalogue.read()
bad = ["%s: %s" % (c, advice_in(e)) for c, (e, _) in entries.items()
       if advice_in(e)]
tap(len(entries) >= 32 and not bad and all(
    entries[c][1] and "\"fully_masked\": \"uniform\"" in entries[c][1]
    for c in ("dot.masked_fill_1e6", "dot.masked_fill_1e9",
              "softmax.masked_fill_1e6")),
    "catalogue: %d explanations hold no grader advice; the masked_fill "
    "entries carry it as instructor text" % len(entries), bad or entries)

MASKED = {"scores": [[1, 2], [3, 4]], "valid_lens": [0, 1]}
D2L = {"weights": [[0.5, 0.5], [1, 0]]}  # masked_softmax: 1/Nk, no key seen
D2L_BODY = {"endpoint": "/softmax/masked", "id": "ada", "request": MASKED,
            "answer": D2L}
status, _, own = post(D2L_BODY)
mc = own.get("misconception") or {}
tap(status == 200 and mc.get("code") == "softmax.masked_fill_1e6" and
    not advice_in(mc.get("explanation", "x grade with")) and
    "\"fully_masked\": \"uniform\"" in mc.get("instructor_note", "") and
    mc.get("fields") == ["weights"],
    "attnd: the explanation is the student's, instructor_note the grader's",
    own)
status, _, own = post(submission(NO_SCALE, {}, None))
tap("instructor_note" not in (own.get("misconception") or {"x": 1}) and
    own["misconception"]["code"] == "dot.no_scale",
    "attnd: no instructor_note when the mistake has no advice", own)
DOT_MASKED = {"queries": [[[1, 2]]], "keys": [[[1, 0], [0, 1]]],
              "values": [[[1], [2]]], "valid_lens": [0]}
status, _, own = post({"endpoint": "/attention/dot", "request": DOT_MASKED,
                       "answer": {"weights": [[[0.5, 0.5]]]}})
mc = own.get("misconception") or {}
tap(mc.get("code") == "dot.masked_fill_1e6" and
    not advice_in(mc.get("explanation", "grade with")) and
    "\"fully_masked\": \"uniform\"" in mc.get("instructor_note", ""),
    "attnd: dot.masked_fill_1e6 keeps its advice out of the explanation",
    own)


def student_texts(fmt, doc):
    """Every text of doc that students see."""
    if fmt == "gradescope":
        return [doc.get("output", "")] + [
            t.get("name", "") + "\n" + t.get("output", "")
            for t in doc.get("tests", []) if t.get("visibility") != "hidden"]
    errors = doc.get("format_errors", [])
    return [doc.get("message", ""), doc.get("output", "")] + (
        [errors] if isinstance(errors, str) else errors) + [
        "\n".join(str(v) for v in t.values()) for t in doc.get("tests", [])]


NOTE = "notes for the instructor"
for vis in ("visible", "after_due_date"):
    extra = {} if vis == "visible" else {"visibility": vis}
    status, _, g = post(dict(D2L_BODY, format="gradescope", **extra))
    valid("gradescope", g, "masked_fill_1e6 " + vis)
    tests = g.get("tests", [])
    notes = [t for t in tests if t.get("name") == "ada: " + NOTE]
    tap(status == 200 and len(tests) == 2 and
        tests[0]["name"] == "ada: weights" and
        tests[0]["visibility"] == vis and
        "misconception softmax.masked_fill_1e6: masked scores" in
        tests[0]["output"] and len(notes) == 1 and
        notes[0]["visibility"] == "hidden" and
        notes[0]["score"] == notes[0]["max_score"] == 0 and
        "\"fully_masked\": \"uniform\"" in notes[0]["output"] and
        not any(advice_in(x) for x in student_texts("gradescope", g)),
        "gradescope %s: tests %s, the grader's advice only in a hidden "
        "test of 0 points" % (vis, vis), g)
tap(g.get("output") == "graded; its tests are shown after the due date",
    "gradescope: the output students always see withholds what "
    "after_due_date tests hold", g.get("output"))
status, _, p = post(dict(D2L_BODY, format="prairielearn"))
valid("prairielearn", p, "masked_fill_1e6")
tap(status == 200 and p.get("instructor_notes") == [
    "ada: misconception softmax.masked_fill_1e6: " +
    entries["softmax.masked_fill_1e6"][1]] and
    "misconception softmax.masked_fill_1e6: masked scores" in p["message"]
    and not any(advice_in(x) for x in student_texts("prairielearn", p)),
    "prairielearn: the advice in instructor_notes, not in what students "
    "see", p)
status, _, p = post(submission(NO_SCALE, {}, "prairielearn"))
tap("instructor_notes" not in p,
    "prairielearn: no instructor_notes without advice", p)

for vis in ("hidden", "after_published"):
    status, _, g = post(submission(NO_SCALE, {"visibility": vis},
                                   "gradescope"))
    tap(status == 200 and [t["visibility"] for t in g["tests"]] ==
        [vis, vis] and "misconception" not in g["output"],
        "gradescope: every test %s" % vis, g)
status, _, doc = post(submission(NO_SCALE, {"visibility": "secret"},
                                 "gradescope"))
tap(status == 422 and doc.get("pointer") == "/visibility",
    "visibility: an unknown name is a 422 at /visibility", doc)
MIXED = [dict(D2L_BODY, id="ada", visibility="hidden"),
         dict(submission(NO_SCALE, {"id": "bo"}, None)),
         dict(submission({"outptu": [[1]]}, {"id": "cy",
                                             "visibility": "after_due_date"},
                         None))]
for x in MIXED:
    x.pop("format", None)
status, g = batch("gradescope", MIXED)
valid("gradescope", g, "mixed visibility")
tap(status == 200 and [(t["name"], t["visibility"]) for t in g["tests"]] ==
    [("ada: weights", "hidden"), ("ada: " + NOTE, "hidden"),
     ("bo: output", "visible"), ("bo: weights", "visible"),
     ("cy", "after_due_date")] and
    g["output"].splitlines() == [
        "ada: graded; its tests are hidden",
        g["output"].splitlines()[1],
        "cy: not graded; its tests are shown after the due date"] and
    g["output"].splitlines()[1].startswith("bo: fail: 0 of 2 fields pass"),
    "gradescope batch: each submission's tests carry its visibility, a "
    "problem's too", g)


# 7. the 1 MB cap: a document of many submissions, and a huge string
def batch_raw(fmt, subs):
    body = "".join(json.dumps(x) + "\n" for x in subs).encode()
    req = urllib.request.Request(
        BASE + "/grade/batch?format=" + fmt, data=body,
        headers={"Content-Type": "application/x-ndjson"})
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


CAP = 1000000
MANY = []
for i in range(2000):
    long_id = ("é" * 120 if i % 3 == 1 else "x" * 245) + "-%05d" % i
    if i % 3 == 0:
        MANY.append({"endpoint": "/attention/dot", "id": long_id,
                     "request": REQ, "answer": NO_SCALE})
    elif i % 3 == 1:
        MANY.append(dict(D2L_BODY, id=long_id))
    else:
        MANY.append({"endpoint": "/attention/dot", "id": long_id,
                     "request": REQ, "answer": {"outptu": [[1]]},
                     "points": 2})
WANT_TESTS = sum(2 if i % 3 == 0 else 1 for i in range(2000))
WANT_MAX = sum(2 if i % 3 != 1 else 1 for i in range(2000))
for fmt in ("gradescope", "prairielearn"):
    status, raw = batch_raw(fmt, MANY)
    doc = json.loads(raw)
    valid(fmt, doc, "2000 submissions")
    tests = [t for t in doc.get("tests", [])
             if not t["name"].endswith(NOTE)]
    names = [t["name"] for t in tests]
    hi = "max_score" if fmt == "gradescope" else "max_points"
    summary = doc.get("output" if fmt == "gradescope" else "message", "")
    tap(status == 200 and len(raw) <= CAP and len(tests) == WANT_TESTS and
        len(set(names)) == len(names) and
        sum(t[hi] for t in tests) == WANT_MAX and bounded(fmt, doc) and
        doc["score"] == 0 and
        ("more bytes)" in summary or "left out" in summary),
        "%s: 2000 submissions with long ids: %d bytes <= 1 MB, every test "
        "and its points kept, names unique, the cut said" %
        (fmt, len(raw)), "%s %d bytes %d tests %r" % (
            status, len(raw), len(tests), summary[:300]))
    tap(all(n.endswith(("-%05d: output" % i, "-%05d: weights" % i)
                       if i % 3 == 0 else ("-%05d: weights" % i,)
                       if i % 3 == 1 else ("-%05d" % i,))
            for n, i in zip(names, (i for i in range(2000)
                                    for _ in range(2 if i % 3 == 0 else 1)))),
        "%s: a cut name keeps the end of its id and its field" % fmt,
        names[:3])
    if fmt == "prairielearn":
        tap(len(doc.get("format_errors", [])) == 666 and
            doc.get("gradable") is True,
            "prairielearn: 2000 submissions: every problem a format error",
            len(doc.get("format_errors", [])))

HUGE = {"endpoint": "/attention/dot", "id": "big", "request": REQ,
        "answer": {"output": [["y" * 1100000]],
                   "weights": [[0.33024, 0.66976]]}}
for fmt in ("gradescope", "prairielearn"):
    body = json.dumps(dict(HUGE, format=fmt)).encode()
    req = urllib.request.Request(BASE + "/grade", data=body, headers={
        "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    doc = json.loads(raw)
    valid(fmt, doc, "a 1.1 MB string")
    out = doc.get("tests", [{}])[0].get("output", "")
    tap(status == 200 and len(raw) <= CAP and "more bytes)" in out and
        bounded(fmt, doc) and len(doc["tests"]) == 2,
        "%s: a 1.1 MB string in the answer: %d bytes, the value cut with "
        "a marker" % (fmt, len(raw)), out[:300])
    status, raw = batch_raw(fmt, [HUGE, dict(HUGE, id="big2")] + MANY[:50])
    doc = json.loads(raw)
    valid(fmt, doc, "a batch of 1.1 MB strings")
    tap(status == 200 and len(raw) <= CAP and bounded(fmt, doc),
        "%s: a batch holding 1.1 MB strings: %d bytes" % (fmt, len(raw)),
        raw[:300])


# 8. sums over submissions add back exactly
RIGHT_ONE = {"endpoint": "/attention/dot", "request": REQ, "answer": RIGHT}
for points, k, total in ((1, 7, 7), (1 / 7, 7, 1), (0.1, 10, 1),
                         (0.1, 3, 0.3)):
    subs = [dict(RIGHT_ONE, id=i, points=points) for i in range(k)]
    status, g = batch("gradescope", subs)
    status2, p = batch("prairielearn", subs)
    tap(status == status2 == 200 and g.get("score") == total and
        p.get("score") == 1 and bounded("gradescope", g) and
        bounded("prairielearn", p),
        "%d submissions worth %r, all right: gradescope %r exactly, "
        "prairielearn 1" % (k, points, total),
        "%r %r" % (g.get("score"), p.get("score")))
subs = [dict(RIGHT_ONE, id=i, points=0.1) for i in range(3)] + [
    dict(RIGHT_ONE, id="half", points=0.1,
         answer={"output": [[1.66976]], "weights": [[0.5, 0.5]]})]
status, g = batch("gradescope", subs)
status2, p = batch("prairielearn", subs)
tap(g.get("score") == 0.35 and p.get("score") == 0.35 / 0.4 and
    bounded("gradescope", g) and bounded("prairielearn", p),
    "a field short: gradescope 0.35 (not 0.35000000000000003), "
    "prairielearn 0.35 / 0.4",
    "%r %r" % (g.get("score"), p.get("score")))

print("1..%d" % N)
sys.exit(1 if FAILED else 0)
