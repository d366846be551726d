#!/bin/sh
# t_grads.sh — "grad_output" and "diagnostics" over HTTP (docs/contract.md sections
# 8, 9): a gradient worked out by hand, gradients against central finite
# differences taken over HTTP (perturb one request entry, ask again), the
# "grads" members of each route (drawn parameters included, defaulted
# tensors summed into their source), masked rows, diagnostics, and the
# errors: grad_output's shape, rank and type, work tripled past
# --max-work.
#   usage: sh t_grads.sh BASE_URL
BASE=${1:?usage: t_grads.sh BASE_URL}
. "$(dirname "$0")/lib.sh"

close() { # close GOT WANT: a jq expression, |GOT - WANT| <= 1e-12
    echo "((($1) - ($2)) | fabs) <= 1e-12"
}

# --- by hand ---------------------------------------------------------------
# q = [1, 0], both keys [1, 1] (equal scores: weights 1/2), values 1 and 3,
# dL/dO = 1. Then dL/dV = weightsᵀ dO = [1/2, 1/2]; dL/dW = dO·vᵀ = [1, 3];
# dS = w ⊙ (dL/dW − Σ w dL/dW) = [−1/2, 1/2]; dL/dq = scale · dS·K = 0;
# dL/dk_j = scale · dS_j · q with scale 1/sqrt(2).
post_json /attention/dot '{"queries": [[1, 0]], "keys": [[1, 1], [1, 1]],
  "values": [[1], [3]], "grad_output": [[1]]}'
check_status "dot with grad_output is 200" 200
check_json "grads has exactly queries, keys and values" \
    '(.grads | keys) == ["keys", "queries", "values"]'
check_json "dL/dvalues = [[1/2], [1/2]]" '.grads.values == [[0.5], [0.5]]'
check_json "dL/dqueries = [[0, 0]] (unbatched keeps rank 2)" \
    "(.grads.queries | length) == 1 and
     ([.grads.queries[0][] | $(close . 0)] | all)"
check_json "dL/dkeys = [[-1/(2 sqrt 2), 0], [1/(2 sqrt 2), 0]]" \
    "$(close '.grads.keys[0][0]' '-0.5 / (2 | sqrt)') and
     $(close '.grads.keys[1][0]' '0.5 / (2 | sqrt)') and
     $(close '.grads.keys[0][1]' 0) and $(close '.grads.keys[1][1]' 0)"

# --- central differences over HTTP ----------------------------------------
EPS=1e-5
# loss ROUTE BODY: Σ grad_output ⊙ output for BODY without its grad_output
loss() {
    printf '%s' "$2" | jq -c 'del(.grad_output)' >"$TMP/fd_req"
    printf '%s' "$2" | jq -c .grad_output >"$TMP/fd_go"
    post_file "$1" "$TMP/fd_req"
    jq --slurpfile go "$TMP/fd_go" \
        '[[.output, $go[0]] | map([.. | numbers]) | transpose[] | .[0] * .[1]] | add' \
        "$TMP/body"
}
# fd_check WHAT ROUTE BODY PATH: grads PATH (e.g. .queries[0][1]) within
# 1e-6 relative (1e-9 absolute below 1e-3) of (L(x + ε) − L(x − ε)) / 2ε
fd_check() { # (lib.sh's helpers set path and body: own names here)
    fd_what=$1
    fd_route=$2
    fd_body=$3
    fd_path=$4
    post_json "$fd_route" "$fd_body"
    g=$(jq ".grads$fd_path" "$TMP/body")
    up=$(loss "$fd_route" "$(printf '%s' "$fd_body" | jq -c "$fd_path += $EPS")")
    down=$(loss "$fd_route" "$(printf '%s' "$fd_body" | jq -c "$fd_path -= $EPS")")
    if jq -en --argjson g "$g" --argjson u "$up" --argjson d "$down" \
        "(((\$u - \$d) / (2 * $EPS)) - \$g | fabs) <=
         1e-6 * ([(\$g | fabs), 1e-3] | max)" >/dev/null 2>&1; then
        ok "$fd_what"
    else
        not_ok "$fd_what" "grads$fd_path = $g; L(+ε) = $up, L(−ε) = $down"
    fi
}

DOT='{"queries": [[[0.3, -0.2, 0.9], [1.1, 0.4, -0.6]]],
  "keys": [[[0.5, 0.1, -0.3], [-0.7, 0.8, 0.2], [0.0, -0.4, 0.6]]],
  "values": [[[1.5, -0.5], [0.25, 2.0], [-1.0, 0.75]]],
  "valid_lens": [[2, 3]], "grad_output": [[[0.7, -1.3], [0.2, 0.9]]]}'
