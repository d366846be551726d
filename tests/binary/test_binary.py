#!/usr/bin/env python3
"""The binary tensor data extension of POST /v2/models/{model}/infer
against a running attnd (docs/binary.md), one TAP line per check:
Triton's published example, every datatype in and out, inputs mixed
binary and JSON, every size mismatch and truncation, and the numbers:
bytes out agree with the JSON route to the bit (FP64), or with its
doubles rounded to float32 (FP32).

usage: /usr/bin/python3 tests/binary/test_binary.py BASE_URL
The standard library and numpy (tests/binary/client.py)."""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from client import encode, infer, post, route  # noqa: E402

BASE = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
INFER = "/v2/models/attention_dot/infer"
n = failed = 0


def check(name, ok, detail=""):
    global n, failed
    n += 1
    failed += not ok
    print("%s %d - %s" % ("ok" if ok else "not ok", n, name))
    if not ok and detail:
        print("#   " + str(detail)[:600].replace("\n", "\n#   "))


def error_of(answer):
    return (answer.json or {}).get("error", "") if answer.json else ""


def check_error(name, answer, status, text):
    check(name, answer.status == status and text in error_of(answer),
          "%s %r" % (answer.status, answer.body[:400]))


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and \
        a.tobytes() == b.tobytes()


def as_float64(json_tensor):
    return np.array(json_tensor, dtype=np.float64)


def raw_post(path, body, header_length, content_type="application/"
             "octet-stream"):
    headers = {"Content-Type": content_type}
    if header_length is not None:
        headers["Inference-Header-Content-Length"] = str(header_length)
    return post(BASE, path, body, headers)


rng = np.random.default_rng(20261201)

# ------------------------------------------- Triton's published example
# docs/protocol/extension_binary_data.md of triton-inference-server/server:
# the request's JSON text as published, then 16 bytes of UINT32 input0 and
# 3 bytes of BOOL input1
published = open(os.path.join(HERE, "fixtures", "triton_request.json"),
                 "rb").read().rstrip(b"\n")
tail = np.array([[1, 2], [3, 4]], "<u4").tobytes() + bytes([1, 0, 1])
a = raw_post("/v2/models/mymodel/infer", published + tail, len(published))
check_error("Triton's example as published: 404 naming the models", a, 404,
            "not_found: unknown model `mymodel`; the models are "
            "attention_dot, ")
a = raw_post(INFER, published + tail, len(published))
check_error("  sent to attention_dot: its model_name is checked", a, 422,
            "invalid_value at /model_name: the body names model mymodel, "
            "the path attention_dot")
# the same text with attnd's names: input0 the keys (INT32 for UINT32, the
# same 16 bytes), input1 an unbatched valid_lens of BOOL ones (the same 3
# bytes), the queries and values as JSON data, the output asked for as
# FP32 bytes
adapted = published.replace(b'"mymodel"', b'"attention_dot"') \
    .replace(b'"input0"', b'"keys"').replace(b'"UINT32"', b'"INT32"') \
    .replace(b'"input1"', b'"valid_lens"').replace(b'"output0"', b'"output"') \
    .replace(b'"binary_data" : true', b'"binary_data" : true, '
             b'"datatype" : "FP32"') \
    .replace(b'  "inputs" : [\n', b'  "inputs" : [\n    {"name" : "queries", '
             b'"shape" : [ 3, 2 ], "datatype" : "FP64", "data" : '
             b'[ 1, 0, 0, 1, 1, 1 ]},\n    {"name" : "values", "shape" : '
             b'[ 2, 2 ], "datatype" : "FP64", "data" : [ 1, 2, 3, 4 ]},\n')
tail = np.array([[1, 2], [3, 4]], "<i4").tobytes() + bytes([1, 1, 1])
a = raw_post(INFER, adapted + tail, len(adapted))
expected = json.load(open(os.path.join(HERE, "fixtures",
                                       "triton_response.json")))
