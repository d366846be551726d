#!/usr/bin/env python3
"""grade_batch.py — POST /grade/batch over HTTP (docs/batch.md), TAP.

Against the daemon at BASE_URL: JSON Lines and array forms (order, ids,
content types, the exact framing of each answer; ?format= LMS documents
checked against their schemas), malformed submissions
among good ones failing alone with their pointers, CRLF and blank lines,
one request spelled three ways graded alike, batch-level problems (empty,
not an array, 415). Against daemons of ATTND started here: a batch whose
references together exceed --max-work (problem lines from there on), and
a body over --max-body-bytes (413 naming it).

    usage: grade_batch.py BASE_URL [ATTND]
"""
import json
import math
import os
import re
import sys
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "http"))
from daemon import start  # noqa: E402

N = 0
FAILED = 0


def check(ok, name, info=""):
    global N, FAILED
    N += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", N, name))
    if not ok:
        FAILED += 1
        for line in str(info)[:1500].splitlines():
            print("#   " + line)


def post(base, body, ctype, path="/grade/batch"):
    """(status, headers, body bytes)."""
    data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(base + path, data=data, method="POST")
    if ctype is not None:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def lines_of(body):
    text = body.decode()
    return [json.loads(line) for line in text.split("\n") if line]


# d2l's toy: one query, two keys, d = 2 (scale 1/sqrt(2))
REQ = {"queries": [[[1, 0]]], "keys": [[[1, 0], [0, 1]]],
       "values": [[[1, 2], [3, 4]]]}
REQ2 = {"queries": [[[0, 1]]], "keys": [[[1, 0], [0, 1]]],
        "values": [[[1, 2], [3, 4]]]}


def output(w):
    return [[[w + 3 * (1 - w), 2 * w + 4 * (1 - w)]]]


W = 1 / (1 + math.exp(-1 / math.sqrt(2)))
RIGHT = {"output": output(W)}
UNSCALED = {"output": output(1 / (1 + math.exp(-1)))}
RIGHT2 = {"output": output(1 - W)}


def sub(id_, request=REQ, answer=RIGHT, **extra):
    s = {"id": id_, "endpoint": "/attention/dot", "request": request,
         "answer": answer}
    s.update(extra)
    return s


def ndjson(subs, eol="\n"):
    return "".join(json.dumps(s) + eol for s in subs)


