#!/usr/bin/env python3
"""Writes every data case under tests/cases/<endpoint>/<name>/ (see
README.md). Expected answers of computing cases come from reference.py (a
plain-Python implementation of the contract) or from the contract's own
golden numbers; expected errors are written from the contract's rules.

    python3 tests/cases/gen_cases.py      # rewrites the case directories
"""

import json
import math
import os
import random
import sys

import reference as ref
from casefile import CaseSet, flat, ok, rand_tensor

HERE = os.path.dirname(os.path.abspath(__file__))
ROUTES = {
    "attention_dot": "POST /attention/dot",
    "attention_additive": "POST /attention/additive",
    "attention_multihead": "POST /attention/multihead",
    "regression_nw": "POST /regression/nw",
    "regression_nw_dataset": "GET /regression/nw/dataset",
    "softmax_masked": "POST /softmax/masked",
    "encoding_positional": "GET /encoding/positional",
}
CASES = CaseSet(ROUTES)
add = CASES.add


def problem(code, pointer=None, expected=None, got=None, status=None):
    statuses = {"invalid_json": 400, "not_found": 404,
                "method_not_allowed": 405, "payload_too_large": 413,
                "unsupported_media_type": 415}
    body = {"code": code}
    if pointer is not None:
        body["pointer"] = pointer
    if expected is not None:
        body["expected"] = expected
    if got is not None:
        body["got"] = got
    return {"status": status or statuses.get(code, 422), "body": body}


def rounded(x, k):
    """A value as "precision": k prints it (%.{k}g, read back)."""
    if isinstance(x, list):
        return [rounded(y, k) for y in x]
    if x is None:
        return None
    return float("%.*g" % (k, x))


def col(v):
    return [[x] for x in v]


def uncol(m):
    return [r[0] for r in m]


# ----------------------------------------------------------------- d2l toy
# keys all ones (2, 10, 2), values arange(40).reshape(1, 10, 4) twice,
# valid_lens [2, 6] -> outputs [[2, 3, 4, 5]] and [[10, 11, 12, 13]].
TOY_K = [[[1.0, 1.0] for _ in range(10)] for _ in range(2)]
TOY_V = [[[4 * i + c for c in range(4)] for i in range(10)] for _ in range(2)]
TOY_LENS = [2, 6]
TOY_OUT = [[[2, 3, 4, 5]], [[10, 11, 12, 13]]]


