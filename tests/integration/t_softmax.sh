#!/bin/sh
# t_softmax.sh — POST /softmax/masked over HTTP (docs/contract.md section 10): the
# weights against a softmax computed here with jq, against the weights of
# /attention/dot for the same scores and masks, extreme scores, the SVG
# heatmap, headers, errors with their pointers, and a large request.
#   usage: sh t_softmax.sh BASE_URL
BASE=${1:?usage: t_softmax.sh BASE_URL}
. "$(dirname "$0")/lib.sh"

# jq: softmax of one row over the keys j < $n (masked entries 0)
SOFTMAX='def softmax($n): . as $r | ($r[:$n] | max) as $m |
    ([$r[:$n][] | . - $m | exp] | add) as $z |
    [range($r | length) as $j |
     if $j < $n then (($r[$j] - $m) | exp) / $z else 0 end];'

# --- values: jq's softmax, valid_lens (B) -----------------------------------
SCORES='[[[0.5, -1.25, 2, 0.75], [3, 3, -2, 1]], [[-0.5, 0, 0.5, 1], [10, -10, 0, 4]]]'
post_json /softmax/masked "{\"scores\": $SCORES, \"valid_lens\": [3, 2]}"
check_status "masked softmax is 200" 200
check_json "each row is jq's softmax over its visible keys (1e-15)" "$SOFTMAX"'
    [range(2) as $b | range(2) as $i |
     ($s[$b][$i] | softmax([3, 2][$b])) as $want |
     range(4) as $j | ((.weights[$b][$i][$j] - $want[$j]) | fabs) <= 1e-15]
    | all and length == 16' --argjson s "$SCORES"
check_json "masked keys get exactly 0" \
    '.weights[0][0][3] == 0 and .weights[1][1][2] == 0 and .weights[1][1][3] == 0'
check_header "JSON answers carry Vary: Accept" Vary Accept
ctype=$(header Content-Type)
case "$ctype" in
application/json*) ok "Content-Type: $ctype" ;;
*) not_ok "Content-Type is application/json" "got '$ctype'" ;;
esac
if has_header Server-Timing; then
    ok "Server-Timing: $(header Server-Timing)"
else
    not_ok "Server-Timing on a computed result"
fi

# --- the same masks give the same weights as /attention/dot -----------------
# scores = Q Kᵀ / sqrt(d) from the dot route (return_scores without a mask),
# then masked here and there with causal "bottom_right" and per-query lens
Q='[[[0.3, -1.2, 0.5], [2, 0.5, -0.1], [0.7, 0.7, 0.7]]]'
K='[[[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1], [-1, 0.5, 2]]]'
V='[[[1], [2], [3], [4], [5]]]'
post_json /attention/dot "{\"queries\": $Q, \"keys\": $K, \"values\": $V,
    \"return_scores\": true}"
S=$(jq -c .scores "$TMP/body")
MASK='"valid_lens": [[5, 3, 2]], "causal": "bottom_right"'
post_json /attention/dot "{\"queries\": $Q, \"keys\": $K, \"values\": $V, $MASK}"
jq -c .weights "$TMP/body" >"$TMP/dot_weights"
post_json /softmax/masked "{\"scores\": $S, $MASK}"
check_json "softmax of dot's scores = dot's weights under the same mask" '
    [range(3) as $i | range(5) as $j |
     ((.weights[0][$i][$j] - $w[0][0][$i][$j]) | fabs) <= 1e-15] | all' \
    --slurpfile w "$TMP/dot_weights"

# --- extreme and unbatched input ---------------------------------------------
post_json /softmax/masked \
    '{"scores": [[1e300, -1e300, 0], [-1e300, -1e300, -1e300], [1.7976931348623157e308, -1.7976931348623157e308, 5]]}'
check_status "scores of ±1e300 and ±DBL_MAX are fine" 200
check_json "... and give [1, 0, 0], thirds, [1, 0, 0] (unbatched: rank 2)" \
    '.weights[0] == [1, 0, 0] and .weights[2] == [1, 0, 0] and
     ([.weights[1][] | ((. - 1 / 3) | fabs) < 1e-15] | all)'
post_json /softmax/masked \
    '{"scores": {"shape": [2, 3], "data": [1, 2, 3, 4, 5, 6]}, "valid_lens": 2, "fully_masked": "uniform", "tensor_format": "flat", "precision": 6}'
