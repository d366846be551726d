#!/bin/sh
# t_multihead.sh — POST /attention/multihead over HTTP (docs/contract.md section 6):
# answers worked out by hand (zero query/key projections make every head
# uniform; identity value and output projections then average the values),
# masks, biases, self-attention from drawn parameters, per-head weights,
# unbatched input, diagnostics rows (b, h, q), the SVG picture, and the
# errors in the contract's order with their pointers.
#   usage: sh t_multihead.sh BASE_URL
BASE=${1:?usage: t_multihead.sh BASE_URL}
. "$(dirname "$0")/lib.sh"

MH=/attention/multihead
close() { # close GOT WANT: a jq expression, |GOT - WANT| <= 1e-12
    echo "((($1) - ($2)) | fabs) <= 1e-12"
}

# W_q = W_k = 0: every score is 0, every visible key gets the same weight.
# W_v = W_o = I (h = 2): the output is the average of the visible values.
Z='[[0, 0], [0, 0]]'
I='[[1, 0], [0, 1]]'
VALS='[[[1, 2], [3, 4], [5, 6]]]'
UNIFORM="{\"queries\": [[[0.3, -1], [2, 0.5]]], \"keys\": [[[1, 1], [2, 0], [0, 3]]],
  \"values\": $VALS, \"num_heads\": 2, \"W_q\": $Z, \"W_k\": $Z, \"W_v\": $I,
  \"W_o\": $I"

post_json $MH "$UNIFORM}"
check_status "multihead with given parameters is 200" 200
check_json "uniform heads average the values: [3, 4] for both queries" \
    "(.output | length) == 1 and (.output[0] | length) == 2 and
     ([.output[0][] | ($(close '.[0]' 3)) and ($(close '.[1]' 4))] | all)"
check_json "weights are per head (B, H, Nq, Nk) = (1, 2, 2, 3), each 1/3" \
    "(.weights | length) == 1 and (.weights[0] | length) == 2 and
     ([.weights[0][][][]] | length) == 12 and
     ([.weights[0][][][] | $(close . '1/3')] | all)"
check_json "no params without num_hiddens, no grads, no diagnostics" \
    '(has("params") or has("grads") or has("diagnostics")) | not'

post_json $MH "$UNIFORM, \"valid_lens\": [1]}"
check_json "valid_lens [1]: every head sees key 0 only, output = values[0]" \
    '.output == [[[1, 2], [1, 2]]] and .weights[0][1][0] == [1, 0, 0]'

post_json $MH "$UNIFORM, \"causal\": true, \"b_v\": [10, 20], \"b_o\": [0.5, -0.5]}"
check_json "causal: query 0 sees key 0, query 1 keys 0-1; biases b_v, b_o added" \
    "$(close '.output[0][0][0]' 11.5) and $(close '.output[0][0][1]' 21.5) and
     $(close '.output[0][1][0]' 12.5) and $(close '.output[0][1][1]' 22.5)"

# unbatched (rank 2): weights (H, Nq, Nk)
post_json $MH '{"queries": [[1, 0], [0, 1], [1, 1]], "num_heads": 2,
  "W_q": [[0, 0], [0, 0]], "W_k": [[0, 0], [0, 0]], "W_v": [[1, 0], [0, 1]],
  "W_o": [[1, 1]]}'
check_json "unbatched self-attention: output (Nq, d_out) = (3, 1), weights (2, 3, 3)" \
    '(.output | length) == 3 and (.output[0] | length) == 1 and
     (.weights | length) == 2 and (.weights[0] | length) == 3 and
     (.weights[0][0] | length) == 3'
check_json "it averages queries (self-attention): (2/3 + 2/3) for each query" \
    "[.output[][0] | $(close . '4/3')] | all"

# self-attention with drawn parameters: only queries
SELF='{"queries": [[[0.5, -1, 2], [1, 0, -0.5], [0.25, 0.5, 1], [-1, 1, 0]]],
  "num_heads": 2, "num_hiddens": 4, "seed": 0'
post_json $MH "$SELF}"
check_status "self-attention from queries alone is 200" 200
check_json "drawn params: W_q, W_k, W_v (4, 3) and W_o (4, 4)" \
    '(.params | keys) == ["W_k", "W_o", "W_q", "W_v"] and
     (.params.W_q | length) == 4 and (.params.W_q[0] | length) == 3 and
     (.params.W_o | length) == 4 and (.params.W_o[0] | length) == 4'
check_json "the generator's draws in the order W_q, W_k, W_v, W_o (seed 0 starts with 0.6012629994179048)" \
    "$(close '.params.W_q[0][0]' '-(6 / 7 | sqrt) + 2 * (6 / 7 | sqrt) * 0.6012629994179048')"
check_json "output (1, 4, h = 4); weights (1, 2, 4, 4) with rows summing to 1" \
    "(.output[0] | length) == 4 and (.output[0][0] | length) == 4 and
     ([.weights[0][][] | add | $(close . 1)] | all) and
     ([.weights[0][][]] | length) == 8"
post_json $MH "$SELF, \"keys\": [[[0.5, -1, 2], [1, 0, -0.5], [0.25, 0.5, 1], [-1, 1, 0]]]}"
self_out=$(jq -c .output "$TMP/body")
post_json $MH "$SELF}"
check_json "keys defaulted to queries give the same answer as keys = queries" \
    '.output == $o' --argjson o "$self_out"

