#!/bin/sh
# t_errors.sh — every error code the computing routes produce, each as an
# RFC 9457 problem (status, application/problem+json, code, pointer), the
# answers decided from headers alone (Expect: 100-continue), hostile bodies
# (deep nesting, huge numbers), and /healthz after every bad request
# (docs/contract.md section 1, "Errors" and "Order of checks").
#   usage: sh t_errors.sh BASE_URL
BASE=${1:?usage: t_errors.sh BASE_URL}
. "$(dirname "$0")/lib.sh"

Q='[[[1,0]],[[0,1]]]'
K='[[[1,0],[0,1],[1,1]],[[1,0],[0,1],[1,1]]]'
V='[[[1],[2],[3]],[[4],[5],[6]]]'

# --- 400 invalid_json ------------------------------------------------------
post_json /attention/dot '{"queries": [[1, 2]], "keys":'
check_problem "truncated JSON is 400 invalid_json" 400 invalid_json
check_alive "truncated JSON"
post_json /attention/dot '{"queries": [[1e400]], "keys": [[1]], "values": [[1]]}'
check_problem "1e400 is 400 invalid_json" 400 invalid_json
check_alive "1e400"
post_json /attention/dot '{"queries": [[1]], "keys": [[1]], "values": [[1]]} x'
check_problem "trailing garbage is 400 invalid_json" 400 invalid_json
printf '{"queries": [[1]], "keys": [[1]],\000 "values": [[1]]}' >"$TMP/nul.json"
post_file /attention/dot "$TMP/nul.json"
check_problem "a raw NUL byte is 400 invalid_json" 400 invalid_json
check "  outside a string: the detail says JSON allows none there" \
    jq -e '.detail | endswith("a raw NUL byte at byte 33 (JSON allows none outside strings)")' "$TMP/body"
check_alive "a raw NUL byte"
printf '{"queries": [[1]], "keys": [[1]], "values": [[1]], "labels": {"queries": "a\000b"}}' >"$TMP/nul.json"
post_file /attention/dot "$TMP/nul.json"
check "  inside a string: the detail says to write \\u0000" \
    jq -e '.detail | endswith("(inside a string write \\u0000)")' "$TMP/body"

# 100000 '[' — answered at once, without recursion trouble
head -c 100000 /dev/zero | tr '\0' '[' >"$TMP/deep.json"
post_file /attention/dot "$TMP/deep.json"
check_problem "100000 nested '[' is 400 invalid_json" 400 invalid_json
check_fast "  answered in under a second" 1
{ printf '{"queries":'; cat "$TMP/deep.json"; } >"$TMP/deep2.json"
post_file /attention/dot "$TMP/deep2.json"
check_problem "deep nesting inside a field is 400" 400 invalid_json
check_fast "  answered in under a second" 1
check_alive "deep nesting"

# --- 404, 405, 415 -------------------------------------------------------
post_json /attention/dotty "{\"queries\": $Q}"
check_problem "an unknown path is 404 not_found" 404 not_found
check_alive "a 404 with a body"
http GET /regression/nw
check_problem "GET on /regression/nw is 405" 405 method_not_allowed
check_header_has "  with Allow: POST" Allow POST
http PUT /attention/dot -H 'Content-Type: application/json' --data-binary '{}'
check_problem "PUT with a body is 405" 405 method_not_allowed
check_alive "a 405 with a body"
http POST /attention/dot -H 'Content-Type: text/plain' \
    --data-binary "{\"queries\": $Q, \"keys\": $K, \"values\": $V}"
check_problem "text/plain is 415 unsupported_media_type" 415 \
    unsupported_media_type
http POST /attention/dot --data-binary "{\"queries\": $Q}" -H 'Content-Type:'
check_problem "no Content-Type is 415" 415 unsupported_media_type
check_alive "a 415"

# --- 413 -----------------------------------------------------------------
# 17 MiB of JSON blanks: over the default 16 MiB --max-body-bytes
head -c 17825792 /dev/zero | tr '\0' ' ' >"$TMP/big.json"
post_file /attention/dot "$TMP/big.json" --expect100-timeout 10
check_problem "a 17 MiB body (Content-Length) is 413" 413 payload_too_large
check_fast "  answered before the body (Expect: 100-continue)" 4
check_alive "a 413 by Content-Length"
post_file /attention/dot "$TMP/big.json" -H 'Expect:'
check_problem "a 17 MiB body sent without Expect is 413" 413 \
    payload_too_large
check_alive "a 413 without Expect"
post_file /attention/dot "$TMP/big.json" -H 'Transfer-Encoding: chunked'
check_problem "a 17 MiB chunked body is 413" 413 payload_too_large
check_header "  and the connection closes" Connection close
check_alive "a chunked 413"

# a declared shape over --max-elements (16 Mi doubles), nothing allocated
post_json /attention/dot '{"queries": {"shape": [4096, 4096, 2], "data": [1]},
  "keys": [[[1]]], "values": [[[1]]]}'
check_problem "a declared shape over --max-elements is 413" 413 \
    payload_too_large
check_fast "  answered at once" 1
post_json /attention/dot '{"queries": {"shape": [4294967296, 4294967296, 4294967296], "data": [1]},
  "keys": [[[1]]], "values": [[[1]]]}'
check_problem "a shape whose product overflows 64 bits is 413" 413 \
    payload_too_large
