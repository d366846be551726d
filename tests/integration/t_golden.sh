#!/bin/sh
# t_golden.sh — answers known without running the service: the seed's
# Nadaraya-Watson worked example (docs/contract.md section 4, to 1e-12), d2l's toy
# masking example for dot and additive attention in both tensor forms,
# JSON integers as inputs, unbatched input, the positional encoding and the
# textbook dataset's first pair.
#   usage: sh t_golden.sh BASE_URL
BASE=${1:?usage: t_golden.sh BASE_URL}
. "$(dirname "$0")/lib.sh"

close() { # close GOT WANT: a jq expression, |GOT - WANT| <= 1e-12
    echo "((($1) - ($2)) | fabs) <= 1e-12"
}

# --- the seed's worked example ---------------------------------------------
NW='{"x_train":[1,2,4],"y_train":[0,3,1],"x_query":[2.5],"w":0.5,"y_query":[3]}'
post_json /regression/nw "$NW"
check_status "NW worked example is 200" 200
check_json "NW weights [0.3045..., 0.3909..., 0.3045...] to 1e-12" \
    "($(close '.weights[0][0]' 0.304504342420284)) and
     ($(close '.weights[0][1]' 0.39099131515943186)) and
     ($(close '.weights[0][2]' 0.304504342420284)) and
     (.weights | length) == 1 and (.weights[0] | length) == 3"
check_json "NW prediction 1.4774782878985795 to 1e-12" \
    "$(close '.predictions[0]' 1.4774782878985795) and (.predictions | length) == 1"
check_json "NW loss 1.1590361819101205 to 1e-12" \
    "$(close .loss 1.1590361819101205)"
check_json "NW grad_w -0.9063461621648087 to 1e-12" \
    "$(close .grad_w -0.9063461621648087)"
check_json "NW echoes w 0.5" '.w == 0.5'

post_json /regression/nw '{"x_train":[1,2,4],"y_train":[0,3,1],"x_query":[2.5],"w":0.5,"y_query":[3],"fit":{"epochs":1,"lr":0.1,"data":"query"}}'
check_json "one fit step on the query: w 0.5906346162164808" \
    "$(close .w 0.5906346162164808) and (.history | length) == 1 and
     .history[0].epoch == 1 and .history[0].w == 0.5 and
     $(close '.history[0].loss' 1.1590361819101205)"
post_json /regression/nw '{"x_train":[1,2,4],"y_train":[0,3,1],"x_query":[2.5],"w":1}'
check_json "w 1: prediction 1.940292211914573" \
    "$(close '.predictions[0]' 1.940292211914573)"
post_json /regression/nw '{"x_train":[1,2,4],"y_train":[0,3,1],"x_query":[2.5],"w":2}'
check_json "w 2: prediction 2.9116578899297596" \
    "$(close '.predictions[0]' 2.9116578899297596)"
post_json /regression/nw '{"x_train":[1.0,2.0,4.0],"y_train":[0.0,3.0,1.0],"x_query":[2.5],"w":0.5,"y_query":[3.0]}'
check_json "the same example written with reals gives the same prediction" \
    '.predictions[0] == 1.4774782878985795 or
     (((.predictions[0] - 1.4774782878985795) | fabs) <= 1e-12)'

# --- d2l's toy: keys all ones, values arange(40), valid_lens [2, 6] --------
KEYS=$(jq -cn '[range(2) | [range(10) | [1, 1]]]')
VALS=$(jq -cn '[range(2) | [range(10) as $i | [range(4) | $i * 4 + .]]]')
VALS_FLAT=$(jq -cn '{shape: [2, 10, 4], data: ([range(2) | range(40)])}')
TOY_OUT='[[[2, 3, 4, 5]], [[10, 11, 12, 13]]]'
toy_check() { # toy_check WHAT: output matches TOY_OUT to 1e-12
    check_json "$1" '
        (.output | length) == 2 and
        ([range(2) as $b | range(4) as $j |
          ((.output[$b][0][$j] - $want[$b][0][$j]) | fabs) <= 1e-12] | all)' \
        --argjson want "$TOY_OUT"
}
post_json /attention/dot "{\"queries\": [[[0.5, -1]], [[2, 0.25]]],
  \"keys\": $KEYS, \"values\": $VALS, \"valid_lens\": [2, 6]}"
check_status "d2l toy, dot attention: 200" 200
toy_check "d2l toy, dot: outputs [[2,3,4,5]] and [[10,11,12,13]]"
check_json "d2l toy, dot: weights 1/2 over 2 keys, 1/6 over 6, 0 after" '
    (.weights[0][0][0:2] | map(((. - 0.5) | fabs) <= 1e-12) | all) and
    (.weights[0][0][2:] | all(. == 0)) and
    (.weights[1][0][0:6] | map(((. - 1/6) | fabs) <= 1e-12) | all) and
    (.weights[1][0][6:] | all(. == 0))'

