#!/bin/sh
# t_bandwidth.sh — the NW bandwidth rules of POST /regression/nw (docs/contract.md
# section 4) against the reference vectors in tests/vectors/bandwidth.txt:
# "scott" and "silverman" against numpy on every rule_* case (to 1e-12),
# "cv" against statsmodels KernelReg(bw='cv_ls') on the textbook dataset
# (within 1 %, the contract's promise) and against the numpy implementation
# of the contract's search (within 1e-4), a rule as the start of a fit,
# errors at /w, and the --max-work refusal of a large "cv".
#   usage: sh t_bandwidth.sh BASE_URL [VECTOR_FILE]
BASE=${1:?usage: t_bandwidth.sh BASE_URL [VECTOR_FILE]}
VEC=${2:-$(dirname "$0")/../vectors/bandwidth.txt}
. "$(dirname "$0")/lib.sh"

# vec CASE FIELD: the field's numbers as a JSON array (vecfile.py format:
# "case NAME", then "FIELD RANK DIMS..." and rows of numbers, then "end").
vec() {
    awk -v c="$1" -v f="$2" '
        $1 == "case" { in_case = ($2 == c); next }
        $1 == "end" { in_case = 0; in_field = 0; next }
        in_case && $1 ~ /^[a-z_]/ { in_field = ($1 == f); next }
        in_case && in_field {
            for (i = 1; i <= NF; i++) out = out (n++ ? "," : "") $i
        }
        END { print "[" out "]" }' "$VEC"
}

# cases PREFIX: names of the cases that start with PREFIX.
cases() {
    awk -v p="$1" '$1 == "case" && index($2, p) == 1 { print $2 }' "$VEC"
}

# rel GOT WANT TOL: a jq expression, |GOT / WANT - 1| <= TOL
rel() {
    echo "((($1) / ($2) - 1) | fabs) <= $3"
}

# --- Scott and Silverman: h = 1/w against numpy ----------------------------
count=0
for c in $(cases rule_); do
    x=$(vec "$c" x)
    for rule in scott silverman; do
        h=$(vec "$c" $rule | jq '.[0]')
        post_json /regression/nw "{\"x_train\": $x,
            \"y_train\": $(echo "$x" | jq -c 'map(. * 0 + 1)'),
            \"x_query\": [0.5], \"w\": \"$rule\"}"
        check_json "$c: \"$rule\" gives w = 1/h with numpy's h ($h) to 1e-12" \
            "$(rel '1 / .w' "$h" 1e-12) and
             ((.predictions[0] - 1) | fabs) < 1e-12"
    done
    count=$((count + 1))
done
[ "$count" -ge 10 ] && ok "$count rule cases read from $(basename "$VEC")" ||
    not_ok "rule cases read from $(basename "$VEC")" "only $count"

# --- cv: statsmodels and the numpy search ----------------------------------
count=0
for c in $(cases cv_gaussian_seed); do
    x=$(vec "$c" x)
    y=$(vec "$c" y)
    h_sm=$(vec "$c" h_statsmodels | jq '.[0]')
    h_spec=$(vec "$c" h_spec | jq '.[0]')
    post_json /regression/nw "{\"x_train\": $x, \"y_train\": $y,
        \"x_query\": [1, 2, 3], \"w\": \"cv\"}"
    check_json "$c: \"cv\" h within 1% of statsmodels KernelReg cv_ls ($h_sm)" \
        "$(rel '1 / .w' "$h_sm" 0.01)"
    check_json "$c: \"cv\" h within 1e-4 of the numpy search ($h_spec)" \
        "$(rel '1 / .w' "$h_spec" 1e-4)"
    count=$((count + 1))
done
[ "$count" -eq 5 ] && ok "5 textbook datasets with statsmodels' cv_ls h" ||
    not_ok "5 textbook datasets with statsmodels' cv_ls h" "found $count"

# two target columns, y as a flat {"shape", "data"} tensor
c=cv_gaussian_dv2
x=$(vec $c x)
n=$(echo "$x" | jq length)
post_json /regression/nw "{\"x_train\": $x,
    \"y_train\": {\"shape\": [$n, 2], \"data\": $(vec $c y)},
    \"x_query\": [1], \"w\": \"cv\"}"