expected["outputs"][0]["name"] = "output"
got = dict(a.json or {})
got.pop("model_name", None)
check("  with attnd's names: the response Triton publishes (outputs "
      "[3, 2] FP32, binary_data_size 24)", a.status == 200 and got == expected,
      a.body[:400])
check("  Content-Type application/octet-stream",
      a.headers.get("content-type") == "application/octet-stream")
check("  Content-Length = Inference-Header-Content-Length + 24",
      a.header_length is not None and
      int(a.headers.get("content-length", -1)) == a.header_length + 24 and
      len(a.body) == a.header_length + 24)
# valid_lens 1: every query sees key 0 alone, so each row is values[0]
check("  the 24 bytes: every row is values[0] = [1, 2] as float32",
      same_bits(a.outputs.get("output"),
                np.array([[1, 2]] * 3, dtype="<f4")), a.outputs)

# ------------------------------------------------- every datatype in
q = rng.standard_normal((2, 3, 4))
k = rng.standard_normal((2, 5, 4))
v = rng.standard_normal((2, 5, 3))
lens = np.array([2, 5])
for dt, cast in (("FP64", np.float64), ("FP32", np.float32),
                 ("INT64", np.int64), ("INT32", np.int32),
                 ("BOOL", np.bool_)):
    if dt in ("INT64", "INT32"):
        tq, tk, tv = (np.round(x * 3).astype(cast) for x in (q, k, v))
    elif dt == "BOOL":
        tq, tk, tv = q > 0, k > 0, v > 0
    else:
        tq, tk, tv = q.astype(cast), k.astype(cast), v.astype(cast)
    a = infer(BASE, "attention_dot", {"queries": tq, "keys": tk,
                                      "values": tv, "valid_lens": lens},
              outputs={"output": "FP64", "weights": "FP64"})
    st, ref = route(BASE, "/attention/dot", {
        "queries": tq.astype(np.float64).tolist(),
        "keys": tk.astype(np.float64).tolist(),
        "values": tv.astype(np.float64).tolist(),
        "valid_lens": lens.tolist()})
    check("%s in, FP64 bytes out: output and weights equal the JSON "
          "route's to the bit" % dt,
          a.status == 200 and st == 200 and
          same_bits(a.outputs["output"], as_float64(ref["output"])) and
          same_bits(a.outputs["weights"], as_float64(ref["weights"])),
          a.body[:300])

# --------------------------------------------- every datatype out
st, ref = route(BASE, "/attention/dot", {
    "queries": q.tolist(), "keys": k.tolist(), "values": v.tolist(),
    "valid_lens": lens.tolist(), "return_scores": True,
    "diagnostics": True})
inputs = {"queries": q, "keys": k, "values": v, "valid_lens": lens}
a = infer(BASE, "attention_dot", inputs,
          parameters={"return_scores": True, "diagnostics": True,
                      "binary_data_output": True, "output_datatype": "FP32"})
check("FP32 bytes for every output: the JSON doubles rounded to float32",
      a.status == 200 and all(
          same_bits(a.outputs[name], as_float64(ref[name]).astype("<f4"))
          for name in ("output", "weights")), a.body[:300])
scores = np.array([[np.nan if x is None else x for x in row]
                   for b in ref["scores"] for row in b]).reshape(2, 3, 5)
check("  masked scores are NaN where JSON has null, the rest rounded",
      np.array_equal(np.isnan(a.outputs.get("scores")), np.isnan(scores)) and
      same_bits(a.outputs["scores"][~np.isnan(scores)],
                scores[~np.isnan(scores)].astype("<f4")))
check("  FP32 halves the bytes: weights take 4 per entry",
      a.outputs["weights"].nbytes == 2 * 3 * 5 * 4)
argmax = np.array(ref["diagnostics"]["argmax"])
a = infer(BASE, "attention_dot", inputs,
          outputs={"diagnostics.argmax": "INT32", "output": "FP64",
                   "weights": ("FP32", False)},
          parameters={"diagnostics": True})
