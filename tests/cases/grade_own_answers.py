#!/usr/bin/env python3
"""Every case of tests/cases that a route answers with 200 JSON, graded
against attnd's own answer: the answer sent back unchanged to POST /grade
must pass, field by field, nested groups and diagnostics warnings included
(docs/contract.md section 13). One TAP line per case.

usage: python3 tests/cases/grade_own_answers.py BASE_URL
Standard library only."""

import json
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_binaries import cases, send  # noqa: E402

# the routes /grade grades, by case directory
GRADABLE = {"attention_dot", "attention_additive", "attention_multihead",
            "regression_nw", "softmax_masked", "encoding_positional",
            "regression_nw_dataset", "transformer_encoder",
            "transformer_decoder"}
# the Transformer's answers: a perturbed output fails, naming the field
# alone, and the state_dicts' and trace's literal keys are graded one by
# one, named "<member>.<key>"
PERTURBED = {"transformer_encoder", "transformer_decoder"}


def grading_request(path, method, meta, body, answer):
    if method == "GET":  # the request object holds the query parameters
        request = {k: v for k, v in urllib.parse.parse_qsl(
            meta.get("query", ""), keep_blank_values=True)}
    else:
        request = json.loads(body)
    return json.dumps({"endpoint": path, "request": request,
                       "answer": answer}).encode()


def main():
    base = urllib.parse.urlsplit(sys.argv[1])
    host, port = base.hostname, base.port or 80
    n = failed = 0
    for endpoint, name, method, path, meta, body in cases():
        if endpoint not in GRADABLE or "path" in meta:
            continue
        method = meta.get("method", method)
        status, ctype, _, text = send(port, method, path, meta, body, host)
        if method not in ("GET", "POST") or status != 200 or \
                not (ctype or "").startswith("application/json"):
            continue
        answer = json.loads(text)
        g_status, _, _, g_text = send(
            port, "POST", "/grade", {},
            grading_request(path, method, meta, body, answer), host)
        graded = json.loads(g_text) if g_status == 200 else {}
        ok = graded.get("pass") is True and graded.get("fields")
        n += 1
        failed += not ok
        print(f"{'ok' if ok else 'not ok'} {n} - {endpoint}/{name}: attnd's "
              f"own answer passes /grade "
              f"({len(graded.get('fields', {}))} fields)")
        if not ok:
            print(f"#   {g_status} {g_text[:400]!r}")
        if endpoint in PERTURBED:
            fields = graded.get("fields", {})
            keyed = [f for f in fields if f.startswith(
                "grads.state_dict.layers.0.")] and \
                "trace.self_attention.masked" in fields
            n += 1
            failed += not keyed
            print(f"{'ok' if keyed else 'not ok'} {n} - {endpoint}/{name}: "
                  "the state_dict's and trace's keys are graded as fields "
                  "(grads.state_dict.layers.0.<name>, "
                  "trace.self_attention.masked)")
            bad = json.loads(text)
            x = bad["output"]
            while isinstance(x[0], list):
                x = x[0]
            x[0] += 1e-3
            g_status, _, _, g_text = send(
                port, "POST", "/grade", {},
                grading_request(path, method, meta, body, bad), host)
            graded = json.loads(g_text) if g_status == 200 else {}
            wrong = [f for f, v in graded.get("fields", {}).items()
                     if not v.get("pass")]
            ok = graded.get("pass") is False and wrong == ["output"]
            n += 1
            failed += not ok
            print(f"{'ok' if ok else 'not ok'} {n} - {endpoint}/{name}: "
                  "output off by 1e-3 in one entry fails, naming output "
                  "alone")
            if not ok:
                print(f"#   {g_status} failed {wrong} {g_text[:300]!r}")
    print(f"1..{n}")
    return 1 if failed or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
