#!/bin/sh
# t_messages.sh — what a new user's first mistakes are told: an empty body,
# NaN and Infinity, a byte order mark, a number beyond the double range, a
# trailing comma, a byte that is not UTF-8, a null in a tensor, singular
# and plural counts, "did you mean" only for a close name, PyTorch's names,
# an answer's members sent as a request, a compressed body (415 with
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

printf '\357\273\277{%s}' "$ONE" >"$TMP/bom.json"
post_file /attention/dot "$TMP/bom.json"
check_problem "a body after a byte order mark is 400 invalid_json" 400 invalid_json
check_json "  which names the mark and says to send the JSON without it" \
    '.detail | contains("byte order mark (EF BB BF)") and contains("without it")'
post_json /attention/dot '{"queries": [[1e400]], "keys": [[1]], "values": [[1]]}'
check_problem "1e400 is 400 invalid_json" 400 invalid_json
check_json "  which says it does not fit a double, and the double range" \
    '.detail | contains("the number 1e400 does not fit a double") and contains("about ±1.8e308; send a finite double")'
post_json /attention/dot "{\"queries\": [[-$(printf '1%0399d' 0).5]], \"keys\": [[1]], \"values\": [[1]]}"
check_json "  a long literal jansson does not quote is named by its start" \
    '.detail | contains("the number -10000000000000000000000... does not fit a double")'
post_json /attention/dot '{"queries": [[1, 0],
  ], "keys": [[1, 0]], "values": [[1]]}'
check_problem "a trailing comma in an array is 400 invalid_json" 400 invalid_json
check_json "  which says JSON allows no trailing comma" \
    '.detail | contains("a comma before '"']'"' (line 2") and contains("JSON allows no trailing comma")'
post_json /attention/dot "{$ONE,}"
check_json "a trailing comma in an object says so too" \
    '.detail | contains("a comma before '"'}'"'") and contains("no trailing comma")'
post_json /attention/dot '{"queries": [[1, 2]] "keys": [[1, 2]]}'
check_json "a missing comma between members says so, naming the token after it" \
    '.detail | startswith("the body is not valid JSON: a comma is missing before '"'"'\"keys\"'"'"' (line 1, column 27, byte 27)")'
post_json /attention/dot '{"queries": [[1 2]]}'
check_json "a missing comma between numbers says so too" \
    '.detail | startswith("the body is not valid JSON: a comma is missing before '"'"'2'"'"'")'
post_json /attention/dot '{"queries": [[1, 0]]]}'
check_json "a bracket too many is no trailing comma" \
    '.detail | contains("comma") | not'
printf '{"queries": [[1]], "caf\351": 1}' >"$TMP/latin1.json"
post_file /attention/dot "$TMP/latin1.json"
check_problem "a Latin-1 byte is 400 invalid_json" 400 invalid_json
check_json "  which says the body must be UTF-8, naming the byte and its offset" \
    '.detail | contains("must be UTF-8, and byte 0xe9 at offset 23")'
post_json /v2/models/attention_dot/infer ''
check_status "v2: an empty body is 400" 400
check_json "  saying what the infer route reads and where its inputs are listed" \
    '.error | startswith("invalid_json: the body is empty: this route reads {\"inputs\": [{\"name\", \"shape\", \"datatype\", \"data\"}") and contains("GET /v2/models/attention_dot lists the inputs") and (contains("/openapi.json") | not)'

# --- null in a tensor -----------------------------------------------------
post_json /softmax/masked '{"scores": [[[1, 2, null]]], "valid_lens": [2]}'
check_problem "a null score is 422 wrong_type" 422 wrong_type /scores/0/0/2
check_json "  saying masked scores print as null and masks are valid_lens or causal" \
    '.detail | contains("/scores/0/0/2 is null: attnd prints a masked score as null") and contains("valid_lens, causal or attn_mask")'
post_json /attention/dot '{"queries": [[null, 0]], "keys": [[1, 0]], "values": [[1]]}'
check_json "a null query entry gets the same advice" \
    '.detail | contains("masked score as null")'