check("INT32 bytes for diagnostics.argmax, equal to JSON's",
      a.status == 200 and same_bits(a.outputs["diagnostics.argmax"],
                                    argmax.astype("<i4")), a.body[:300])
check("  beside FP64 bytes (bit-equal) and FP32 in JSON (the float's "
      "exact double)",
      same_bits(a.outputs["output"], as_float64(ref["output"])) and
      same_bits(a.outputs["weights"].astype("<f4"),
                as_float64(ref["weights"]).astype("<f4")) and
      json.loads(a.body[:a.header_length])["outputs"][2]["datatype"] ==
      "FP32")
a = infer(BASE, "attention_dot", inputs,
          outputs={"diagnostics.argmax": "INT64"},
          parameters={"diagnostics": True})
check("INT64 bytes for diagnostics.argmax",
      same_bits(a.outputs.get("diagnostics.argmax"), argmax.astype("<i8")))
a = infer(BASE, "attention_dot", inputs, outputs={"weights": "INT32"})
check_error("INT32 for real weights: 422 naming the output", a, 422,
            "invalid_value at /outputs/0/parameters/datatype: output "
            "weights holds real numbers: ask for FP64 or FP32, not INT32")
big = {"queries": np.full((1, 1, 1), 1e300), "keys": np.ones((1, 1, 1)),
       "values": np.full((1, 1, 1), 1e300)}
a = infer(BASE, "attention_dot", big, outputs={"output": "FP32"})
check_error("FP32 for an output beyond float range: 422, ask for FP64", a,
            422, "entry 0 of output output is 1.0000000000000001e+300, "
                 "beyond FP32's range: ask for FP64")
body, hl = encode(inputs, parameters={"binary_data_output": True},
                  extra={"outputs": []})
a = raw_post(INFER, body, hl)
every = infer(BASE, "attention_dot", inputs,
              parameters={"binary_data_output": True})
check("an empty outputs list: every output, as with none",
      a.status == 200 and a.body == every.body and
      {"output", "weights"} <= set(a.outputs), a.body[:300])
a = infer(BASE, "attention_dot", inputs, outputs={"output": ("FP64", False)},
          parameters={"binary_data_output": True})
check("an output's binary_data false overrides binary_data_output",
      a.status == 200 and a.header_length is None and
      same_bits(a.outputs.get("output"), as_float64(ref["output"])))

# --------------------------------------------------- mixed and ordered
a = infer(BASE, "attention_dot", {"values": v, "keys": (k, "json"),
                                  "valid_lens": lens.astype(np.int32),
                                  "queries": q.astype(np.float32)},
          outputs={"output": "FP64"})
st, ref32 = route(BASE, "/attention/dot", {
    "queries": q.astype(np.float32).astype(np.float64).tolist(),
    "keys": k.tolist(), "values": v.tolist(), "valid_lens": lens.tolist()})
check("mixed: values bytes first, keys JSON, valid_lens INT32 bytes, "
      "queries FP32 bytes: bit-equal to JSON",
      a.status == 200 and same_bits(a.outputs.get("output"),
                                    as_float64(ref32["output"])),
      a.body[:300])
a = infer(BASE, "attention_dot", {"queries": q[0], "keys": k[0],
                                  "values": v[0],
                                  "valid_lens": np.array([3])},
          outputs={"output": "FP64"})
st, ref1 = route(BASE, "/attention/dot", {
    "queries": q[0].tolist(), "keys": k[0].tolist(), "values": v[0].tolist(),
    "valid_lens": 3})
check("unbatched, valid_lens of shape [1] as bytes: the scalar form",
      a.status == 200 and same_bits(a.outputs.get("output"),
                                    as_float64(ref1["output"])), a.body[:300])
a = infer(BASE, "attention_dot", inputs, outputs={"output": "FP64"},
          content_type="application/json")
check("Content-Type application/json with bytes after the header",
      a.status == 200 and same_bits(a.outputs.get("output"),
                                    as_float64(ref["output"])))
