#!/bin/sh
# d_daemon.sh — checks that need their own attnd process: option parsing
# (flags, ATTND_* variables, exit 2 on bad values), --healthcheck, the JSON
# access log, a CORS allow-list, a small --max-body-bytes, and draining an
# in-flight request on SIGTERM.
#   usage: sh tests/integration/d_daemon.sh PATH/TO/attnd
ATTND=${1:?usage: d_daemon.sh PATH/TO/attnd}
DIR=$(cd "$(dirname "$0")" && pwd)
BASE=""
. "$DIR/lib.sh"
. "$DIR/daemon.sh"
PID=""
trap 'kill_daemon; rm -rf "$TMP"' EXIT

NW='{"x_train":[1,2,4],"y_train":[0,3,1],"x_query":[2.5],"w":0.5,"y_query":[3]}'
NW_PRED=1.4774782878985795

# --- options -------------------------------------------------------------
"$ATTND" --help >"$TMP/help" 2>&1
rc=$?
missing=""
for name in port bind threads max-body-bytes max-elements max-work timeout \
    cors-origin log-format shutdown-grace healthcheck; do
    grep -q -- "--$name" "$TMP/help" || missing="$missing --$name"
done
for name in PORT BIND THREADS MAX_BODY_BYTES MAX_ELEMENTS MAX_WORK TIMEOUT \
    CORS_ORIGIN LOG_FORMAT SHUTDOWN_GRACE; do
    grep -q "ATTND_$name" "$TMP/help" || missing="$missing ATTND_$name"
done
if [ "$rc" -eq 0 ] && [ -z "$missing" ]; then
    ok "--help exits 0 and lists every flag and variable"
else
    not_ok "--help exits 0 and lists every flag and variable" \
        "exit $rc; missing:$missing"
fi

# bad_option WHAT WORD ARGS...: exit status 2 and a message naming WORD
bad_option() {
    what=$1
    word=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    rc=$?
    if [ "$rc" -eq 2 ] && grep -q -- "$word" "$TMP/err"; then
        ok "$what exits 2 with a message"
    else
        not_ok "$what exits 2 with a message" "exit $rc" "$(cat "$TMP/err")"
    fi
}
bad_option "--port 70000" --port "$ATTND" --port 70000
bad_option "--port abc" --port "$ATTND" --port abc
bad_option "--port=-1" --port "$ATTND" --port=-1
bad_option "--threads 0" --threads "$ATTND" --threads 0
bad_option "--bind nowhere" --bind "$ATTND" --bind nowhere
bad_option "--max-body-bytes 12Q" --max-body-bytes "$ATTND" --max-body-bytes 12Q
bad_option "--max-elements 0" --max-elements "$ATTND" --max-elements 0
bad_option "--max-work -5" --max-work "$ATTND" --max-work -5
bad_option "--timeout with no value" --timeout "$ATTND" --timeout
bad_option "--log-format xml" --log-format "$ATTND" --log-format xml
bad_option "--cors-origin ," --cors-origin "$ATTND" --cors-origin ,
bad_option "--shutdown-grace 1.5" --shutdown-grace "$ATTND" --shutdown-grace 1.5
bad_option "an unknown flag" --colour "$ATTND" --colour red
bad_option "ATTND_TIMEOUT=soon" ATTND_TIMEOUT env ATTND_TIMEOUT=soon "$ATTND"
bad_option "ATTND_THREADS=many" ATTND_THREADS env ATTND_THREADS=many "$ATTND"

# --- a daemon configured from the environment ----------------------------
LOG="$TMP/json.log"
if ATTND_PORT=0 ATTND_LOG_FORMAT=json ATTND_THREADS=1 \
    ATTND_MAX_BODY_BYTES=64K ATTND_SHUTDOWN_GRACE=5 \
    ATTND_CORS_ORIGIN="https://a.example, http://localhost:3000" \
    start_daemon "$LOG"; then
    ok "starts from ATTND_* variables (port 0, json log, 1 thread)"