post_json /attention/dot "{$ONE, \"valid_lens\": [null]}"
check_json "a null in valid_lens (integers) does not" \
    '.detail | contains("masked") | not'

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
check_json "seed on dot says where it belongs, suggesting no spelling" \
    '(.detail | contains("did you mean") | not) and (.detail | contains("`seed` belongs to /attention/multihead and /attention/additive")) and (.detail | contains("Known fields: queries"))'
for member in output weights scores params grads predictions history loss grad_w; do
    post_json /attention/dot "{$ONE, \"$member\": 1}"
    check_problem "an answer's $member in a request is 422 unknown_field" 422 \
        unknown_field "/$member"
    check_json "  which says it is an answer's member and how /grade grades one" \
        '(.detail | contains("is a member of attnd'"'"'s answers, not a request field")) and (.detail | contains("POST /grade {\"endpoint\", \"request\", \"answer\"} (docs/grading.md)")) and (.detail | contains("did you mean") | not)'
done
post_json /softmax/masked '{"scores": [[1, 2]], "weights": [[0.5, 0.5]]}'
check_json "weights sent back to /softmax/masked gets the same sentence" \
    '.detail | contains("member of attnd'"'"'s answers")'
post_json /grade '{"endpoint": "/attention/dot", "request": {"queries": [[1]], "keys": [[1]], "values": [[1]], "output": [[1]]}, "answer": {"output": [[1]]}}'
check_json "an answer's member inside /grade's request says the same" \
    '.detail | contains("member of attnd'"'"'s answers")'
for pair in Q:queries K:keys V:values; do
    post_json /attention/dot "{$ONE, \"${pair%%:*}\": 1}"
    check_json "${pair%%:*} on dot names \`${pair#*:}\`" \
        ".detail | contains(\"attnd calls the ${pair#*:} \`${pair#*:}\`\")"
done
for field in num_heads W_q W_o; do
    post_json /attention/dot "{$ONE, \"$field\": 1}"
    check_json "$field on dot says it belongs to /attention/multihead" \
        ".detail | contains(\"\`$field\` belongs to /attention/multihead\")"
done
post_json /attention/additive "{$ONE, \"W_v\": [1]}"
check_json "W_v on additive still suggests its w_v" \
    '.detail | contains("did you mean `w_v`?")'
post_json /attention/additive "{$ONE, \"W_o\": [[1]]}"
check_json "W_o on additive gets no advice meant for dot" \
    '.detail | contains("dot attention") | not'
post_json /attention/additive "{$ONE, \"num_heads\": 2}"
check_json "num_heads on additive says it belongs to /attention/multihead" \
    '.detail | contains("`num_heads` belongs to /attention/multihead")'
MH='"queries": [[1, 0]], "num_heads": 1, "num_hiddens": 2'
for field in kdim vdim; do
    post_json /attention/multihead "{$MH, \"$field\": 2}"
    check_json "$field on multihead says dk and dv come from the shapes" \
        '.detail | contains("attnd reads dk and dv from the shapes of keys and values")'
done
post_json /attention/multihead "{$MH, \"bias\": false}"
check_json "bias on multihead names b_q, b_k, b_v and b_o" \
    '.detail | contains("`b_q`, `b_k`, `b_v` and `b_o`")'
post_json /attention/multihead "{$MH, \"num_heads\": 123456789012345680000}"
check_problem "num_heads beyond int64 is 422 invalid_value" 422 invalid_value /num_heads
check_json "  saying it is out of range, not that it must divide h" \
    '.detail | startswith("num_heads is out of range: the number of heads H is an integer from 1 to 2^63 - 1")'
post_json /attention/multihead '{"queries": [[1, 0]], "num_heads": 123456789012345680000, "num_hiddens": 0}'
check_problem "  and before num_hiddens, which follows it in the table" 422 \
    invalid_value /num_heads
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
post_json /regression/nw '{"x_train": [1, 2, 4], "y_train": [0, 3, 1], "x_query": [2.5], "w": "scott", "fit": {}}'
check_problem "a fit whose first step makes w <= 0 is 422 at /fit/lr" 422 invalid_value /fit/lr
check_json "  showing the step and the lr that keeps w > 0" \
    '.detail | contains("1.05791 - 0.5 * 3.32609 makes w <= 0: an lr below 0.318 keeps w > 0")'