def dot_cases():
    E = "attention_dot"
    q = [[[0.3, -1.2]], [[2.0, 0.5]]]
    out, w, s, _, scale = ref.dot_attention(q, TOY_K, TOY_V, valid_lens=TOY_LENS)
    assert all(abs(a - b) < 1e-12 for a, b in zip(out[1][0], TOY_OUT[1][0]))
    body = {"queries": q, "keys": TOY_K, "values": TOY_V, "valid_lens": TOY_LENS}
    add(E, "d2l_toy", ok({"output": TOY_OUT, "weights": w, "scale": scale}), body)
    add(E, "d2l_toy_flat_input",
        ok({"output": TOY_OUT, "weights": w, "scale": scale}),
        {"queries": flat(q), "keys": flat(TOY_K), "values": TOY_V,
         "valid_lens": {"shape": [2], "data": TOY_LENS}})
    add(E, "d2l_toy_tensor_format_flat",
        ok({"output": flat(TOY_OUT), "weights": flat(w), "scale": scale}),
        dict(body, tensor_format="flat"))
    add(E, "d2l_toy_integral_reals",
        ok({"output": TOY_OUT, "weights": w, "scale": scale}),
        dict(body, valid_lens=[2.0, 6.0]))

    rng = random.Random(1)
    q = rand_tensor(rng, 2, 3, 4)
    k = rand_tensor(rng, 2, 5, 4)
    v = rand_tensor(rng, 2, 5, 3)
    base = {"queries": q, "keys": k, "values": v}

    def dot(name, extra=None, drop_batch=False, fmt=None, precision=None,
            **mask):
        args = dict(mask)
        sc = args.pop("scale", None)
        rw = args.pop("return_weights", True)
        rs = args.pop("return_scores", False)
        req_q, req_k, req_v = q, k, v
        if drop_batch:
            req_q, req_k, req_v = q[:1], k[:1], v[:1]
        out, w, s, _, used = ref.dot_attention(req_q, req_k, req_v, scale=sc,
                                               **args)
        if drop_batch:
            out, w, s = out[0], w[0], s[0]
        if precision:
            out, w, s, used = (rounded(out, precision), rounded(w, precision),
                               rounded(s, precision), rounded(used, precision))
        res = {"output": out}
        if rw:
            res["weights"] = w
        if rs:
            res["scores"] = s
        if fmt == "flat":
            res = {key: flat(val) for key, val in res.items()}
        res["scale"] = used
        req = {"queries": req_q[0] if drop_batch else req_q,
               "keys": req_k[0] if drop_batch else req_k,
               "values": req_v[0] if drop_batch else req_v}
        req.update(extra or {})
        add(E, name, ok(res), req)

    dot("random_batched")
    dot("valid_lens_per_example", {"valid_lens": [2, 4]}, valid_lens=[2, 4])
    per_q = [[1, 5, 3], [0, 2, 5]]
    dot("valid_lens_per_query_zero_rows", {"valid_lens": per_q},
        valid_lens=per_q, per_query=True)
    dot("fully_masked_uniform", {"valid_lens": per_q, "fully_masked": "uniform"},
        valid_lens=per_q, per_query=True, fully_masked="uniform")
    dot("causal_true", {"causal": True}, causal="top_left")
    dot("causal_top_left", {"causal": "top_left"}, causal="top_left")
    dot("causal_bottom_right", {"causal": "bottom_right"}, causal="bottom_right")
    dot("causal_and_valid_lens", {"causal": True, "valid_lens": [2, 1]},
        causal="top_left", valid_lens=[2, 1])
    dot("causal_false", {"causal": False})
    dot("scale_given", {"scale": 2.5}, scale=2.5)
    dot("return_weights_false", {"return_weights": False}, return_weights=False)
    dot("return_scores_masked_null",
        {"return_scores": True, "valid_lens": [3, 2], "causal": "bottom_right"},
        return_scores=True, valid_lens=[3, 2], causal="bottom_right")
    dot("nulls_mean_absent",
        {"valid_lens": None, "causal": None, "scale": None,
         "return_weights": None, "tensor_format": None, "precision": None})
    dot("precision_3", {"precision": 3, "return_scores": True}, precision=3,
        return_scores=True)
    dot("precision_17", {"precision": 17}, precision=17)
    dot("unbatched_rank2", drop_batch=True)
    dot("unbatched_valid_lens_scalar", {"valid_lens": 3}, drop_batch=True,
        valid_lens=[3])
    dot("unbatched_valid_lens_per_query", {"valid_lens": [1, 0, 4]},
        drop_batch=True, valid_lens=[[1, 0, 4]], per_query=True)
    dot("tensor_format_flat", {"tensor_format": "flat", "return_scores": True,
                               "valid_lens": [1, 5]},
        fmt="flat", return_scores=True, valid_lens=[1, 5])
    dot("tensor_format_nested", {"tensor_format": "nested"})

    # integers everywhere are numbers
    qi = [[[1, 0], [0, 1]]]
    ki = [[[1, 2], [3, 4], [0, 0]]]
    vi = [[[1], [2], [3]]]
    out, w, _, _, sc = ref.dot_attention(qi, ki, vi)
    add(E, "integers", ok({"output": out, "weights": w, "scale": sc}),
        {"queries": qi, "keys": ki, "values": vi})
    # dv differs from d; Nq differs from Nk
    q2 = rand_tensor(rng, 1, 2, 3)
    k2 = rand_tensor(rng, 1, 4, 3)
    v2 = rand_tensor(rng, 1, 4, 6)
    out, w, _, _, sc = ref.dot_attention(q2, k2, v2)
    add(E, "dv_differs", ok({"output": out, "weights": w, "scale": sc}),
        {"queries": q2, "keys": k2, "values": v2})

    # JSON details: duplicate keys (last wins), \u0000 inside strings,
    # charset parameter, whitespace
    out, w, _, _, sc = ref.dot_attention(q, k, v, scale=0.5)
    add(E, "duplicate_keys_last_wins",
        ok({"output": out, "weights": w, "scale": sc}),
        raw=('{"queries": %s, "keys": %s, "values": %s, "scale": 3, '
             '"scale": 0.5}' % (json.dumps(q), json.dumps(k),
                                json.dumps(v))).encode())
    out, w, _, _, sc = ref.dot_attention(q, k, v)
    add(E, "content_type_charset",
        ok({"output": out, "weights": w, "scale": sc}), base,
        meta={"content_type": "Application/JSON; charset=UTF-8"})
    add(E, "nul_escape_in_string_value",
        problem("invalid_value", "/tensor_format"),
        raw=b'{"queries": [[1]], "keys": [[1]], "values": [[1]], '
            b'"tensor_format": "flat\\u0000"}')

    # ---- errors: syntax (400)
    add(E, "invalid_json_syntax", problem("invalid_json"), raw=b'{"queries": [[1, 2]')
    add(E, "invalid_json_trailing", problem("invalid_json"), raw=b'{"queries": 1} x')
    add(E, "invalid_json_empty_body", problem("invalid_json"), raw=b'')
    add(E, "invalid_json_number_overflows_double", problem("invalid_json"),
        raw=b'{"queries": [[[1e400]]], "keys": [[[1]]], "values": [[[1]]]}')
    # an integer beyond int64 is a number like any other (jansson's
    # JSON_DECODE_INT_AS_REAL): read as the nearest double
    add(E, "integer_beyond_int64_reads_as_double",
        ok({"output": [[[9.223372036854775808e18]]], "weights": [[[1]]],
            "scale": 1}),
        raw=b'{"queries": [[[9223372036854775808]]], "keys": [[[1]]], '
            b'"values": [[[9223372036854775808]]]}')
    # ECMAScript prints 1.2345678901234568e20 as 123456789012345680000
    add(E, "ecmascript_integer_text_reads_back",
        ok({"output": [[1.2345678901234568e20]], "weights": [[1, 0]],
            "scale": 1}),
        raw=b'{"queries": [[1]], "keys": [[1], [2]], "values": '
            b'[[123456789012345680000], [-123456789012345680000]], '
            b'"valid_lens": 1}')
    add(E, "invalid_json_nul_in_key", problem("invalid_json"),
        raw=b'{"queries\\u0000": [[[1]]]}')
    add(E, "invalid_json_raw_nul_byte", problem("invalid_json"),
        raw=b'{"queries": [[[1]]],\x00 "keys": [[[1]]]}')
    add(E, "invalid_json_raw_nul_in_string", problem("invalid_json"),
        raw=b'{"causal": "top\x00left"}')
    add(E, "invalid_json_raw_nul_after_number", problem("invalid_json"),
        raw=b'123\x00')
    add(E, "invalid_json_bad_utf8", problem("invalid_json"),
        raw=b'{"causal": "\xff\xfe"}')
    add(E, "invalid_json_deep_nesting", problem("invalid_json"),
        raw=b'{"queries": ' + b'[' * 5000 + b'}')
    add(E, "invalid_json_nan_literal", problem("invalid_json"),
        raw=b'{"scale": NaN}')
    add(E, "invalid_json_byte_order_mark", problem("invalid_json"),
        raw=b'\xef\xbb\xbf{"queries": [[1]], "keys": [[1]], "values": [[1]]}')
    add(E, "invalid_json_trailing_comma_array", problem("invalid_json"),
        raw=b'{"queries": [[1, 2],\n  ], "keys": [[1, 2]], "values": [[1]]}')
    add(E, "invalid_json_trailing_comma_object", problem("invalid_json"),
        raw=b'{"queries": [[1]], "keys": [[1]], "values": [[1]],}')
    add(E, "invalid_json_latin1_byte", problem("invalid_json"),
        raw=b'{"causal": "caf\xe9"}')
    add(E, "invalid_json_long_number_overflows_double", problem("invalid_json"),
        raw=b'{"queries": [[[' + b'9' * 400 + b'.5]]], "keys": [[[1]]], '
            b'"values": [[[1]]]}')

    # ---- 404 / 405 / 415 (header-level)
    add(E, "not_found_path", problem("not_found"), body={},
        meta={"path": "/attention/dots"})
    add(E, "not_found_trailing_slash", problem("not_found"), body={},
        meta={"path": "/attention/dot/"})
    add(E, "method_get", dict(problem("method_not_allowed"),
                              allow="POST, OPTIONS"), meta={"method": "GET"})
    add(E, "method_head", dict(problem("method_not_allowed"),
                               allow="POST, OPTIONS"), meta={"method": "HEAD"})
    add(E, "method_put", dict(problem("method_not_allowed"),
                              allow="POST, OPTIONS"), body=base,
        meta={"method": "PUT"})
    add(E, "content_type_text_plain", problem("unsupported_media_type"), base,
        meta={"content_type": "text/plain"})
    add(E, "content_type_missing", problem("unsupported_media_type"), base,
        meta={"content_type": None})
    add(E, "content_type_latin1", problem("unsupported_media_type"), base,
        meta={"content_type": "application/json; charset=latin-1"})
    add(E, "content_type_json_suffix", problem("unsupported_media_type"), base,
        meta={"content_type": "application/problem+json"})

    # ---- root type, unknown, missing, wrong_type
    add(E, "root_array", problem("wrong_type", ""), raw=b'[1, 2]')
    add(E, "root_number", problem("wrong_type", ""), raw=b'3')
    add(E, "root_null", problem("wrong_type", ""), raw=b'null')
    add(E, "unknown_field_misspelt", problem("unknown_field", "/valid_len"),
        dict(base, valid_len=[1, 2]))
    add(E, "unknown_field_multihead_only", problem("unknown_field", "/num_heads"),
        dict(base, num_heads=2))
    add(E, "unknown_field_escaped_pointer", problem("unknown_field", "/a~1b~0c"),
        dict(base, **{"a/b~c": 1}))
    add(E, "unknown_field_in_tensor_object", problem("unknown_field", "/keys/dtype"),
        dict(base, keys=dict(flat(k), dtype="FP64")))
    add(E, "missing_field_keys", problem("missing_field", "/keys"),
        {"queries": q, "values": v})
    add(E, "missing_field_null_required", problem("missing_field", "/values"),
        dict(base, values=None))
    add(E, "missing_field_flat_data", problem("missing_field", "/queries/data"),
        dict(base, queries={"shape": [2, 3, 4]}))
    add(E, "wrong_type_tensor_string", problem("wrong_type", "/queries"),
        dict(base, queries="abc"))
    add(E, "wrong_type_tensor_number", problem("wrong_type", "/queries"),
        dict(base, queries=5))
    add(E, "wrong_type_tensor_entry", problem("wrong_type", "/keys/1/2/3"),
        dict(base, keys=[k[0], [k[1][0], k[1][1], k[1][2][:3] + ["x"]] + k[1][3:]]))
    add(E, "wrong_type_tensor_entry_null", problem("wrong_type", "/values/0/0/0"),
        dict(base, values=[[[None] + v[0][0][1:]] + v[0][1:], v[1]]))
    add(E, "wrong_type_flat_shape_entry", problem("wrong_type", "/queries/shape/1"),
        dict(base, queries={"shape": [2, "3", 4], "data": flat(q)["data"]}))
    add(E, "wrong_type_flat_shape_fraction", problem("wrong_type", "/queries/shape/2"),
        dict(base, queries={"shape": [2, 3, 4.5], "data": flat(q)["data"]}))
    add(E, "wrong_type_flat_data_nested", problem("wrong_type", "/queries/data/0"),
        dict(base, queries={"shape": [2, 3, 4], "data": q}))
    add(E, "wrong_type_scale", problem("wrong_type", "/scale"), dict(base, scale="big"))
    add(E, "wrong_type_causal_number", problem("wrong_type", "/causal"),
        dict(base, causal=1))
    add(E, "wrong_type_return_weights", problem("wrong_type", "/return_weights"),
        dict(base, return_weights=1))
    add(E, "wrong_type_precision_fraction", problem("wrong_type", "/precision"),
        dict(base, precision=2.5))
    add(E, "wrong_type_valid_lens_fraction", problem("wrong_type", "/valid_lens/0"),
        dict(base, valid_lens=[2.5, 1]))
    add(E, "wrong_type_valid_lens_flat_fraction",
        problem("wrong_type", "/valid_lens/data/1"),
        dict(base, valid_lens={"shape": [2], "data": [1, 0.5]}))
    add(E, "wrong_type_fully_masked_bool", problem("wrong_type", "/fully_masked"),
        dict(base, fully_masked=True))

    # ---- tensor checks
    add(E, "ragged_rows", problem("ragged_array", "/queries/0/1"),
        dict(base, queries=[[q[0][0], q[0][1][:3], q[0][2]], q[1]]))
    add(E, "ragged_examples", problem("ragged_array", "/keys/1"),
        dict(base, keys=[k[0], k[1][:4]]))
    add(E, "ragged_depth_number_for_row", problem("ragged_array", "/values/1/2"),
        dict(base, values=[v[0], [v[1][0], v[1][1], 7, v[1][3], v[1][4]]]))
    add(E, "ragged_depth_row_for_number", problem("ragged_array", "/queries/0/0/1"),
        dict(base, queries=[[[q[0][0][0], [1]] + q[0][0][2:]] + q[0][1:], q[1]]))
    add(E, "ragged_later_row_longer", problem("ragged_array", "/queries/1/2"),
        dict(base, queries=[q[0], [q[1][0], q[1][1], q[1][2] + [0.5]]]))
    add(E, "rank_1_queries", problem("shape_mismatch", "/queries",
                                     [-1, -1, -1], [4]),
        dict(base, queries=q[0][0]))
    add(E, "rank_4_keys", problem("shape_mismatch", "/keys", [-1, -1, -1],
                                  [1, 2, 5, 4]),
        dict(base, keys=[k]))
    add(E, "rank_flat_too_deep", problem("shape_mismatch", "/values",
                                         [-1, -1, -1], [1, 2, 5, 3]),
        dict(base, values={"shape": [1, 2, 5, 3], "data": flat(v)["data"]}))
    add(E, "too_large_declared_flat_shape", problem("payload_too_large", "/queries"),
        dict(base, queries={"shape": [1, 200000, 200000], "data": []}))
    add(E, "too_large_shape_overflows_64bit", problem("payload_too_large", "/keys"),
        dict(base, keys={"shape": [4294967296, 4294967296, 2], "data": [1]}))
    add(E, "too_large_shape_beyond_uint64", problem("payload_too_large", "/keys"),
        dict(base, keys={"shape": [1e30, 1, 1], "data": [1]}))
    add(E, "flat_data_length_mismatch",
        problem("shape_mismatch", "/queries/data", [24], [23]),
        dict(base, queries={"shape": [2, 3, 4], "data": flat(q)["data"][:23]}))
    add(E, "flat_negative_dimension", problem("invalid_value", "/queries/shape/1"),
        dict(base, queries={"shape": [2, -3, 4], "data": flat(q)["data"]}))
    add(E, "empty_array", problem("invalid_value", "/queries"), dict(base, queries=[]))
    add(E, "empty_rows", problem("invalid_value", "/keys"),
        dict(base, keys=[[[]], [[]]]))
    add(E, "zero_in_flat_shape", problem("invalid_value", "/values"),
        dict(base, values={"shape": [2, 0, 3], "data": []}))

    # ---- cross-field shapes (blame the later field)
    add(E, "mismatch_d", problem("shape_mismatch", "/keys", [2, -1, 4], [2, 5, 3]),
        dict(base, keys=[[r[:3] for r in e] for e in k]))
    add(E, "mismatch_batch", problem("shape_mismatch", "/keys", [2, -1, 4], [1, 5, 4]),
        dict(base, keys=k[:1]))
    add(E, "mismatch_values_rows",
        problem("shape_mismatch", "/values", [2, 5, -1], [2, 4, 3]),
        dict(base, values=[e[:4] for e in v]))
    add(E, "mismatch_rank_between_fields",
        problem("shape_mismatch", "/values", [2, 5, -1], [5, 3]),
        dict(base, values=v[0]))
    add(E, "mismatch_keys_rank_unbatched_queries",
        problem("shape_mismatch", "/keys", [-1, 4], [2, 5, 4]),
        dict(base, queries=q[0]))
    add(E, "mismatch_valid_lens_length",
        problem("shape_mismatch", "/valid_lens", [2], [3]),
        dict(base, valid_lens=[1, 2, 3]))
    add(E, "mismatch_valid_lens_per_query",
        problem("shape_mismatch", "/valid_lens", [2, 3], [2, 2]),
        dict(base, valid_lens=[[1, 2], [3, 4]]))
    add(E, "mismatch_valid_lens_scalar_batched",
        problem("shape_mismatch", "/valid_lens", [2], []),
        dict(base, valid_lens=3))
    add(E, "mismatch_valid_lens_unbatched",
        problem("shape_mismatch", "/valid_lens", [3], [2]),
        {"queries": q[0], "keys": k[0], "values": v[0], "valid_lens": [1, 2]})

    # ---- derived sizes (413): weights B·Nq·Nk over 16 Mi, inputs tiny
    big = {"queries": {"shape": [1, 4097, 1], "data": [0.5] * 4097},
           "keys": {"shape": [1, 4097, 1], "data": [0.25] * 4097},
           "values": {"shape": [1, 4097, 1], "data": [1] * 4097}}
    add(E, "too_large_derived_weights", problem("payload_too_large"), big)

    # ---- remaining invalid values
    add(E, "valid_lens_above_nk", problem("invalid_value", "/valid_lens/1"),
        dict(base, valid_lens=[3, 6]))
    add(E, "valid_lens_negative", problem("invalid_value", "/valid_lens/0"),
        dict(base, valid_lens=[-1, 2]))
    add(E, "valid_lens_per_query_out_of_range",
        problem("invalid_value", "/valid_lens/1/2"),
        dict(base, valid_lens=[[1, 2, 3], [4, 5, 6]]))
    add(E, "valid_lens_flat_out_of_range",
        problem("invalid_value", "/valid_lens/data/4"),
        dict(base, valid_lens={"shape": [2, 3], "data": [1, 2, 3, 4, 9, 1]}))
    add(E, "valid_lens_huge_integral_real", problem("invalid_value", "/valid_lens/0"),
        dict(base, valid_lens=[1e300, 1]))
    add(E, "fully_masked_error_valid_lens",
        problem("invalid_value", "/valid_lens/1"),
        dict(base, valid_lens=[2, 0], fully_masked="error"))
    add(E, "fully_masked_error_per_query",
        problem("invalid_value", "/valid_lens/1/0"),
        dict(base, valid_lens=[[1, 2, 3], [0, 1, 1]], fully_masked="error"))
    add(E, "fully_masked_error_causal",
        problem("invalid_value", "/causal"),
        {"queries": rand_tensor(rng, 1, 4, 2), "keys": rand_tensor(rng, 1, 2, 2),
         "values": rand_tensor(rng, 1, 2, 1), "causal": "bottom_right",
         "fully_masked": "error"})
    add(E, "fully_masked_error_unbatched_scalar",
        problem("invalid_value", "/valid_lens"),
        {"queries": q[0], "keys": k[0], "values": v[0], "valid_lens": 0,
         "fully_masked": "error"})
    add(E, "scale_zero", problem("invalid_value", "/scale"), dict(base, scale=0))
    add(E, "scale_negative", problem("invalid_value", "/scale"), dict(base, scale=-2))
    add(E, "causal_unknown", problem("invalid_value", "/causal"),
        dict(base, causal="sideways"))
    add(E, "fully_masked_unknown", problem("invalid_value", "/fully_masked"),
        dict(base, fully_masked="nan"))
    add(E, "tensor_format_unknown", problem("invalid_value", "/tensor_format"),
        dict(base, tensor_format="csv"))
    add(E, "precision_zero", problem("invalid_value", "/precision"),
        dict(base, precision=0))
    add(E, "precision_18", problem("invalid_value", "/precision"),
        dict(base, precision=18))
    add(E, "precision_rounding_overflows", problem("invalid_value"),
        {"queries": [[[1]]], "keys": [[[1]]],
         "values": [[[1.7976931348623157e308]]], "precision": 1})
    add(E, "precision_rounding_overflows_scale",
        problem("invalid_value", "/precision"),
        {"queries": [[[1]]], "keys": [[[1]]], "values": [[[1]]],
         "scale": 1.7976931348623157e308, "precision": 1,
         "return_weights": False})
    add(E, "result_overflows", problem("invalid_value"),
        {"queries": [[[1e200, 1e200]]], "keys": [[[1e200, 1e200]]],
         "values": [[[1]]]})

    # ---- order of checks: several faults, the contract's first one wins
    add(E, "order_415_before_invalid_json", problem("unsupported_media_type"),
        raw=b'{not json', meta={"content_type": "text/plain"})
    add(E, "order_405_before_415", dict(problem("method_not_allowed"),
                                        allow="POST, OPTIONS"),
        raw=b'{not json', meta={"method": "GET", "content_type": "text/plain"})
    add(E, "order_unknown_before_missing_and_type",
        problem("unknown_field", "/queriez"), {"queriez": q, "scale": "x"})
    add(E, "order_missing_before_wrong_type", problem("missing_field", "/keys"),
        {"queries": q, "values": "x", "scale": "x"})
    add(E, "order_wrong_type_before_ragged", problem("wrong_type", "/scale"),
        dict(base, queries=[q[0], q[1][:2]], scale="x"))
    add(E, "order_wrong_type_later_field_before_ragged",
        problem("wrong_type", "/values/0/0/0"),
        dict(base, queries=[q[0], q[1][:2]],
             values=[[["x"] + v[0][0][1:]] + v[0][1:], v[1]]))
    add(E, "order_earlier_tensor_first", problem("ragged_array", "/queries/1"),
        dict(base, queries=[q[0], q[1][:2]],
             keys={"shape": [1, 200000, 200000], "data": []}))
    add(E, "order_413_before_data_length", problem("payload_too_large", "/queries"),
        dict(base, queries={"shape": [1, 200000, 200000], "data": [1, 2]}))
    add(E, "order_data_length_before_zero_dim",
        problem("shape_mismatch", "/queries/data", [0], [2]),
        dict(base, queries={"shape": [1, 0, 2], "data": [1, 2]}))
    add(E, "order_tensor_before_cross_field", problem("invalid_value", "/values"),
        dict(base, keys=[e[:4] for e in k], values={"shape": [2, 0, 3], "data": []}))
    add(E, "order_cross_field_before_invalid_value",
        problem("shape_mismatch", "/values", [2, 5, -1], [2, 4, 3]),
        dict(base, values=[e[:4] for e in v], scale=-1, valid_lens=[9, 9]))
    add(E, "order_derived_413_before_invalid_value", problem("payload_too_large"),
        dict(big, scale=-1, causal="sideways"))
    add(E, "order_invalid_values_in_table_order",
        problem("invalid_value", "/valid_lens/0"),
        dict(base, valid_lens=[7, 1], causal="x", scale=0, precision=99))
    add(E, "order_causal_before_scale", problem("invalid_value", "/causal"),
        dict(base, causal="x", scale=0))