check_json "flat in, flat out, unbatched scalar valid_lens, precision 6" '
    .weights.shape == [2, 3] and .weights.data[2] == 0 and .weights.data[5] == 0
    and .weights.data[0] == 0.268941 and .weights.data[4] == 0.731059'
post_json /softmax/masked \
    '{"scores": [[[1, 2], [3, 4]]], "valid_lens": [[0, 1]], "fully_masked": "uniform"}'
check_json "a row that sees no key is 1/Nk under \"uniform\"" \
    '.weights == [[[0.5, 0.5], [1, 0]]]'

# --- the picture ---------------------------------------------------------------
post_json /softmax/masked "{\"scores\": $SCORES, \"valid_lens\": [3, 2]}" \
    -H 'Accept: image/svg+xml, application/json;q=0.5'
check_status "Accept: image/svg+xml gives 200" 200
check_header_has "... as image/svg+xml" Content-Type image/svg+xml
cells=$(grep -o '<rect class="cell"' "$TMP/body" | wc -l)
[ "$cells" -eq 16 ] && ok "... with one cell per weight (2 × 2 × 4)" ||
    not_ok "one cell per weight" "got $cells cells, expected 16"
post_json /softmax/masked '{"scores": [[1, 2]], "causal": "sideways"}' \
    -H 'Accept: image/svg+xml'
check_problem "errors stay problem+json under Accept: image/svg+xml" 422 \
    invalid_value /causal

# --- errors and their pointers ----------------------------------------------
post_json /softmax/masked "{\"scores\": $SCORES, \"valid_lens\": [3, 0], \"fully_masked\": \"error\"}"
check_problem "fully_masked \"error\": 422 at the row's valid_lens entry" 422 \
    invalid_value /valid_lens/1
post_json /softmax/masked '{"scores": [[1, 2], [3, 4], [5, 6]], "causal": "bottom_right", "fully_masked": "error"}'
check_problem "fully_masked \"error\" from the causal mask alone: /causal" 422 \
    invalid_value /causal
post_json /softmax/masked "{\"scores\": $SCORES, \"valid_lens\": [3, 5]}"
check_problem "valid_lens above Nk: /valid_lens/1" 422 invalid_value \
    /valid_lens/1
post_json /softmax/masked "{\"scores\": $SCORES, \"valid_lens\": [1, 2, 3]}"
check_problem "valid_lens of the wrong length: shape_mismatch" 422 \
    shape_mismatch /valid_lens
check_json "... with expected [2] and got [3]" \
    '.expected == [2] and .got == [3]'
post_json /softmax/masked '{"scores": [1, 2, 3]}'
check_problem "rank-1 scores: shape_mismatch at /scores" 422 shape_mismatch \
    /scores
post_json /softmax/masked '{"scores": [[1, 2], [3]]}'
check_problem "ragged scores: ragged_array at /scores/1" 422 ragged_array \
    /scores/1
post_json /softmax/masked '{"score": [[1]]}'
check_problem "a misspelt field: unknown_field" 422 unknown_field /score
check_json "... suggesting scores" '.detail | contains("scores")'
post_json /softmax/masked '{}'
check_problem "no scores: missing_field" 422 missing_field /scores
post_json /softmax/masked '{"scores": [[1]'
check_problem "broken JSON: 400" 400 invalid_json
check_alive "the malformed requests"
http GET /softmax/masked
check_problem "GET is 405" 405 method_not_allowed
check_header "... with Allow" Allow "POST, OPTIONS"
http OPTIONS /softmax/masked
check_status "OPTIONS is 204" 204

# --- a large request: (4, 256, 256), 256 Ki scores ----------------------------
jq -cn '{scores: {shape: [4, 256, 256],
    data: [range(4 * 256 * 256) | (. % 97) / 10 - 4]},
    causal: true, tensor_format: "flat"}' >"$TMP/large.json"
post_file /softmax/masked "$TMP/large.json"
check_status "256 Ki scores with a causal mask: 200" 200
check_json "... every row sums to 1 and its future keys are 0" '
    .weights.shape == [4, 256, 256] and
    ([range(0; 4 * 256; 7) as $r | .weights.data[$r * 256:($r + 1) * 256] |
      ((add - 1) | fabs) < 1e-12 and
      (.[($r % 256) + 1:] | all(. == 0))] | all)'
check_alive "the large request"
exit 0