else
    not_ok "starts from ATTND_* variables (port 0, json log, 1 thread)" \
        "$(head -c 400 "$LOG")"
    exit 0
fi
BASE="http://127.0.0.1:$PORT"
check "  and logs no error at start with one thread" \
    sh -c "! grep -q '\"level\":\"error\"' '$LOG'"

"$ATTND" --healthcheck --port "$PORT"
check "--healthcheck exits 0 against a live daemon" [ $? -eq 0 ]
ATTND_PORT=$PORT "$ATTND" --healthcheck
check "--healthcheck reads ATTND_PORT" [ $? -eq 0 ]
"$ATTND" --healthcheck --port 1
check "--healthcheck exits 1 when nothing listens" [ $? -eq 1 ]

http GET /healthz -H 'Origin: https://a.example'
check_header "listed origin is echoed" Access-Control-Allow-Origin \
    https://a.example
check_header_has "listed origin answer has Vary: Origin" Vary Origin
http GET /healthz -H 'Origin: http://localhost:3000'
check_header "second listed origin is echoed" Access-Control-Allow-Origin \
    http://localhost:3000
http GET /healthz -H 'Origin: https://evil.example'
if has_header Access-Control-Allow-Origin; then
    not_ok "unlisted origin gets no Access-Control-Allow-Origin" \
        "got '$(header Access-Control-Allow-Origin)'"
else
    ok "unlisted origin gets no Access-Control-Allow-Origin"
fi
check_header_has "unlisted origin answer has Vary: Origin" Vary Origin
http OPTIONS /attention/dot -H 'Origin: https://a.example' \
    -H 'Access-Control-Request-Method: POST'
check_status "preflight from a listed origin is 204" 204
check_header "preflight echoes the listed origin" \
    Access-Control-Allow-Origin https://a.example

