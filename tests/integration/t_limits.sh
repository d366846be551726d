#!/bin/sh
# t_limits.sh — the size and work limits (docs/contract.md section 1 "Limits" and
# "Order of checks"): each over-limit request gets its problem+json answer
# at once, before anything is allocated or computed, and the daemon stays
# up. Against the shared daemon (default limits: 16 MiB body, 16 Mi
# elements, 2^33 work) and against a second daemon of ATTND started here
# with small limits (64 KiB body, 4096 elements, 10^7 work), whose peak
# RSS must not move while it refuses requests that would need gigabytes.
# Times are curl's total per request; "no work" means well under the time
# the refused work would take (seconds to minutes).
#   usage: sh tests/integration/t_limits.sh BASE_URL   (ATTND in the environment)
BASE=${1:?usage: t_limits.sh BASE_URL}
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/lib.sh"
. "$DIR/daemon.sh"
PID=""
trap 'kill_daemon; rm -rf "$TMP"' EXIT
FAST=${LIMITS_FAST_SECONDS:-0.25} # "answered in milliseconds", with room for ASan

# ms: the last request's time in milliseconds
ms() { awk -v t="$TIME" 'BEGIN { printf "%.1f", t * 1000 }'; }

# limit_case WHAT PATH BODY STATUS CODE [POINTER]: post, check the problem,
# that it came fast, and that the daemon still answers.
limit_case() {
    what=$1
    path=$2
    printf '%s' "$3" >"$TMP/req.json"
    shift 3
    post_file "$path" "$TMP/req.json" -H 'Expect:'
    check_problem "$what ($(ms) ms)" "$@"
    check_fast "  $what: answered in under $FAST s" "$FAST"
}

# --- the shared daemon, default limits ------------------------------------
# weights (B, Nq, Nk) = (1, 4100, 4100): 16.8 M doubles > 16 Mi, inputs tiny
jq -cn '[[range(4100) | [0.5]]] as $t | {queries: $t, keys: $t, values: $t}' \
    >"$TMP/weights.json"
post_file /attention/dot "$TMP/weights.json" -H 'Expect:'
check_problem "weights (1, 4100, 4100) over --max-elements: 413 ($(ms) ms)" \
    413 payload_too_large
check_json "  no single field is blamed" 'has("pointer") | not'
check_alive "a derived-size 413"

limit_case "declared shape (1, 200000, 200000) with no data: 413" \
    /attention/dot '{"queries": {"shape": [1, 200000, 200000], "data": []},
     "keys": [[[1]]], "values": [[[1]]]}' 413 payload_too_large /queries
limit_case "shape whose product overflows 64 bits: 413" /attention/dot \
    '{"queries": [[[1]]], "keys": {"shape": [4294967296, 4294967297, 3],
     "data": [1]}, "values": [[[1]]]}' 413 payload_too_large /keys
limit_case "shape entry beyond 2^64 (1e30): 413" /attention/dot \
    '{"queries": {"shape": [1e30, 1, 1], "data": [1]}, "keys": [[[1]]],
     "values": [[[1]]]}' 413 payload_too_large /queries
check_alive "element-limit 413s"

# additive: 4·B·Nq·Nk·h = 4·128·128·2^17 = 2^33 plus the projections and
# their exponentials > 2^33 (W_q, W_k and the projections (128, 2^17)
# within --max-elements)
limit_case "additive, num_hiddens 2^17 on 128 rows over --max-work: 413" \
    /attention/additive "$(jq -cn '[[range(128) | [0.5]]] as $t |
        {queries: $t, keys: $t, values: $t, num_hiddens: 131072}')" \
    413 payload_too_large
check_json "  the detail names --max-work" '.detail | test("max-work")'
# the projections (B·Nq, h) are derived tensors: 64·2^22 over 16 Mi
limit_case "additive, num_hiddens 2^22 on 64 rows: 413 (projections over --max-elements)" \
    /attention/additive "$(jq -cn '[[range(64) | [0.5]]] as $t |
        {queries: $t, keys: $t, values: $t, num_hiddens: 4194304}')" \
    413 payload_too_large