body, hl = encode(inputs, {"output": "FP64"}, extra={"id": "r-17"})
a = raw_post(INFER, body, hl)
check("the request's id is echoed in the header", a.status == 200 and
      a.json.get("id") == "r-17")

# a tensor above the stream's threshold (its bytes sent as read)
qb, kb, vb = (rng.standard_normal((2, 200, 16)) for _ in range(3))
a = infer(BASE, "attention_dot", {"queries": qb, "keys": kb, "values": vb},
          parameters={"binary_data_output": True})
st, refb = route(BASE, "/attention/dot", {
    "queries": qb.tolist(), "keys": kb.tolist(), "values": vb.tolist()})
check("80,000 weights streamed as bytes: bit-equal, with a Content-Length",
      a.status == 200 and same_bits(a.outputs["weights"],
                                    as_float64(refb["weights"])) and
      "transfer-encoding" not in a.headers and
      int(a.headers["content-length"]) == len(a.body), a.headers)
a = post(BASE, INFER, *(lambda b, h: (b, {
    "Content-Type": "application/octet-stream", "Accept-Encoding": "gzip",
    "Inference-Header-Content-Length": str(h)}))(*encode(
        {"queries": qb, "keys": kb, "values": vb},
        parameters={"binary_data_output": True})))
check("  and never gzipped, even when the client takes gzip",
      a.status == 200 and "content-encoding" not in a.headers)

# ------------------------------------------------------- other models
W = {name: rng.standard_normal(shape) * 0.3 for name, shape in
     (("W_q", (6, 4)), ("W_k", (6, 4)), ("w_v", (6,)))}
a = infer(BASE, "attention_additive", dict(inputs, **W),
          parameters={"binary_data_output": True})
st, refa = route(BASE, "/attention/additive", {
    "queries": q.tolist(), "keys": k.tolist(), "values": v.tolist(),
    "valid_lens": lens.tolist(), **{n: w.tolist() for n, w in W.items()}})
check("additive over bytes: output and weights bit-equal to JSON",
      a.status == 200 and st == 200 and
      same_bits(a.outputs["output"], as_float64(refa["output"])) and
      same_bits(a.outputs["weights"], as_float64(refa["weights"])),
      a.body[:300])
qm = rng.standard_normal((2, 3, 4))
a = infer(BASE, "attention_multihead", {"queries": qm},
          parameters={"num_heads": 2, "num_hiddens": 4, "seed": 7,
                      "binary_data_output": True})
st, refm = route(BASE, "/attention/multihead", {
    "queries": qm.tolist(), "num_heads": 2, "num_hiddens": 4, "seed": 7})
check("multihead self-attention over bytes: output bit-equal to JSON",
      a.status == 200 and st == 200 and
      same_bits(a.outputs["output"], as_float64(refm["output"])),
      a.body[:300])
x = np.array([1.0, 2.0, 4.0])
y = np.array([0.0, 3.0, 1.0])
a = infer(BASE, "regression_nw", {"x_train": x, "y_train": y,
                                  "x_query": np.array([2.5]),
                                  "y_query": np.array([3.0])},
          parameters={"w": 0.5, "fit_epochs": 3, "fit_lr": 0.01,
                      "binary_data_output": True})
st, refn = route(BASE, "/regression/nw", {
    "x_train": x.tolist(), "y_train": y.tolist(), "x_query": [2.5],
    "y_query": [3.0], "w": 0.5, "fit": {"epochs": 3, "lr": 0.01}})
check("NW over bytes: predictions and each history column bit-equal to "
      "JSON",
      a.status == 200 and st == 200 and
      same_bits(a.outputs["predictions"], as_float64(refn["predictions"])) and
      same_bits(a.outputs["history.w"],
                as_float64([e["w"] for e in refn["history"]])) and
      same_bits(a.outputs["history.epoch"],
                as_float64([e["epoch"] for e in refn["history"]])) and
      same_bits(a.outputs["w"], as_float64([refn["w"]])),
      a.body[:400])
