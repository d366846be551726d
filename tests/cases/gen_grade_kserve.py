#!/usr/bin/env python3
"""Writes the data cases of POST /grade (tests/cases/grade/) and of the
Open Inference Protocol front (tests/cases/v2_*/); see README.md.

Reference answers come from reference.py (the plain-Python implementation
of the contract, independent of lib/) or from the contract's golden
numbers. Grades are computed here from those references and the answers
the cases send, with the contract's comparisons (section 13: the default
relabs_or_rounded, or relabs for a request's rtol/atol) in Python's
doubles. Errors are written from the rules in
docs/contract.md sections 1, 12 and 13 (and the orders documented in
api/fronts/openapi.json).

    python3 tests/cases/gen_grade_kserve.py
"""

import json
import math
import os
import random
import sys
import struct

import catalogue
import reference as ref
from casefile import CaseSet, flat, ok, rand_tensor

HERE = os.path.dirname(os.path.abspath(__file__))
ROUTES = {
    "grade": "POST /grade",
    "v2_server": "GET /v2",
    "v2_model_metadata": "GET /v2/models/attention_dot",
    "v2_model_ready": "GET /v2/models/attention_dot/ready",
    "v2_infer_attention_dot": "POST /v2/models/attention_dot/infer",
    "v2_infer_attention_additive": "POST /v2/models/attention_additive/infer",
    "v2_infer_attention_multihead":
        "POST /v2/models/attention_multihead/infer",
    "v2_infer_regression_nw": "POST /v2/models/regression_nw/infer",
}
CASES = CaseSet(ROUTES)
add = CASES.add
CATALOGUE = catalogue.read()


def problem(code, pointer=None, expected=None, got=None, status=422):
    body = {"code": code}
    if pointer is not None:
        body["pointer"] = pointer
    if expected is not None:
        body["expected"] = expected
    if got is not None:
        body["got"] = got
    return {"status": status, "body": body}


def float32(x):
    """x rounded to the nearest float (IEEE binary32), as a double."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def v2_error(prefix, status=422):
    """The protocol's {"error": message}; the message must start with
    prefix ("<code> at <pointer>:")."""
    return {"status": status, "body": {"error": prefix}}


# ------------------------------------------------------------ grading

RTOL, ATOL = 1e-5, 1e-8


def decimals_shown(x):
    """The decimals of x's shortest text (Python's repr is the shortest
    that reads back): 0.034123 shows 6, 1.2e-07 eight, 1.0 none."""
    mantissa, _, exponent = repr(float(abs(x))).partition("e")
    whole, _, frac = mantissa.partition(".")
    frac = frac.rstrip("0")
    return max(0, len(frac) - int(exponent or 0))


def grade_field(expected, got, pointer, rtol=None, atol=None):
    """The contract's per-field result for nested lists expected / got of
    the same shape (or scalars); entries None (null) match only None.
    Without rtol and atol, the default comparison (relabs_or_rounded:
    numpy.isclose's 1e-5 and 1e-8, or got is expected rounded to the
    decimals got shows, at least 4: |got − expected| < 0.51·10^−k), and
    "rounded_to" when an entry matched only so; with either, relabs
    alone, as the request's rtol/atol without compare."""
    rounding = rtol is None and atol is None
    rtol = RTOL if rtol is None else rtol
    atol = ATOL if atol is None else atol
    pairs = []

    def walk(e, g, at):
        if isinstance(e, list):
            for i, (x, y) in enumerate(zip(e, g)):
                walk(x, y, at + "/%d" % i)
        elif isinstance(e, dict):
            for k in e:
                walk(e[k], g.get(k) if isinstance(g, dict) else None,
                     at + "/" + k)
        else:
            pairs.append((e, g, at))
    walk(expected, got, pointer)
    max_abs = max_rel = 0.0
    mismatches, first, rounded_to = 0, None, -1
    for e, g, at in pairs:
        num_g = isinstance(g, (int, float)) and not isinstance(g, bool)
        if e is None:
            bad = g is not None
        elif not num_g:
            bad = True
        else:
            err = abs(g - e)
            max_abs = max(max_abs, err)
            if e != 0:
                max_rel = max(max_rel, err / abs(e))
            bad = not err <= atol + rtol * abs(e)
            if bad and rounding:
                k = max(decimals_shown(g), 4)
                if k <= 17 and err < 0.51 * 10.0 ** -k:
                    bad = False
                    rounded_to = max(rounded_to, k)
        if bad:
            mismatches += 1
            if first is None:
                first = {"pointer": at, "expected": e, "got": g}
    out = {"pass": mismatches == 0, "max_abs_err": max_abs,
           "max_rel_err": max_rel}
    if rounded_to >= 0:
        out["rounded_to"] = rounded_to
    out.update({"mismatches": mismatches, "first_mismatch": first,
                "_entries": len(pairs)})
    return out


def shape_error(expected, got, pointer=None):
    """A field of the wrong shape: a grade, no entry compared."""
    body = {"pass": False, "error": "shape", "expected": expected,
            "got": got}
    if pointer is not None:
        body["pointer"] = pointer
    return body


def graded(fields, points=None, credit="all_or_nothing", id=None,
           misconception=None):
    """The answer to a grading request whose fields grade as given:
    each field scores 1 or 0 (credit all_or_nothing) or the fraction of
    its entries that match (partial; a shape error 0); its points are 1,
    points/len(fields) for a number, the object's value (0 when unnamed)
    for an object; the submission's score is earned / possible.
    misconception is written only when a field fails (null unless
    given)."""
    out_fields = {}
    earned = possible = 0.0
    for name, f in fields.items():
        f = dict(f)
        entries = f.pop("_entries", None)
        if credit == "partial" and "error" not in f:
            entries = entries if entries is not None else 0
            score = (1.0 if entries == 0
                     else (entries - f["mismatches"]) / entries)
        else:
            score = 1.0 if f["pass"] else 0.0
        f["score"] = score
        if points is None:
            worth = 1.0
        elif isinstance(points, dict):
            worth = points.get(name, 0)
        else:
            worth = points / len(fields)
        earned += worth * score
        possible += worth
        out_fields[name] = f
    passed = all(f["pass"] for f in out_fields.values())
    body = {}
    if id is not None:
        body["id"] = id
    body.update({"pass": passed,
                 "score": 1.0 if passed else earned / possible,
                 "points": {"earned": earned, "possible": possible},
                 "fields": out_fields})
    if not passed:
        body["misconception"] = misconception
    return ok(body)