check_json "  the detail names the projections and --max-elements" \
    '.detail | test("projected queries") and test("max-elements")'
limit_case "additive, num_hiddens 10^12: 413 (drawn W_q over --max-elements)" \
    /attention/additive '{"queries": [[[1]]], "keys": [[[1]]],
     "values": [[[1]]], "num_hiddens": 1000000000000}' 413 payload_too_large
# NW fit: m·n·(epochs + 1) = 300·300·100001 ≈ 9.0e9 > 2^33 ≈ 8.6e9
limit_case "NW fit, 100000 epochs over --max-work: 413" /regression/nw \
    "$(jq -cn '[range(300) | . / 30] as $x |
        {x_train: $x, y_train: $x, x_query: $x, y_query: $x,
         fit: {epochs: 100000, lr: 0.01, data: "query"}}')" \
    413 payload_too_large
limit_case "NW fit, 100001 epochs: 422 at /fit/epochs" /regression/nw \
    '{"x_train": [1, 2], "y_train": [1, 2], "x_query": [1],
      "fit": {"epochs": 100001}}' 422 invalid_value /fit/epochs
check_alive "work-limit 413s"

# deep nesting: 2000 levels (inside jansson's own depth limit of 2048) is a
# rank error at once; 100000 levels is invalid_json (t_errors.sh)
deep=$(head -c 2000 /dev/zero | tr '\0' '[')$(head -c 2000 /dev/zero | tr '\0' ']')
limit_case "queries nested 2000 deep: 422 shape_mismatch" /attention/dot \
    "{\"queries\": $deep, \"keys\": [[[1]]], \"values\": [[[1]]]}" \
    422 shape_mismatch /queries

# 10 MB strings where a value, a key, a tensor entry and an enum belong
S=$(head -c 10000000 /dev/zero | tr '\0' 's')
long() { # long WHAT PATH TEMPLATE STATUS CODE: %s in TEMPLATE is the string
    printf "$3" "$S" >"$TMP/long.json"
    post_file "$2" "$TMP/long.json" -H 'Expect:'
    check_problem "$1 ($(ms) ms)" "$4" "$5"
    check_fast "  $1: answered in under 2 s" 2
}
long "a 10 MB string as causal: 422" /attention/dot \
    '{"queries": [[[1]]], "keys": [[[1]]], "values": [[[1]]], "causal": "%s"}' \
    422 invalid_value
long "a 10 MB unknown key: 422 unknown_field" /attention/dot '{"%s": 1}' \
    422 unknown_field
long "a 10 MB string as a tensor entry: 422 wrong_type" /attention/dot \
    '{"queries": [[["%s"]]], "keys": [[[1]]], "values": [[[1]]]}' \
    422 wrong_type
long "a 10 MB kernel name: 422 invalid_value" /regression/nw \
    '{"x_train": [1, 2], "y_train": [1, 2], "x_query": [1], "kernel": "%s"}' \
    422 invalid_value
check_json "  the detail quotes at most a little of it" '(.detail | length) < 2000'
check_alive "10 MB strings"

# duplicate keys: the last one wins (docs/contract.md section 1)
post_json /regression/nw '{"x_train": "no", "x_train": [1, 2, 4],
    "y_train": [0, 3, 1], "x_query": [2.5], "w": -1, "w": 0.5}'
check_status "duplicate keys: the last one wins (invalid first values ignored)" 200
check_json "  with the worked example's prediction" \
    '(.predictions[0] - 1.4774782878985795 | fabs) < 1e-12'
post_json /regression/nw '{"x_train": [1, 2, 4], "y_train": [0, 3, 1],
    "x_query": [2.5], "w": 0.5, "w": "nope"}'
check_problem "duplicate keys: an invalid last value is the one judged" \
    422 invalid_value /w

# --- a daemon with small limits --------------------------------------------
if [ -z "${ATTND:-}" ]; then
    not_ok "ATTND names the attnd binary (tests/integration/run.sh exports it)"
    exit 0
fi
LOG="$TMP/small.log"
if start_daemon "$LOG" --port 0 --threads 2 --max-body-bytes 64K \
    --max-elements 4096 --max-work 10000000; then
    ok "a daemon with --max-body-bytes 64K --max-elements 4096 --max-work 1e7"