post_json /regression/nw '{"x_train": [-1e300, 0, 1e300], "y_train": [0, 3e-3, 1e-3], "x_query": [0], "w": 1e-300, "fit": {"lr": 1e-300}}'
check_json "  and saying when no double lr is small enough, what to do instead" \
    '.detail | contains("no double lr is small enough: scale x_train and x_query to unit size")'
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
# /grade's endpoint list is the route table's, with the closest route
post_json /grade '{"endpoint": "attention/dot", "request": {}, "answer": {"output": [[1]]}}'
check_problem "/grade: an endpoint without its leading / is 422 at /endpoint" 422 invalid_value /endpoint
check_json "  asking whether /attention/dot was meant" \
    '.detail | contains("did you mean `/attention/dot`?")'
check_json "  and listing the Transformer blocks and /attention/self among the gradable routes" \
    '.detail | contains("/attention/self") and contains("/transformer/encoder") and contains("/transformer/decoder")'
post_json /grade '{"endpoint": "/attention/d\u0000ot", "request": {}, "answer": {"output": [[1]]}}'
check_problem "/grade: an endpoint holding \\u0000 is 422 at /endpoint" 422 invalid_value /endpoint
check_json "  saying so, instead of a name cut at the NUL" \
    '.detail | startswith("the endpoint holds a NUL byte (\\u0000), which no route'"'"'s path has. Grade one of: /attention/dot,")'
post_json /grade '{"endpoint": "/attention/dot", "request": {"queries": [[0, 0]], "keys": [[1, 0], [0, 1]], "values": [[1], [2]], "diagnostics": true}, "answer": {"diagnostics": {"warnings": ["near_unifor\u0000m"]}}}'
check_status "/grade: an answer's string holding \\u0000 is graded" 200
check_json "  and echoed whole in got" \
    '.fields["diagnostics.warnings"].first_mismatch.got == "near_unifor\u0000m"'
post_json /v2/models/attention_dot/infer '{"inputs": [{"name": "queries", "shape": [1, 2], "datatype": "FP64\u0000x", "data": [1, 0]}]}'
check_json "v2: a datatype holding \\u0000 is not reported as the FP64 before it" \
    '.error | endswith("got (a string containing \\u0000)")'
post_json /grade '{"endpoint": "/attention/dot", "request": {}, "answer": {}, "tolerance": 1e-3}'
check_problem "/grade: tolerance is 422 unknown_field" 422 unknown_field /tolerance
check_json "  naming compare, with rtol and atol at their defaults, and the modes" \
    '.detail | contains("/grade takes `compare`, {\"mode\": \"relabs\", \"rtol\": 1e-5, \"atol\": 1e-8} as numpy.allclose, or sigfig, decdig, ulp")'
post_json /grade '{"endpoint": "/attention/dot", "request": {}, "answer": {}, "sigfigs": 3}'
check_problem "/grade: sigfigs is 422 unknown_field" 422 unknown_field /sigfigs
check_json "  pointing to compare's sigfig and decdig" \
    '.detail | contains("{\"mode\": \"sigfig\", \"digits\": 3} for significant digits")'
post_json /grade '{"endpoint": "/attention/dot", "request": {}, "weights": [[1]]}'
check_json "/grade: an answer's member at the top says it goes inside answer" \
    '.pointer == "/weights" and (.detail | contains("`weights` is a member of the answer: it goes inside `answer`"))'
post_json /grade '{"endpoint": "/attention/dot", "request": {}, "answer": {"out\u0000put": 1}}'
check_problem "a key holding \\u0000 is 400 invalid_json" 400 invalid_json
check_json "  saying a key holds it, not that the JSON is invalid" \
    '.detail | startswith("an object key holds \\u0000 (line 1, column ")'