def main():
    base = sys.argv[1].rstrip("/")
    attnd = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("ATTND")

    # 1. JSON Lines: order, ids, framing
    subs = [sub("ada"), sub(2, answer=UNSCALED), sub("bob")]
    st, hd, body = post(base, ndjson(subs), "application/x-ndjson")
    check(st == 200 and hd.get("Content-Type") == "application/x-ndjson",
          "JSON Lines in: 200 application/x-ndjson", (st, hd, body))
    lines = lines_of(body) if st == 200 else []
    check([l.get("id") for l in lines] == ["ada", 2, "bob"],
          "one line per submission, in order, with its id", body)
    check(body.endswith(b"\n") and body.count(b"\n") == 3 and
          body.startswith(b'{"id":"ada","pass":true,'),
          "each line ends with a newline and starts with its id", body)
    check([l.get("pass") for l in lines] == [True, False, True] and
          lines[1].get("misconception", {}).get("code") == "dot.no_scale",
          "the grades are /grade's: pass, fail, the mistake named", body)
    single = post(base, json.dumps({k: v for k, v in subs[1].items()
                                    if k != "id"}), "application/json",
                  "/grade")[2]
    check(lines[1:2] and json.dumps(dict(lines[1], id=None)) ==
          json.dumps(dict({"id": None}, **json.loads(single))),
          "a line is {id} + the /grade answer of the same body",
          (lines[1:2], single))

    # 1b. a submission that gives a member twice fails alone: a second
    # "request" must not replace the one its answer is graded against
    twice = json.dumps(sub("twice", answer=UNSCALED))[:-1] + \
        ', "request": ' + json.dumps(dict(REQ, scale=1)) + "}"
    st, hd, body = post(base, ndjson([sub("ada")]) + twice + "\n",
                        "application/x-ndjson")
    lines = lines_of(body) if st == 200 else []
    check(len(lines) == 2 and lines[0].get("pass") is True and
          lines[1].get("problem", {}).get("code") == "invalid_json" and
          "twice" in lines[1]["problem"].get("detail", ""),
          "a submission giving request twice is its own problem line", body)

    # 2. array in, array out
    st, hd, body = post(base, json.dumps(subs[:2]), "application/json")
    check(st == 200 and hd.get("Content-Type") == "application/json",
          "an array in: 200 application/json", (st, body))
    text = body.decode()
    check(text.startswith('[\n{"id":"ada",') and text.endswith("}\n]\n") and
          text.count("\n") == 4 and "},\n{\"id\":2," in text,
          "an array out, one submission per line", text[:300])
    check([l["id"] for l in json.loads(text)] == ["ada", 2],
          "the array parses, in order", text[:300])

    # 3. malformed submissions fail alone
    raw = [json.dumps(sub("good1")),
           '{"id": "cut", "endpoint": ',
           json.dumps({"endpoint": "/attention/dot", "request": REQ,
                       "answer": RIGHT}),
           json.dumps(sub("typo", answer={"outptu": [[[1, 2]]]})),
           json.dumps(sub("badreq", request=dict(REQ, scale="big"))),
           json.dumps(sub("shape", request={"queries": [[[1, 0, 0]]],
                                            "keys": REQ["keys"],
                                            "values": REQ["values"]})),
           "not json at all",
           "[1, 2]",
           json.dumps(sub(3.5)),
           json.dumps(sub("good2"))]
    st, hd, body = post(base, "\n".join(raw) + "\n", "application/x-ndjson")
    lines = lines_of(body) if st == 200 else []
    want = [("good1", None, None), (None, "invalid_json", None),
            (None, "missing_field", "/id"),
            ("typo", "unknown_field", "/answer/outptu"),
            ("badreq", "wrong_type", "/request/scale"),
            ("shape", "shape_mismatch", "/request/keys"),
            (None, "invalid_json", None), (None, "wrong_type", ""),
            (None, "wrong_type", "/id"), ("good2", None, None)]
    got = [(l.get("id"), l.get("problem", {}).get("code"),
            l.get("problem", {}).get("pointer")) for l in lines]
    check(st == 200 and got == want,
          "each malformed submission fails alone, its pointer inside it",
          "\n".join(map(str, got)) + "\n" + body.decode()[:800])
    check(all(l.get("pass") is True for l in (lines[0], lines[-1])) if lines
          else False, "the good ones around them are graded", body[:300])
    probs = [l["problem"] for l in lines if "problem" in l]
    check(probs and all(set(p) >= {"type", "title", "status", "code",
                                   "detail"} and p["status"] in (400, 422)
                        for p in probs),
          "problem lines are problem+json objects", probs)
    check(lines and "line 2 of the body" in lines[1]["problem"]["detail"],
          "a line that is not JSON says which line", lines[1:2])

    # 4. CRLF and blank lines, application/jsonl and application/x-jsonlines
    body_crlf = "\r\n \r\n" + ndjson([sub(1), sub(2)], "\r\n\r\n") + "\t"
    for ctype in ("application/jsonl", "application/x-jsonlines",
                  "application/x-ndjson; charset=utf-8"):
        st, hd, body = post(base, body_crlf, ctype)
        check(st == 200 and [l.get("pass") for l in lines_of(body)] ==
              [True, True], "CRLF and blank lines as %s" % ctype, body[:300])
    st, _, body = post(base, ndjson([sub(1)]).rstrip("\n"),
                       "application/x-ndjson")
    check(st == 200 and len(lines_of(body)) == 1,
          "a last line without its newline", body[:200])

    # 5. one request spelled three ways: the same grade
    spelled = ('{"id":"b","endpoint":"/attention/dot","request":{ "values":'
               '[[[1e0,2],[3,4.0]]], "keys":[[[1.0,0],[0,1]]], "queries":'
               '[[[1,0e0]]] },"answer":%s}' % json.dumps(UNSCALED))
    spelled2 = ('{"answer":%s,"request":{"queries":[[[10e-1,0.0]]],"keys":'
                '[[[1,0],[0,1]]],"values":[[[1,2],[3,4]]]},"endpoint":'
                '"/attention/dot","id":"c"}' % json.dumps(UNSCALED))
    st, _, body = post(base, "\n".join([json.dumps(sub("a", answer=UNSCALED)),
                                         spelled, spelled2]) + "\n",
                       "application/x-ndjson")
    ls = lines_of(body) if st == 200 else []
    strip = [json.dumps({k: v for k, v in l.items() if k != "id"},
                        sort_keys=True) for l in ls]
    check(len(strip) == 3 and len(set(strip)) == 1 and
          ls[0]["misconception"]["code"] == "dot.no_scale",
          "key order, whitespace and 1 / 1.0 / 1e0 grade alike", body[:600])

    # 6. batch-level problems
    for ctype, text, status, code in (
            ("application/x-ndjson", "", 422, "invalid_value"),
            ("application/x-ndjson", "\n\r\n  \n", 422, "invalid_value"),
            ("application/json", "[]", 422, "invalid_value"),
            ("application/json", json.dumps(sub(1)), 422, "wrong_type"),
            ("application/json", "oops", 400, "invalid_json"),
            ("text/plain", ndjson([sub(1)]), 415, "unsupported_media_type"),
            (None, ndjson([sub(1)]), 415, "unsupported_media_type")):
        st, hd, body = post(base, text, ctype)
        p = json.loads(body) if body else {}
        check(st == status and p.get("code") == code and
              hd.get("Content-Type") == "application/problem+json" and
              (status != 422 or code != "invalid_value" or
               p.get("pointer") == ""),
              "%s %r: %d %s" % (ctype, text[:20], status, code), body[:300])
    st, _, body = post(base, json.dumps(sub(1)), "application/json")
    check("application/x-ndjson" in json.loads(body).get("detail", ""),
          "a JSON body that is not an array says what to send", body)

    # 7. ?format=: one LMS document of the whole batch, valid by the
    # schemas of its documentation (tests/grading/schemas)
    import jsonschema
    schemas = os.path.join(HERE, "..", "grading", "schemas")
    subs = [sub("ada"), sub("bo", answer=UNSCALED),
            sub("cy", answer={"outptu": 1})]
    for fmt in ("gradescope", "prairielearn"):
        with open(os.path.join(schemas, fmt + "_results.schema.json")) as f:
            schema = json.load(f)
        for ctype, text in (("application/x-ndjson", ndjson(subs)),
                            ("application/json", json.dumps(subs))):
            st, hd, body = post(base, text, ctype,
                                "/grade/batch?format=" + fmt)
            doc = json.loads(body) if st == 200 else {}
            errors = list(jsonschema.Draft202012Validator(schema)
                          .iter_errors(doc)) if doc else ["no document"]
            names = [t.get("name") for t in doc.get("tests", [])]
            check(st == 200 and hd.get("Content-Type") ==
                  "application/json" and not errors and
                  names == ["ada: output", "bo: output", "cy"],
                  "?format=%s (%s): one %s document, a test per field and "
                  "per problem" % (fmt, ctype, fmt),
                  "%s\n%s" % (errors[:3], body[:600]))
    st, _, body = post(base, ndjson(subs), "application/x-ndjson",
                       "/grade/batch?format=gradescope")
    doc = json.loads(body) if st == 200 else {}
    check(doc.get("score") == 1 and "misconception dot.no_scale" in
          json.dumps(doc) and "not graded: unknown_field at /answer/outptu"
          in json.dumps(doc), "gradescope: 1 point, the mistake named, the "
          "problem as a test of 0", body[:600])
    st, _, body = post(base, ndjson(subs), "application/x-ndjson",
                       "/grade/batch?format=moodle")
    p = json.loads(body) if body else {}
    check(st == 422 and p.get("pointer") == "/format" and
          p.get("code") == "invalid_value", "?format=moodle: 422 at /format",
          body)

    # 7b. what a batch may hold: at most 10000 submissions, counted before
    # any is graded (a line of "1" is a problem line some hundred times its
    # size), and ids of at most 256 bytes (an LMS document repeats them)
    st, _, body = post(base, "1\n" * 10001, "application/x-ndjson")
    p = json.loads(body) if body else {}
    check(st == 413 and p.get("code") == "payload_too_large" and
          "10000 submissions" in p.get("detail", ""),
          "10001 submissions: 413 before any is graded", body[:300])
    st, _, body = post(base, "1\n" * 10000, "application/x-ndjson")
    check(st == 200 and body.count(b"\n") == 10000,
          "10000 submissions: graded, one line each", body[:300])
    st, _, body = post(base, ndjson([sub("x" * 257), sub("y" * 256)]),
                       "application/x-ndjson")
    ls = lines_of(body) if st == 200 else []
    check(len(ls) == 2 and ls[0].get("problem", {}).get("pointer") == "/id"
          and ls[1].get("pass") is True,
          "an id of 257 bytes is its own problem line, 256 is graded",
          body[:400])

    # 8. the batch's limits, on daemons of their own
    if not attnd:
        check(False, "ATTND names the attnd binary (run.sh exports it)")
        return
    proc, port, _ = start(attnd, "--max-work", "1")
    try:
        st, _, body = post("http://127.0.0.1:%d" % port, json.dumps(REQ),
                           "application/json", "/attention/dot")
    finally:
        proc.kill()
        proc.wait()
    m = re.search(r"needs about (\d+) multiply-adds", body.decode())
    check(st == 413 and m, "the small dot's work, from its 413", body)
    if not m:
        return
    ops = int(m.group(1))
    proc, port, _ = start(attnd, "--max-work", str(ops + ops // 2),
                          "--max-body-bytes", "4096")
    limited = "http://127.0.0.1:%d" % port
    try:
        st, _, body = post(limited, ndjson([sub("a"), sub("b", REQ2, RIGHT2),
                                            sub("c")]),
                           "application/x-ndjson")
        ls = lines_of(body) if st == 200 else []
        check(st == 200 and len(ls) == 3 and ls[0].get("pass") is True,
              "within --max-work: graded", body[:400])
        later = [l.get("problem", {}) for l in ls[1:]]
        check(len(later) == 2 and
              all(p.get("code") == "payload_too_large" and p.get("status") ==
                  413 and "--max-work" in p.get("detail", "") and
                  "not graded" in p.get("detail", "") for p in later) and
              [l.get("id") for l in ls[1:]] == ["b", "c"],
              "beyond the batch's --max-work: problem lines from there on",
              body[:800])
        big = ndjson([sub(i) for i in range(40)])
        st, _, body = post(limited, big, "application/x-ndjson")
        p = json.loads(body) if body else {}
        check(st == 413 and "--max-body-bytes" in p.get("detail", ""),
              "a batch over --max-body-bytes: 413 naming it", body[:300])
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
    print("1..%d" % N)
    sys.exit(1 if FAILED else 0)