else
    not_ok "a daemon with small limits starts" "$(head -c 400 "$LOG")"
    exit 0
fi
BASE="http://127.0.0.1:$PORT"
hwm_kb() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$PID/status"; }
# a request that fits, so that the peak below is a working daemon's
jq -cn '[[range(60) | [0.5, 1]]] as $t | {queries: $t, keys: $t, values: $t}' \
    >"$TMP/fits.json"
post_file /attention/dot "$TMP/fits.json"
check_status "weights (1, 60, 60) = 3600 elements fit 4096" 200
hwm_before=$(hwm_kb)

jq -cn '[[range(65) | [0.5]]] as $t | {queries: $t, keys: $t, values: $t}' \
    >"$TMP/w65.json"
post_file /attention/dot "$TMP/w65.json"
check_problem "weights (1, 65, 65) = 4225 over 4096: 413 ($(ms) ms)" \
    413 payload_too_large
limit_case "declared (1, 200000, 200000): 413" /attention/dot \
    '{"queries": {"shape": [1, 200000, 200000], "data": []},
     "keys": [[[1]]], "values": [[[1]]]}' 413 payload_too_large /queries
# weights 4096 and W_q (4096, 1) fit, but the projections (64, 4096) are
# over 4096 elements (and so would the work 1.7e7 be over 1e7: within
# --max-elements 4096 no additive request reaches --max-work 1e7; the NW
# fit below does)
limit_case "additive, num_hiddens 4096 on (1, 64, 64): projections (64, 4096): 413" \
    /attention/additive "$(jq -cn '[[range(64) | [0.5]]] as $t |
        {queries: $t, keys: $t, values: $t, num_hiddens: 4096}')" \
    413 payload_too_large
check_json "  the detail names --max-elements" '.detail | test("max-elements")'
limit_case "NW fit, 1000 epochs on 100 x 100 over 1e7: 413" /regression/nw \
    "$(jq -cn '[range(100) | . / 10] as $x | {x_train: $x, y_train: $x,
        x_query: $x, y_query: $x, fit: {epochs: 1000, data: "query"}}')" \
    413 payload_too_large

# bodies over 64 KiB: by Content-Length (with and without Expect), chunked
head -c 70000 /dev/zero | tr '\0' ' ' >"$TMP/70k.json"
post_file /attention/dot "$TMP/70k.json"
check_problem "a 70 KB body by Content-Length: 413 ($(ms) ms)" 413 \
    payload_too_large
check_header "  and the connection closes" Connection close
post_file /attention/dot "$TMP/70k.json" -H 'Transfer-Encoding: chunked'
check_problem "a 70 KB chunked body: 413 ($(ms) ms)" 413 payload_too_large
# a declared 1 TB body with Expect: 100-continue is refused from the headers
HOSTPORT=127.0.0.1:$PORT
start=$(date +%s%N)
got=$(printf 'POST /attention/dot HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 1000000000000\r\nExpect: 100-continue\r\n\r\n' |
    curl -sS --max-time 5 "telnet://$HOSTPORT" 2>/dev/null | tr -d '\r')
took=$((($(date +%s%N) - start) / 1000000))
check "Content-Length 10^12 with Expect: 413 before any body ($took ms)" \
    sh -c "echo '$got' | grep -q '^HTTP/1.1 413' && [ $took -lt 5000 ]"
hwm_after=$(hwm_kb)
check "peak RSS unchanged by the refused requests ($hwm_before -> $hwm_after kB)" \
    [ $((hwm_after - hwm_before)) -lt 4096 ]
check_alive "the small daemon's 413s"
stop_daemon
check "the small-limits daemon exits 0 on SIGTERM" [ "$RC" -eq 0 ]
if grep -q -E 'ERROR: (Address|Leak)Sanitizer|runtime error' "$LOG"; then
    not_ok "no sanitizer report in the small daemon's log" "$(grep -m 3 -E 'ERROR|runtime error' "$LOG")"
else
    ok "no sanitizer report in the small daemon's log"
fi
exit 0