fd_check "dot: grads.queries[0][1][2] matches a central difference" \
    /attention/dot "$DOT" '.queries[0][1][2]'
fd_check "dot: grads.keys[0][0][1] matches a central difference" \
    /attention/dot "$DOT" '.keys[0][0][1]'
fd_check "dot: grads.values[0][1][0] matches a central difference" \
    /attention/dot "$DOT" '.values[0][1][0]'

ADD='{"queries": [[0.3, -0.2], [1.1, 0.4]], "keys": [[0.5, 0.1, -0.3],
  [-0.7, 0.8, 0.2], [0.0, -0.4, 0.6]], "values": [[1.5], [0.25], [-1.0]],
  "W_q": [[0.2, -0.4], [0.7, 0.1], [-0.3, 0.5]],
  "W_k": [[0.6, -0.1, 0.3], [-0.2, 0.4, 0.8], [0.1, 0.9, -0.5]],
  "w_v": [0.8, -1.2, 0.5], "causal": true, "grad_output": [[1.0], [-0.5]]}'
fd_check "additive: grads.W_k[1][2] matches a central difference" \
    /attention/additive "$ADD" '.W_k[1][2]'
fd_check "additive: grads.w_v[0] matches a central difference" \
    /attention/additive "$ADD" '.w_v[0]'
fd_check "additive: grads.queries[1][0] matches a central difference" \
    /attention/additive "$ADD" '.queries[1][0]'

MH='{"queries": [[0.3, -0.2, 0.9], [1.1, 0.4, -0.6], [0.2, 0.2, 0.1]],
  "num_heads": 2, "W_q": [[0.2, -0.4, 0.1], [0.7, 0.1, 0.3], [-0.3, 0.5, 0.2],
  [0.4, 0.4, -0.6]], "W_k": [[0.6, -0.1, 0.3], [-0.2, 0.4, 0.8],
  [0.1, 0.9, -0.5], [0.3, -0.3, 0.3]], "W_v": [[0.5, 0.5, 0.0],
  [-0.4, 0.2, 0.6], [0.9, -0.1, 0.2], [0.1, 0.1, 0.1]],
  "W_o": [[1.0, -0.5, 0.25, 0.5], [0.3, 0.7, -0.2, 0.1]],
  "b_q": [0.1, -0.1, 0.2, 0.0], "b_o": [0.5, -0.5],
  "grad_output": [[1.0, 0.5], [-0.5, 0.2], [0.3, -0.8]]}'
post_json /attention/multihead "$MH"
check_json "self-attention grads: queries (through keys and values too), weights, given biases" \
    '(.grads | keys) == ["W_k", "W_o", "W_q", "W_v", "b_o", "b_q", "queries"]'
fd_check "multihead self-attention: grads.queries[1][0] is the total derivative" \
    /attention/multihead "$MH" '.queries[1][0]'
fd_check "multihead: grads.W_v[2][1] matches a central difference" \
    /attention/multihead "$MH" '.W_v[2][1]'
fd_check "multihead: grads.b_q[3] matches a central difference" \
    /attention/multihead "$MH" '.b_q[3]'
fd_check "multihead: grads.b_o[1] matches a central difference" \
    /attention/multihead "$MH" '.b_o[1]'

# --- members and masks -----------------------------------------------------
post_json /attention/additive '{"queries": [[[1, 2]]], "keys": [[[1], [2]]],
  "values": [[[1], [2]]], "num_hiddens": 3, "seed": 4, "grad_output": [[[1]]]}'
check_json "additive with drawn parameters: grads of W_q (3, 2), W_k (3, 1), w_v (3)" \
    '(.grads | keys) == ["W_k", "W_q", "keys", "queries", "values", "w_v"] and
     (.grads.W_q | length) == 3 and (.grads.W_q[0] | length) == 2 and
     (.grads.w_v | length) == 3 and (.params | keys) == ["W_k", "W_q", "w_v"]'
post_json /attention/multihead '{"queries": [[1, 2], [0, 1]], "keys": [[1, 0],
  [0, 1], [1, 1]], "num_heads": 1, "num_hiddens": 2, "grad_output": [[1, 0], [0, 1]]}'
check_json "keys given, values defaulted: grads has keys but no values" \
    '(.grads | has("keys")) and (.grads | has("values") | not) and
     (.grads.keys | length) == 3'

post_json /attention/dot '{"queries": [[1, 0], [0, 1]], "keys": [[1, 1], [2, 0]],
  "values": [[1], [3]], "valid_lens": [0, 2], "grad_output": [[5], [1]]}'