check_alive "413 by elements"

# --- Expect: 100-continue: header-decided answers come at once ------------
head -c 200000 /dev/zero | tr '\0' ' ' >"$TMP/200k.json"
post_file /nope "$TMP/200k.json" -H 'Expect: 100-continue' \
    --expect100-timeout 10
check_problem "Expect: 100-continue to an unknown path: 404" 404 not_found
check_fast "  without waiting for the body" 4
http GET /attention/dot -H 'Content-Type: application/json' \
    -H 'Expect: 100-continue' --expect100-timeout 10 \
    --data-binary "@$TMP/200k.json"
check_problem "Expect: 100-continue with the wrong method: 405" 405 \
    method_not_allowed
check_fast "  without waiting for the body" 4
http POST /attention/dot -H 'Content-Type: text/csv' \
    -H 'Expect: 100-continue' --expect100-timeout 10 \
    --data-binary "@$TMP/200k.json"
check_problem "Expect: 100-continue with a wrong type: 415" 415 \
    unsupported_media_type
check_fast "  without waiting for the body" 4
check_alive "early answers"

# --- 422 -----------------------------------------------------------------
post_json /attention/dot '[1, 2, 3]'
check_problem "a JSON array body is 422 wrong_type at \"\"" 422 wrong_type ""
post_json /attention/dot "{\"queries\": $Q, \"keys\": $K}"
check_problem "dot without values is 422 missing_field" 422 missing_field \
    /values
post_json /attention/dot "{\"queries\": $Q, \"keys\": $K, \"values\": null}"
check_problem "values: null counts as missing" 422 missing_field /values
post_json /attention/dot "{\"queries\": $Q, \"keys\": $K, \"values\": $V, \"valid_len\": [1, 2]}"
check_problem "a misspelt field is 422 unknown_field" 422 unknown_field \
    /valid_len
check_json "  and the detail suggests valid_lens" \
    '.detail | test("valid_lens")'
post_json /attention/dot "{\"queries\": \"abc\", \"keys\": $K, \"values\": $V}"
check_problem "a string tensor is 422 wrong_type" 422 wrong_type /queries
post_json /attention/dot "{\"queries\": $Q, \"keys\": $K, \"values\": $V, \"valid_lens\": [1, 2.5]}"
check_problem "valid_lens 2.5 is 422 wrong_type" 422 wrong_type
post_json /attention/dot "{\"queries\": $Q, \"keys\": $K, \"values\": $V, \"return_weights\": 1}"
check_problem "return_weights 1 is 422 wrong_type" 422 wrong_type \
    /return_weights
post_json /attention/dot "{\"queries\": [[[1,0]],[[0]]], \"keys\": $K, \"values\": $V}"
check_problem "a ragged tensor is 422 ragged_array" 422 ragged_array \
    /queries/1/0
post_json /attention/dot "{\"queries\": $Q, \"keys\": $K, \"values\": [[[1],[2]],[[4],[5]]]}"
check_problem "values with 2 rows for 3 keys is 422 shape_mismatch" 422 \
    shape_mismatch /values
check_json "  with expected and got shapes" \
    '(.expected | type) == "array" and .got == [2, 2, 1]'
post_json /attention/dot "{\"queries\": {\"shape\": [2, 1, 2], \"data\": [1, 0, 0]}, \"keys\": $K, \"values\": $V}"
check_problem "len(data) != product(shape) is 422 shape_mismatch" 422 \
    shape_mismatch /queries/data
post_json /attention/dot "{\"queries\": $Q, \"keys\": $K, \"values\": $V, \"valid_lens\": [1, 4]}"
check_problem "valid_lens 4 > Nk 3 is 422 invalid_value" 422 invalid_value
post_json /attention/dot "{\"queries\": $Q, \"keys\": $K, \"values\": $V, \"valid_lens\": [-1, 2]}"
check_problem "valid_lens -1 is 422 invalid_value" 422 invalid_value
post_json /attention/dot "{\"queries\": [], \"keys\": $K, \"values\": $V}"
check_problem "an empty tensor is 422 invalid_value" 422 invalid_value \
    /queries
post_json /attention/dot "{\"queries\": $Q, \"keys\": $K, \"values\": $V, \"scale\": -1}"
check_problem "scale -1 is 422 invalid_value" 422 invalid_value /scale
post_json /regression/nw '{"x_train": [1, 2, 4], "y_train": [0, 3, 1], "x_query": [2.5], "w": 0}'
check_problem "NW w 0 is 422 invalid_value" 422 invalid_value /w
post_json /regression/nw '{"x_train": [1, 2], "y_train": [0, 3, 1], "x_query": [2.5]}'
check_problem "NW y_train longer than x_train is 422 shape_mismatch" 422 \
    shape_mismatch /y_train
check_alive "the 422s"

# --- the first error wins: order of checks -------------------------------
http POST /nope -H 'Content-Type: text/plain' --data-binary '{'
check_problem "404 comes before 415 and 400" 404 not_found
http POST /attention/dot -H 'Content-Type: text/plain' --data-binary '{'
check_problem "415 comes before 400" 415 unsupported_media_type
post_json /attention/dot '{"queries": [[1]], "bogus": 1}'
check_problem "unknown_field comes before missing_field" 422 unknown_field \
    /bogus
check_alive "everything above"
exit 0