def additive_cases():
    E = "attention_additive"
    rng = random.Random(2)
    q = rand_tensor(rng, 2, 1, 20)
    # d2l's toy, drawn parameters (num_hiddens 8, seed 0)
    r = ref.Rng(0)
    W_q, W_k, w_v = r.xavier(8, 20), r.xavier(8, 2), r.xavier(1, 8)[0]
    out, w, s, _ = ref.additive_attention(q, TOY_K, TOY_V, W_q, W_k, w_v,
                                          valid_lens=TOY_LENS)
    assert all(abs(a - b) < 1e-12 for a, b in zip(out[1][0], TOY_OUT[1][0]))
    body = {"queries": q, "keys": TOY_K, "values": TOY_V, "valid_lens": TOY_LENS,
            "num_hiddens": 8, "seed": 0}
    add(E, "d2l_toy_seeded", ok({"output": TOY_OUT, "weights": w,
                                 "params": {"W_q": W_q, "W_k": W_k, "w_v": w_v}}),
        body)
    no_seed = dict(body)
    del no_seed["seed"]
    add(E, "d2l_toy_seed_defaults_to_0",
        ok({"output": TOY_OUT, "weights": w,
            "params": {"W_q": W_q, "W_k": W_k, "w_v": w_v}}), no_seed)
    # explicit matrices (any parameters give the toy's outputs)
    Wq = rand_tensor(rng, 8, 20)
    Wk = rand_tensor(rng, 8, 2)
    wv = rand_tensor(rng, 8)
    out, w, s, _ = ref.additive_attention(q, TOY_K, TOY_V, Wq, Wk, wv,
                                          valid_lens=TOY_LENS)
    ebody = {"queries": q, "keys": TOY_K, "values": TOY_V, "valid_lens": TOY_LENS,
             "W_q": Wq, "W_k": Wk, "w_v": wv}
    add(E, "d2l_toy_explicit", ok({"output": TOY_OUT, "weights": w}), ebody)
    add(E, "d2l_toy_explicit_flat_params", ok({"output": TOY_OUT, "weights": w}),
        dict(ebody, W_q=flat(Wq), w_v=flat(wv)))

    # a general case: dq != dk, masks, scores
    q = rand_tensor(rng, 2, 3, 4)
    k = rand_tensor(rng, 2, 5, 3)
    v = rand_tensor(rng, 2, 5, 2)
    Wq = rand_tensor(rng, 6, 4)
    Wk = rand_tensor(rng, 6, 3)
    wv = rand_tensor(rng, 6)
    base = {"queries": q, "keys": k, "values": v, "W_q": Wq, "W_k": Wk, "w_v": wv}
    out, w, s, _ = ref.additive_attention(q, k, v, Wq, Wk, wv)
    add(E, "random_explicit", ok({"output": out, "weights": w}), base)
    out, w, s, _ = ref.additive_attention(q, k, v, Wq, Wk, wv,
                                          valid_lens=[[1, 2, 0], [5, 4, 3]],
                                          per_query=True, causal="bottom_right")
    add(E, "masks_and_scores",
        ok({"output": out, "weights": w, "scores": s}),
        dict(base, valid_lens=[[1, 2, 0], [5, 4, 3]], causal="bottom_right",
             return_scores=True))
    add(E, "masks_scores_flat_no_weights",
        ok({"output": flat(out), "scores": flat(s)}),
        dict(base, valid_lens=[[1, 2, 0], [5, 4, 3]], causal="bottom_right",
             return_scores=True, return_weights=False, tensor_format="flat"))
    out, w, s, _ = ref.additive_attention(q[:1], k[:1], v[:1], Wq, Wk, wv,
                                          valid_lens=[4])
    add(E, "unbatched_rank2", ok({"output": out[0], "weights": w[0]}),
        dict(base, queries=q[0], keys=k[0], values=v[0], valid_lens=4))

    r = ref.Rng(9223372036854775807)
    P = r.xavier(3, 4), r.xavier(3, 3), r.xavier(1, 3)[0]
    out, w, s, _ = ref.additive_attention(q, k, v, *P)
    sbody = {"queries": q, "keys": k, "values": v, "num_hiddens": 3,
             "seed": 9223372036854775807}
    add(E, "seed_max", ok({"output": out, "weights": w,
                           "params": {"W_q": P[0], "W_k": P[1], "w_v": P[2]}}),
        sbody)
    r = ref.Rng(7)
    P = r.xavier(5, 4), r.xavier(5, 3), r.xavier(1, 5)[0]
    out, w, s, _ = ref.additive_attention(q, k, v, *P)
    add(E, "seeded_precision_4_integral_reals",
        ok({"output": rounded(out, 4), "weights": rounded(w, 4),
            "params": {"W_q": rounded(P[0], 4), "W_k": rounded(P[1], 4),
                       "w_v": rounded(P[2], 4)}}),
        dict(sbody, num_hiddens=5.0, seed=7.0, precision=4))

    # errors
    add(E, "params_none_no_num_hiddens", problem("missing_field", "/num_hiddens"),
        {"queries": q, "keys": k, "values": v})
    add(E, "params_partial", problem("missing_field", "/W_k"),
        {"queries": q, "keys": k, "values": v, "W_q": Wq, "w_v": wv})
    add(E, "params_partial_with_num_hiddens", problem("missing_field", "/w_v"),
        {"queries": q, "keys": k, "values": v, "W_q": Wq, "W_k": Wk,
         "num_hiddens": 6})
    add(E, "params_and_num_hiddens", problem("invalid_value", "/num_hiddens"),
        dict(base, num_hiddens=6))
    add(E, "params_and_seed", problem("invalid_value", "/seed"),
        dict(base, seed=1))
    add(E, "num_hiddens_zero", problem("invalid_value", "/num_hiddens"),
        {"queries": q, "keys": k, "values": v, "num_hiddens": 0})
    add(E, "num_hiddens_fraction", problem("wrong_type", "/num_hiddens"),
        {"queries": q, "keys": k, "values": v, "num_hiddens": 2.5})
    add(E, "num_hiddens_string", problem("wrong_type", "/num_hiddens"),
        {"queries": q, "keys": k, "values": v, "num_hiddens": "8"})
    add(E, "seed_negative", problem("invalid_value", "/seed"),
        {"queries": q, "keys": k, "values": v, "num_hiddens": 2, "seed": -1})
    add(E, "seed_real_beyond_int64", problem("invalid_value", "/seed"),
        {"queries": q, "keys": k, "values": v, "num_hiddens": 2, "seed": 1e19})
    add(E, "seed_integer_beyond_int64", problem("invalid_value", "/seed"),
        raw=b'{"queries": [[1]], "keys": [[1]], "values": [[1]], '
            b'"num_hiddens": 2, "seed": 9223372036854775808}')
    add(E, "mismatch_W_q_columns",
        problem("shape_mismatch", "/W_q", [-1, 4], [6, 3]),
        dict(base, W_q=[r_[:3] for r_ in Wq]))
    add(E, "mismatch_W_k_rows", problem("shape_mismatch", "/W_k", [6, 3], [5, 3]),
        dict(base, W_k=Wk[:5]))
    add(E, "mismatch_W_k_columns", problem("shape_mismatch", "/W_k", [6, 3], [6, 4]),
        dict(base, W_k=[r_ + [0] for r_ in Wk]))
    add(E, "mismatch_w_v", problem("shape_mismatch", "/w_v", [6], [7]),
        dict(base, w_v=wv + [1]))
    add(E, "rank_w_v_matrix", problem("shape_mismatch", "/w_v", [-1], [1, 6]),
        dict(base, w_v=[wv]))
    add(E, "mismatch_values_rows",
        problem("shape_mismatch", "/values", [2, 5, -1], [2, 4, 2]),
        dict(base, values=[e[:4] for e in v]))
    add(E, "unknown_field_W_v_is_multihead", problem("unknown_field", "/W_v"),
        dict(base, W_v=[wv]))
    add(E, "unknown_field_scale", problem("unknown_field", "/scale"),
        dict(base, scale=1))
    add(E, "too_large_drawn_params", problem("payload_too_large"),
        {"queries": [[1.0]], "keys": [[1.0]], "values": [[1.0]],
         "num_hiddens": 20000000})
    # work: B·h·(Nq·dq + Nk·dk) + B·Nq·Nk·(h + dv) = 1e7·60 + 900·(1e7 + 1)
    # > 2^33 with every tensor small
    add(E, "too_large_work", problem("payload_too_large"),
        {"queries": [[0.1]] * 30, "keys": [[0.2]] * 30, "values": [[1.0]] * 30,
         "num_hiddens": 10000000})
    add(E, "order_params_rule_is_missing_field_phase",
        problem("missing_field", "/W_k"),
        dict({"queries": q, "keys": k, "values": v, "W_q": Wq, "w_v": wv},
             causal=5))
    add(E, "valid_lens_out_of_range", problem("invalid_value", "/valid_lens/1"),
        dict(base, valid_lens=[1, 6]))
    add(E, "fully_masked_error", problem("invalid_value", "/valid_lens/0/2"),
        dict(base, valid_lens=[[1, 2, 0], [5, 4, 3]], fully_masked="error"))


# ------------------------------------------------- PyTorch's masks (4)

def hidden_dot(q, k, v, hidden):
    """Dot attention where hidden[b][i][j] (True: masked, as
    nn.MultiheadAttention's boolean masks) hides key j from query i."""
    scale = 1.0 / math.sqrt(len(q[0][0]))
    out, weights = [], []
    for b in range(len(q)):
        ob, wb = [], []
        for i in range(len(q[b])):
            raw = [sum(x * y for x, y in zip(q[b][i], kj)) * scale
                   for kj in k[b]]
            w, _ = ref.masked_softmax(raw, [not h for h in hidden[b][i]],
                                      "zero")
            ob.append([sum(w[j] * v[b][j][c] for j in range(len(w)))
                       for c in range(len(v[b][0]))])
            wb.append(w)
        out.append(ob)
        weights.append(wb)
    return out, weights, scale


def torch_mask_cases():
    E = "attention_dot"
    q = [[[0, 0], [0, 0]], [[1, 0], [0, 1]]]
    k = [[[1, 0], [0, 1], [1, 1]]] * 2
    v = [[[0], [4], [8]], [[2], [6], [10]]]
    attn_mask = [[[False, True, False], [True, False, False]],
                 [[False, False, True], [True, True, False]]]
    key_padding = [[False, False, False], [True, False, False]]
    hidden = [[[m or key_padding[b][j] for j, m in enumerate(row)]
               for row in attn_mask[b]] for b in range(2)]
    out, w, scale = hidden_dot(q, k, v, hidden)
    add(E, "attn_mask_bool_with_key_padding",
        ok({"output": out, "weights": w, "scale": scale}),
        {"queries": q, "keys": k, "values": v, "attn_mask": attn_mask,
         "key_padding_mask": key_padding})
    add(E, "attn_mask_float_wrong_leading_axis",
        problem("shape_mismatch", "/attn_mask", [2, 2, 3], [3, 2, 3]),
        {"queries": q, "keys": k, "values": v,
         "attn_mask": [[[0, None, 0], [0, 0, 0]]] + [[[0, 0, 0]] * 2] * 2})


# ------------------------------------- diagnostics and gradients (8, 9)

def finish(res, unbatched=False, precision=None, fmt=None):
    """Drop the batch axis, round to `precision`, and print flat, as the
    answer does: tensors are output, weights, scores, params.*, grads.* and
    diagnostics' entropy, max_weight, argmax (argmax is never rounded)."""
    def tensors(r):
        for key in ("output", "weights", "scores"):
            if key in r:
                yield r, key
        for group in ("params", "grads"):
            for key in r.get(group, {}):
                yield r[group], key

    diag = res.get("diagnostics")
    if unbatched:
        for obj, key in tensors(res):
            if key in ("output", "weights", "scores", "queries", "keys",
                       "values"):
                obj[key] = obj[key][0]
    if precision:
        for obj, key in tensors(res):
            obj[key] = rounded(obj[key], precision)
        for key in ("scale",):
            if key in res:
                res[key] = rounded(res[key], precision)
        if diag:
            diag["scores"] = {s: rounded(x, precision)
                              for s, x in diag["scores"].items()}
            diag["entropy"] = rounded(diag["entropy"], precision)
            diag["max_weight"] = rounded(diag["max_weight"], precision)
    if fmt == "flat":
        for obj, key in tensors(res):
            obj[key] = flat(obj[key])
        if diag:
            for key in ("entropy", "max_weight", "argmax"):
                diag[key] = flat(diag[key])
    return res


