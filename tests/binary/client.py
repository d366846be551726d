"""A client of the Open Inference Protocol's binary tensor data extension
written as a grader would: the standard library and numpy, nothing else
(docs/binary.md).

    answer = infer("http://127.0.0.1:8080", "attention_dot",
                   {"queries": q, "keys": k, "values": v},
                   outputs={"output": "FP64", "weights": "FP32"})
    answer.outputs["weights"]      # numpy array, float32

Each input is sent as raw little-endian row-major bytes after the JSON
header, in its numpy dtype's datatype (float64 FP64, float32 FP32, int64
INT64, int32 INT32, bool BOOL); a (name, array, "json") triple sends one
as JSON data instead.
"""

import http.client
import json
import urllib.parse

import numpy as np

DATATYPES = {"FP64": "<f8", "FP32": "<f4", "INT64": "<i8", "INT32": "<i4",
             "BOOL": "|b1"}
OF_DTYPE = {np.dtype("float64"): "FP64", np.dtype("float32"): "FP32",
            np.dtype("int64"): "INT64", np.dtype("int32"): "INT32",
            np.dtype("bool"): "BOOL"}


class Answer:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body
        self.header_length = None
        self.json = None
        self.outputs = {}
        length = headers.get("inference-header-content-length")
        if length is not None:
            self.header_length = int(length)
            self.json = json.loads(body[:self.header_length])
        else:
            try:
                self.json = json.loads(body)
            except ValueError:
                return
        if status != 200:
            return
        offset = self.header_length or 0
        for out in self.json.get("outputs", []):
            size = out.get("parameters", {}).get("binary_data_size")
            if size is None:
                self.outputs[out["name"]] = np.array(
                    [np.nan if x is None else x for x in out["data"]],
                    dtype=DATATYPES[out["datatype"]]).reshape(out["shape"])
                continue
            raw = body[offset:offset + size]
            offset += size
            self.outputs[out["name"]] = np.frombuffer(
                raw, dtype=DATATYPES[out["datatype"]]).reshape(out["shape"])
        self.trailing = len(body) - offset


def encode(inputs, outputs=None, parameters=None, extra=None):
    """The body and its header length: inputs maps name -> array (or
    (array, "json")); outputs maps name -> datatype (binary) or
    (datatype, False) for JSON."""
    entries, blobs = [], []
    for name, value in inputs.items():
        as_json = isinstance(value, tuple) and value[1] == "json"
        array = np.asarray(value[0] if as_json else value)
        datatype = OF_DTYPE[array.dtype]
        entry = {"name": name, "shape": list(array.shape),
                 "datatype": datatype}
        if as_json:
            entry["data"] = array.ravel().tolist()
        else:
            raw = np.ascontiguousarray(array).astype(
                DATATYPES[datatype]).tobytes()
            entry["parameters"] = {"binary_data_size": len(raw)}
            blobs.append(raw)
        entries.append(entry)
    header = {"inputs": entries}
    if parameters:
        header["parameters"] = parameters
    if outputs:
        header["outputs"] = []
        for name, form in outputs.items():
            datatype, binary = form if isinstance(form, tuple) else (form,
                                                                      True)
            header["outputs"].append({"name": name, "parameters": {
                "binary_data": binary, "datatype": datatype}})
    if extra:
        header.update(extra)
    text = json.dumps(header).encode()
    return text + b"".join(blobs), len(text)


def post(base, path, body, headers):
    """headers: a dict, or a list of (name, value) pairs (a name may
    repeat)."""
    url = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port or 80,
                                      timeout=120)
    if isinstance(headers, dict):
        conn.request("POST", path, body=body, headers=headers)
    else:
        conn.putrequest("POST", path)
        for name, value in headers + [("Content-Length", str(len(body)))]:
            conn.putheader(name, value)
        conn.endheaders(body)
    r = conn.getresponse()
    data = r.read()
    got = {k.lower(): v for k, v in r.getheaders()}
    conn.close()
    return Answer(r.status, got, data)


def infer(base, model, inputs, outputs=None, parameters=None,
          content_type="application/octet-stream"):
    body, header_length = encode(inputs, outputs, parameters)
    return post(base, "/v2/models/%s/infer" % model, body,
                {"Content-Type": content_type,
                 "Inference-Header-Content-Length": str(header_length)})


def route(base, path, request):
    """The JSON route's answer (POST path), as parsed JSON."""
    answer = post(base, path, json.dumps(request).encode(),
                  {"Content-Type": "application/json"})
    return answer.status, answer.json