post_json /attention/dot "{\"queries\": {\"shape\": [2, 1, 2], \"data\": [0.5, -1, 2, 0.25]},
  \"keys\": {\"shape\": [2, 10, 2], \"data\": [$(jq -cn '[range(40) | 1]' | tr -d '[]')]},
  \"values\": $VALS_FLAT, \"valid_lens\": [2, 6]}"
check_status "d2l toy, dot, flat {shape, data} inputs: 200" 200
toy_check "d2l toy, dot, flat inputs: the same outputs"

post_json /attention/dot "{\"queries\": [[[0.5, -1]], [[2, 0.25]]],
  \"keys\": $KEYS, \"values\": $VALS_FLAT, \"valid_lens\": [2, 6],
  \"tensor_format\": \"flat\"}"
check_json "tensor_format flat: output is {shape [2,1,4], data}" '
    .output.shape == [2, 1, 4] and (.output.data | length) == 8 and
    ([.output.data[] ] as $d | [2,3,4,5,10,11,12,13] as $w |
     [range(8) | (($d[.] - $w[.]) | fabs) <= 1e-12] | all) and
    .weights.shape == [2, 1, 10]'

Q20=$(jq -cn '[range(2) as $b | [[range(20) | (. - 10) / 7 + $b]]]')
post_json /attention/additive "{\"queries\": $Q20, \"keys\": $KEYS,
  \"values\": $VALS, \"valid_lens\": [2, 6], \"num_hiddens\": 8, \"seed\": 3}"
check_status "d2l toy, additive attention (seeded parameters): 200" 200
toy_check "d2l toy, additive: outputs [[2,3,4,5]] and [[10,11,12,13]]"
check_json "additive with num_hiddens returns params W_q (8, 20), W_k (8, 2), w_v (8)" '
    (.params.W_q | length) == 8 and (.params.W_q[0] | length) == 20 and
    (.params.W_k | length) == 8 and (.params.W_k[0] | length) == 2 and
    (.params.w_v | length) == 8'

# --- JSON integers as inputs ----------------------------------------------
post_json /attention/dot '{"queries": [[[1, 0], [0, 2]]], "keys": [[[1, 0], [0, 1], [1, 1]]],
  "values": [[[1, 10], [2, 20], [3, 30]]], "valid_lens": [3]}'
cp "$TMP/body" "$TMP/ints.json"
check_status "integer inputs are accepted" 200
post_json /attention/dot '{"queries": [[[1.0, 0.0], [0.0, 2.0]]], "keys": [[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]],
  "values": [[[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]]], "valid_lens": [3.0]}'
check "integers and reals give byte-identical answers" cmp -s "$TMP/body" \
    "$TMP/ints.json"
# softmax([1, 0, 1] / sqrt 2) . [1, 2, 3] by hand
check_json "integer inputs: output[0][0][0] = softmax(q.k/sqrt 2) . v" '
    ((1 / (2 | sqrt)) | exp) as $e |
    ((($e * 1 + 1 * 2 + $e * 3) / (2 * $e + 1)) as $want |
     ((.output[0][0][0] - $want) | fabs) <= 1e-12)'

# --- unbatched (rank-2) input drops the batch axis -------------------------
post_json /attention/dot '{"queries": [[1, 0], [0, 2]], "keys": [[1, 0], [0, 1], [1, 1]],
  "values": [[1, 10], [2, 20], [3, 30]]}'
check_json "unbatched input: output (2, 2) and weights (2, 3)" '
    (.output | length) == 2 and (.output[0] | length) == 2 and
    (.output[0][0] | type) == "number" and
    (.weights | length) == 2 and (.weights[0] | length) == 3'
check_json "unbatched input: the same numbers as the batched request" \
    '.output == $b[0].output[0]' --slurpfile b "$TMP/ints.json"

# --- positional encoding and the textbook dataset ---------------------------
http GET '/encoding/positional?num_steps=3&d=4'
check_json "positional encoding P[1] = [sin 1, cos 1, sin 0.01, cos 0.01]" '
    (.P | length) == 3 and .P[0] == [0, 1, 0, 1] and
    (((.P[1][0] - (1 | sin)) | fabs) <= 1e-15) and
    (((.P[1][1] - (1 | cos)) | fabs) <= 1e-15) and
    (((.P[1][2] - (0.01 | sin)) | fabs) <= 1e-15) and
    (((.P[1][3] - (0.01 | cos)) | fabs) <= 1e-15)'
http GET /regression/nw/dataset
check_json "dataset seed 0: x_train[0], y_train[0] as in the contract" '
    .x_train[0] == 0.19157748800980812 and .y_train[0] == 0.4527892370680555
    and (.x_train | length) == 50 and (.x_test | length) == 50'
exit 0
