#!/bin/sh
# t_messages.sh — what a new user's first mistakes are told: an empty body,
# NaN and Infinity, singular and plural counts, "did you mean" only for a
# close name, PyTorch's names, a compressed body (415 with
# Accept-Encoding), and the KServe front's flat fit parameters and the
# binary extension it does not take yet (docs/errors.md).
#   usage: sh t_messages.sh BASE_URL
BASE=${1:?usage: t_messages.sh BASE_URL}
. "$(dirname "$0")/lib.sh"

ONE='"queries": [[[1, 0]]], "keys": [[[1, 0]]], "values": [[[1]]]'

# --- the body -------------------------------------------------------------
post_json /attention/dot ''
check_problem "an empty body is 400 invalid_json" 400 invalid_json
check_json "  which says the body is empty" '.detail | startswith("the body is empty")'
post_json /attention/dot '
  '
check_json "a blank body is called empty too" '.detail | startswith("the body is empty")'
for literal in NaN Infinity -Infinity nan inf; do
    post_json /softmax/masked "{\"scores\": [[1, $literal]]}"
    check_problem "$literal in a body is 400 invalid_json" 400 invalid_json
    check_json "  which says JSON has no NaN or Infinity" \
        '.detail | contains("JSON has no NaN or Infinity") and contains("allow_nan=False")'
done
post_json /softmax/masked '{"scores": [[1, info]]}'
check_json "a word that only starts like inf keeps the parser's message" \
    '.detail | contains("invalid token") and (contains("NaN") | not)'

# --- counts ---------------------------------------------------------------
post_json /attention/dot '{"queries": [[[1, 0]], [[0, 1]]], "keys": [[[1, 0]]], "values": [[[1]]]}'
check_json "one example is \"1 example\"" '.detail | test("keys has 1 example but queries has 2")'
post_json /attention/dot '{"queries": [[[1, 0]]], "keys": [[[1, 0]], [[0, 1]]], "values": [[[1]], [[2]]]}'
check_json "two examples are \"2 examples\"" '.detail | test("keys has 2 examples but")'
post_json /attention/additive '{"queries": [[[1, 0]]], "keys": [[[1, 0]]], "values": [[[1]]], "W_q": [[1, 0]], "W_k": [[1, 0]], "w_v": [1, 2]}'
check_json "h = 1 needs \"1 entry\"" '.detail | test("h = 1 entry,")'
post_json /attention/dot '{"queries": [[1, 0], [1]], "keys": [[1, 0]], "values": [[1]]}'
check_json "a ragged row of one has \"1 entry\"" '.detail | test("has 1 entry but its first sibling has 2")'

# --- suggestions ----------------------------------------------------------
post_json /attention/dot "{$ONE, \"valid_len\": [1]}"
check_problem "valid_len is 422 unknown_field" 422 unknown_field /valid_len
check_json "  with a suggestion of valid_lens" '.detail | contains("did you mean `valid_lens`?")'
post_json /attention/dot "{$ONE, \"query\": 1}"
check_json "query suggests queries" '.detail | contains("did you mean `queries`?")'
post_json /attention/dot "{$ONE, \"lens\": 1}"
check_json "lens suggests valid_lens" '.detail | contains("did you mean `valid_lens`?")'
post_json /attention/dot "{$ONE, \"seed\": 1}"
check_json "seed on dot suggests nothing far away" \
    '(.detail | contains("did you mean") | not) and (.detail | contains("Known fields: queries"))'
post_json /attention/dot "{$ONE, \"dropout\": 0.1}"
check_problem "dropout is 422 unknown_field" 422 unknown_field /dropout
check_json "  saying attnd has no dropout, not suggesting queries" \
    '(.detail | contains("no dropout")) and (.detail | contains("did you mean") | not)'
post_json /attention/dot "{$ONE, \"is_causal\": true}"
check_json "is_causal names attnd's causal" '.detail | contains("attnd calls it `causal`")'
post_json /attention/dot "{$ONE, \"mask\": [[true]]}"
check_json "mask names attn_mask, its polarity, and valid_lens" \
    '.detail | contains("`attn_mask`") and contains("NOT allowed") and contains("valid_lens")'
post_json /attention/multihead '{"queries": [[1, 0]], "num_heads": 1, "num_hiddens": 2, "average_attn_weights": false}'
check_json "average_attn_weights says every head's weights come back" \
    '.detail | contains("each head")'
post_json /regression/nw '{"x_train": [1, 2], "y_train": [1, 2], "x_query": [1], "dropout": 0.1}'
check_json "dropout on NW (no queries field) gets no attention advice" \
    '.detail | contains("eval mode") | not'
http GET '/regression/nw/dataset?ntrain=5'
check_json "a query parameter close to n_train suggests it" '.detail | contains("did you mean `n_train`?")'
http GET '/regression/nw/dataset?zzz=5'
check_json "a far query parameter lists the known ones" \
    '(.detail | contains("did you mean") | not) and (.detail | contains("Known parameters: n_train"))'

# --- a compressed body ----------------------------------------------------
printf '{%s}' "$ONE" | gzip >"$TMP/body.gz"
http POST /attention/dot -H 'Content-Type: application/json' \
    -H 'Content-Encoding: gzip' --data-binary "@$TMP/body.gz"