# d2l's toy: keys all ones (2, 10, 2), values arange(40) twice,
# valid_lens [2, 6] -> outputs [[2, 3, 4, 5]] and [[10, 11, 12, 13]]
TOY_K = [[[1.0, 1.0] for _ in range(10)] for _ in range(2)]
TOY_V = [[[4 * i + c for c in range(4)] for i in range(10)] for _ in range(2)]
TOY_LENS = [2, 6]
TOY_OUT = [[[2, 3, 4, 5]], [[10, 11, 12, 13]]]
TOY_Q = [[[0.3, -1.2]], [[2.0, 0.5]]]
TOY_REQ = {"queries": TOY_Q, "keys": TOY_K, "values": TOY_V,
           "valid_lens": TOY_LENS}
# with valid_lens [1, 2] the weights are 1 and 1/2 and every output is
# exact in any order of summation: graded errors are exact too
EXACT_LENS = [1, 2]
EXACT_OUT = [[[0, 1, 2, 3]], [[2, 3, 4, 5]]]
EXACT_REQ = dict(TOY_REQ, valid_lens=EXACT_LENS)
# where references are not exact, graded errors carry their rounding:
# compare those cases' numbers to this (README.md)
LOOSE = {"atol": 1e-12, "rtol": 1e-9}


def grade_cases():
    E = "grade"
    out, w, s, _, scale = ref.dot_attention(TOY_Q, TOY_K, TOY_V,
                                            valid_lens=TOY_LENS)

    def req(answer, endpoint="/attention/dot", request=None, **tol):
        body = {"endpoint": endpoint,
                "request": TOY_REQ if request is None else request,
                "answer": answer}
        body.update(tol)
        return body

    # exact outputs, exact answers
    add(E, "dot_exact_pass",
        graded({"output": grade_field(EXACT_OUT, EXACT_OUT,
                                      "/answer/output")}),
        req({"output": EXACT_OUT}, request=EXACT_REQ))
    # one entry off by 2e-3 (a mismatch), one by 1e-6 (within rtol)
    got = json.loads(json.dumps(EXACT_OUT))
    got[1][0][2] = 4.002
    got[0][0][1] = 1.000001
    add(E, "dot_one_mismatch",
        graded({"output": grade_field(EXACT_OUT, got, "/answer/output")}),
        req({"output": got}, request=EXACT_REQ))
    # the same with a looser rtol passes
    add(E, "dot_rtol_loose",
        graded({"output": grade_field(EXACT_OUT, got, "/answer/output",
                                      rtol=1e-3)}),
        req({"output": got}, request=EXACT_REQ, rtol=1e-3))
    # atol only
    add(E, "dot_atol_only",
        graded({"output": grade_field(EXACT_OUT, got, "/answer/output",
                                      rtol=0, atol=1e-3)}),
        req({"output": got}, request=EXACT_REQ, rtol=0, atol=1e-3))
    # the contract's golden toy outputs (the reference rounds: loose)
    add(E, "dot_toy_golden",
        dict(graded({"output": grade_field(TOY_OUT, TOY_OUT,
                                           "/answer/output")}), **LOOSE),
        req({"output": TOY_OUT}))
    # weights in the flat form, with a null entry (mismatch) and masked
    # zeros given as 0
    wflat = flat(json.loads(json.dumps(w)))
    wflat["data"][0] = None
    exp_flat = flat(w)["data"]
    r = grade_field(exp_flat, wflat["data"], "/answer/weights/data")
    add(E, "dot_weights_flat_with_null",
        dict(graded({"output": grade_field(TOY_OUT, TOY_OUT, "/answer/output"),
                "weights": r, "scale": grade_field(scale, scale,
                                                   "/answer/scale")}), **LOOSE),
        req({"output": TOY_OUT, "weights": wflat, "scale": scale}))
    # a field of the wrong shape is a result, not an error
    add(E, "dot_shape_result",
        graded({"output": {"pass": False, "error": "shape",
                           "expected": [2, 1, 4], "got": [2, 4]},
                "scale": grade_field(scale, 0.7, "/answer/scale")}),
        req({"output": [[2, 3, 4, 5], [10, 11, 12, 13]], "scale": 0.7}))
    # ragged: the first row whose length differs, and -1 for the dimension
    # whose rows differ
    add(E, "dot_ragged_result",
        graded({"output": {"pass": False, "error": "shape",
                           "expected": [2, 1, 4], "got": [2, 1, -1],
                           "pointer": "/answer/output/1/0"}}),
        req({"output": [[[2, 3, 4, 5]], [[10, 11, 12]]]}))
    # a scalar given as [x] has shape [1], not []
    add(E, "dot_scalar_as_array_is_shape",
        graded({"scale": {"pass": False, "error": "shape", "expected": [],
                          "got": [1]}}),
        req({"scale": [scale]}))
    # masked scores are null in the reference: null matches, a number not
    sreq = dict(TOY_REQ, return_scores=True)
    sgot = json.loads(json.dumps(s))
    sgot[0][0][5] = -1e9  # a masked position given a number
    add(E, "dot_scores_null_masked",
        dict(graded({"scores": grade_field(s, sgot, "/answer/scores")}), **LOOSE),
        req({"scores": sgot}, request=sreq))
    # strings and booleans where numbers belong are mismatches
    bad = json.loads(json.dumps(EXACT_OUT))
    bad[0][0][0] = "0"
    bad[1][0][3] = True
    add(E, "dot_non_numbers_mismatch",
        graded({"output": grade_field(EXACT_OUT, bad, "/answer/output")}),
        req({"output": bad}, request=EXACT_REQ))
    # unbatched request, nested grads: dot gradients from reference autodiff
    rng = random.Random(41)
    q = rand_tensor(rng, 3, 4)
    k = rand_tensor(rng, 5, 4)
    v = rand_tensor(rng, 5, 2)
    go = rand_tensor(rng, 3, 2)
    o, g = ref.gradients(lambda a, b, c: ref.dot_attention(a, b, c)[0],
                         [[q], [k], [v]], [go])
    gq, gk, gv = g[0][0], g[1][0], g[2][0]
    gk_off = json.loads(json.dumps(gk))
    gk_off[4][3] += 0.5
    greq = {"queries": q, "keys": k, "values": v, "grad_output": go}
    add(E, "dot_grads_nested",
        dict(graded({"output": grade_field(o[0], o[0], "/answer/output"),
                "grads.queries": grade_field(gq, gq, "/answer/grads/queries"),
                "grads.keys": grade_field(gk, gk_off, "/answer/grads/keys")}), **LOOSE),
        req({"output": o[0], "grads": {"queries": gq, "keys": gk_off}},
            request=greq))
    # the reference follows the request's precision and tensor_format
    preq = dict(greq, precision=3, tensor_format="flat")
    o3 = [[float("%.3g" % x) for x in row] for row in o[0]]
    add(E, "dot_reference_precision_3_flat",
        dict(graded({"output": grade_field(o3, o[0], "/answer/output")}), **LOOSE),
        req({"output": o[0]}, request=preq))

    # additive, drawn parameters graded (nested params group)
    r0 = ref.Rng(3)
    Wq, Wk, wv = r0.xavier(4, 2), r0.xavier(4, 2), r0.xavier(1, 4)[0]
    aout, aw, _, _ = ref.additive_attention(TOY_Q, TOY_K, TOY_V, Wq, Wk, wv,
                                            valid_lens=TOY_LENS)
    areq = dict(TOY_REQ, num_hiddens=4, seed=3)
    add(E, "additive_params_nested",
        dict(graded({"output": grade_field(aout, TOY_OUT, "/answer/output"),
                "params.W_q": grade_field(Wq, Wq, "/answer/params/W_q"),
                "params.w_v": grade_field(wv, [0, 0, 0, 0],
                                          "/answer/params/w_v")}), **LOOSE),
        req({"output": TOY_OUT, "params": {"W_q": Wq, "w_v": [0, 0, 0, 0]}},
            endpoint="/attention/additive", request=areq))

    # PyTorch's masks (True: hidden): a right answer, and the answer that
    # ignores them, named by the catalogue
    mreq = {"queries": [[[0, 0]] * 3],
            "keys": [[[1, 0], [0, 1], [1, 1], [2, 0]]],
            "values": [[[0], [4], [8], [12]]],
            "attn_mask": [[False, True, True, True],
                          [False, False, True, True],
                          [True, False, False, False]],
            "key_padding_mask": [[False, False, False, True]]}
    # every score is 0: each query weighs its visible keys equally
    mw, mout = [], []
    for row in mreq["attn_mask"]:
        seen = [not (m or p) for m, p in
                zip(row, mreq["key_padding_mask"][0])]
        mw.append([1 / sum(seen) if v else 0 for v in seen])
        mout.append([sum(x * v[0] for x, v in
                         zip(mw[-1], mreq["values"][0]))])
    right = {"output": [mout], "weights": [mw]}
    add(E, "dot_attn_mask_pass",
        graded({"output": grade_field(right["output"], right["output"],
                                      "/answer/output"),
                "weights": grade_field(right["weights"], right["weights"],
                                       "/answer/weights")}),
        req(right, request=mreq))
    seen_all = {"output": [[[6]] * 3], "weights": [[[0.25] * 4] * 3]}
    ignored = CATALOGUE["dot.mask_ignored"][0]
    add(E, "dot_attn_mask_ignored",
        graded({"output": grade_field(right["output"], seen_all["output"],
                                      "/answer/output"),
                "weights": grade_field(right["weights"], seen_all["weights"],
                                       "/answer/weights")},
               misconception={"code": "dot.mask_ignored",
                              "explanation": ignored,
                              "fields": ["output", "weights"]}),
        req(seen_all, request=mreq))

    # NW: the contract's worked example, scalars and the fit history
    nreq = {"x_train": [1, 2, 4], "y_train": [0, 3, 1], "x_query": [2.5],
            "w": 0.5, "y_query": [3],
            "fit": {"epochs": 2, "lr": 0.1, "data": "query"}}
    wfit, hist = ref.nw_fit(0.5, 0.1, 2, "query", [1, 2, 4], [[0], [3], [1]],
                            [2.5], [[3]])
    loss, gw = ref.nw_loss_grad([2.5], [[3]], [1, 2, 4], [[0], [3], [1]],
                                "gaussian", wfit)
    pred, _ = ref.nw_predict([2.5], [1, 2, 4], [[0], [3], [1]], "gaussian",
                             wfit)
    hist_got = [{"epoch": 1, "w": 0.5, "loss": 1.159},
                {"epoch": 2, "w": 0.5906346162164808}]
    add(E, "nw_history_and_scalars",
        dict(graded({"predictions": grade_field([pred[0][0]], [pred[0][0]],
                                           "/answer/predictions"),
                "w": grade_field(wfit, wfit, "/answer/w"),
                "loss": grade_field(loss, 1, "/answer/loss"),
                "grad_w": grade_field(gw, gw * (1 + 2e-6), "/answer/grad_w"),
                "history": grade_field(hist, hist_got, "/answer/history")}), **LOOSE),
        req({"predictions": [pred[0][0]], "w": wfit, "loss": 1,
             "grad_w": gw * (1 + 2e-6), "history": hist_got},
            endpoint="/regression/nw", request=nreq))
    assert abs(hist[1]["w"] - 0.5906346162164808) < 1e-15

    # softmax/masked
    sc = [[[0.5, 1.0, -1.0], [2.0, 0.0, 1.0]]]
    sw = ref.softmax_masked(sc, valid_lens=[2])
    add(E, "softmax_masked_pass",
        dict(graded({"weights": grade_field(sw, sw, "/answer/weights")}), **LOOSE),
        req({"weights": sw}, endpoint="/softmax/masked",
            request={"scores": sc, "valid_lens": [2]}))

    # GET endpoints: the request object holds the query parameters
    P = ref.positional_encoding(4, 6)
    Pgot = json.loads(json.dumps(P))
    Pgot[3][5] = round(Pgot[3][5], 4)
    add(E, "posenc_get_endpoint",
        dict(graded({"P": grade_field(P, Pgot, "/answer/P")}), **LOOSE),
        req({"P": Pgot}, endpoint="/encoding/positional",
            request={"num_steps": 4, "d": 6}))
    x, y, xt, yt = ref.nw_dataset(n_train=5, noise=0.25, seed=7)
    add(E, "dataset_get_endpoint_strings_and_reals",
        dict(graded({"x_train": grade_field(x, x, "/answer/x_train"),
                "y_truth": grade_field(yt, yt, "/answer/y_truth"),
                "noise": grade_field(0.25, 0.25, "/answer/noise")}), **LOOSE),
        req({"x_train": x, "y_truth": yt, "noise": 0.25},
            endpoint="/regression/nw/dataset",
            request={"n_train": 5, "noise": 0.25, "seed": "7",
                     "tensor_format": "nested", "precision": None}))

    # ------------------------------------------------------ errors
    add(E, "unknown_member", problem("unknown_field", "/rtl"),
        dict(req({"output": TOY_OUT}), rtl=1e-3))
    add(E, "missing_answer", problem("missing_field", "/answer"),
        {"endpoint": "/attention/dot", "request": TOY_REQ, "answer": None})
    add(E, "request_not_object", problem("wrong_type", "/request"),
        req({"output": TOY_OUT}, request=[1, 2]))
    add(E, "rtol_string", problem("wrong_type", "/rtol"),
        req({"output": TOY_OUT}, rtol="1e-5"))
    add(E, "endpoint_not_a_route", problem("invalid_value", "/endpoint"),
        req({"output": TOY_OUT}, endpoint="/attention/dott"))
    add(E, "endpoint_not_computing", problem("invalid_value", "/endpoint"),
        req({"status": "ok"}, endpoint="/healthz"))
    add(E, "answer_unknown_field", problem("unknown_field", "/answer/outptu"),
        req({"outptu": TOY_OUT}))
    add(E, "answer_unknown_nested", problem("unknown_field",
                                            "/answer/grads/query"),
        req({"grads": {"query": [[1]]}}))
    # diagnostics.warnings graded entry by entry, when the request asks
    add(E, "answer_warnings_without_diagnostics",
        problem("invalid_value", "/answer/diagnostics/warnings"),
        req({"diagnostics": {"warnings": []}}))
    sat = {"queries": [[[1, 0]]], "keys": [[[1, 0], [0, 1], [50, 0]]],
           "values": [[[1], [2], [3]]], "valid_lens": [3],
           "diagnostics": True}
    add(E, "dot_diagnostics_warnings",
        graded({"diagnostics.warnings": {
            "pass": True, "mismatches": 0, "first_mismatch": None}}),
        req({"diagnostics": {"warnings": [{"code": "saturated",
                                           "row": [0, 0]}]}},
            request=sat))
    add(E, "dot_diagnostics_warnings_mismatch",
        graded({"diagnostics.warnings": {
            "pass": False, "mismatches": 2, "first_mismatch": {
                "pointer": "/answer/diagnostics/warnings/0",
                "expected": {"code": "saturated", "row": [0, 0]},
                "got": {"code": "near_uniform", "row": [0, 0]}}}}),
        req({"diagnostics": {"warnings": [
            {"code": "near_uniform", "row": [0, 0]},
            {"code": "saturated", "row": [0, 1]}]}}, request=sat))
    add(E, "answer_group_not_object", problem("wrong_type", "/answer/grads"),
        req({"grads": [1, 2]}))
    add(E, "answer_history_not_array",
        problem("wrong_type", "/answer/history"),
        req({"history": {"w": [1]}}, endpoint="/regression/nw",
            request=nreq))
    add(E, "answer_flat_unknown_key",
        problem("unknown_field", "/answer/output/dtype"),
        req({"output": {"shape": [2, 1, 4], "data": [0] * 8,
                        "dtype": "f8"}}))
    add(E, "answer_flat_missing_data",
        problem("missing_field", "/answer/output/data"),
        req({"output": {"shape": [2, 1, 4]}}))
    add(E, "answer_flat_shape_not_integers",
        problem("wrong_type", "/answer/output/shape/1"),
        req({"output": {"shape": [2, 0.5, 4], "data": [0] * 8}}))
    add(E, "answer_flat_negative_dimension",
        problem("invalid_value", "/answer/output/shape/0"),
        req({"output": {"shape": [-2, 1, 4], "data": [0] * 8}}))
    add(E, "answer_flat_len_mismatch",
        problem("shape_mismatch", "/answer/output/data", [8], [7]),
        req({"output": {"shape": [2, 1, 4], "data": [0] * 7}}))
    add(E, "answer_empty", problem("invalid_value", "/answer"),
        req({"output": None}))
    add(E, "atol_negative", problem("invalid_value", "/atol"),
        req({"output": TOY_OUT}, atol=-1e-8))
    add(E, "request_shape_mismatch",
        problem("shape_mismatch", "/request/values", [2, 10, -1], [2, 9, 4]),
        req({"output": TOY_OUT},
            request=dict(TOY_REQ, values=[r[:9] for r in TOY_V])))
    add(E, "request_unknown_field",
        problem("unknown_field", "/request/qeries"),
        req({"output": TOY_OUT}, request={"qeries": TOY_Q, "keys": TOY_K,
                                          "values": TOY_V}))
    add(E, "request_entry_wrong_type",
        problem("wrong_type", "/request/keys/1/3/0"),
        req({"output": TOY_OUT},
            request=dict(TOY_REQ, keys=[TOY_K[0],
                                        TOY_K[1][:3] + [["1", 1]] +
                                        TOY_K[1][4:]])))
    add(E, "answer_not_produced", problem("invalid_value", "/answer/scores"),
        req({"scores": s}))
    add(E, "answer_not_produced_history",
        problem("invalid_value", "/answer/history"),
        req({"history": hist}, endpoint="/regression/nw",
            request={k: v for k, v in nreq.items() if k != "fit"}))
    add(E, "get_endpoint_array_parameter",
        problem("wrong_type", "/request/d"),
        req({"P": P}, endpoint="/encoding/positional",
            request={"num_steps": 4, "d": [6]}))
    add(E, "get_endpoint_missing_parameter",
        problem("missing_field", "/request/num_steps"),
        req({"P": P}, endpoint="/encoding/positional", request={"d": 6}))
    add(E, "get_endpoint_parameter_string_not_number",
        problem("wrong_type", "/request/d"),
        req({"P": P}, endpoint="/encoding/positional",
            request={"num_steps": 4, "d": "six"}))
    add(E, "request_work_too_large", problem("payload_too_large",
                                             status=413),
        req({"predictions": [0]}, endpoint="/regression/nw",
            request={"x_train": list(range(4000)), "y_train": [0] * 4000,
                     "x_query": [1], "w": "cv", "kernel": "boxcar"}))
    # order: the answer's unknown field comes before the request's errors,
    # an invalid endpoint before the answer's names
    add(E, "order_answer_names_before_request",
        problem("unknown_field", "/answer/outptu"),
        req({"outptu": TOY_OUT}, request={"qeries": TOY_Q}))
    add(E, "order_endpoint_before_answer_names",
        problem("invalid_value", "/endpoint"),
        req({"outptu": TOY_OUT}, endpoint="/nope"))
    add(E, "order_members_before_endpoint",
        problem("missing_field", "/request"),
        {"endpoint": "/nope", "answer": {"outptu": 1}})
    # ------------------------------------------ scores, points and id
    got = json.loads(json.dumps(EXACT_OUT))
    got[1][0][2] = 4.002  # one entry of eight off
    exact_scale = 1 / math.sqrt(2)
    two = {"output": grade_field(EXACT_OUT, got, "/answer/output"),
           "scale": grade_field(exact_scale, exact_scale, "/answer/scale")}
    two_req = req({"output": got, "scale": exact_scale}, request=EXACT_REQ)
    add(E, "points_object_partial",
        dict(graded(two, points={"output": 3, "scale": 1}, credit="partial",
                    id="ada"), **LOOSE),
        dict(two_req, id="ada", points={"output": 3, "scale": 1},
             credit="partial"))
    add(E, "points_object_unnamed_worth_0",
        dict(graded(two, points={"scale": 2}), **LOOSE),
        dict(two_req, points={"scale": 2}))
    add(E, "points_number_split",
        dict(graded(two, points=10, id=17), **LOOSE),
        dict(two_req, points=10, id=17))
    add(E, "credit_partial_shape_scores_0",
        graded({"output": shape_error([2, 1, 4], [2, 4])}, credit="partial"),
        req({"output": [[2, 3, 4, 5], [10, 11, 12, 13]]}, credit="partial"))
    add(E, "id_empty_string_pass",
        graded({"output": grade_field(EXACT_OUT, EXACT_OUT,
                                      "/answer/output")}, id=""),
        req({"output": EXACT_OUT}, request=EXACT_REQ, id=""))
    add(E, "id_not_string", problem("wrong_type", "/id"),
        req({"output": TOY_OUT}, id=[1]))
    add(E, "id_real", problem("wrong_type", "/id"),
        req({"output": TOY_OUT}, id=1.5))
    add(E, "points_string", problem("wrong_type", "/points"),
        req({"output": TOY_OUT}, points="3"))
    add(E, "points_entry_string", problem("wrong_type", "/points/output"),
        req({"output": TOY_OUT}, points={"output": "3"}))
    add(E, "points_entry_negative", problem("invalid_value",
                                            "/points/output"),
        req({"output": TOY_OUT}, points={"output": -1}))
    # a rubric's field the answer leaves out fails as missing
    add(E, "points_field_left_out",
        dict(graded({"output": grade_field(TOY_OUT, TOY_OUT, "/answer/output"),
                     "weights": {"pass": False, "error": "missing"}},
                    points={"output": 1, "weights": 1}), **LOOSE),
        req({"output": TOY_OUT}, points={"output": 1, "weights": 1}))
    add(E, "points_unknown_name", problem("invalid_value", "/points/outptu"),
        req({"output": TOY_OUT}, points={"outptu": 1}))
    add(E, "points_group_is_no_field",
        problem("invalid_value", "/points/grads"),
        req({"grads": {"values": TOY_V}}, points={"grads": 1}))
    add(E, "points_total_zero", problem("invalid_value", "/points"),
        req({"output": TOY_OUT}, points={"output": 0}))
    add(E, "points_number_zero", problem("invalid_value", "/points"),
        req({"output": TOY_OUT}, points=0))
    add(E, "credit_unknown", problem("invalid_value", "/credit"),
        req({"output": TOY_OUT}, credit="half"))
    add(E, "credit_not_string", problem("wrong_type", "/credit"),
        req({"output": TOY_OUT}, credit=1))
    add(E, "format_unknown", problem("invalid_value", "/format"),
        req({"output": TOY_OUT}, format="moodle"))
    add(E, "format_not_string", problem("wrong_type", "/format"),
        req({"output": TOY_OUT}, format=["gradescope"]))
    # order: rtol before credit, credit before format, format before
    # points, points before the embedded request
    add(E, "order_rtol_before_credit", problem("invalid_value", "/rtol"),
        req({"output": TOY_OUT}, rtol=-1, credit="half"))
    add(E, "order_credit_before_format", problem("invalid_value", "/credit"),
        req({"output": TOY_OUT}, credit="half", format="moodle"))
    add(E, "order_format_before_points", problem("invalid_value", "/format"),
        req({"output": TOY_OUT}, format="moodle", points=0))
    add(E, "order_points_before_request", problem("invalid_value",
                                                  "/points/outptu"),
        req({"output": TOY_OUT}, request={"qeries": TOY_Q},
            points={"outptu": 1}))
    # a malformed grading request stays a problem in an LMS format
    add(E, "format_gradescope_problem_stays_problem",
        problem("unknown_field", "/answer/outptu"),
        req({"outptu": TOY_OUT}, format="gradescope"))
    add(E, "method_get", {"status": 405, "allow": "POST, OPTIONS",
                          "body": {"code": "method_not_allowed"}},
        meta={"method": "GET"})
    add(E, "root_not_object", problem("wrong_type", ""), [1])