def dot_grad_cases():
    E = "attention_dot"
    rng = random.Random(11)
    q = rand_tensor(rng, 2, 3, 4)
    k = rand_tensor(rng, 2, 5, 4)
    v = rand_tensor(rng, 2, 5, 3)
    go = rand_tensor(rng, 2, 3, 3)

    def case(name, extra=None, grad=False, diag=False, unbatched=False,
             precision=None, fmt=None, scale=None, **mask):
        Q, K, V, G = (q[:1], k[:1], v[:1], go[:1]) if unbatched else (q, k, v, go)
        out, w, s, _, used = ref.dot_attention(Q, K, V, scale=scale, **mask)
        res = {"output": out, "weights": w, "scale": used}
        if (extra or {}).get("return_weights") is False:
            del res["weights"]
        req = {"queries": Q, "keys": K, "values": V}
        if grad:
            fwd = lambda a, b, c: ref.dot_attention(a, b, c, scale=scale,
                                                    **mask)[0]
            _, g = ref.gradients(fwd, [Q, K, V], G)
            res["grads"] = dict(zip(["queries", "keys", "values"], g))
            req["grad_output"] = G
        if diag:
            res["diagnostics"] = ref.diagnostics(w, s, batched=not unbatched)
            req["diagnostics"] = True
        if unbatched:
            req = {key: t[0] for key, t in req.items() if key != "diagnostics"}
            if diag:
                req["diagnostics"] = True
        req.update(extra or {})
        add(E, name, ok(finish(res, unbatched, precision, fmt)), req)

    per_q = [[1, 5, 0], [0, 2, 5]]
    case("grads_batched", grad=True)
    case("grads_scale_given", {"scale": 2.5}, grad=True, scale=2.5)
    case("grads_causal_and_valid_lens",
         {"causal": "bottom_right", "valid_lens": [4, 2]}, grad=True,
         causal="bottom_right", valid_lens=[4, 2])
    case("grads_fully_masked_zero", {"valid_lens": per_q}, grad=True,
         valid_lens=per_q, per_query=True)
    case("grads_fully_masked_uniform",
         {"valid_lens": per_q, "fully_masked": "uniform"}, grad=True,
         valid_lens=per_q, per_query=True, fully_masked="uniform")
    case("grads_unbatched", grad=True, unbatched=True)
    case("grads_unbatched_flat_precision_5",
         {"valid_lens": 2, "tensor_format": "flat", "precision": 5},
         grad=True, unbatched=True, valid_lens=[2], precision=5, fmt="flat")
    case("grads_return_weights_false_still_grads",
         {"return_weights": False}, grad=True)
    case("diagnostics_batched", diag=True)
    case("diagnostics_masks_fully_masked_rows", {"valid_lens": per_q},
         diag=True, valid_lens=per_q, per_query=True)
    case("diagnostics_uniform_policy_row_is_still_fully_masked",
         {"valid_lens": per_q, "fully_masked": "uniform"}, diag=True,
         valid_lens=per_q, per_query=True, fully_masked="uniform")
    case("diagnostics_unbatched_causal", {"causal": True}, diag=True,
         unbatched=True, causal="top_left")
    case("diagnostics_and_grads_precision_4_flat",
         {"precision": 4, "tensor_format": "flat", "valid_lens": [3, 5]},
         grad=True, diag=True, precision=4, fmt="flat", valid_lens=[3, 5])
    case("diagnostics_and_scores", {"return_scores": True,
                                    "valid_lens": [2, 4]},
         diag=True, valid_lens=[2, 4])
    # return_scores: the masked scores print as null next to diagnostics
    name = "diagnostics_and_scores"
    raw, meta, exp = CASES.cases[E][name]
    _, _, s, _, _ = ref.dot_attention(q, k, v, valid_lens=[2, 4])
    exp["body"]["scores"] = s

    # saturated, near_uniform and truncated: 120 queries that see two keys
    # with equal scores (zero queries) -> 120 near_uniform rows, 100 listed
    zq = [[[0.0]] * 120]
    zk = [[[1.0], [-1.0]]]
    zv = [[[1.0], [3.0]]]
    out, w, s, _, sc = ref.dot_attention(zq, zk, zv)
    d = ref.diagnostics(w, s)
    assert d["warnings"][-1] == {"code": "truncated", "count": 20}
    add(E, "diagnostics_warnings_truncated_after_100",
        ok({"output": out, "weights": w, "scale": sc, "diagnostics": d}),
        {"queries": zq, "keys": zk, "values": zv, "diagnostics": True})
    sq = [[[30.0], [0.0], [0.01]]]
    out, w, s, _, sc = ref.dot_attention(sq, zk, zv)
    d = ref.diagnostics(w, s)
    assert [x["code"] for x in d["warnings"]] == ["saturated", "near_uniform",
                                                  "near_uniform"]
    add(E, "diagnostics_saturated_and_near_uniform",
        ok({"output": out, "weights": w, "scale": sc, "diagnostics": d}),
        {"queries": sq, "keys": zk, "values": zv, "diagnostics": True})
    # ties go to the lowest index
    tq = [[[1.0]]]
    tk = [[[2.0], [5.0], [5.0], [-1.0]]]
    tv = [[[1.0], [2.0], [3.0], [4.0]]]
    out, w, s, _, sc = ref.dot_attention(tq, tk, tv)
    d = ref.diagnostics(w, s)
    assert d["argmax"] == [[1]]
    add(E, "diagnostics_argmax_tie_lowest_index",
        ok({"output": out, "weights": w, "scale": sc, "diagnostics": d}),
        {"queries": tq, "keys": tk, "values": tv, "diagnostics": True})
    # nothing unmasked: the statistics are null
    out, w, s, _, sc = ref.dot_attention(q, k, v, valid_lens=[0, 0])
    d = ref.diagnostics(w, s)
    assert d["scores"]["mean"] is None
    add(E, "diagnostics_every_row_masked_stats_null",
        ok({"output": out, "weights": w, "scale": sc, "diagnostics": d}),
        {"queries": q, "keys": k, "values": v, "valid_lens": [0, 0],
         "diagnostics": True})
    out, w, _, _, sc = ref.dot_attention(q, k, v)
    add(E, "diagnostics_false_and_grad_output_null",
        ok({"output": out, "weights": w, "scale": sc}),
        {"queries": q, "keys": k, "values": v, "diagnostics": False,
         "grad_output": None})

    # errors
    base = {"queries": q, "keys": k, "values": v}
    add(E, "grad_output_shape_mismatch",
        problem("shape_mismatch", "/grad_output", [2, 3, 3], [2, 3, 2]),
        dict(base, grad_output=[[r[:2] for r in e] for e in go]))
    add(E, "grad_output_rank_against_unbatched",
        problem("shape_mismatch", "/grad_output", [3, 3], [1, 3, 3]),
        {"queries": q[0], "keys": k[0], "values": v[0], "grad_output": go[:1]})
    add(E, "grad_output_rank_4",
        problem("shape_mismatch", "/grad_output", [-1, -1, -1], [1, 2, 3, 3]),
        dict(base, grad_output=[go]))
    add(E, "grad_output_ragged", problem("ragged_array", "/grad_output/1/2"),
        dict(base, grad_output=[go[0], [go[1][0], go[1][1], go[1][2][:2]]]))
    add(E, "grad_output_wrong_type", problem("wrong_type", "/grad_output"),
        dict(base, grad_output="dL/dO"))
    add(E, "grad_output_flat_length",
        problem("shape_mismatch", "/grad_output/data", [18], [17]),
        dict(base, grad_output={"shape": [2, 3, 3],
                                "data": flat(go)["data"][:17]}))
    add(E, "diagnostics_wrong_type", problem("wrong_type", "/diagnostics"),
        dict(base, diagnostics="yes"))
    add(E, "unknown_field_misspelt_grad_output",
        problem("unknown_field", "/grad_outputs"), dict(base, grad_outputs=go))
    add(E, "order_grad_output_tensor_before_cross_field",
        problem("ragged_array", "/grad_output/1"),
        dict(base, keys=k[:1], grad_output=[go[0][:2], go[1]]))
    add(E, "order_valid_lens_cross_before_grad_output",
        problem("shape_mismatch", "/valid_lens", [2], [3]),
        dict(base, valid_lens=[1, 2, 3], grad_output=[[[1]]]))
    add(E, "order_grad_output_cross_before_invalid_value",
        problem("shape_mismatch", "/grad_output", [2, 3, 3], [2, 3, 4]),
        dict(base, grad_output=[[r + [0] for r in e] for e in go], scale=-1))
    add(E, "grad_output_fully_masked_error_is_the_forward_error",
        problem("invalid_value", "/valid_lens/1"),
        dict(base, valid_lens=[2, 0], fully_masked="error", grad_output=go))
    # dO·Vᵀ overflows: the gradient is not finite
    add(E, "grads_overflow", problem("invalid_value"),
        {"queries": [[[1.0, 0.5]]], "keys": [[[0.5, 1.0], [1.0, 0.0]]],
         "values": [[[1e300], [-1e300]]], "grad_output": [[[1e300]]]})


def additive_grad_cases():
    E = "attention_additive"
    rng = random.Random(12)
    q = rand_tensor(rng, 2, 3, 4)
    k = rand_tensor(rng, 2, 5, 3)
    v = rand_tensor(rng, 2, 5, 2)
    go = rand_tensor(rng, 2, 3, 2)
    Wq = rand_tensor(rng, 6, 4)
    Wk = rand_tensor(rng, 6, 3)
    wv = rand_tensor(rng, 6)
    names = ["queries", "keys", "values", "W_q", "W_k", "w_v"]

    def case(name, extra=None, grad=False, diag=False, unbatched=False,
             precision=None, fmt=None, seed=None, h=None, **mask):
        Q, K, V, G = (q[:1], k[:1], v[:1], go[:1]) if unbatched else (q, k, v, go)
        if seed is not None:
            r = ref.Rng(seed)
            P = [r.xavier(h, 4), r.xavier(h, 3), r.xavier(1, h)[0]]
        else:
            P = [Wq, Wk, wv]
        out, w, s, _ = ref.additive_attention(Q, K, V, *P, **mask)
        res = {"output": out, "weights": w}
        req = {"queries": Q[0] if unbatched else Q,
               "keys": K[0] if unbatched else K,
               "values": V[0] if unbatched else V}
        if seed is not None:
            res["params"] = dict(zip(["W_q", "W_k", "w_v"], P))
            req.update(num_hiddens=h, seed=seed)
        else:
            req.update(W_q=Wq, W_k=Wk, w_v=wv)
        if grad:
            fwd = lambda *t: ref.additive_attention(*t, **mask)[0]
            _, g = ref.gradients(fwd, [Q, K, V] + P, G)
            res["grads"] = dict(zip(names, g))
            req["grad_output"] = G[0] if unbatched else G
        if diag:
            res["diagnostics"] = ref.diagnostics(w, s, batched=not unbatched)
            req["diagnostics"] = True
        req.update(extra or {})
        add(E, name, ok(finish(res, unbatched, precision, fmt)), req)

    case("grads_explicit", grad=True)
    case("grads_seeded_params_too", grad=True, seed=5, h=4)
    case("grads_masks", {"valid_lens": [[1, 2, 0], [5, 4, 3]],
                         "causal": "bottom_right"}, grad=True,
         valid_lens=[[1, 2, 0], [5, 4, 3]], per_query=True,
         causal="bottom_right")
    case("grads_fully_masked_uniform",
         {"valid_lens": [0, 3], "fully_masked": "uniform"}, grad=True,
         valid_lens=[0, 3], fully_masked="uniform")
    case("grads_and_diagnostics_unbatched", {"valid_lens": 4}, grad=True,
         diag=True, unbatched=True, valid_lens=[4])
    case("diagnostics_seeded_precision_6_flat",
         {"precision": 6, "tensor_format": "flat", "valid_lens": [3, 0]},
         diag=True, seed=1, h=5, precision=6, fmt="flat", valid_lens=[3, 0])

    base = {"queries": q, "keys": k, "values": v, "W_q": Wq, "W_k": Wk,
            "w_v": wv}
    add(E, "grad_output_shape_mismatch",
        problem("shape_mismatch", "/grad_output", [2, 3, 2], [2, 3, 3]),
        dict(base, grad_output=[[r + [0] for r in e] for e in go]))
    add(E, "order_params_cross_before_grad_output",
        problem("shape_mismatch", "/w_v", [6], [5]),
        dict(base, w_v=wv[:5], grad_output=[[[0]]]))
    add(E, "unknown_field_num_heads", problem("unknown_field", "/num_heads"),
        dict(base, num_heads=2))
    # B·h·(Nq·dq + Nk·dk) + B·Nq·Nk·(4h + dv) + B·(Nq + Nk)·h·20 with
    # h = 419430 (the projections (40, h) within 16 Mi elements)
    # = 419430·80 + 1600·(4·419430 + 1) + 80·419430·20 ≈ 3.4e9 fits 2^33,
    # three times that does not
    big = {"queries": [[0.1]] * 40, "keys": [[0.2]] * 40,
           "values": [[1.0]] * 40, "num_hiddens": 419430}
    add(E, "work_fits_without_grad_output",
        problem("invalid_value", "/causal"), dict(big, causal="sideways"))
    add(E, "too_large_work_tripled_by_grad_output",
        problem("payload_too_large"),
        dict(big, causal="sideways", grad_output=[[1.0]] * 40))


def read_vectors(path):
    """tests/vectors text format (vecfile.py) -> {case: {field: nested}}."""
    def nest(shape, data):
        if not shape:
            return data[0]
        step = len(data) // shape[0]
        return [nest(shape[1:], data[i * step:(i + 1) * step])
                for i in range(shape[0])]
    cases, name, fields, cur = {}, None, None, None
    for line in open(path):
        tok = line.split()
        if not tok or tok[0].startswith("#"):
            continue
        if tok[0] == "case":
            name, fields = tok[1], {}
        elif tok[0] == "end":
            cases[name] = {f: nest(s, d) for f, (s, d) in fields.items()}
        elif tok[0][0].isalpha():
            rank = int(tok[1])
            cur = tok[0]
            fields[cur] = ([int(x) for x in tok[2:2 + rank]], [])
        else:
            fields[cur][1].extend(float(x) for x in tok)
    return cases