# per-head weights are never averaged: W_q picks a different feature per head
post_json $MH '{"queries": [[[4, 0]]], "keys": [[[1, 0], [0, 1]]],
  "values": [[[1], [2]]], "num_heads": 2, "W_q": [[1, 0], [0, 1]],
  "W_k": [[1, 0], [0, 1]], "W_v": [[1], [1]], "W_o": [[1, 1]]}'
check_json "head 0 prefers key 0 (score 4), head 1 sees equal scores" \
    "$(close '.weights[0][0][0][0]' '1 / (1 + (-4 | exp))') and
     $(close '.weights[0][1][0][0]' 0.5)"

# diagnostics: rows (B, H, Nq); uniform rows are near_uniform
post_json $MH "$UNIFORM, \"diagnostics\": true}"
check_json "diagnostics: entropy ln 3 per (b, h, q), argmax 0 (ties)" \
    "(.diagnostics.entropy | length) == 1 and (.diagnostics.entropy[0] | length) == 2 and
     ([.diagnostics.entropy[0][][] | $(close . '3 | log')] | all) and
     ([.diagnostics.argmax[0][][]] == [0, 0, 0, 0])"
check_json "diagnostics: four near_uniform warnings with rows [b, h, q]" \
    '[.diagnostics.warnings[] | select(.code == "near_uniform") | .row] ==
     [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1]]'
check_json "diagnostics: scores all 0 (min, max, mean, std)" \
    '.diagnostics.scores == {"min": 0, "max": 0, "mean": 0, "std": 0}'

post_json $MH "$UNIFORM, \"tensor_format\": \"flat\", \"return_weights\": false}"
check_json "flat output (1, 2, 2), weights left out" \
    ".output.shape == [1, 2, 2] and (has(\"weights\") | not) and
     ([.output.data, [3, 4, 3, 4]] | transpose | map($(close '.[0]' '.[1]')) | all)"

post_json $MH "$UNIFORM}" -H 'Accept: image/svg+xml'
check_status "Accept: image/svg+xml is 200" 200
check_header_has "the multihead answer is an SVG picture" Content-Type image/svg+xml
check "one panel per head: 2 × 2 × 3 = 12 cells" \
    sh -c "[ \$(grep -o 'class=\"cell\"' '$TMP/body' | wc -l) -eq 12 ]"

# --- errors, in the contract's order -------------------------------------
# (a member after "$UNIFORM" replaces its own: duplicate keys, the last wins)
post_json $MH '{"queries": [[1, 2]], "num_hiddens": 2}'
check_problem "num_heads is required" 422 missing_field /num_heads
post_json $MH '{"keys": [[1, 2]], "num_heads": 1, "num_hiddens": 2}'
check_problem "queries is required" 422 missing_field /queries
post_json $MH '{"queries": [[1, 2]], "num_heads": 1}'
check_problem "no parameters and no num_hiddens" 422 missing_field /num_hiddens
post_json $MH "{\"queries\": [[1, 2]], \"num_heads\": 1, \"W_q\": $I, \"W_k\": $I, \"W_o\": $I}"
check_problem "three of four matrices: W_v is missing" 422 missing_field /W_v
post_json $MH "$UNIFORM, \"return_scores\": true}"
check_problem "return_scores is not a multihead field" 422 unknown_field /return_scores
post_json $MH "$UNIFORM, \"num_heads\": 1.5}"
check_problem "num_heads 1.5 is wrong_type" 422 wrong_type /num_heads
post_json $MH "$UNIFORM, \"W_o\": [[1, 0, 0], [0, 1, 0]]}"
check_problem "W_o with 3 columns for h = 2" 422 shape_mismatch /W_o
check_json "W_o mismatch: expected [-1, 2], got [2, 3]" \
    '.expected == [-1, 2] and .got == [2, 3]'
post_json $MH "$UNIFORM, \"values\": [[[1, 2], [3, 4]]]}"
check_problem "values with 2 rows for 3 keys" 422 shape_mismatch /values
check_json "values mismatch: expected [1, 3, -1], got [1, 2, 2]" \
    '.expected == [1, 3, -1] and .got == [1, 2, 2]'
post_json $MH "$UNIFORM, \"b_o\": [1, 2, 3]}"
check_problem "b_o must have d_out entries" 422 shape_mismatch /b_o
post_json $MH "$UNIFORM, \"num_heads\": 4, \"W_o\": [[1]]}"
check_problem "a shape mismatch comes before the num_heads value" 422 shape_mismatch /W_o
post_json $MH "$UNIFORM, \"num_heads\": 3}"
check_problem "num_heads 3 does not divide h = 2" 422 invalid_value /num_heads
post_json $MH "$SELF, \"b_q\": [0, 0, 0, 0]}"
check_problem "drawn parameters have no biases" 422 invalid_value /b_q
post_json $MH "$UNIFORM, \"num_hiddens\": 2}"
check_problem "matrices and num_hiddens together" 422 invalid_value /num_hiddens
post_json $MH "$UNIFORM, \"valid_lens\": [0], \"fully_masked\": \"error\"}"
check_problem "fully_masked error names the valid_lens entry" 422 invalid_value /valid_lens/0
post_json $MH '{"queries": [[1]], "num_heads": 1, "num_hiddens": 5000}'
check_problem "drawn W_o (5000, 5000) is over --max-elements" 413 payload_too_large
http GET $MH
check_problem "GET is 405" 405 method_not_allowed
check_header "405 lists the methods" Allow "POST, OPTIONS"
exit 0