# ------------------------------------------------------------ KServe v2

def v2_input(name, t, datatype="FP64", nested=False):
    f = flat(t) if isinstance(t, list) else {"shape": [], "data": [t]}
    return {"name": name, "shape": f["shape"], "datatype": datatype,
            "data": t if nested else f["data"]}


def v2_out(name, t, datatype="FP64"):
    if isinstance(t, list):
        f = flat(t)
        return {"name": name, "datatype": datatype, "shape": f["shape"],
                "data": f["data"]}
    return {"name": name, "datatype": datatype, "shape": [1], "data": [t]}


ANSWERS = {
    "attention_dot": [
        ("output", 3), ("weights", 3), ("scale", 0), ("scores", 3)] + [
        ("diagnostics.scores." + s, 0) for s in ("min", "max", "mean", "std")
    ] + [("diagnostics.entropy", 2), ("diagnostics.max_weight", 2),
         ("diagnostics.argmax", 2, "INT64")] + [
        ("grads." + t, 3) for t in ("queries", "keys", "values")] + [
        ("trace." + t, 3) for t in ("QK", "scaled", "masked", "weights",
                                    "weighted_values")],
}


def attnd_version():
    """The default release version, as api/version.h writes it."""
    with open(os.path.join(HERE, "..", "..", "api", "version.h")) as f:
        for line in f:
            if line.startswith("#define ATTND_VERSION"):
                return json.loads(line.split(None, 2)[2])
    raise SystemExit("no ATTND_VERSION in api/version.h")