def multihead_cases():
    E = "attention_multihead"
    PARAMS = ["W_q", "W_k", "W_v", "W_o"]
    BIASES = ["b_q", "b_k", "b_v", "b_o"]

    def case(name, q, H, k=None, v=None, P=None, biases=None, seed=None,
             h=None, grad=None, diag=False, unbatched=False, extra=None,
             precision=None, fmt=None, expect=None, **mask):
        """Inputs batched; unbatched sends example 0 without the axis."""
        if unbatched:
            q, k, v = q[:1], k and k[:1], v and v[:1]
            grad = grad and grad[:1]
        biases = biases or {}
        req = {"queries": q[0] if unbatched else q, "num_heads": H}
        for key, t in (("keys", k), ("values", v)):
            if t is not None:
                req[key] = t[0] if unbatched else t
        k_eff = k if k is not None else q
        v_eff = v if v is not None else k_eff
        res = {}
        if P is None:
            r = ref.Rng(seed or 0)
            P = [r.xavier(h, len(q[0][0])), r.xavier(h, len(k_eff[0][0])),
                 r.xavier(h, len(v_eff[0][0])), r.xavier(h, h)]
            req["num_hiddens"] = h
            if seed is not None:
                req["seed"] = seed
            res_params = dict(zip(PARAMS, P))
        else:
            req.update(zip(PARAMS, P))
            res_params = None
        req.update(biases)
        b = {key: biases.get(key) for key in BIASES}
        out, w, s, _ = ref.multihead_attention(q, k_eff, v_eff, *P, H, **b,
                                               **mask)
        if expect:  # an independent oracle's answer (torch, d2l)
            for got, want in ((out, expect[0]), (w, expect[1])):
                for x, y in zip(ref.flatten(got), ref.flatten(want)):
                    assert abs(x - y) <= 1e-10 * max(1, abs(y)), (name, x, y)
        res["output"] = out
        if (extra or {}).get("return_weights") is not False:
            res["weights"] = w
        if res_params:
            res["params"] = res_params
        if diag:
            res["diagnostics"] = ref.diagnostics(w, s, heads=True,
                                                 batched=not unbatched)
            req["diagnostics"] = True
        if grad is not None:
            given = [t for t in (k, v) if t is not None]
            names = (["queries"] + [n for n, t in (("keys", k), ("values", v))
                                    if t is not None] + PARAMS +
                     [n for n in BIASES if n in biases])

            def fwd(*t):
                tq, rest = t[0], list(t[1:])
                tk = rest.pop(0) if k is not None else tq
                tv = rest.pop(0) if v is not None else tk
                Ps, rest = rest[:4], rest[4:]
                bb = {n: rest.pop(0) if n in biases else None for n in BIASES}
                return ref.multihead_attention(tq, tk, tv, *Ps, H, **bb,
                                               **mask)[0]
            _, g = ref.gradients(fwd, [q] + given + list(P) +
                                 [biases[n] for n in BIASES if n in biases],
                                 grad)
            res["grads"] = dict(zip(names, g))
            req["grad_output"] = grad[0] if unbatched else grad
        req.update(extra or {})
        add(E, name, ok(finish(res, unbatched, precision, fmt)), req)

    # torch.nn.MultiheadAttention and d2l vectors (tests/vectors), with the
    # plain-Python reference's answer asserted against theirs
    vec = read_vectors(os.path.join(HERE, "..", "vectors", "multihead.txt"))
    for vname in ("torch_same_dims", "torch_kdim_vdim", "torch_nobias",
                  "torch_valid_lens_2d", "torch_causal_bottom_right",
                  "d2l_dq_dout_differ", "d2l_uniform_lens_1d"):
        c = vec[vname]
        B, Nq, Nk, dq, dk, dv, h, H, d_out = [int(x) for x in c["sizes"]]
        mask, extra = {}, {}
        if "valid_lens" in c:
            lens = c["valid_lens"]
            lens = [int(x) for x in lens] if not isinstance(lens[0], list) \
                else [[int(x) for x in r] for r in lens]
            mask.update(valid_lens=lens, per_query=isinstance(lens[0], list))
            extra["valid_lens"] = lens
        causal = {0: None, 1: "top_left", 2: "bottom_right"}[int(c["causal"])]
        if causal:
            mask["causal"] = causal
            extra["causal"] = causal
        if int(c["fully_masked"]) == 1:
            mask["fully_masked"] = "uniform"
            extra["fully_masked"] = "uniform"
        biases = {n: c[n] for n in BIASES if n in c}
        case("vectors_" + vname, c["queries"], H, c["keys"], c["values"],
             [c[n] for n in PARAMS], biases, extra=extra,
             expect=(c["output"], c["weights"]), **mask)

    rng = random.Random(13)
    q = rand_tensor(rng, 2, 3, 4)
    k = rand_tensor(rng, 2, 5, 3)
    v = rand_tensor(rng, 2, 5, 2)
    P = [rand_tensor(rng, 6, 4), rand_tensor(rng, 6, 3), rand_tensor(rng, 6, 2),
         rand_tensor(rng, 5, 6)]
    biases = {"b_q": rand_tensor(rng, 6), "b_k": rand_tensor(rng, 6),
              "b_v": rand_tensor(rng, 6), "b_o": rand_tensor(rng, 5)}
    go = rand_tensor(rng, 2, 3, 5)
    x = rand_tensor(rng, 2, 4, 3)       # self-attention input
    gx = rand_tensor(rng, 2, 4, 6)      # its grad_output (d_out = h = 6)

    # self-attention: only queries, drawn parameters
    case("self_attention_seeded", x, 2, seed=3, h=6)
    case("self_attention_seed_defaults_to_0", x, 3, h=6)
    case("self_attention_seeded_grads_sum_into_queries", x, 2, seed=3, h=6,
         grad=gx)
    case("self_attention_unbatched_causal_diagnostics_grads", x, 3, seed=9,
         h=6, grad=gx, diag=True, unbatched=True, causal="top_left",
         extra={"causal": True})
    case("self_attention_valid_lens_per_query_uniform", x, 1, seed=4, h=6,
         grad=gx, diag=True, valid_lens=[[1, 0, 3, 4], [4, 2, 0, 1]],
         per_query=True, fully_masked="uniform",
         extra={"valid_lens": [[1, 0, 3, 4], [4, 2, 0, 1]],
                "fully_masked": "uniform"})
    # keys given, values default to keys: grads.keys = dL/dk + dL/dv
    kx = rand_tensor(rng, 2, 5, 3)
    case("values_default_to_keys_grads", x, 2, k=kx, seed=2, h=4,
         grad=rand_tensor(rng, 2, 4, 4))
    # keys default to queries, values given
    case("keys_default_values_given_grads", x, 2, v=rand_tensor(rng, 2, 4, 2),
         seed=6, h=4, grad=rand_tensor(rng, 2, 4, 4))

    # explicit parameters with biases, masks, every extra
    case("explicit_biases", q, 2, k, v, P, biases)
    case("explicit_biases_grads", q, 3, k, v, P, biases, grad=go)
    case("explicit_some_biases_grads", q, 2, k, v, P,
         {"b_k": biases["b_k"], "b_o": biases["b_o"]}, grad=go)
    case("explicit_masks_diagnostics_grads", q, 2, k, v, P, biases, grad=go,
         diag=True, valid_lens=[2, 4], causal="bottom_right",
         extra={"valid_lens": [2, 4], "causal": "bottom_right"})
    case("explicit_fully_masked_rows", q, 6, k, v, P, grad=go, diag=True,
         valid_lens=[[0, 5, 1], [3, 0, 2]], per_query=True,
         extra={"valid_lens": [[0, 5, 1], [3, 0, 2]]})
    case("explicit_unbatched", q, 2, k, v, P, biases, grad=go, diag=True,
         unbatched=True, valid_lens=[3], extra={"valid_lens": 3})
    case("explicit_flat_precision_5", q, 2, k, v, P, biases, grad=go,
         diag=True, precision=5, fmt="flat",
         extra={"precision": 5, "tensor_format": "flat",
                "W_q": flat(P[0]), "b_o": flat(biases["b_o"])})
    case("return_weights_false", q, 2, k, v, P,
         extra={"return_weights": False})
    case("integral_reals_and_nulls", q, 2, k, v, P,
         extra={"num_heads": 2.0, "b_q": None, "valid_lens": None,
                "causal": None, "diagnostics": None, "grad_output": None,
                "precision": None})

    # errors
    base = {"queries": q, "keys": k, "values": v, "num_heads": 2,
            "W_q": P[0], "W_k": P[1], "W_v": P[2], "W_o": P[3]}
    drawn = {"queries": x, "num_heads": 2, "num_hiddens": 6}
    add(E, "missing_queries", problem("missing_field", "/queries"),
        {"keys": k, "num_heads": 2, "num_hiddens": 4})
    add(E, "missing_num_heads", problem("missing_field", "/num_heads"),
        {"queries": x, "num_hiddens": 4})
    add(E, "params_none_no_num_hiddens", problem("missing_field", "/num_hiddens"),
        {"queries": x, "num_heads": 2})
    add(E, "num_hiddens_beyond_int64", problem("invalid_value", "/num_hiddens"),
        {"queries": [[1, 0]], "num_heads": 1,
         "num_hiddens": 99999999999999999999})
    add(E, "params_partial", problem("missing_field", "/W_v"),
        {k_: v_ for k_, v_ in base.items() if k_ != "W_v"})
    add(E, "params_partial_with_num_hiddens", problem("missing_field", "/W_o"),
        dict({k_: v_ for k_, v_ in base.items() if k_ != "W_o"},
             num_hiddens=6))
    add(E, "params_and_num_hiddens", problem("invalid_value", "/num_hiddens"),
        dict(base, num_hiddens=6))
    add(E, "params_and_seed", problem("invalid_value", "/seed"),
        dict(base, seed=1))
    add(E, "bias_with_drawn_params", problem("invalid_value", "/b_v"),
        dict(drawn, b_v=[0.0] * 6))
    add(E, "num_heads_does_not_divide_h", problem("invalid_value", "/num_heads"),
        dict(base, num_heads=4))
    add(E, "num_heads_above_h", problem("invalid_value", "/num_heads"),
        dict(drawn, num_heads=12))
    add(E, "num_heads_zero", problem("invalid_value", "/num_heads"),
        dict(drawn, num_heads=0))
    add(E, "num_heads_negative", problem("invalid_value", "/num_heads"),
        dict(base, num_heads=-2))
    add(E, "num_heads_fraction", problem("wrong_type", "/num_heads"),
        dict(drawn, num_heads=1.5))
    # beyond int64: out of its range, before divisibility and before the
    # fields after it in the table (num_hiddens)
    add(E, "num_heads_beyond_int64", problem("invalid_value", "/num_heads"),
        dict(drawn, num_heads=123456789012345680000, seed=-1))
    add(E, "num_heads_beyond_int64_before_num_hiddens",
        problem("invalid_value", "/num_heads"),
        {"queries": x, "num_heads": 123456789012345680000, "num_hiddens": 0})
    add(E, "num_heads_string", problem("wrong_type", "/num_heads"),
        dict(drawn, num_heads="2"))
    add(E, "num_hiddens_zero", problem("invalid_value", "/num_hiddens"),
        dict(drawn, num_hiddens=0))
    add(E, "num_hiddens_zero_leaves_grad_output_unmatched",
        problem("invalid_value", "/num_hiddens"),
        dict(drawn, num_hiddens=0, grad_output=gx))
    add(E, "seed_negative", problem("invalid_value", "/seed"),
        dict(drawn, seed=-1))
    add(E, "unknown_field_return_scores", problem("unknown_field",
                                                  "/return_scores"),
        dict(base, return_scores=True))
    add(E, "unknown_field_scale", problem("unknown_field", "/scale"),
        dict(base, scale=1))
    add(E, "unknown_field_misspelt", problem("unknown_field", "/num_head"),
        dict(drawn, num_head=2))
    add(E, "rank_W_o_vector", problem("shape_mismatch", "/W_o", [-1, -1], [6]),
        dict(base, W_o=P[3][0]))
    add(E, "rank_b_q_matrix", problem("shape_mismatch", "/b_q", [-1], [1, 6]),
        dict(base, b_q=[biases["b_q"]]))
    add(E, "ragged_W_k", problem("ragged_array", "/W_k/2"),
        dict(base, W_k=P[1][:2] + [P[1][2][:2]] + P[1][3:]))
    add(E, "mismatch_keys_batch", problem("shape_mismatch", "/keys",
                                          [2, -1, -1], [1, 5, 3]),
        dict(base, keys=k[:1]))
    add(E, "mismatch_values_rows_keys_defaulted",
        problem("shape_mismatch", "/values", [2, 4, -1], [2, 5, 2]),
        dict(drawn, values=v))
    add(E, "mismatch_W_q_columns", problem("shape_mismatch", "/W_q",
                                           [-1, 4], [6, 3]),
        dict(base, W_q=[r[:3] for r in P[0]]))
    add(E, "mismatch_W_k_rows", problem("shape_mismatch", "/W_k", [6, 3],
                                        [5, 3]),
        dict(base, W_k=P[1][:5]))
    add(E, "mismatch_W_v_columns", problem("shape_mismatch", "/W_v", [6, 2],
                                           [6, 3]),
        dict(base, W_v=[r + [0] for r in P[2]]))
    add(E, "mismatch_W_v_self_attention",
        problem("shape_mismatch", "/W_v", [6, 4], [6, 2]),
        {"queries": q, "num_heads": 2, "W_q": P[0], "W_k": P[0], "W_v": P[2],
         "W_o": P[3]})
    add(E, "mismatch_W_o_columns", problem("shape_mismatch", "/W_o", [-1, 6],
                                           [5, 5]),
        dict(base, W_o=[r[:5] for r in P[3]]))
    add(E, "mismatch_b_k", problem("shape_mismatch", "/b_k", [6], [5]),
        dict(base, b_k=biases["b_k"][:5]))
    add(E, "mismatch_b_o", problem("shape_mismatch", "/b_o", [5], [6]),
        dict(base, b_o=biases["b_q"]))
    add(E, "mismatch_valid_lens", problem("shape_mismatch", "/valid_lens",
                                          [2], [3]),
        dict(base, valid_lens=[1, 2, 3]))
    add(E, "mismatch_grad_output", problem("shape_mismatch", "/grad_output",
                                           [2, 3, 5], [2, 3, 6]),
        dict(base, grad_output=[[r + [0] for r in e] for e in go]))
    add(E, "mismatch_grad_output_drawn_d_out_is_h",
        problem("shape_mismatch", "/grad_output", [2, 4, 6], [2, 4, 5]),
        dict(drawn, grad_output=[[r[:5] for r in e] for e in gx]))
    add(E, "mismatch_grad_output_unbatched",
        problem("shape_mismatch", "/grad_output", [4, 6], [1, 4, 6]),
        dict(drawn, queries=x[0], grad_output=gx[:1]))
    add(E, "order_params_cross_before_num_heads",
        problem("shape_mismatch", "/W_k", [6, 3], [5, 3]),
        dict(base, W_k=P[1][:5], num_heads=4))
    add(E, "order_W_q_before_valid_lens",
        problem("shape_mismatch", "/W_q", [-1, 4], [6, 3]),
        dict(base, W_q=[r[:3] for r in P[0]], valid_lens=[1, 2, 3]))
    add(E, "order_num_heads_before_num_hiddens",
        problem("invalid_value", "/num_heads"),
        dict(drawn, num_heads=0, num_hiddens=0))
    add(E, "order_num_heads_before_valid_lens",
        problem("invalid_value", "/num_heads"),
        dict(base, num_heads=5, valid_lens=[9, 9]))
    add(E, "valid_lens_out_of_range", problem("invalid_value", "/valid_lens/1"),
        dict(base, valid_lens=[1, 6]))
    add(E, "fully_masked_error", problem("invalid_value", "/valid_lens/0/2"),
        dict(base, valid_lens=[[1, 2, 0], [5, 4, 3]], fully_masked="error"))
    add(E, "fully_masked_error_causal", problem("invalid_value", "/causal"),
        dict(drawn, keys=[e[:2] for e in x],
             causal="bottom_right", fully_masked="error"))
    add(E, "causal_unknown", problem("invalid_value", "/causal"),
        dict(base, causal="diagonal"))
    # W_o of drawn parameters is (h, h): 5000² > 16 Mi
    add(E, "too_large_drawn_params", problem("payload_too_large"),
        {"queries": [[1.0]], "num_heads": 1, "num_hiddens": 5000})
    # weights (B, H, Nq, Nk) = (1, 4096, 65, 65) > 16 Mi with tiny inputs
    add(E, "too_large_weights_per_head", problem("payload_too_large"),
        {"queries": {"shape": [65, 1], "data": [0.5] * 65},
         "num_heads": 4096, "num_hiddens": 4096})
    add(E, "method_get", dict(problem("method_not_allowed"),
                              allow="POST, OPTIONS"), meta={"method": "GET"})
    add(E, "root_array", problem("wrong_type", ""), raw=b'[1]')