post_json /v2/models/attention_dot/infer '{"binary_data_output": true, "inputs": []}'
check_json "v2: binary_data_output at the top says it goes in parameters" \
    '.error == "unknown_field at /binary_data_output: `binary_data_output` is a parameter of the request: it goes in \"parameters\": {\"binary_data_output\": ...}"'
# a key of about a kilobyte: the pointer names the member holding it,
# which resolves, never a key cut short or a "~" without its digit
LONG=$(head -c 1021 /dev/zero | tr '\0' k)
post_json /attention/dot "{\"queries\": [[1]], \"keys\": [[1]], \"values\": [[1]], \"$LONG~\": 1}"
check_problem "a 1022-byte unknown key ending in ~ is 422 at the root, which holds it" 422 unknown_field ""
post_json /grade "{\"endpoint\": \"/attention/dot\", \"request\": {\"queries\": [[1]], \"keys\": [[1]], \"values\": [[1]], \"$LONG\": 1}, \"answer\": {\"output\": [[1]]}}"
check_problem "/grade: such a key in the request is 422 at /request" 422 unknown_field /request
post_json /attention/dot "{\"queries\": [[1]], \"keys\": [[1]], \"values\": [[1]], \"${LONG}k\": 1}"
check_problem "a 1022-byte key without ~ still fits the pointer whole" 422 unknown_field "/${LONG}k"
V2_ONE='{"name": "queries", "shape": [1, 1], "datatype": "FP64", "data": [1]}, {"name": "keys", "shape": [1, 1], "datatype": "FP64", "data": [1]}, {"name": "values", "shape": [1, 1], "datatype": "FP64", "data": [1]}'
post_json /v2/models/attention_dot/infer "{\"inputs\": [$V2_ONE], \"parameters\": {\"attn_mask\": {\"$LONG\": 1}}}"
check_json "v2: such a key in a parameter names the parameter, /parameters/attn_mask" \
    '.error | startswith("unknown_field at /parameters/attn_mask: unknown field `kkk")'
# the arguments of nn.TransformerEncoderLayer a student copies
XF='"src": [[1, 2]], "num_heads": 1, "num_layers": 1, "seed": 0'
post_json /transformer/encoder "{$XF, \"dropout\": 0.1}"
check_problem "encoder: dropout is 422 unknown_field" 422 unknown_field /dropout
check_json "  saying the blocks run as PyTorch's eval mode" \
    '.detail | contains("`dropout` is not offered: attnd computes the blocks as PyTorch does in eval mode")'
post_json /transformer/decoder '{"tgt": [[1, 2]], "memory": [[1, 2]], "num_heads": 1, "num_layers": 1, "seed": 0, "batch_first": true}'
check_json "decoder: batch_first says the blocks are always batch first" \
    '.pointer == "/batch_first" and (.detail | contains("always batch first, (B, S, E)"))'
post_json /transformer/encoder "{$XF, \"valid_lens\": [1]}"
check_json "encoder: d2l's valid_lens points to src_key_padding_mask" \
    '.pointer == "/valid_lens" and (.detail | contains("`src_key_padding_mask` (B, S)"))'
# the dataset's names, sent on to the regression
post_json /regression/nw '{"x_train": [1, 2, 4], "y_train": [0, 3, 1], "x_test": [2.5]}'
check_json "nw: the dataset's x_test points to x_query" \
    '.pointer == "/x_test" and (.detail | contains("takes them as `x_query`"))'
post_json /regression/nw '{"x_train": [1, 2, 4], "y_train": [0, 3, 1], "x_query": [2.5], "y_truth": [1]}'
check_json "nw: the dataset's y_truth points to y_query" \
    '.pointer == "/y_truth" and (.detail | contains("send them as `y_query`"))'
# d2l repeats valid_lens per head inside MultiHeadAttention
post_json /attention/multihead '{"queries": [[[1, 2]], [[3, 4]]], "num_heads": 2, "num_hiddens": 4, "seed": 0, "valid_lens": [1, 1, 1, 1]}'
check_problem "multihead: valid_lens of B·H lengths is 422 shape_mismatch" 422 shape_mismatch /valid_lens
check_json "  saying attnd repeats them per head itself, expected (B)" \
    '(.detail | contains("repeats them per head itself")) and .expected == [2] and .got == [4]'