def v2_metadata_cases():
    add("v2_server", "metadata",
        ok({"name": "attnd", "version": attnd_version(),
            "extensions": ["binary_tensor_data"]}))
    add("v2_server", "method_post",
        {"status": 405, "allow": "GET, HEAD, OPTIONS",
         "body": {"error": "method_not_allowed:"}},
        meta={"method": "POST"})
    add("v2_server", "unknown_path",
        {"status": 404, "body": {"error": "not_found:"}},
        meta={"path": "/v2/modelz"})
    E = "v2_model_metadata"

    def md(name, datatype, rank):
        return {"name": name, "datatype": datatype,
                "shape": [-1] * rank if rank else [1]}
    qkv = [md("queries", "FP64", 3), md("keys", "FP64", 3),
           md("values", "FP64", 3)]
    lens_go = [md("valid_lens", "INT64", 1), md("grad_output", "FP64", 3)]
    outs = [md(n, r[2] if len(r) > 2 else "FP64", r[1])
            for r in ANSWERS["attention_dot"] for n in [r[0]]]
    add(E, "attention_dot", ok({"name": "attention_dot", "platform": "attnd",
                                "inputs": qkv + lens_go, "outputs": outs}))
    nw_outs = [md("predictions", "FP64", 1), md("weights", "FP64", 2),
               md("w", "FP64", 0), md("loss", "FP64", 0),
               md("grad_w", "FP64", 0), md("history.epoch", "FP64", 1),
               md("history.w", "FP64", 1), md("history.loss", "FP64", 1)] + [
        md("trace." + t, "FP64", 2)
        for t in ("distances", "scores", "weights")] + [
        md("trace.predictions", "FP64", 1)]
    add(E, "regression_nw",
        ok({"name": "regression_nw", "platform": "attnd",
            "inputs": [md(n, "FP64", 1) for n in
                       ("x_train", "y_train", "x_query", "y_query")],
            "outputs": nw_outs}),
        meta={"path": "/v2/models/regression_nw"})
    add(E, "unknown_model",
        {"status": 404, "body": {"error": "not_found: unknown model `bert`"}},
        meta={"path": "/v2/models/bert"})
    add(E, "empty_model", {"status": 404, "body": {"error": "not_found:"}},
        meta={"path": "/v2/models/"})
    add("v2_model_ready", "ready", ok({"name": "attention_dot",
                                       "ready": True}))
    add("v2_model_ready", "unknown_model",
        {"status": 404, "body": {"error": "not_found: unknown model"}},
        meta={"path": "/v2/models/attention_dott/ready"})