check_json "a fully masked row (zero policy) sends no gradient anywhere" \
    '.grads.queries[0] == [0, 0] and .output[0] == [0]'
post_json /attention/dot '{"queries": [[1, 0], [0, 1]], "keys": [[1, 1], [2, 0]],
  "values": [[1], [3]], "valid_lens": [0, 0], "fully_masked": "uniform",
  "grad_output": [[5], [1]]}'
check_json "uniform rows: each value gets 1/Nk of every row's grad_output, scores none" \
    '.grads.values == [[3], [3]] and .grads.queries == [[0, 0], [0, 0]] and
     .grads.keys == [[0, 0], [0, 0]]'

post_json /attention/dot '{"queries": [[1, 0]], "keys": [[1, 1], [1, 1]],
  "values": [[1], [3]], "grad_output": [[1]], "precision": 3,
  "tensor_format": "flat"}'
check_json "precision and tensor_format apply to grads" \
    '.grads.keys == {"shape": [2, 2], "data": [-0.354, 0, 0.354, 0]}'

# --- diagnostics -----------------------------------------------------------
post_json /attention/dot '{"queries": [[0], [40], [1]], "keys": [[1], [-1]],
  "values": [[1], [2]], "valid_lens": [2, 2, 0], "diagnostics": true}'
check_json "diagnostics: near_uniform, saturated, fully_masked rows [q]" \
    '.diagnostics.warnings == [{"code": "near_uniform", "row": [0]},
      {"code": "saturated", "row": [1]}, {"code": "fully_masked", "row": [2]}]'
check_json "diagnostics: argmax [0, 0, -1], max_weight of the masked row 0" \
    '.diagnostics.argmax == [0, 0, -1] and .diagnostics.max_weight[2] == 0 and
     .diagnostics.entropy[2] == 0'
check_json "diagnostics: statistics of the 4 unmasked scores 0, 0, 40, -40" \
    '.diagnostics.scores == {"min": -40, "max": 40, "mean": 0,
      "std": (800 | sqrt)}'

# --- errors ----------------------------------------------------------------
post_json /attention/dot '{"queries": [[[1, 0]]], "keys": [[[1, 1]]],
  "values": [[[1, 2]]], "grad_output": [[[1]]]}'
check_problem "grad_output with the wrong shape" 422 shape_mismatch /grad_output
check_json "expected is the output's shape [1, 1, 2], got [1, 1, 1]" \
    '.expected == [1, 1, 2] and .got == [1, 1, 1]'
post_json /attention/multihead '{"queries": [[1, 0]], "num_heads": 1,
  "num_hiddens": 2, "grad_output": [[[1, 0]]]}'
check_problem "grad_output rank 3 for unbatched input" 422 shape_mismatch /grad_output
check_json "expected [1, 2] (Nq, d_out = h)" '.expected == [1, 2] and .got == [1, 1, 2]'
post_json /attention/dot '{"queries": [[1]], "keys": [[1]], "values": [[1]],
  "grad_output": [[[[1]]]]}'
check_problem "grad_output of rank 4" 422 shape_mismatch /grad_output
post_json /attention/dot '{"queries": [[1]], "keys": [[1]], "values": [[1]],
  "grad_output": "dL/dO"}'
check_problem "grad_output as a string" 422 wrong_type /grad_output
post_json /attention/dot '{"queries": [[1]], "keys": [[1]], "values": [[1]],
  "diagnostics": 1}'
check_problem "diagnostics as a number" 422 wrong_type /diagnostics
post_json /attention/dot '{"queries": [[1]], "keys": [[1]], "values": [[1]],
  "grad_outputs": [[1]]}'
check_problem "a misspelt grad_output is unknown" 422 unknown_field /grad_outputs
check_json "the detail suggests grad_output" '.detail | test("grad_output")'
# B·h·(Nq·dq + Nk·dk) + B·Nq·Nk·(4h + dv) + B·(Nq + Nk)·h·20 ≈ 3.4e9 fits
# 2^33 (h = 419430 keeps the projections (40, h) within --max-elements);
# tripled it does not (the invalid causal proves the first request got
# past the work check)
BIG=$(jq -cn '{queries: [range(40) | [0.1]], keys: [range(40) | [0.2]],
  values: [range(40) | [1]], num_hiddens: 419430, causal: "sideways"}')
post_json /attention/additive "$BIG"
check_problem "work without grad_output fits (then causal is refused)" 422 invalid_value /causal
post_json /attention/additive "$(printf '%s' "$BIG" | jq -c '. + {grad_output: [range(40) | [1]]}')"
check_problem "the same request with grad_output is over --max-work" 413 payload_too_large
exit 0
