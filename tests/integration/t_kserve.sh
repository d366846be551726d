#!/bin/sh
# t_kserve.sh — the Open Inference Protocol (KServe v2) front over HTTP,
# with requests shaped as the protocol's published examples (kserve
# docs/predict-api/v2/required_api.md): an id, typed inputs with flat or
# nested data, an outputs list; the binary extension as a client sends it
# (Inference-Header-Content-Length and raw bytes after the JSON). No v2
# client library is packaged for Debian or npm, so this is curl.
#   usage: sh t_kserve.sh BASE_URL
BASE=${1:?usage: t_kserve.sh BASE_URL}
. "$(dirname "$0")/lib.sh"

# check_v2_error WHAT STATUS PREFIX: the protocol's {"error": "..."} with
# that status, the message starting with PREFIX; /healthz answers after.
check_v2_error() {
    why=""
    [ "$STATUS" = "$2" ] || why="status $STATUS, expected $2"
    case "$(header Content-Type)" in
    application/json*) ;;
    *) why="$why; content type '$(header Content-Type)'" ;;
    esac
    jq -e --arg p "$3" 'keys == ["error"] and (.error | startswith($p))' \
        "$TMP/body" >/dev/null 2>&1 || why="$why; not {\"error\": \"$3...\"}"
    healthz_ok || why="$why; /healthz does not answer afterwards"
    if [ -z "$why" ]; then ok "$1"; else not_ok "$1" "$why" "body: $(body_excerpt)"; fi
}

# metadata
http GET /v2
check_status "GET /v2" 200
version=$(curl -s --max-time "$MAX_TIME" "$BASE/version" | jq -r .version)
check_json "server metadata: name, /version's version, binary_tensor_data" \
    '.name == "attnd" and .version == $v and .extensions == ["binary_tensor_data"]' \
    --arg v "$version"
for model in attention_dot attention_additive attention_multihead regression_nw; do
    http GET "/v2/models/$model"
    check_json "metadata of $model" \
        '.name == $m and .platform == "attnd" and (.inputs | length) > 3 and
         all(.inputs[], .outputs[]; (.datatype | IN("FP64", "INT64")) and
             (.shape | length) > 0)' --arg m "$model"
    http GET "/v2/models/$model/ready"
    check_json "$model is ready" '.ready == true and .name == $m' --arg m "$model"
done
http HEAD /v2/models/attention_dot
check_status "HEAD on model metadata" 200
http GET /v2/models/bert
check_v2_error "unknown model: 404" 404 "not_found: unknown model \`bert\`"
http GET /v2/models/bert/ready
check_v2_error "unknown model's readiness: 404" 404 "not_found: unknown model"

# inference, the protocol's example shape: id, typed inputs, outputs asked
cat >"$TMP/toy.json" <<'JSON'
{
  "id" : "42",
  "inputs" : [
    {"name" : "queries", "shape" : [2, 1, 2], "datatype" : "FP32",
     "data" : [0.3, -1.2, 2.0, 0.5]},
    {"name" : "keys", "shape" : [2, 10, 2], "datatype" : "FP64",
     "data" : [[[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1]],
               [[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1]]]},
    {"name" : "values", "shape" : [2, 10, 4], "datatype" : "INT32",
     "data" : [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,
               24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,
               0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,
               24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39]},
    {"name" : "valid_lens", "shape" : [2], "datatype" : "INT64",
     "data" : [2, 6]}
  ],
  "outputs" : [ {"name" : "output"}, {"name" : "weights"} ]
}
JSON
post_file /v2/models/attention_dot/infer "$TMP/toy.json"
check_status "d2l's toy through attention_dot" 200
check_json "the contract's toy outputs [[2, 3, 4, 5]], [[10, 11, 12, 13]]" \
    '.model_name == "attention_dot" and .id == "42" and
     [.outputs[].name] == ["output", "weights"] and
     .outputs[0].shape == [2, 1, 4] and .outputs[0].datatype == "FP64" and
     ([.outputs[0].data, [2, 3, 4, 5, 10, 11, 12, 13]] | transpose |
      all(.[0] - .[1] | fabs < 1e-12)) and
     .outputs[1].shape == [2, 1, 10] and
     (.outputs[1].data[0:10] | add - 1 | fabs) < 1e-12'