def v2_dot_cases():
    E = "v2_infer_attention_dot"
    out, w, s, _, scale = ref.dot_attention(TOY_Q, TOY_K, TOY_V,
                                            valid_lens=TOY_LENS)
    s_half = ref.dot_attention(TOY_Q, TOY_K, TOY_V, valid_lens=TOY_LENS,
                               scale=0.5)[2]
    inputs = [v2_input("queries", TOY_Q), v2_input("keys", TOY_K, "FP32"),
              v2_input("values", TOY_V, "INT32"),
              v2_input("valid_lens", TOY_LENS, "INT64")]
    # the protocol's example shape: id, inputs, outputs
    add(E, "toy_id_outputs_asked",
        ok({"model_name": "attention_dot", "id": "42",
            "outputs": [v2_out("output", TOY_OUT), v2_out("weights", w)]}),
        {"id": "42", "inputs": inputs,
         "outputs": [{"name": "output"}, {"name": "weights"}]})
    # every output, no id; nested data (the protocol allows both forms)
    nested = [v2_input("queries", TOY_Q, nested=True),
              v2_input("keys", TOY_K, nested=True)] + inputs[2:]
    add(E, "toy_nested_data_all_outputs",
        ok({"model_name": "attention_dot",
            "outputs": [v2_out("output", TOY_OUT), v2_out("weights", w),
                        v2_out("scale", scale)]}),
        {"inputs": nested})
    # masked scores stay null; parameters; the outputs in the order asked
    add(E, "scores_null_parameters",
        ok({"model_name": "attention_dot",
            "outputs": [v2_out("scores", s_half), v2_out("scale", 0.5)]}),
        {"inputs": inputs, "parameters": {"return_scores": True,
                                          "return_weights": False,
                                          "scale": 0.5},
         "outputs": [{"name": "scores"}, {"name": "scale"}]})
    # diagnostics (warnings left out, argmax INT64) and gradients, unbatched
    # with a scalar valid_lens of shape [1]
    rng = random.Random(5)
    q = rand_tensor(rng, 2, 3)
    k = rand_tensor(rng, 4, 3)
    v = rand_tensor(rng, 4, 2)
    go = rand_tensor(rng, 2, 2)
    o, g = ref.gradients(
        lambda a, b, c: ref.dot_attention(a, b, c, valid_lens=[3])[0],
        [[q], [k], [v]], [go])
    _, uw, us, _, _ = ref.dot_attention([q], [k], [v], valid_lens=[3])
    diag = ref.diagnostics(uw, us, batched=False)
    ins = [v2_input("queries", q), v2_input("keys", k),
           v2_input("values", v),
           {"name": "valid_lens", "shape": [1], "datatype": "INT32",
            "data": [3]},
           v2_input("grad_output", go)]
    add(E, "unbatched_scalar_lens_diagnostics_grads",
        ok({"model_name": "attention_dot", "outputs": [
            v2_out("output", o[0]),
            v2_out("diagnostics.scores.min", diag["scores"]["min"]),
            v2_out("diagnostics.entropy", diag["entropy"]),
            v2_out("diagnostics.argmax", diag["argmax"], "INT64"),
            v2_out("grads.queries", g[0][0]),
            v2_out("grads.values", g[2][0])]}),
        {"inputs": ins, "parameters": {"diagnostics": True},
         "outputs": [{"name": n} for n in (
             "output", "diagnostics.scores.min", "diagnostics.entropy",
             "diagnostics.argmax", "grads.queries", "grads.values")]})
    # shape [] is one value like [1]: the same answer
    ins0 = ins[:3] + [dict(ins[3], shape=[])] + ins[4:]
    add(E, "valid_lens_shape_empty",
        ok({"model_name": "attention_dot",
            "outputs": [v2_out("output", o[0])]}),
        {"inputs": ins0, "outputs": [{"name": "output"}]})
    # values are read as doubles whatever the datatype says (INT32 0.5)
    vq = [[1.0, 0.5]]
    vk = [[1.0, 0.0], [0.0, 1.0]]
    vv = [[0.5], [1.5]]
    o2, w2, _, _, sc2 = ref.dot_attention([vq], [vk], [vv])
    add(E, "datatype_not_rounding",
        ok({"model_name": "attention_dot",
            "outputs": [v2_out("output", o2[0])]}),
        {"inputs": [v2_input("queries", vq, "INT32"),
                    v2_input("keys", vk, "INT64"),
                    v2_input("values", vv, "FP32")],
         "outputs": [{"name": "output"}],
         "parameters": {"binary_data_output": False}})
    # FP32 asked for: each entry rounded to float, printed as that double;
    # BOOL data in JSON are true and false (read as 1 and 0)
    add(E, "output_fp32_in_json",
        ok({"model_name": "attention_dot",
            "outputs": [v2_out("output", [[float32(x) for x in row]
                                          for row in o2[0]], "FP32")]}),
        {"inputs": [v2_input("queries", vq, "INT32"),
                    v2_input("keys", vk, "INT64"),
                    v2_input("values", vv, "FP32")],
         "outputs": [{"name": "output", "parameters": {"datatype": "FP32"}}]})
    bq, bk, bv = [[0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]], [[True], [False]]
    o3, _, _, _, _ = ref.dot_attention([bq], [bk], [[[1.0], [0.0]]])
    add(E, "bool_values_in_json",
        ok({"model_name": "attention_dot",
            "outputs": [v2_out("output", o3[0])]}),
        {"inputs": [v2_input("queries", bq), v2_input("keys", bk),
                    v2_input("values", bv, "BOOL")],
         "outputs": [{"name": "output"}]})
    add(E, "bool_data_not_boolean",
        v2_error("wrong_type at /inputs/2/data/0: a BOOL input's data are "
                 "true or false"),
        {"inputs": [v2_input("queries", bq), v2_input("keys", bk),
                    v2_input("values", [[1.0], [0.0]], "BOOL")]})

    # ------------------------------------------------------ errors
    add(E, "unknown_model", v2_error("not_found: unknown model `attention`",
                                     404),
        {"inputs": inputs}, meta={"path": "/v2/models/attention/infer"})
    add(E, "method_get", {"status": 405, "allow": "POST, OPTIONS",
                          "body": {"error": "method_not_allowed:"}},
        meta={"method": "GET"})
    add(E, "content_type", v2_error("unsupported_media_type:", 415),
        {"inputs": inputs}, meta={"content_type": "text/plain"})
    add(E, "invalid_json", v2_error("invalid_json:", 400),
        raw=b'{"inputs": [}')
    add(E, "empty_body",
        v2_error('invalid_json: the body is empty: this route reads '
                 '{"inputs": [{"name", "shape", "datatype", "data"}', 400),
        raw=b'')
    add(E, "root_not_object", v2_error("wrong_type at \"\" (the body):"),
        [inputs])
    # the binary tensor data extension's members (its bytes: t_binary.sh)
    add(E, "binary_size_beside_data",
        v2_error("invalid_value at /inputs/0/data: input queries gives both"),
        {"inputs": [dict(inputs[0], parameters={"binary_data_size": 16})]})
    add(E, "binary_size_without_bytes",
        v2_error("invalid_json at /inputs/0/parameters/binary_data_size: "
                 "input queries has binary_data_size 16, but the body has "
                 "no binary tensor data", 400),
        {"inputs": [{"name": "queries", "shape": [2, 1, 2],
                     "datatype": "FP64",
                     "parameters": {"binary_data_size": 16}}]})
    add(E, "binary_size_not_integer",
        v2_error("wrong_type at /inputs/0/parameters/binary_data_size:"),
        {"inputs": [{"name": "queries", "shape": [2, 1, 2],
                     "datatype": "FP64",
                     "parameters": {"binary_data_size": "16"}}]})
    add(E, "binary_output_parameter_type",
        v2_error("wrong_type at /parameters/binary_data_output:"),
        {"inputs": inputs, "parameters": {"binary_data_output": 1}})
    add(E, "binary_requested_output_type",
        v2_error("wrong_type at /outputs/0/parameters/binary_data:"),
        {"inputs": inputs,
         "outputs": [{"name": "output", "parameters": {"binary_data": "yes"}}]})
    add(E, "output_datatype_bool",
        v2_error("invalid_value at /outputs/0/parameters/datatype: an "
                 "output's datatype is FP64, FP32, INT64 or INT32; got BOOL"),
        {"inputs": inputs,
         "outputs": [{"name": "output", "parameters": {"datatype": "BOOL"}}]})
    add(E, "output_datatype_integer_for_reals",
        v2_error("invalid_value at /parameters/output_datatype: output "
                 "output holds real numbers"),
        {"inputs": inputs, "parameters": {"output_datatype": "INT32"}})
    add(E, "unknown_member", v2_error("unknown_field at /model:"),
        {"model": "attention_dot", "inputs": inputs})
    add(E, "unknown_input_member",
        v2_error("unknown_field at /inputs/1/dtype:"),
        {"inputs": [inputs[0], dict(inputs[1], dtype="f4")] + inputs[2:]})
    add(E, "unknown_input_name", v2_error("unknown_field at /inputs/0/name:"),
        {"inputs": [dict(inputs[0], name="query")] + inputs[1:]})
    add(E, "parameter_sent_as_input",
        v2_error("unknown_field at /inputs/4/name: scale is not a tensor"),
        {"inputs": inputs + [{"name": "scale", "shape": [1],
                              "datatype": "FP64", "data": [0.5]}]})
    add(E, "input_sent_as_parameter",
        v2_error("unknown_field at /parameters/valid_lens: valid_lens is a "
                 "tensor"),
        {"inputs": inputs[:3], "parameters": {"valid_lens": [2, 6]}})
    add(E, "unknown_parameter", v2_error("unknown_field at /parameters/scal:"),
        {"inputs": inputs, "parameters": {"scal": 0.5}})
    add(E, "tensor_format_parameter",
        v2_error("unknown_field at /parameters/tensor_format:"),
        {"inputs": inputs, "parameters": {"tensor_format": "nested"}})
    add(E, "unknown_output", v2_error("unknown_field at /outputs/0/name:"),
        {"inputs": inputs, "outputs": [{"name": "outputs"}]})
    add(E, "missing_inputs", v2_error("missing_field at /inputs:"),
        {"id": "1", "outputs": [{"name": "output"}]})
    add(E, "missing_input_datatype",
        v2_error("missing_field at /inputs/2/datatype:"),
        {"inputs": inputs[:2] + [{k: x for k, x in inputs[2].items()
                                  if k != "datatype"}]})
    add(E, "missing_tensor", v2_error("missing_field at /inputs:"),
        {"inputs": [inputs[0], inputs[2]]})
    add(E, "id_not_string", v2_error("wrong_type at /id:"),
        {"id": 42, "inputs": inputs})
    add(E, "data_not_array", v2_error("wrong_type at /inputs/0/data:"),
        {"inputs": [dict(inputs[0], data=0.5)] + inputs[1:]})
    add(E, "datatype_bytes", v2_error("invalid_value at /inputs/1/datatype:"),
        {"inputs": [inputs[0], dict(inputs[1], datatype="BYTES")] +
         inputs[2:]})
    add(E, "input_twice", v2_error("invalid_value at /inputs/4/name:"),
        {"inputs": inputs + [inputs[0]]})
    # the route's own checks, pointing into this request
    add(E, "route_shape_mismatch", v2_error("shape_mismatch at /inputs/2:"),
        {"inputs": inputs[:2] + [v2_input("values",
                                          [r[:9] for r in TOY_V])] +
         inputs[3:]})
    add(E, "route_len_data", v2_error("shape_mismatch at /inputs/0/data:"),
        {"inputs": [dict(inputs[0], shape=[2, 1, 3])] + inputs[1:]})
    add(E, "route_negative_shape",
        v2_error("invalid_value at /inputs/0/shape/1:"),
        {"inputs": [dict(inputs[0], shape=[2, -1, 2])] + inputs[1:]})
    nested_bad = json.loads(json.dumps(TOY_K))
    nested_bad[1][7][1] = "one"
    add(E, "route_entry_type_nested",
        v2_error("wrong_type at /inputs/1/data/1/7/1:"),
        {"inputs": [inputs[0], v2_input("keys", nested_bad, nested=True)] +
         inputs[2:]})
    add(E, "route_valid_lens_range",
        v2_error("invalid_value at /inputs/3/data/1:"),
        {"inputs": inputs[:3] + [v2_input("valid_lens", [2, 11], "INT64")]})
    add(E, "route_scalar_lens_range",
        v2_error("invalid_value at /inputs/3/data/0:"),
        {"inputs": ins[:3] + [dict(ins[3], data=[9])]})
    add(E, "route_parameter_value", v2_error("invalid_value at "
                                             "/parameters/scale:"),
        {"inputs": inputs, "parameters": {"scale": -1}})
    add(E, "route_parameter_type", v2_error("wrong_type at "
                                            "/parameters/causal:"),
        {"inputs": inputs, "parameters": {"causal": 1}})
    add(E, "output_not_produced",
        v2_error("invalid_value at /outputs/1/name:"),
        {"inputs": inputs, "outputs": [{"name": "output"},
                                       {"name": "grads.keys"}]})
    add(E, "order_unknown_before_binary",
        v2_error("unknown_field at /zzz:"),
        {"inputs": [dict(inputs[0], parameters={"binary_data_size": 16})],
         "zzz": 1})