# --max-body-bytes 64 KiB: the golden request padded with blanks
pad_to() {
    printf '%s' "$NW"
    head -c $(($1 - ${#NW})) /dev/zero | tr '\0' ' '
}
pad_to 60000 >"$TMP/60k.json"
pad_to 70000 >"$TMP/70k.json"
post_file /regression/nw "$TMP/60k.json"
check_status "a 60 KB body fits a 64 KiB limit" 200
post_file /regression/nw "$TMP/70k.json"
check_problem "a 70 KB body with Content-Length is 413" 413 payload_too_large
post_file /regression/nw "$TMP/70k.json" -H 'Transfer-Encoding: chunked'
check_problem "a 70 KB chunked body is 413" 413 payload_too_large
check_header "chunked 413 closes the connection" Connection close
check_alive "a chunked 413"

# a path with a quote, a newline and a byte that is not UTF-8
http GET '/no%22such%0A%FF%C3%A9'
check_status "an odd path is a 404" 404

# JSON access log: every access line parses and has the fields
sleep 0.2
grep '"request_id"' "$LOG" >"$TMP/access.jsonl"
lines=$(wc -l <"$TMP/access.jsonl")
if [ "$lines" -ge 8 ] && jq -e -s 'all(.[];
        (.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$")) and
        (.request_id | type) == "string" and (.method | type) == "string" and
        (.path | type) == "string" and (.status | type) == "number" and
        (.bytes | type) == "number" and (.duration_ms | type) == "number")' \
    "$TMP/access.jsonl" >/dev/null 2>&1; then
    ok "json access log: $lines lines with time, request_id, method, path, status, bytes, duration_ms"
else
    not_ok "json access log has one well-formed line per request" \
        "$lines lines" "$(head -n 3 "$LOG")"
fi
check "json access log keeps the odd path, escaped" \
    jq -e -s 'any(.[]; .path == "/no\"such\n\ufffdé")' "$TMP/access.jsonl"
check "json access log records the 413" \
    jq -e -s 'any(.[]; .path == "/regression/nw" and .status == 413)' \
    "$TMP/access.jsonl"

# --- drain on SIGTERM: a request still uploading finishes ------------------
half=$((${#NW} / 2))
first=$(printf '%s' "$NW" | cut -c1-$half)
rest=$(printf '%s' "$NW" | cut -c$((half + 1))-)
(
    printf '%s' "$first"
    sleep 1
    printf '%s' "$rest"
) | curl -sS --max-time 10 -o "$TMP/slow.body" -w '%{http_code}' \
    -H 'Content-Type: application/json' -X POST -T - \
    "$BASE/regression/nw" >"$TMP/slow.status" 2>&1 &
CURL=$!
sleep 0.4
kill -TERM "$PID"
sleep 0.2
curl -sS --max-time 2 -o /dev/null "$BASE/healthz" 2>/dev/null
check "new connections are refused while draining" [ $? -eq 7 ]
wait "$CURL"
check "an upload in flight at SIGTERM still gets 200" \
    [ "$(cat "$TMP/slow.status")" = 200 ]
check "and its answer is right" jq -e --argjson p "$NW_PRED" \
    '(.predictions[0] - $p | fabs) < 1e-12' "$TMP/slow.body"
wait_daemon
check "the draining daemon then exits 0" [ "$RC" -eq 0 ]

# in_range N MIN MAX: N is a number from MIN to MAX
in_range() { [ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

# --- SIGINT does the same; --threads as a flag ---------------------------
if start_daemon "$TMP/int.log" --port=0 --threads 3 --timeout 1; then
    ok "starts with --port=0 --threads 3 --timeout 1"
    BASE="http://127.0.0.1:$PORT"
    post_json /regression/nw "$NW"
    check_status "serves with 3 threads" 200
    # an upload that stalls is cut after --timeout (1 s here): its access
    # line (status 0: no answer) shows when the server gave up on it
    (
        printf '{"x_train": [1'
        sleep 4
        printf ']}'
    ) | curl -sS --max-time 8 -X POST -T - -H 'Content-Type: application/json' \
        "$BASE/regression/nw" >/dev/null 2>&1
    cut_ms=$(sed -n 's/.* POST \/regression\/nw 0 0B \([0-9]*\)\.[0-9]*ms .*$/\1/p' \
        "$TMP/int.log" | head -n 1)
    check "--timeout 1 cuts a stalled upload (after ${cut_ms:-?} ms)" \
        in_range "$cut_ms" 900 3000
    stop_daemon INT
    check "exits 0 on SIGINT" [ "$RC" -eq 0 ]
else
    not_ok "starts with --port=0 --threads 3 --timeout 1" \
        "$(head -c 400 "$TMP/int.log")"
fi

# --max-work takes K/M/G like the size options: 1K refuses a dot request
# whose estimated work is B·Nq·Nk·(d+dv) = 1·32·32·2 = 2048
if start_daemon "$TMP/work.log" --port 0 --max-work 1K; then
    BASE="http://127.0.0.1:$PORT"
    big=$(jq -cn '[range(32)] | map([1]) as $m | {queries: $m, keys: $m, values: $m}')
    post_json /attention/dot "$big"
    check_problem "--max-work 1K refuses 2048 operations" 413 payload_too_large
    post_json /regression/nw "$NW"
    check_status "--max-work 1K still serves the worked example" 200
    stop_daemon
    check "exits 0 after --max-work 1K" [ "$RC" -eq 0 ]
else
    not_ok "starts with --max-work 1K" "$(head -c 400 "$TMP/work.log")"
fi

# a port in use: start fails with status 1 and says why
if start_daemon "$TMP/a.log" --port 0; then
    busy=$PORT
    keep=$PID
    "$ATTND" --port "$busy" 2>"$TMP/busy.err" &
    PID=$!
    wait_daemon
    check "a port in use: exit 1 with a message" \
        sh -c "[ $RC -eq 1 ] && grep -q 'cannot listen' '$TMP/busy.err'"
    PID=$keep
    stop_daemon
fi
exit 0