check_problem "a gzip body is 415 unsupported_media_type" 415 unsupported_media_type
check_json "  naming the coding" '.detail | contains("Content-Encoding: gzip")'
check_header "  with Accept-Encoding: identity (RFC 9110 section 15.5.16)" \
    Accept-Encoding identity
post_json /attention/dot "{$ONE}" -H 'Content-Encoding: identity'
check_status "Content-Encoding: identity is fine" 200
post_json /attention/dot "{$ONE}" -H 'Content-Encoding: identity, IDENTITY '
check_status "  so is a list of identity, with blanks" 200
http POST /attention/dot -H 'Content-Type: application/json' \
    -H 'Content-Encoding: identity' -H 'Content-Encoding: gzip' \
    --data-binary "@$TMP/body.gz"
check_problem "gzip in a second Content-Encoding line is 415 too" 415 \
    unsupported_media_type

# --- the KServe front -----------------------------------------------------
NW='{"name": "x_train", "shape": [3], "datatype": "FP64", "data": [1, 2, 4]},
    {"name": "y_train", "shape": [3], "datatype": "FP64", "data": [0, 3, 1]},
    {"name": "x_query", "shape": [1], "datatype": "FP64", "data": [2.5]}'
post_json /v2/models/regression_nw/infer "{\"inputs\": [$NW], \"parameters\": {\"fit\": {\"epochs\": 2}}}"
check_status "v2: a fit object is 422" 422
check_json "  naming the flat fit_* parameters, not suggesting w" \
    '.error | contains("fit_epochs, fit_lr and fit_data") and (contains("`w`") | not)'
post_json /v2/models/regression_nw/infer "{\"inputs\": [$NW], \"parameters\": {\"fit_epochs\": 0}}"
check_json "v2: a fit_epochs error names fit_epochs, not fit.epochs" \
    '.error | startswith("invalid_value at /parameters/fit_epochs: fit_epochs is") and (contains("fit.") | not)'
post_json /v2/models/attention_dot/infer '{"inputs": [
    {"name": "queries", "shape": [1, 1, 1], "datatype": "FP64", "data": [1]},
    {"name": "keys", "shape": [1, 2, 1], "datatype": "FP64", "data": [1, 1]},
    {"name": "values", "shape": [1, 2, 1], "datatype": "FP64", "data": [1, 1]},
    {"name": "valid_lens", "shape": [1], "datatype": "INT64", "data": [3]}]}'
check_json "v2: a valid_lens error quotes the protocol's pointer only" \
    '.error | startswith("invalid_value at /inputs/3/data/0:") and (contains("/valid_lens") | not)'
post_json /v2/models/regression_nw/infer "{\"inputs\": [$NW], \"parameters\": {\"fit_epochs\": null}}"
check_json "v2: fit_epochs null is absent: no fit" '.outputs | map(.name) | index("history.w") == null'
post_json /v2/models/regression_nw/infer "{\"inputs\": [$NW], \"parameters\": {\"fit_epochs\": 1.5}}"
check_json "v2: a fit_epochs of the wrong type is named fit_epochs" \
    '.error | startswith("wrong_type at /parameters/fit_epochs: fit_epochs must be an integer")'
post_json /regression/nw '{"x_train": [1, 2], "y_train": [1, 2], "x_query": [1], "fit": {"epochs": 1.5}}'
check_json "native: a fit.epochs of the wrong type is named fit.epochs" \
    '.detail | startswith("fit.epochs must be an integer")'
post_json /v2/models/attention_dot/infer '{"inputs": [
    {"name": "queries", "shape": [1, 1], "datatype": "FP64", "data": [1]},
    {"name": "keys", "shape": [1, 1], "datatype": "FP64", "data": [1]},
    {"name": "values", "shape": [1, 1], "datatype": "FP64", "data": [1]}],
  "parameters": {"dropout": 0.1}}'
check_json "v2: dropout gets the same sentence as on the native route" \
    '.error | contains("no dropout")'
post_json /regression/nw '{"x_train": [1, 2], "y_train": [[1], [2]], "x_query": [1], "y_query": [[1, 2]]}'
check_json "y_query shaped like a (n, 1) y_train says (m, dv) = (1, 1)" \
    '.detail | endswith("(m, dv) = (1, 1)")'
http GET '/encoding/positional?num_steps=1e20&d=2'
check_json "num_steps 1e20 states the range it is out of" '.detail | contains("from 1 to 2^63 - 1")'

http POST /v2/models/attention_dot/infer -H 'Content-Type: application/json' \
    -H 'Inference-Header-Content-Length: 10' --data-binary '{"inputs":[]}0123456789'
check_status "v2: a JSON header cut short by its length is 400" 400
check_json "  saying where the header ends" \
    '.error | endswith("(the JSON header is the body'"'"'s first 10 bytes, as Inference-Header-Content-Length says)")'
http POST /v2/models/attention_dot/infer -H 'Content-Type: application/json' \
    -H 'Inference-Header-Content-Length: 24' --data-binary '{"inputs":[]}0123456789'
check_status "v2: a header length beyond the body is 400" 400
check_json "  naming both lengths" \
    '.error == "invalid_json: Inference-Header-Content-Length says the JSON header has 24 bytes, but the whole body has 23"'
echo "1..$T"