def v2_additive_cases():
    E = "v2_infer_attention_additive"
    r = ref.Rng(0)
    W_q, W_k, w_v = r.xavier(8, 2), r.xavier(8, 2), r.xavier(1, 8)[0]
    out, w, _, _ = ref.additive_attention(TOY_Q, TOY_K, TOY_V, W_q, W_k, w_v,
                                          valid_lens=TOY_LENS)
    inputs = [v2_input("queries", TOY_Q), v2_input("keys", TOY_K),
              v2_input("values", TOY_V), v2_input("valid_lens", TOY_LENS)]
    add(E, "toy_seeded_params",
        ok({"model_name": "attention_additive",
            "outputs": [v2_out("output", TOY_OUT), v2_out("weights", w),
                        v2_out("params.W_q", W_q), v2_out("params.W_k", W_k),
                        v2_out("params.w_v", w_v)]}),
        {"inputs": inputs, "parameters": {"num_hiddens": 8, "seed": 0}})
    add(E, "missing_num_hiddens", v2_error("missing_field at /inputs:"),
        {"inputs": inputs + [v2_input("W_q", W_q)]})


def v2_multihead_cases():
    E = "v2_infer_attention_multihead"
    rng = random.Random(9)
    q = rand_tensor(rng, 1, 3, 4)
    W = [rand_tensor(rng, 4, 4) for _ in range(4)]
    out, w, _, _ = ref.multihead_attention(q, q, q, *W, 2)
    inputs = [v2_input("queries", q)] + [
        v2_input(n, m) for n, m in zip(("W_q", "W_k", "W_v", "W_o"), W)]
    add(E, "self_attention_two_heads",
        ok({"model_name": "attention_multihead",
            "outputs": [v2_out("output", out), v2_out("weights", w)]}),
        {"inputs": inputs, "parameters": {"num_heads": 2}})
    add(E, "num_heads_missing", v2_error("missing_field at "
                                         "/parameters/num_heads:"),
        {"inputs": inputs})
    add(E, "num_heads_not_dividing", v2_error("invalid_value at "
                                              "/parameters/num_heads:"),
        {"inputs": inputs, "parameters": {"num_heads": 3}})