def nw_cases():
    E = "regression_nw"
    xt, yt = [1, 2, 4], [0, 3, 1]
    golden = {"x_train": xt, "y_train": yt, "x_query": [2.5], "w": 0.5,
              "y_query": [3]}
    # the seed's worked example: the contract's numbers, to 1e-12
    add(E, "seed_worked_example", ok({
        "predictions": [1.4774782878985795],
        "weights": [[0.304504342420284, 0.39099131515943186, 0.304504342420284]],
        "w": 0.5, "loss": 1.1590361819101205, "grad_w": -0.9063461621648087}),
        golden)
    w_fit, hist = ref.nw_fit(0.5, 0.1, 1, "query", xt, col(yt), [2.5], [[3]])
    assert abs(w_fit - 0.5906346162164808) < 1e-15
    pred, a = ref.nw_predict([2.5], xt, col(yt), "gaussian", w_fit)
    loss, grad = ref.nw_loss_grad([2.5], [[3]], xt, col(yt), "gaussian", w_fit)
    add(E, "seed_fit_one_step", ok({
        "predictions": uncol(pred), "weights": a, "w": 0.5906346162164808,
        "loss": loss, "grad_w": grad, "history": hist}),
        dict(golden, fit={"epochs": 1, "lr": 0.1, "data": "query"}))
    for wv, p in ((1, 1.940292211914573), (2, 2.9116578899297596)):
        _, a = ref.nw_predict([2.5], xt, col(yt), "gaussian", wv)
        add(E, "seed_w_%d" % wv, ok({"predictions": [p], "weights": a, "w": wv}),
            {"x_train": xt, "y_train": yt, "x_query": [2.5], "w": wv})
    _, a = ref.nw_predict([2.5], xt, col(yt), "gaussian", 1)
    add(E, "w_defaults_to_1",
        ok({"predictions": [1.940292211914573], "weights": a, "w": 1}),
        {"x_train": xt, "y_train": yt, "x_query": [2.5]})

    x, y, x_test, _ = ref.nw_dataset(12, 0.5, 3)
    xq = [0.3, 1.7, 2.2, 4.9]
    yq = [ref.f_true(t) for t in xq]
    body = {"x_train": x, "y_train": y, "x_query": xq, "y_query": yq}
    for kernel in ("gaussian", "constant", "boxcar", "epanechnikov",
                   "triangular"):
        wv = 0.4 if kernel != "gaussian" else 1.5
        pred, a = ref.nw_predict(xq, x, col(y), kernel, wv)
        loss, grad = ref.nw_loss_grad(xq, col(yq), x, col(y), kernel, wv)
        res = {"predictions": uncol(pred), "weights": a, "w": wv, "loss": loss}
        if kernel == "gaussian":
            res["grad_w"] = grad
        add(E, "kernel_" + kernel, ok(res), dict(body, kernel=kernel, w=wv))
    # fit with the defaults (train_loo, 5 epochs, lr 0.5)
    w_fit, hist = ref.nw_fit(1.0, 0.5, 5, "train_loo", x, col(y))
    pred, a = ref.nw_predict(xq, x, col(y), "gaussian", w_fit)
    add(E, "fit_train_loo_defaults",
        ok({"predictions": uncol(pred), "weights": a, "w": w_fit, "history": hist}),
        {"x_train": x, "y_train": y, "x_query": xq, "fit": {}})
    loss, grad = ref.nw_loss_grad(xq, col(yq), x, col(y), "gaussian", w_fit)
    add(E, "fit_train_loo_with_y_query_flat",
        ok({"predictions": flat(uncol(pred)), "weights": flat(a), "w": w_fit,
            "loss": loss, "grad_w": grad, "history": hist}),
        dict(body, fit={"epochs": 5.0, "lr": 0.5, "data": "train_loo"},
             tensor_format="flat"))
    w_fit, hist = ref.nw_fit(2.0, 0.05, 3, "query", x, col(y), xq, col(yq))
    pred, a = ref.nw_predict(xq, x, col(y), "gaussian", w_fit)
    loss, grad = ref.nw_loss_grad(xq, col(yq), x, col(y), "gaussian", w_fit)
    add(E, "fit_query_precision_6",
        ok({"predictions": rounded(uncol(pred), 6), "weights": rounded(a, 6),
            "w": rounded(w_fit, 6), "loss": rounded(loss, 6),
            "grad_w": rounded(grad, 6),
            "history": [{"epoch": h["epoch"], "w": rounded(h["w"], 6),
                         "loss": rounded(h["loss"], 6)} for h in hist]}),
        dict(body, w=2, fit={"epochs": 3, "lr": 0.05, "data": "query"},
             precision=6))
    # vector-valued targets (n, dv)
    Y = [[yi, -2 * yi + 1] for yi in y]
    YQ = [[t, -2 * t + 1] for t in yq]
    pred, a = ref.nw_predict(xq, x, Y, "gaussian", 1.2)
    loss, grad = ref.nw_loss_grad(xq, YQ, x, Y, "gaussian", 1.2)
    add(E, "y_train_matrix", ok({"predictions": pred, "weights": a, "w": 1.2,
                                 "loss": loss, "grad_w": grad}),
        {"x_train": flat(x), "y_train": Y, "x_query": xq, "y_query": flat(YQ),
         "w": 1.2})
    add(E, "nulls_mean_absent",
        ok({"predictions": [1.940292211914573],
            "weights": ref.nw_predict([2.5], xt, col(yt), "gaussian", 1)[1],
            "w": 1}),
        {"x_train": xt, "y_train": yt, "x_query": [2.5], "kernel": None,
         "w": None, "y_query": None, "fit": None, "precision": None})

    # errors
    add(E, "missing_x_train", problem("missing_field", "/x_train"),
        {"y_train": yt, "x_query": [2.5]})
    add(E, "missing_x_query_with_fit", problem("missing_field", "/x_query"),
        {"x_train": xt, "y_train": yt, "fit": {}})
    add(E, "fit_query_needs_y_query", problem("missing_field", "/y_query"),
        {"x_train": xt, "y_train": yt, "x_query": [2.5], "fit": {"data": "query"}})
    add(E, "unknown_field_top", problem("unknown_field", "/bandwidth"),
        dict(golden, bandwidth=2))
    add(E, "unknown_field_in_fit", problem("unknown_field", "/fit/epoch"),
        dict(golden, fit={"epoch": 3}))
    add(E, "wrong_type_fit", problem("wrong_type", "/fit"), dict(golden, fit="yes"))
    add(E, "wrong_type_fit_epochs", problem("wrong_type", "/fit/epochs"),
        dict(golden, fit={"epochs": 1.5}))
    add(E, "wrong_type_w_bool", problem("wrong_type", "/w"), dict(golden, w=True))
    add(E, "wrong_type_kernel", problem("wrong_type", "/kernel"),
        dict(golden, kernel=1))
    add(E, "rank_x_train_matrix", problem("shape_mismatch", "/x_train", [-1], [3, 1]),
        dict(golden, x_train=col(xt)))
    add(E, "rank_y_train_3", problem("shape_mismatch", "/y_train", [-1, -1],
                                     [3, 1, 1]),
        dict(golden, y_train=[[[0]], [[3]], [[1]]]))
    add(E, "mismatch_y_train", problem("shape_mismatch", "/y_train", [3], [4]),
        dict(golden, y_train=[0, 3, 1, 5]))
    add(E, "mismatch_y_train_matrix",
        problem("shape_mismatch", "/y_train", [3, -1], [2, 2]),
        dict(golden, y_train=[[0, 1], [3, 1]]))
    add(E, "mismatch_y_query", problem("shape_mismatch", "/y_query", [1], [2]),
        dict(golden, y_query=[3, 4]))
    add(E, "mismatch_y_query_rank", problem("shape_mismatch", "/y_query", [1],
                                            [1, 1]),
        dict(golden, y_query=[[3]]))
    add(E, "empty_x_query", problem("invalid_value", "/x_query"),
        dict(golden, x_query=[]))
    add(E, "kernel_unknown", problem("invalid_value", "/kernel"),
        dict(golden, kernel="cosine"))
    add(E, "w_zero", problem("invalid_value", "/w"), dict(golden, w=0))
    add(E, "w_negative", problem("invalid_value", "/w"), dict(golden, w=-1))
    add(E, "fit_needs_gaussian", problem("invalid_value", "/fit"),
        dict(golden, kernel="boxcar", fit={}))
    add(E, "fit_epochs_zero", problem("invalid_value", "/fit/epochs"),
        dict(golden, fit={"epochs": 0}))
    add(E, "fit_epochs_over_limit", problem("invalid_value", "/fit/epochs"),
        dict(golden, fit={"epochs": 100001}))
    add(E, "fit_epochs_beyond_int64", problem("invalid_value", "/fit/epochs"),
        {"x_train": [1, 2, 4], "y_train": [0, 3, 1], "x_query": [2.5],
         "fit": {"epochs": 10 ** 20}})
    add(E, "fit_lr_negative", problem("invalid_value", "/fit/lr"),
        dict(golden, fit={"lr": -0.1}))
    add(E, "fit_data_unknown", problem("invalid_value", "/fit/data"),
        dict(golden, fit={"data": "both"}))
    add(E, "fit_train_loo_one_pair", problem("invalid_value", "/x_train"),
        {"x_train": [1], "y_train": [2], "x_query": [1.5], "fit": {}})
    # y_query far above the prediction: grad_w < 0 ... pick one whose step
    # drives w below 0: y_query 0 at 2.5 pulls the prediction down, w shrinks
    _, g = ref.nw_loss_grad([2.5], [[0]], xt, col(yt), "gaussian", 0.5)
    assert g > 0 and 0.5 - 100 * g < 0
    add(E, "fit_step_makes_w_negative", problem("invalid_value", "/fit/lr"),
        dict(golden, y_query=[0], fit={"epochs": 1, "lr": 100, "data": "query"}))
    add(E, "zero_kernel_mass", problem("invalid_value", "/x_query/1"),
        {"x_train": xt, "y_train": yt, "x_query": [2.5, 40], "kernel": "boxcar",
         "w": 1})
    add(E, "zero_kernel_mass_flat", problem("invalid_value", "/x_query/data/2"),
        {"x_train": xt, "y_train": yt, "x_query": {"shape": [3], "data": [1, 2, -30]},
         "kernel": "epanechnikov", "w": 2})
    # work: a fit costs epochs · n² on train_loo: 100000 · 300² > 2^33
    add(E, "too_large_work_fit", problem("payload_too_large"),
        {"x_train": [i / 10 for i in range(300)], "y_train": [0.5] * 300,
         "x_query": [1], "fit": {"epochs": 100000}})
    add(E, "order_work_before_epochs_range", problem("payload_too_large"),
        {"x_train": [i / 10 for i in range(300)], "y_train": [0.5] * 300,
         "x_query": [1], "fit": {"epochs": 1000000}})
    add(E, "order_kernel_before_w", problem("invalid_value", "/kernel"),
        dict(golden, kernel="x", w=-1))
    add(E, "order_missing_before_unknown_in_fit_is_unknown",
        problem("unknown_field", "/fit/rate"),
        {"x_train": xt, "y_train": yt, "fit": {"rate": 1}})