a = infer(BASE, "regression_nw", {"x_train": x, "y_train": y,
                                  "x_query": np.array([2.5]),
                                  "y_query": np.array([3.0])},
          outputs={"history.epoch": "INT64", "history.w": ("FP32", False)},
          parameters={"w": 0.5, "fit_epochs": 3, "fit_lr": 0.01})
check("NW: history.epoch (whole numbers) as INT64 bytes, history.w as "
      "FP32 JSON",
      a.status == 200 and
      same_bits(a.outputs.get("history.epoch"), np.array([1, 2, 3], "<i8"))
      and same_bits(a.outputs.get("history.w"), as_float64(
          [e["w"] for e in refn["history"]]).astype("<f4")), a.body[:400])

# ------------------------------------------ sizes, truncation, framing
small = {"queries": q, "keys": k, "values": v}
body, hl = encode(small)
a = raw_post(INFER, body[:-1], hl)
check_error("one byte short: 400, the body ends inside the values", a, 400,
            "invalid_json at /inputs/2/parameters/binary_data_size: the "
            "body ends inside input values's bytes: its binary_data_size "
            "240 needs bytes 512 to 752 after the JSON header, and the "
            "body has 751 there")
a = raw_post(INFER, body[:hl + 10], hl)
check_error("cut inside the first input: 400 naming it", a, 400,
            "at /inputs/0/parameters/binary_data_size: the body ends "
            "inside input queries's bytes")
a = raw_post(INFER, body + b"\0\0\0", hl)
check_error("three bytes too many: 400, no input claims them", a, 400,
            "invalid_json: the body has 755 bytes after its JSON header, "
            "but the inputs' binary_data_size add up to 752: 3 bytes at "
            "the end belong to no input")
jbody = json.dumps({"inputs": [
    {"name": n_, "shape": list(t.shape), "datatype": "FP64",
     "data": t.ravel().tolist()} for n_, t in small.items()]}).encode()
a = raw_post(INFER, jbody + b"1234", len(jbody))
check_error("bytes after a header whose inputs are all JSON: 400", a, 400,
            "invalid_json: the body has 4 bytes after its JSON header "
            "(Inference-Header-Content-Length), but no input has "
            "parameters.binary_data_size to claim them")
hdr = json.loads(body[:hl])
hdr["inputs"][1]["parameters"]["binary_data_size"] = 312
text = json.dumps(hdr).encode()
a = raw_post(INFER, text + body[hl:hl + 192 + 312] + body[hl + 192 + 320:],
             len(text))
check_error("binary_data_size one entry short of the shape: 422 "
            "shape_mismatch in bytes", a, 422,
            "shape_mismatch at /inputs/1/parameters/binary_data_size: "
            "input keys has shape [2,5,4] and datatype FP64: 40 entries of "
            "8 bytes, so binary_data_size must be 320; it is 312")
a = raw_post(INFER, text + body[hl:], len(text))
check_error("  the same with all 320 bytes sent: the size is blamed, not "
            "the values' bytes after it", a, 422,
            "shape_mismatch at /inputs/1/parameters/binary_data_size:")
hdr["inputs"][1]["parameters"]["binary_data_size"] = -8
text = json.dumps(hdr).encode()
a = raw_post(INFER, text + body[hl:], len(text))
check_error("a negative binary_data_size: 422", a, 422,
            "invalid_value at /inputs/1/parameters/binary_data_size: "
            "binary_data_size is a count of bytes, at least 0; got -8")
hdr["inputs"][1]["parameters"]["binary_data_size"] = 320.0
text = json.dumps(hdr).encode()
a = raw_post(INFER, text + body[hl:], len(text))
check_error("a binary_data_size written 320.0: 422 wrong_type", a, 422,
            "wrong_type at /inputs/1/parameters/binary_data_size:")
for value, why in (("abc", "not digits"), ("-5", "negative"),
                   ("12 34", "two numbers")):
    a = raw_post(INFER, body, None)
    a = post(BASE, INFER, body, {"Content-Type": "application/octet-stream",
                                 "Inference-Header-Content-Length": value})
    check_error("Inference-Header-Content-Length %r (%s): 400" % (value, why),
                a, 400, "invalid_json: Inference-Header-Content-Length must "
                        "be the JSON header's length in bytes")