# the same through additive attention, drawn parameters (any parameters
# give the toy's outputs)
jq '.inputs[0] = {"name": "queries", "shape": [2, 1, 20], "datatype": "FP64",
                  "data": [range(40) | . / 40]} |
    .parameters = {"num_hiddens": 8, "seed": 3} | del(.outputs)' \
    "$TMP/toy.json" >"$TMP/toy_additive.json"
post_file /v2/models/attention_additive/infer "$TMP/toy_additive.json"
check_json "d2l's toy through attention_additive, params as outputs" \
    '([.outputs[] | select(.name == "output") | .data[]] as $o |
      [$o, [2, 3, 4, 5, 10, 11, 12, 13]] | transpose |
      all(.[0] - .[1] | fabs < 1e-9)) and
     ([.outputs[].name] | index("params.W_q") != null) and
     (.outputs[] | select(.name == "params.W_q") | .shape) == [8, 20]'

# NW, the contract's worked example, scalars with shape [1]
post_json /v2/models/regression_nw/infer '{"inputs": [
    {"name": "x_train", "shape": [3], "datatype": "FP64", "data": [1, 2, 4]},
    {"name": "y_train", "shape": [3], "datatype": "FP64", "data": [0, 3, 1]},
    {"name": "x_query", "shape": [1], "datatype": "FP64", "data": [2.5]},
    {"name": "y_query", "shape": [1], "datatype": "FP64", "data": [3]}],
  "parameters": {"w": 0.5, "fit_epochs": 1, "fit_lr": 0.1,
                 "fit_data": "query"},
  "outputs": [{"name": "w"}, {"name": "history.loss"}]}'
check_json "NW fit: w after one step, the history's loss" \
    '.outputs[0] == {"name": "w", "datatype": "FP64", "shape": [1],
                     "data": [0.5906346162164808]} and
     .outputs[1].shape == [1] and
     (.outputs[1].data[0] - 1.1590361819101205 | fabs) < 1e-12'

# errors: the protocol's object with the contract's status and pointer
jq '.inputs[2].shape = [2, 9, 4] | .inputs[2].data = .inputs[2].data[0:72]' \
    "$TMP/toy.json" >"$TMP/bad.json"
post_file /v2/models/attention_dot/infer "$TMP/bad.json"
check_v2_error "the route's shape_mismatch, at the input" 422 \
    "shape_mismatch at /inputs/2:"
post_json /v2/models/attention_dot/infer '{"inputs": [
    {"name": "queries", "shape": [1, 2], "datatype": "FP64", "data": [1, 2]}],
  "parameters": {"scal": 2}}'
check_v2_error "an unknown parameter, with the closest name" 422 \
    "unknown_field at /parameters/scal: unknown parameter \`scal\` for attention_dot; did you mean \`scale\`?"
http GET /v2/models/attention_dot/infer
check_v2_error "GET on infer: 405" 405 "method_not_allowed:"
check_header "405 names the methods" Allow "POST, OPTIONS"
http POST /v2/models/attention_dot/infer -H 'Content-Type: text/plain' \
    --data-binary @"$TMP/toy.json"
check_v2_error "415 without application/json" 415 "unsupported_media_type:"

# the binary extension as a client sends it: the JSON header (its length
# in Inference-Header-Content-Length), then the raw tensor bytes (FP32
# 1.0 and 2.0); tests/binary/ checks every datatype and fault
printf '{"inputs":[{"name":"queries","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":8}},{"name":"keys","shape":[1,2],"datatype":"FP64","data":[1,0]},{"name":"values","shape":[1,1],"datatype":"FP64","data":[7]}]}' \
    >"$TMP/binary.bin"
json_len=$(wc -c <"$TMP/binary.bin")
printf '\000\000\200\077\000\000\000\100' >>"$TMP/binary.bin"
http POST /v2/models/attention_dot/infer -H 'Content-Type: application/octet-stream' \
    -H "Inference-Header-Content-Length: $json_len" \
    --data-binary @"$TMP/binary.bin"
check_status "binary tensor data in, JSON out: 200" 200
check_json "  the one key's value" '.outputs[0].data == [7]'
head -c "$json_len" "$TMP/binary.bin" >"$TMP/binary_header.json"
post_file /v2/models/attention_dot/infer "$TMP/binary_header.json"
check_v2_error "binary_data_size without the bytes: 400, saying why" 400 \
    "invalid_json at /inputs/0/parameters/binary_data_size: input queries has binary_data_size 8, but the body has no binary tensor data"
exit 0