def dataset_cases():
    E = "regression_nw_dataset"

    def data(n=50, noise=0.5, seed=0, k=None, fmt=None):
        x, y, xt, yt = ref.nw_dataset(n, noise, seed)
        res = {"x_train": x, "y_train": y, "x_test": xt, "y_truth": yt}
        if k:
            res = {key: rounded(val, k) for key, val in res.items()}
        if fmt == "flat":
            res = {key: flat(val) for key, val in res.items()}
        res.update({"n_train": n, "noise": noise, "seed": seed})
        return ok(res)

    default = data()
    assert default["body"]["x_train"][0] == 0.19157748800980812
    assert default["body"]["y_train"][0] == 0.4527892370680555
    add(E, "defaults", default, meta={"query": ""})
    add(E, "defaults_no_query", default)
    add(E, "explicit", data(5, 0, 3), meta={"query": "n_train=5&noise=0&seed=3"})
    add(E, "repeated_last_wins", data(4), meta={"query": "n_train=2&n_train=4"})
    add(E, "integral_real", data(7, 1.25, 11),
        meta={"query": "n_train=7.0&noise=1.25&seed=1.1e1"})
    add(E, "percent_encoded", data(3, 0.5, 2),
        meta={"query": "n%5Ftrain=3&seed=%32&&"})
    add(E, "tensor_format_flat", data(6, fmt="flat"),
        meta={"query": "n_train=6&tensor_format=flat"})
    add(E, "precision_4", data(6, k=4), meta={"query": "n_train=6&precision=4"})
    add(E, "seed_max", data(3, 0.5, 9223372036854775807),
        meta={"query": "n_train=3&seed=9223372036854775807"})
    add(E, "head_is_get", data(3), meta={"method": "HEAD", "query": "n_train=3"})

    add(E, "method_post", dict(problem("method_not_allowed"),
                               allow="GET, HEAD, OPTIONS"),
        body={}, meta={"method": "POST"})
    add(E, "empty_value", problem("wrong_type", "/n_train"), meta={"query": "n_train="})
    add(E, "no_value", problem("wrong_type", "/noise"), meta={"query": "noise"})
    add(E, "not_a_number", problem("wrong_type", "/n_train"),
        meta={"query": "n_train=abc"})
    add(E, "nan_text", problem("wrong_type", "/noise"), meta={"query": "noise=nan"})
    add(E, "hex_text", problem("wrong_type", "/seed"), meta={"query": "seed=0x10"})
    add(E, "plus_sign", problem("wrong_type", "/n_train"),
        meta={"query": "n_train=%2B5"})
    add(E, "nul_in_number", problem("wrong_type", "/n_train"),
        meta={"query": "n_train=5%00x"})
    add(E, "nul_in_string", problem("invalid_value", "/tensor_format"),
        meta={"query": "tensor_format=flat%00"})
    add(E, "fraction", problem("wrong_type", "/n_train"),
        meta={"query": "n_train=2.5"})
    add(E, "n_train_zero", problem("invalid_value", "/n_train"),
        meta={"query": "n_train=0"})
    add(E, "n_train_over_max", problem("invalid_value", "/n_train"),
        meta={"query": "n_train=1000001"})
    add(E, "n_train_beyond_int64", problem("invalid_value", "/n_train"),
        meta={"query": "n_train=99999999999999999999"})
    add(E, "noise_negative", problem("invalid_value", "/noise"),
        meta={"query": "noise=-0.5"})
    add(E, "noise_overflows", problem("invalid_value", "/noise"),
        meta={"query": "noise=1e400"})
    add(E, "seed_negative", problem("invalid_value", "/seed"),
        meta={"query": "seed=-1"})
    add(E, "seed_beyond_int64", problem("invalid_value", "/seed"),
        meta={"query": "seed=9223372036854775808"})
    add(E, "precision_out_of_range", problem("invalid_value", "/precision"),
        meta={"query": "precision=18"})
    add(E, "tensor_format_unknown", problem("invalid_value", "/tensor_format"),
        meta={"query": "tensor_format=csv"})
    add(E, "unknown_parameter", problem("unknown_field", "/n_tran"),
        meta={"query": "n_tran=3"})
    add(E, "unknown_parameter_escaped", problem("unknown_field", "/a~1b"),
        meta={"query": "a%2Fb=1"})
    add(E, "order_unknown_before_type", problem("unknown_field", "/foo"),
        meta={"query": "n_train=abc&foo=1"})
    add(E, "order_type_before_range", problem("wrong_type", "/noise"),
        meta={"query": "n_train=0&noise=abc"})
    add(E, "order_range_in_table_order", problem("invalid_value", "/n_train"),
        meta={"query": "seed=-1&noise=-1&n_train=0"})