a = post(BASE, INFER, body, [("Content-Type", "application/octet-stream"),
                             ("Inference-Header-Content-Length", str(hl)),
                             ("Inference-Header-Content-Length", "5")])
check_error("Inference-Header-Content-Length twice: 400, never one of them",
            a, 400, "invalid_json: Inference-Header-Content-Length is given "
                    "more than once (\"%d, 5\")" % hl)
a = post(BASE, INFER, body, {"Content-Type": "application/octet-stream",
                             "Inference-Header-Content-Length":
                             "0" * 70 + str(hl)})
check_error("a header length of 70 leading zeros and more: 400, never read "
            "cut short", a, 400, 'got "(over 63 characters)"')
a = raw_post(INFER, body, len(body) + 1)
check_error("a header length beyond the body: 400 naming both", a, 400,
            "invalid_json: Inference-Header-Content-Length says the JSON "
            "header has %d bytes, but the whole body has %d" %
            (len(body) + 1, len(body)))
a = raw_post(INFER, body, hl - 1)
check_error("a header length one short: 400 saying where the header "
            "ends", a, 400,
            "(the JSON header is the body's first %d bytes, as "
            "Inference-Header-Content-Length says)" % (hl - 1))
a = post(BASE, INFER, body, [("Inference-Header-Content-Length", str(hl))])
check("no Content-Type at all, as Triton's Python client sends: 200",
      a.status == 200, a.body[:300])
a = raw_post(INFER, body, hl, content_type="application/octet-stream; "
             "charset=binary")
check("application/octet-stream with a charset parameter: 200",
      a.status == 200, a.body[:300])
a = raw_post(INFER, body, None)
check_error("the bytes sent without Inference-Header-Content-Length: 400 "
            "giving the length to send", a, 400,
            "invalid_json: the body's JSON object ends at byte %d and 752 "
            "more bytes follow: for binary tensor data after it, send "
            "Inference-Header-Content-Length: %d" % (hl, hl))
a = raw_post(INFER, body, hl + 3)
check_error("a header length 3 past the JSON object: 400 giving the right "
            "one", a, 400,
            "invalid_json: Inference-Header-Content-Length says the JSON "
            "header has %d bytes, but its object ends at byte %d: send "
            "Inference-Header-Content-Length: %d" % (hl + 3, hl, hl))
a = raw_post(INFER, body, 0)
check_error("a header length of 0: 400, the JSON header comes first", a, 400,
            "invalid_json: Inference-Header-Content-Length is 0: the body "
            "starts with the JSON inference request")
b2, h2 = encode(small, parameters={"binary_data_outputs": True})
a = raw_post(INFER, b2, h2)
check_error("a misspelt binary_data_output: did you mean, and the front's "
            "parameters listed", a, 422,
            "unknown parameter `binary_data_outputs` for attention_dot; did "
            "you mean `binary_data_output`? Its parameters: attn_mask, "
            "key_padding_mask, causal, fully_masked, scale, return_weights, "
            "return_scores, diagnostics, trace, precision, "
            "binary_data_output, output_datatype")
a = raw_post(INFER, body, hl, content_type="text/plain")
check_error("Content-Type text/plain: 415 naming both types", a, 415,
            "application/octet-stream for a JSON header followed by binary "
            "tensor data")
a = raw_post("/attention/dot", body, hl)
check("the extension is the v2 front's: /attention/dot refuses "
      "octet-stream (415)", a.status == 415)

# --------------------------------------------------- values refused
bad_bool = np.array([[True, False], [False, True]])
body, hl = encode({"queries": np.ones((2, 2)), "keys": np.ones((2, 2)),
                   "values": bad_bool})
body = body[:hl + 64] + bytes([1, 2, 0, 1])
a = raw_post(INFER, body, hl)
check_error("a BOOL byte 2: 422 naming the byte", a, 422,
            "invalid_value at /inputs/2: input values is BOOL: each byte is "
            "0 (false) or 1 (true); byte 1 of its data is 0x02")
