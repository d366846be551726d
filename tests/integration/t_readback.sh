#!/bin/sh
# t_readback.sh — every number attnd prints reads back as a request:
# ECMAScript prints integral doubles below 1e21 in full
# (123456789012345680000), and such an integer literal is read as the
# nearest double where a real is expected, and 422 at an integer field
# (docs/contract.md section 1).
#   usage: sh t_readback.sh BASE_URL
BASE=${1:?usage: t_readback.sh BASE_URL}
. "$(dirname "$0")/lib.sh"

post_json /attention/dot '{"queries": [[1]], "keys": [[1]], "values": [[1.2345678901234568e20]]}'
check_status "a value of 1.2345678901234568e20" 200
if grep -q '"output":\[\[123456789012345680000\]\]' "$TMP/body"; then
    ok "  prints as 123456789012345680000, in full"
else
    not_ok "  prints as 123456789012345680000, in full" "body: $(body_excerpt)"
fi
cp "$TMP/body" "$TMP/first.json"
post_json /attention/dot "{\"queries\": [[1]], \"keys\": [[1]], \"values\": $(jq -c .output "$TMP/first.json")}"
check_status "that output sent back as values is read" 200
if cmp -s "$TMP/body" "$TMP/first.json"; then
    ok "  and gives the same answer, byte for byte"
else
    not_ok "  and gives the same answer, byte for byte" "$(cat "$TMP/first.json")" "$(body_excerpt)"
fi
post_json /grade "{\"endpoint\": \"/attention/dot\", \"request\": {\"queries\": [[1]], \"keys\": [[1]], \"values\": [[1.2345678901234568e20]]}, \"answer\": $(cat "$TMP/first.json")}"
check_json "that answer passes /grade" '.pass == true and .fields.output.max_abs_err == 0'
post_json /attention/dot '{"queries": [[1]], "keys": [[1]], "values": [[-99999999999999999999999]]}'
check_json "a negative integer literal beyond int64 is its double" '.output[0][0] == -1e23'
post_json /attention/dot '{"queries": [[1]], "keys": [[1]], "values": [[1]], "scale": 12345678901234567890}'
check_json "scale beyond int64 reads as a real" '.scale == 12345678901234567000'
post_json /attention/dot '{"queries": [[1]], "keys": [[1]], "values": [[1]], "valid_lens": 99999999999999999999}'
check_problem "valid_lens beyond int64 is 422 invalid_value" 422 invalid_value /valid_lens
post_json /attention/additive '{"queries": [[1]], "keys": [[1]], "values": [[1]], "num_hiddens": 2, "seed": 9223372036854775808}'
check_problem "seed 2^63 is 422 invalid_value" 422 invalid_value /seed
post_json /attention/multihead '{"queries": [[1, 0]], "num_heads": 1, "num_hiddens": 99999999999999999999}'
check_problem "num_hiddens beyond int64 is 422, not 413" 422 invalid_value /num_hiddens
post_json /regression/nw '{"x_train": [1, 2], "y_train": [1, 2], "x_query": [1], "fit": {"epochs": 99999999999999999999}}'
check_problem "fit.epochs beyond int64 is 422, not 413" 422 invalid_value /fit/epochs
post_json /attention/dot '{"queries": [[1]], "keys": [[1]], "values": [[1]], "valid_lens": [1, 99999999999999999999'
check_problem "a syntax error after a big integer is 400" 400 invalid_json
check_json "  at the byte of the body as sent" '.detail | endswith("(line 1, column 89, byte 89)")'

echo "1..$T"