# a route's fields at the top of a v2 inference request
post_json /v2/models/attention_dot/infer '{"queries": [[1, 2]]}'
check_json "v2: a tensor at the top level says it goes in inputs" \
    '.error | contains("`queries` is an input of attention_dot: on this front a tensor goes in \"inputs\"")'
post_json /v2/models/attention_dot/infer '{"scale": 0.5, "inputs": []}'
check_json "v2: a parameter at the top level says it goes in parameters" \
    '.error | contains("`scale` is a parameter of attention_dot: on this front it goes in \"parameters\"")'
# --- a class's first mistakes, each pointing at its real fix --------------
post_json /attention/dott "{$ONE}"
check_problem "a mistyped route is 404 not_found" 404 not_found
check_json "  naming the closest route" \
    '.detail | startswith("no route /attention/dott; did you mean `/attention/dot`?")'
http OPTIONS /attention/dott -H 'Origin: http://lab.example' \
    -H 'Access-Control-Request-Method: POST'
check_status "a preflight on a mistyped route is 204, so the page reads the 404" 204
post_json /attention/dot '{"queries": [[1, 0, 0]], "keys": [[1, 0], [0, 1], [1, 1]], "values": [[1], [2], [3]]}'
check_problem "keys sent transposed is 422 shape_mismatch" 422 shape_mismatch /keys
check_json "  saying keys looks transposed, not to use additive attention" \
    '(.detail | contains("keys looks transposed, (d, Nk) instead of (Nk, d)")) and (.detail | contains("/attention/additive") | not)'
post_json /attention/dot "{'queries': [[1, 0]], 'keys': [[1, 0]], 'values': [[1]]}"
check_problem "Python's str(dict) is 400 invalid_json" 400 invalid_json
check_json "  saying it reads like str() of a dict, and to send json.dumps" \
    '.detail | contains("a single quote where JSON needs a double one: this reads like Python'"'"'s str() of a dict. Send json.dumps(request)")'
post_json /softmax/masked '{"scores": [[1. 2.]]}'
check_problem "numpy's printed [[1. 2.]] is 400 invalid_json" 400 invalid_json
check_json "  saying numpy prints 1. and to send json.dumps(x.tolist())" \
    '.detail | contains("as numpy prints 1. for 1.0") and contains("json.dumps(x.tolist())")'
post_json /softmax/masked '{"scores": [[1, 2]], "causal": True}'
check_json "Python's True says JSON's true" \
    '.detail | contains("Python'"'"'s True, False and None are JSON'"'"'s true, false and null")'
post_json /regression/nw '{"x_train": [1, 2, 4], "y_train": [0, 3, 1], "x_query": [2.5], "sigma": 0.5}'
check_problem "nw: sigma is 422 unknown_field" 422 unknown_field /sigma
check_json "  saying the bandwidth goes in as w = 1/sigma" \
    '.detail | contains("`w` = 1/sigma")'
post_json /attention/multihead '{"queries": [[1, 0]], "num_heads": 1, "in_proj_weight": [[1, 0], [0, 1], [1, 0], [0, 1], [1, 0], [0, 1]]}'
check_problem "multihead: PyTorch's in_proj_weight is 422 unknown_field" 422 unknown_field /in_proj_weight
check_json "  saying how to split it into W_q, W_k and W_v" \
    '.detail | contains("W_q = in_proj_weight[:h], W_k = in_proj_weight[h:2h], W_v = in_proj_weight[2h:]")'
post_json /grade "{\"endpoint\": \"/attention/dot\", $ONE, \"answer\": {\"output\": [[[1]]]}}"
check_problem "/grade with the request's fields at the top is 422 unknown_field" 422 unknown_field /queries
check_json "  saying they go inside request" \
    '.detail | contains("`queries` is a field of /attention/dot'"'"'s request, and goes inside `request`")'
echo "1..$T"