def softmax_cases():
    E = "softmax_masked"
    rng = random.Random(10)
    s = rand_tensor(rng, 2, 3, 5, lo=-3.0, hi=3.0)
    base = {"scores": s}

    def sm(name, extra=None, scores=None, drop_batch=False, fmt=None,
           precision=None, **mask):
        sc = s if scores is None else scores
        w = ref.softmax_masked([sc] if drop_batch else sc, **mask)
        if drop_batch:
            w = w[0]
        if precision:
            w = rounded(w, precision)
        req = {"scores": sc}
        req.update(extra or {})
        add(E, name, ok({"weights": flat(w) if fmt == "flat" else w}), req)

    # d2l 11.3.1's two calls: valid_lens [2, 3], then [[1, 3], [2, 4]]
    d2l = rand_tensor(rng, 2, 2, 4, lo=0.0, hi=1.0)
    sm("d2l_valid_lens_per_example", {"valid_lens": [2, 3]}, d2l,
       valid_lens=[2, 3])
    sm("d2l_valid_lens_per_query", {"valid_lens": [[1, 3], [2, 4]]}, d2l,
       valid_lens=[[1, 3], [2, 4]], per_query=True)
    sm("no_mask")
    per_q = [[1, 5, 0], [0, 2, 5]]
    sm("valid_lens_per_query_zero_rows", {"valid_lens": per_q},
       valid_lens=per_q, per_query=True)
    sm("fully_masked_zero", {"valid_lens": per_q, "fully_masked": "zero"},
       valid_lens=per_q, per_query=True)
    sm("fully_masked_uniform", {"valid_lens": per_q, "fully_masked": "uniform"},
       valid_lens=per_q, per_query=True, fully_masked="uniform")
    sm("fully_masked_error_without_empty_rows",
       {"valid_lens": [1, 5], "fully_masked": "error"}, valid_lens=[1, 5])
    sm("causal_true", {"causal": True}, causal="top_left")
    sm("causal_top_left", {"causal": "top_left"}, causal="top_left")
    sm("causal_bottom_right", {"causal": "bottom_right"}, causal="bottom_right")
    sm("causal_false", {"causal": False})
    sm("causal_and_valid_lens", {"causal": True, "valid_lens": [2, 1]},
       causal="top_left", valid_lens=[2, 1])
    tall = rand_tensor(rng, 1, 4, 2, lo=-2.0, hi=2.0)
    sm("causal_bottom_right_more_queries_than_keys",
       {"causal": "bottom_right", "fully_masked": "uniform"}, tall,
       causal="bottom_right", fully_masked="uniform")
    sm("unbatched_rank2", scores=s[0], drop_batch=True)
    sm("unbatched_valid_lens_scalar", {"valid_lens": 3}, s[0], True,
       valid_lens=[3])
    sm("unbatched_valid_lens_per_query", {"valid_lens": [1, 0, 4]}, s[0],
       True, valid_lens=[[1, 0, 4]], per_query=True)
    sm("unbatched_causal", {"causal": True}, s[0], True, causal="top_left")
    w = ref.softmax_masked(s, valid_lens=[2, 4])
    add(E, "flat_input", ok({"weights": w}),
        {"scores": flat(s), "valid_lens": {"shape": [2], "data": [2, 4]}})
    sm("tensor_format_flat", {"tensor_format": "flat", "valid_lens": [2, 4]},
       fmt="flat", valid_lens=[2, 4])
    sm("tensor_format_flat_unbatched", {"tensor_format": "flat"}, s[0], True,
       fmt="flat")
    sm("precision_3", {"precision": 3, "causal": True}, precision=3,
       causal="top_left")
    sm("integral_reals", {"valid_lens": [2.0, 4.0], "precision": 5.0},
       valid_lens=[2, 4], precision=5)
    sm("nulls_mean_absent",
       {"valid_lens": None, "causal": None, "fully_masked": None,
        "tensor_format": None, "precision": None})
    sm("integers", scores=[[0, 1], [2, 2], [-3, 7]], drop_batch=True)
    sm("single_key", scores=[[[0.5], [-2]], [[7], [1e300]]])
    # stable for any finite score: the row maximum is subtracted
    big = 1.7976931348623157e308
    extreme = [[1e300, -1e300, 0], [-1e300, -1e300, -1e300],
               [1e300, 1e300, -5], [big, -big, 0]]
    sm("extreme_scores", scores=extreme, drop_batch=True)
    want = [[1.0, 0.0, 0.0], [1 / 3] * 3, [0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]
    assert ref.softmax_masked([extreme])[0] == want
    sm("extreme_visible_beats_masked", {"valid_lens": [1, 2]},
       scores=[[-1e300, 5, 7], [-1e300, -1e299, 1e300]], drop_batch=True,
       valid_lens=[[1, 2]], per_query=True)
    assert ref.softmax_masked([[[-1e300, 5, 7]]], [1]) == [[[1.0, 0.0, 0.0]]]

    # ---- errors, in the contract's order
    add(E, "method_get", dict(problem("method_not_allowed"),
                              allow="POST, OPTIONS"), meta={"method": "GET"})
    add(E, "content_type_text_plain", problem("unsupported_media_type"), base,
        meta={"content_type": "text/plain"})
    add(E, "invalid_json_syntax", problem("invalid_json"),
        raw=b'{"scores": [[1, 2]')
    add(E, "root_array", problem("wrong_type", ""), raw=b'[[1, 2]]')
    add(E, "unknown_field_misspelt", problem("unknown_field", "/valid_len"),
        dict(base, valid_len=[1, 2]))
    add(E, "unknown_field_queries", problem("unknown_field", "/queries"),
        dict(base, queries=s))
    add(E, "unknown_field_in_tensor_object",
        problem("unknown_field", "/scores/dtype"),
        {"scores": dict(flat(s), dtype="FP64")})
    add(E, "missing_scores", problem("missing_field", "/scores"),
        {"valid_lens": [1, 2]})
    add(E, "missing_scores_null", problem("missing_field", "/scores"),
        {"scores": None})
    add(E, "wrong_type_scores_string", problem("wrong_type", "/scores"),
        {"scores": "0.5"})
    add(E, "wrong_type_scores_entry", problem("wrong_type", "/scores/1/2/3"),
        {"scores": [s[0], [s[1][0], s[1][1], s[1][2][:3] + [True, 0]]]})
    add(E, "wrong_type_causal_number", problem("wrong_type", "/causal"),
        dict(base, causal=1))
    add(E, "wrong_type_fully_masked_bool",
        problem("wrong_type", "/fully_masked"), dict(base, fully_masked=True))
    add(E, "wrong_type_valid_lens_fraction",
        problem("wrong_type", "/valid_lens/0"), dict(base, valid_lens=[1.5, 2]))
    add(E, "wrong_type_precision_fraction", problem("wrong_type", "/precision"),
        dict(base, precision=2.5))
    add(E, "rank_1_scores", problem("shape_mismatch", "/scores", [-1, -1, -1],
                                    [5]),
        {"scores": s[0][0]})
    add(E, "rank_4_scores", problem("shape_mismatch", "/scores", [-1, -1, -1],
                                    [1, 2, 3, 5]),
        {"scores": [s]})
    add(E, "ragged_scores", problem("ragged_array", "/scores/1/2"),
        {"scores": [s[0], [s[1][0], s[1][1], s[1][2][:4]]]})
    add(E, "empty_scores", problem("invalid_value", "/scores"), {"scores": []})
    add(E, "empty_rows", problem("invalid_value", "/scores"),
        {"scores": [[[]], [[]]]})
    add(E, "flat_data_length_mismatch",
        problem("shape_mismatch", "/scores/data", [30], [29]),
        {"scores": {"shape": [2, 3, 5], "data": flat(s)["data"][:29]}})
    add(E, "too_large_declared_shape", problem("payload_too_large", "/scores"),
        {"scores": {"shape": [1, 5000, 5000], "data": [0]}})
    add(E, "mismatch_valid_lens_length",
        problem("shape_mismatch", "/valid_lens", [2], [3]),
        dict(base, valid_lens=[1, 2, 3]))
    add(E, "mismatch_valid_lens_per_query",
        problem("shape_mismatch", "/valid_lens", [2, 3], [2, 2]),
        dict(base, valid_lens=[[1, 2], [3, 4]]))
    add(E, "mismatch_valid_lens_scalar_batched",
        problem("shape_mismatch", "/valid_lens", [2], []),
        dict(base, valid_lens=3))
    add(E, "mismatch_valid_lens_unbatched",
        problem("shape_mismatch", "/valid_lens", [3], [2]),
        {"scores": s[0], "valid_lens": [1, 2]})
    add(E, "valid_lens_above_nk", problem("invalid_value", "/valid_lens/1"),
        dict(base, valid_lens=[3, 6]))
    add(E, "valid_lens_negative", problem("invalid_value", "/valid_lens/0"),
        dict(base, valid_lens=[-1, 2]))
    add(E, "valid_lens_beyond_int64", problem("invalid_value", "/valid_lens/0"),
        {"scores": [[[1, 2]]], "valid_lens": [123456789012345680000]})
    add(E, "valid_lens_per_query_out_of_range",
        problem("invalid_value", "/valid_lens/1/2"),
        dict(base, valid_lens=[[1, 2, 3], [4, 5, 6]]))
    add(E, "valid_lens_flat_out_of_range",
        problem("invalid_value", "/valid_lens/data/4"),
        dict(base, valid_lens={"shape": [2, 3], "data": [1, 2, 3, 4, 9, 1]}))
    add(E, "fully_masked_error_valid_lens",
        problem("invalid_value", "/valid_lens/1"),
        dict(base, valid_lens=[2, 0], fully_masked="error"))
    add(E, "fully_masked_error_per_query",
        problem("invalid_value", "/valid_lens/1/0"),
        dict(base, valid_lens=[[1, 2, 3], [0, 1, 1]], fully_masked="error"))
    add(E, "fully_masked_error_flat_per_query",
        problem("invalid_value", "/valid_lens/data/4"),
        dict(base, valid_lens={"shape": [2, 3], "data": [1, 2, 3, 4, 0, 1]},
             fully_masked="error"))
    add(E, "fully_masked_error_causal", problem("invalid_value", "/causal"),
        {"scores": tall, "causal": "bottom_right", "fully_masked": "error"})
    add(E, "fully_masked_error_unbatched_scalar",
        problem("invalid_value", "/valid_lens"),
        {"scores": s[0], "valid_lens": 0, "fully_masked": "error"})
    add(E, "fully_masked_error_unbatched_per_query",
        problem("invalid_value", "/valid_lens/2"),
        {"scores": s[0], "valid_lens": [1, 5, 0], "fully_masked": "error"})
    add(E, "causal_unknown", problem("invalid_value", "/causal"),
        dict(base, causal="sideways"))
    add(E, "fully_masked_unknown", problem("invalid_value", "/fully_masked"),
        dict(base, fully_masked="ignore"))
    add(E, "tensor_format_unknown", problem("invalid_value", "/tensor_format"),
        dict(base, tensor_format="csv"))
    add(E, "precision_zero", problem("invalid_value", "/precision"),
        dict(base, precision=0))
    add(E, "precision_18", problem("invalid_value", "/precision"),
        dict(base, precision=18))
    add(E, "order_unknown_before_missing", problem("unknown_field", "/scorez"),
        {"scorez": s})
    add(E, "order_missing_before_wrong_type", problem("missing_field", "/scores"),
        {"causal": 5})
    add(E, "order_wrong_type_before_ragged", problem("wrong_type", "/causal"),
        {"scores": [s[0], [s[1][0]]], "causal": 5})
    add(E, "order_tensor_before_cross_field", problem("invalid_value", "/scores"),
        {"scores": [], "valid_lens": [1, 2, 3]})
    add(E, "order_cross_field_before_invalid_value",
        problem("shape_mismatch", "/valid_lens", [2], [3]),
        dict(base, valid_lens=[9, 9, 9], causal="sideways"))
    add(E, "order_valid_lens_before_causal",
        problem("invalid_value", "/valid_lens/0"),
        dict(base, valid_lens=[9, 1], causal="sideways"))
    add(E, "order_causal_before_fully_masked", problem("invalid_value", "/causal"),
        dict(base, causal="sideways", fully_masked="ignore"))


def posenc_cases():
    E = "encoding_positional"

    def P(n, d, k=None, fmt=None):
        p = ref.positional_encoding(n, d)
        if k:
            p = rounded(p, k)
        return ok({"P": flat(p) if fmt == "flat" else p})

    golden = ref.positional_encoding(3, 4)
    assert golden[0] == [0, 1, 0, 1]
    assert golden[1] == [math.sin(1), math.cos(1), math.sin(0.01),
                         math.cos(0.01)]
    add(E, "golden_3x4", P(3, 4), meta={"query": "num_steps=3&d=4"})
    add(E, "d2l_plot_60x32", P(60, 32), meta={"query": "num_steps=60&d=32"})
    add(E, "odd_d", P(4, 5), meta={"query": "num_steps=4&d=5"})
    add(E, "d_1_sine_only", P(5, 1), meta={"query": "num_steps=5&d=1"})
    add(E, "one_step", P(1, 6), meta={"query": "d=6&num_steps=1"})
    add(E, "far_positions", P(1000, 2), meta={"query": "num_steps=1000&d=2"})
    add(E, "integral_reals", P(3, 4), meta={"query": "num_steps=3.0&d=4e0"})
    add(E, "repeated_last_wins", P(2, 4),
        meta={"query": "num_steps=9&d=2&d=4&num_steps=2"})
    add(E, "percent_encoded", P(2, 3), meta={"query": "num%5Fsteps=2&d=%33&&"})
    add(E, "tensor_format_flat", P(3, 5, fmt="flat"),
        meta={"query": "num_steps=3&d=5&tensor_format=flat"})
    add(E, "tensor_format_nested", P(2, 2),
        meta={"query": "num_steps=2&d=2&tensor_format=nested"})
    add(E, "precision_4", P(6, 4, k=4),
        meta={"query": "num_steps=6&d=4&precision=4"})
    add(E, "head_is_get", P(3, 4),
        meta={"method": "HEAD", "query": "num_steps=3&d=4"})

    add(E, "method_post", dict(problem("method_not_allowed"),
                               allow="GET, HEAD, OPTIONS"),
        body={}, meta={"method": "POST", "query": "num_steps=3&d=4"})
    add(E, "missing_both", problem("missing_field", "/num_steps"))
    add(E, "missing_num_steps", problem("missing_field", "/num_steps"),
        meta={"query": "d=4"})
    add(E, "missing_d", problem("missing_field", "/d"),
        meta={"query": "num_steps=4"})
    add(E, "empty_value", problem("wrong_type", "/num_steps"),
        meta={"query": "num_steps=&d=4"})
    add(E, "no_value", problem("wrong_type", "/d"),
        meta={"query": "num_steps=3&d"})
    add(E, "not_a_number", problem("wrong_type", "/d"),
        meta={"query": "num_steps=3&d=four"})
    add(E, "fraction", problem("wrong_type", "/num_steps"),
        meta={"query": "num_steps=2.5&d=4"})
    add(E, "nul_in_number", problem("wrong_type", "/d"),
        meta={"query": "num_steps=3&d=4%00"})
    add(E, "wrong_type_precision", problem("wrong_type", "/precision"),
        meta={"query": "num_steps=3&d=4&precision=high"})
    add(E, "num_steps_zero", problem("invalid_value", "/num_steps"),
        meta={"query": "num_steps=0&d=4"})
    add(E, "num_steps_negative", problem("invalid_value", "/num_steps"),
        meta={"query": "num_steps=-3&d=4"})
    add(E, "d_zero", problem("invalid_value", "/d"),
        meta={"query": "num_steps=3&d=0"})
    add(E, "d_beyond_int64", problem("invalid_value", "/d"),
        meta={"query": "num_steps=3&d=1e19"})
    add(E, "too_large_P", problem("payload_too_large"),
        meta={"query": "num_steps=5000&d=5000"})
    add(E, "too_large_P_overflows_64bit", problem("payload_too_large"),
        meta={"query": "num_steps=9223372036854775807&d=9223372036854775807"})
    add(E, "tensor_format_unknown", problem("invalid_value", "/tensor_format"),
        meta={"query": "num_steps=3&d=4&tensor_format=csv"})
    add(E, "precision_out_of_range", problem("invalid_value", "/precision"),
        meta={"query": "num_steps=3&d=4&precision=18"})
    add(E, "unknown_parameter", problem("unknown_field", "/dim"),
        meta={"query": "num_steps=3&dim=4"})
    add(E, "order_unknown_before_missing", problem("unknown_field", "/steps"),
        meta={"query": "steps=3"})
    add(E, "order_missing_before_wrong_type", problem("missing_field", "/d"),
        meta={"query": "num_steps=abc"})
    add(E, "order_wrong_type_before_range", problem("wrong_type", "/d"),
        meta={"query": "num_steps=0&d=x"})
    add(E, "order_range_in_table_order", problem("invalid_value", "/num_steps"),
        meta={"query": "d=0&num_steps=0"})
    add(E, "order_413_before_tensor_format", problem("payload_too_large"),
        meta={"query": "num_steps=5000&d=5000&tensor_format=csv"})


def nw_bandwidth_cases():
    E = "regression_nw"
    x, y, _, _ = ref.nw_dataset(12, 0.5, 3)
    xq = [0.3, 1.7, 2.2, 4.9]
    yq = [ref.f_true(t) for t in xq]

    def rule(name, w_rule, kernel="gaussian", Y=None, y_query=None, extra=None,
             h=None, fmt=None, xt=x, xqs=xq):
        Y = Y or col(y)
        if h is None:
            h = ref.bandwidth_rule(xt, w_rule)
        w = 1 / h
        req = {"x_train": xt, "y_train": uncol(Y) if len(Y[0]) == 1 else Y,
               "x_query": xqs, "w": w_rule}
        if kernel != "gaussian":
            req["kernel"] = kernel
        fit = (extra or {}).get("fit")
        hist = None
        if fit is not None:
            w, hist = ref.nw_fit(w, fit.get("lr", 0.5), fit.get("epochs", 5),
                                 "train_loo", xt, Y)
        pred, a = ref.nw_predict(xqs, xt, Y, kernel, w)
        res = {"predictions": uncol(pred) if len(Y[0]) == 1 else pred,
               "weights": a, "w": w}
        if y_query is not None:
            res["loss"], grad = ref.nw_loss_grad(xqs, y_query, xt, Y, kernel, w)
            if kernel == "gaussian":
                res["grad_w"] = grad
            req["y_query"] = uncol(y_query) if len(Y[0]) == 1 else y_query
        if hist is not None:
            res["history"] = hist
        if fmt == "flat":
            res["predictions"] = flat(res["predictions"])
            res["weights"] = flat(res["weights"])
            req["tensor_format"] = "flat"
        req.update(extra or {})
        add(E, name, ok(res), req)

    rule("w_scott", "scott")
    rule("w_silverman", "silverman")
    rule("w_silverman_y_query", "silverman", y_query=col(yq))
    rule("w_scott_triangular", "scott", kernel="triangular")
    rule("w_scott_fit_starts_from_rule", "scott",
         extra={"fit": {"epochs": 3, "lr": 0.05}})
    Y = [[t, -2 * t + 1] for t in y]
    rule("w_silverman_y_matrix_flat", "silverman", Y=Y, fmt="flat")
    # duplicates and an IQR of 0: A = std
    xd = [3, 3, 3, 3, 3, 3, 3, 3, 0, 10]
    rule("w_scott_iqr_zero", "scott", xt=xd, Y=col([1, 2, 3, 4, 5, 6, 7, 8,
                                                    0, 2]), xqs=[2.5, 9])

    # "cv" on the textbook dataset (seed 0, 50 points): the reference's
    # search, which must agree with statsmodels KernelReg cv_ls to 1 % and
    # with the numpy search in tests/vectors/bandwidth.txt to 1e-6
    vec = read_vectors(os.path.join(HERE, "..", "vectors",
                                   "bandwidth.txt"))["cv_gaussian_seed0"]
    x0, y0, _, _ = ref.nw_dataset(50, 0.5, 0)
    assert vec["x"] == x0 and vec["y"] == y0
    h = ref.bandwidth_cv(x0, col(y0), "gaussian")
    assert abs(h - vec["h_statsmodels"]) <= 0.01 * vec["h_statsmodels"]
    assert abs(h - vec["h_spec"]) <= 1e-6 * vec["h_spec"]
    rule("w_cv_textbook_seed0", "cv", Y=col(y0), xt=x0, h=h,
         xqs=[0.5, 2.5, 4.5], y_query=col([ref.f_true(t) for t in
                                           (0.5, 2.5, 4.5)]))
    h = ref.bandwidth_cv(x, col(y), "epanechnikov")
    rule("w_cv_epanechnikov", "cv", kernel="epanechnikov", h=h)
    h = ref.bandwidth_cv(x, Y, "gaussian")
    rule("w_cv_y_matrix", "cv", Y=Y, h=h)

    golden = {"x_train": [1, 2, 4], "y_train": [0, 3, 1], "x_query": [2.5]}
    add(E, "w_rule_unknown", problem("invalid_value", "/w"),
        dict(golden, w="bogus"))
    add(E, "w_rule_case_sensitive", problem("invalid_value", "/w"),
        dict(golden, w="Scott"))
    add(E, "w_rule_empty", problem("invalid_value", "/w"), dict(golden, w=""))
    add(E, "w_rule_nul", problem("invalid_value", "/w"),
        dict(golden, w="scott\u0000"))
    add(E, "w_rule_numeric_string", problem("invalid_value", "/w"),
        dict(golden, w="0.5"))
    add(E, "w_scott_one_point", problem("invalid_value", "/w"),
        {"x_train": [1], "y_train": [2], "x_query": [1], "w": "scott"})
    add(E, "w_silverman_identical_points", problem("invalid_value", "/w"),
        {"x_train": [2, 2, 2], "y_train": [1, 2, 3], "x_query": [1],
         "w": "silverman"})
    add(E, "w_cv_identical_points", problem("invalid_value", "/w"),
        {"x_train": [2, 2], "y_train": [1, 2], "x_query": [1], "w": "cv"})
    add(E, "w_cv_constant_kernel", problem("invalid_value", "/w"),
        dict(golden, w="cv", kernel="constant"))
    add(E, "order_kernel_before_w_rule", problem("invalid_value", "/kernel"),
        dict(golden, w="bogus", kernel="x"))
    add(E, "order_w_rule_before_fit", problem("invalid_value", "/w"),
        {"x_train": [2, 2, 2], "y_train": [1, 2, 3], "x_query": [1],
         "w": "scott", "fit": {"epochs": 0}})
    # "cv" costs up to 262 leave-one-out evaluations of n² kernel terms
    # (21 operations each for the Gaussian with dv 1): n = 2000 is 2.7 times
    # 2^33
    n = 2000
    big = {"x_train": list(range(n)), "y_train": [0] * n, "x_query": [1],
           "w": "cv"}
    assert 262 * n * n * 22 > 2 * 2 ** 33
    add(E, "too_large_work_cv", problem("payload_too_large"), big)
    add(E, "order_work_cv_before_fit_epochs", problem("payload_too_large"),
        dict(big, fit={"epochs": 0}))
    # a compact kernel's term counts 3 + 1 + dv = 5: n = 4000 is 2.4 times
    n = 4000
    assert 262 * n * n * 5 > 2 * 2 ** 33
    add(E, "too_large_work_cv_compact", problem("payload_too_large"),
        {"x_train": list(range(n)), "y_train": [0] * n, "x_query": [1],
         "w": "cv", "kernel": "boxcar"})


if __name__ == "__main__":
    ref.self_check()
    dot_cases()
    torch_mask_cases()
    dot_grad_cases()
    additive_cases()
    additive_grad_cases()
    multihead_cases()
    nw_cases()
    dataset_cases()
    softmax_cases()
    posenc_cases()
    nw_bandwidth_cases()
    CASES.write(sys.argv[1] if len(sys.argv) > 1 else HERE)
    print(CASES.count(), "cases")