h_spec=$(vec $c h_spec | jq '.[0]')
check_json "$c: \"cv\" sums the error of both columns (h $h_spec to 1e-4)" \
    "$(rel '1 / .w' "$h_spec" 1e-4) and (.predictions[0] | length) == 2"

# compact kernels: the numpy search's h (boxcar errors are piecewise
# constant in h, so only its continuous cousins are compared)
for c in $(cases cv_epanechnikov) $(cases cv_triangular); do
    kernel=${c#cv_}
    kernel=${kernel%_seed*}
    h_spec=$(vec "$c" h_spec | jq '.[0]')
    post_json /regression/nw "{\"x_train\": $(vec "$c" x),
        \"y_train\": $(vec "$c" y), \"x_query\": [2.5], \"w\": \"cv\",
        \"kernel\": \"$kernel\"}"
    check_json "$c: \"cv\" with the $kernel kernel (h $h_spec to 1e-4)" \
        "$(rel '1 / .w' "$h_spec" 1e-4)"
done

# --- a rule starts the fit --------------------------------------------------
c=rule_dataset_seed0
x=$(vec $c x)
h=$(vec $c silverman | jq '.[0]')
post_json /regression/nw "{\"x_train\": $x,
    \"y_train\": $(echo "$x" | jq -c 'map(. * 0.5)'), \"x_query\": [1],
    \"w\": \"silverman\", \"fit\": {\"epochs\": 2, \"lr\": 0.01}}"
check_json "fit starts at the rule's w: history[0].w = 1/h (Silverman)" \
    "$(rel '1 / .history[0].w' "$h" 1e-12) and (.history | length) == 2 and
     .history[1].w != .history[0].w and .w != .history[1].w"

# --- errors at /w -----------------------------------------------------------
NW='"x_train": [1, 2, 4], "y_train": [0, 3, 1], "x_query": [2.5]'
post_json /regression/nw "{$NW, \"w\": \"median\"}"
check_problem "an unknown rule is 422 invalid_value at /w" 422 invalid_value /w
check_json "its detail names the rules" \
    '(.detail | contains("scott")) and (.detail | contains("silverman")) and
     (.detail | contains("cv"))'
post_json /regression/nw "{$NW, \"w\": \"cv\", \"kernel\": \"constant\"}"
check_problem "\"cv\" with the constant kernel is 422 at /w" 422 \
    invalid_value /w
post_json /regression/nw '{"x_train": [3, 3, 3], "y_train": [0, 3, 1],
    "x_query": [2.5], "w": "scott"}'
check_problem "a rule on one repeated x is 422 at /w" 422 invalid_value /w
post_json /regression/nw '{"x_train": [3], "y_train": [1], "x_query": [2.5],
    "w": "cv"}'
check_problem "\"cv\" on one point is 422 at /w" 422 invalid_value /w
check_alive "the /w errors"

# --- work: "cv" costs about 262·n² kernel terms ----------------------------
# n = 2000 with the Gaussian: 262 · 2000² · 22 ≈ 2.3e10 operations, 2.7
# times the default --max-work (2^33); refused from the shapes, at once
BIG=$(jq -cn '{x_train: [range(2000)], y_train: [range(2000) | 0],
    x_query: [1], w: "cv"}')
post_json /regression/nw "$BIG"
check_problem "\"cv\" on 2000 points is 413 (--max-work)" 413 \
    payload_too_large
check_json "the 413 detail names --max-work" '.detail | contains("--max-work")'
check_fast "the large \"cv\" is refused in under a second" 1
post_json /regression/nw "$(echo "$BIG" | jq -c '.w = "scott"')"
check_status "the same 2000 points with \"scott\" are answered (200)" 200
check_json "... with 2000 weights summing to 1" \
    '(.weights[0] | length) == 2000 and ((.weights[0] | add) - 1 | fabs) < 1e-12'
check_alive "the large requests"
exit 0