for bad, word in ((np.nan, "NaN"), (np.inf, "+Infinity"),
                  (-np.inf, "-Infinity")):
    qn = q.copy()
    qn[1, 2, 3] = bad
    a = infer(BASE, "attention_dot", {"queries": qn, "keys": k, "values": v})
    check_error("%s in FP64 bytes: 422 at the input, naming the entry" % word,
                a, 422, "invalid_value at /inputs/0: entry 23 (row-major) "
                        "of input queries's bytes is %s" % word)
a = infer(BASE, "attention_dot", {"queries": q.astype(np.float32) * np.inf,
                                  "keys": k, "values": v})
check_error("infinity in FP32 bytes: 422", a, 422,
            "invalid_value at /inputs/0: entry 0 (row-major) of input "
            "queries's bytes is")
a = infer(BASE, "attention_dot", {"queries": q, "keys": k, "values": v,
                                  "valid_lens": np.array([2.5, 1.0])})
check_error("valid_lens 2.5 as FP64 bytes: 422 naming the entry", a, 422,
            "wrong_type at /inputs/3: valid_lens entries must be integers; "
            "entry 0 of /inputs/3's bytes is not")
a = infer(BASE, "attention_dot", {"queries": q, "keys": k, "values": v,
                                  "valid_lens": np.array([9, 1])})
check_error("valid_lens 9 > Nk as INT64 bytes: 422 at the input", a, 422,
            "invalid_value at /inputs/3:")
body, hl = encode({"queries": np.zeros((0, 2)), "keys": np.ones((1, 2)),
                   "values": np.ones((1, 1))})
a = raw_post(INFER, body, hl)
check_error("shape [0, 2] with binary_data_size 0: 422, the route's "
            "invalid_value", a, 422, "invalid_value at /inputs/0")
hdr = {"inputs": [{"name": "queries", "shape": [1 << 40, 2],
                   "datatype": "FP64",
                   "parameters": {"binary_data_size": 16}},
                  {"name": "keys", "shape": [1, 2], "datatype": "FP64",
                   "data": [1, 0]},
                  {"name": "values", "shape": [1, 1], "datatype": "FP64",
                   "data": [1]}]}
text = json.dumps(hdr).encode()
a = raw_post(INFER, text + bytes(16), len(text))
check_error("a declared shape over --max-elements: 413 before any byte is "
            "read", a, 413, "payload_too_large at /inputs/0")
hdr["inputs"][0]["shape"] = [2, -1]
text = json.dumps(hdr).encode()
a = raw_post(INFER, text + bytes(16), len(text))
check_error("shape [2, -1] over bytes: the route's 422 at the shape", a,
            422, "invalid_value at /inputs/0/shape/1")
hdr["inputs"][0]["shape"] = [2, 1]
hdr["inputs"][0]["data"] = [1, 2]
text = json.dumps(hdr).encode()
a = raw_post(INFER, text + bytes(16), len(text))
check_error("both data and binary_data_size: 422", a, 422,
            "invalid_value at /inputs/0/data: input queries gives both")

hdr = json.loads(body[:hl])
hdr["inputs"][0]["name"] = "queries\u0000x"
text = json.dumps(hdr).encode()
a = raw_post(INFER, text + body[hl:], len(text))
check_error("an input named queries\\u0000x is not queries", a, 422,
            "unknown_field at /inputs/0/name: an input's name holds a NUL "
            "byte")
hdr["inputs"][0]["name"] = "queries"
hdr["model_name"] = "attention_dot\u0000"
text = json.dumps(hdr).encode()
a = raw_post(INFER, text + body[hl:], len(text))
check_error("model_name attention_dot\\u0000 is not attention_dot", a, 422,
            "invalid_value at /model_name: model_name holds a NUL byte")

print("1..%d" % n)
sys.exit(1 if failed or n == 0 else 0)