def v2_nw_cases():
    E = "v2_infer_regression_nw"
    base = [v2_input("x_train", [1, 2, 4]), v2_input("y_train", [0, 3, 1]),
            v2_input("x_query", [2.5])]
    # the contract's worked example (golden numbers, to 1e-12)
    add(E, "worked_example",
        ok({"model_name": "regression_nw", "outputs": [
            v2_out("predictions", [1.4774782878985795]),
            v2_out("weights", [[0.304504342420284, 0.39099131515943186,
                                0.304504342420284]]),
            v2_out("w", 0.5), v2_out("loss", 1.1590361819101205),
            v2_out("grad_w", -0.9063461621648087)]}),
        {"inputs": base + [v2_input("y_query", 3)],
         "parameters": {"w": 0.5}})
    wfit, hist = ref.nw_fit(0.5, 0.1, 2, "query", [1, 2, 4], [[0], [3], [1]],
                            [2.5], [[3]])
    add(E, "fit_flattened_history",
        ok({"model_name": "regression_nw", "outputs": [
            v2_out("w", wfit),
            v2_out("history.epoch", [h["epoch"] for h in hist]),
            v2_out("history.w", [h["w"] for h in hist]),
            v2_out("history.loss", [h["loss"] for h in hist])]}),
        {"inputs": base + [v2_input("y_query", [3])],
         "parameters": {"w": 0.5, "fit_epochs": 2, "fit_lr": 0.1,
                        "fit_data": "query"},
         "outputs": [{"name": n} for n in ("w", "history.epoch", "history.w",
                                           "history.loss")]})
    assert abs(hist[1]["w"] - 0.5906346162164808) < 1e-15
    add(E, "fit_lr_invalid", v2_error("invalid_value at /parameters/fit_lr:"),
        {"inputs": base + [v2_input("y_query", [3])],
         "parameters": {"w": 0.5, "fit_epochs": 1, "fit_lr": -5,
                        "fit_data": "query"}})
    add(E, "fit_unknown_key", v2_error("unknown_field at "
                                       "/parameters/fit_epoch:"),
        {"inputs": base, "parameters": {"fit_epoch": 1}})
    add(E, "kernel_invalid", v2_error("invalid_value at /parameters/kernel:"),
        {"inputs": base, "parameters": {"kernel": "gauss"}})
    add(E, "zero_mass_query", v2_error("invalid_value at /inputs/2/data/1:"),
        {"inputs": base[:2] + [v2_input("x_query", [2.5, 100])],
         "parameters": {"kernel": "boxcar"}})


if __name__ == "__main__":
    ref.self_check()
    grade_cases()
    v2_metadata_cases()
    v2_dot_cases()
    v2_additive_cases()
    v2_multihead_cases()
    v2_nw_cases()
    CASES.write(sys.argv[1] if len(sys.argv) > 1 else HERE)
    print(CASES.count(), "cases")
