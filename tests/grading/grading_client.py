"""grading_client.py — what the tests of the catalogue of mistakes
(mistakes_<route>.py) share: POST /grade with the standard library, TAP
lines, and the check that /grade names a mistake on the fields it
explains.

A script imports it, takes its route's grade and expect_mistake, and
ends with finish():

    grade = grader("/attention/dot")
    expect_mistake = mistake_checker(grade)
"""
import json
import re
import sys
import urllib.error
import urllib.request

import numpy as np

BASE = sys.argv[1].rstrip("/") if len(sys.argv) > 1 else \
    "http://127.0.0.1:8080"
_counts = {"run": 0, "failed": 0}


def post(path, body):
    """(status, parsed JSON) of POST BASE+path with body as JSON."""
    req = urllib.request.Request(
        BASE + path, data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def http(path, body, ctype="application/json", timeout=120):
    """(status, raw answer) of POST BASE+path with body (bytes) as ctype."""
    req = urllib.request.Request(BASE + path, data=body,
                                 headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


# The ways students write numbers: in full, through float32,
# np.round(x, 4), np.round(x, 6), "%.6g", and as numpy prints an array
STYLES = ("full", "float32", "round4", "round6", "g6", "numpy_print")
_PRINTED = re.compile(r"[-+]?(?:nan|inf|\d+\.?\d*(?:e[-+]?\d+)?|\.\d+)")


def written_as(x, style):
    """The float array x as a student writing in style gives it back."""
    x = np.asarray(x, float)
    if style == "full":
        return x
    if style == "float32":
        return x.astype(np.float32).astype(float)
    if style == "round4":
        return np.round(x, 4)
    if style == "round6":
        return np.round(x, 6)
    if style == "g6":
        return np.vectorize(lambda v: float("%.6g" % v))(x)
    if style == "numpy_print":
        text = np.array2string(x, threshold=1 << 30)
        return np.array([float(t) for t in _PRINTED.findall(text)]
                        ).reshape(x.shape)
    raise ValueError(style)


def tap(ok, name, detail=""):
    """One TAP line; detail, on a failure, as # comments."""
    _counts["run"] += 1
    if not ok:
        _counts["failed"] += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", _counts["run"], name))
    if not ok and detail:
        for line in str(detail).splitlines():
            print("# " + line)


check = tap


def tolist(v):
    """numpy arrays and scalars as JSON values, inside dicts and lists."""
    if isinstance(v, dict):
        return {k: tolist(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [tolist(x) for x in v]
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def grader(endpoint):
    """grade(request, answer, **tol): /grade's answer for endpoint; a
    status other than 200 raises RuntimeError."""
    def grade(request, answer, **tol):
        body = {"endpoint": endpoint, "request": tolist(request),
                "answer": tolist(answer)}
        body.update(tol)
        status, out = post("/grade", body)
        if status != 200:
            raise RuntimeError("POST /grade answered %d: %s" % (status, out))
        return out
    return grade


def mistake_checker(grade):
    """expect_mistake(name, request, answer, code, fields): one TAP line,
    ok when /grade fails the answer and names exactly code on exactly
    fields, with an explanation."""
    def expect_mistake(name, request, answer, code, fields):
        try:
            out = grade(request, answer)
        except Exception as e:  # noqa: BLE001 — reported as a failure
            tap(False, name, e)
            return
        mc = out.get("misconception")
        ok = (out.get("pass") is False and isinstance(mc, dict)
              and mc.get("code") == code
              and sorted(mc.get("fields", [])) == sorted(fields)
              and isinstance(mc.get("explanation"), str)
              and mc["explanation"])
        tap(ok, "%s: /grade names %s on %s" % (name, code, sorted(fields)),
            json.dumps({"pass": out.get("pass"), "misconception": mc}))
    return expect_mistake


def finish():
    """The TAP plan, and the exit status: 1 when a check failed."""
    print("1..%d" % _counts["run"])
    sys.exit(1 if _counts["failed"] else 0)
