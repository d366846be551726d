#!/bin/sh
# d_logs.sh — the access log against its own attnd processes (docs/contract.md
# section 15, --log-format): with json, every stderr line is one JSON object
# (jq parses each), one per request with exactly time, request_id, method,
# path, status, bytes and duration_ms, whose values match what the client
# saw; the default text format is one readable line per request.
#   usage: sh tests/integration/d_logs.sh PATH/TO/attnd
ATTND=${1:?usage: d_logs.sh PATH/TO/attnd}
DIR=$(cd "$(dirname "$0")" && pwd)
BASE=""
. "$DIR/lib.sh"
. "$DIR/daemon.sh"
PID=""
trap 'kill_daemon; rm -rf "$TMP"' EXIT

NW='{"x_train":[1,2,4],"y_train":[0,3,1],"x_query":[2.5],"w":0.5}'
ODD='/no%22such%0A%FF%C3%A9' # decoded: /no"such<LF><FF>é

# size: bytes of the last body as received (compressed when it was)
size() { wc -c <"$TMP/body" | tr -d ' '; }

# --- json ---------------------------------------------------------------
LOG="$TMP/json.log"
t0=$(date -u +%s)
if ! start_daemon "$LOG" --port 0 --log-format json; then
    not_ok "attnd starts with --log-format json" "$(head -c 400 "$LOG")"
    exit 1
fi
BASE="http://127.0.0.1:$PORT"

# each request: its id, then what the line must say (method path status bytes)
: >"$TMP/expect"
expect() { echo "$1 $2 $3 $4 $5" >>"$TMP/expect"; }

http GET /healthz -H 'X-Request-Id: log-1'
expect log-1 GET /healthz "$STATUS" "$(size)"
post_json /regression/nw "$NW" -H 'X-Request-Id: log-2'
expect log-2 POST /regression/nw "$STATUS" "$(size)"
post_json /attention/dot '{"queries": [[1, 2]' -H 'X-Request-Id: log-3'
expect log-3 POST /attention/dot "$STATUS" "$(size)"
http HEAD /healthz -H 'X-Request-Id: log-4'
expect log-4 HEAD /healthz "$STATUS" 0
http OPTIONS /attention/dot -H 'X-Request-Id: log-5' \
    -H 'Origin: https://a.example' -H 'Access-Control-Request-Method: POST'
expect log-5 OPTIONS /attention/dot "$STATUS" 0
http GET '/regression/nw/dataset?n_train=40' -H 'X-Request-Id: log-6' \
    -H 'Accept-Encoding: gzip'
gz=$(size)
expect log-6 GET /regression/nw/dataset "$STATUS" "$gz"
check "the dataset answer came gzip-compressed ($gz bytes)" \
    [ "$(header Content-Encoding)" = gzip ]
http GET "$ODD" -H 'X-Request-Id: log-7'
expect log-7 GET "(odd)" "$STATUS" "$(size)" # the path is checked below
http GET /version
generated=$(header X-Request-Id)
expect "$generated" GET /version "$STATUS" "$(size)"
# an upload that takes over a second: its second half goes 1.1 s after
# the server has it in flight (with the scrape asking: 2), since a busy
# machine may start curl late
in_flight() {
    curl -s --max-time 5 "$BASE/metrics" |
        sed -n 's/^attnd_in_flight_requests \([0-9]*\)$/\1/p'
}
half=$((${#NW} / 2))
(
    printf '%s' "$NW" | cut -c1-$half | tr -d '\n'
    k=0
    while [ "$(in_flight)" != 2 ] && [ $k -lt 400 ]; do
        sleep 0.05
        k=$((k + 1))
    done
    sleep 1.1
    printf '%s' "$NW" | cut -c$((half + 1))- | tr -d '\n'
) | curl -sS --max-time 30 -o "$TMP/body" -H 'X-Request-Id: log-9' \
    -H 'Content-Type: application/json' -X POST -T - "$BASE/regression/nw"
expect log-9 POST /regression/nw 200 "$(size)"
stop_daemon
t1=$(date -u +%s)
check "attnd exits 0 on SIGTERM" [ "$RC" -eq 0 ]

lines=$(wc -l <"$LOG" | tr -d ' ')
if jq -R -e -n '[inputs | try (fromjson | type == "object") catch false]
        | length > 0 and all' "$LOG" >/dev/null 2>&1; then
    ok "every one of the $lines stderr lines is a JSON object (jq)"
else
    not_ok "every stderr line is a JSON object (jq)" \
        "$(jq -R 'try fromjson catch .' "$LOG" 2>&1 | head -c 400)"
fi
# the scrapes that timed the slow upload are logged too; they are left out
jq -c 'select(has("request_id") and .path != "/metrics")' "$LOG" \
    >"$TMP/access.jsonl" 2>/dev/null
jq -c 'select(.path == "/metrics")' "$LOG" >"$TMP/scrapes.jsonl" 2>/dev/null
check "the scrapes are logged as GET /metrics 200" \
    jq -e -s 'length >= 1 and all(.method == "GET" and .status == 200)' \
    "$TMP/scrapes.jsonl"
jq -c 'select(has("request_id") | not)' "$LOG" >"$TMP/messages.jsonl" \
    2>/dev/null
check "one access line per request (9)" \
    [ "$(wc -l <"$TMP/access.jsonl" | tr -d ' ')" = 9 ]
check "access lines have exactly time, request_id, method, path, status, bytes, duration_ms, client, token" \
    jq -e -s 'length == 9 and all(keys == ["bytes", "client", "duration_ms",
        "method", "path", "request_id", "status", "time", "token"]
        and .client == "127.0.0.1" and .token == null
        and (.request_id | type) == "string" and (.method | type) == "string"
        and (.path | type) == "string"
        and (.status | type) == "number" and .status == (.status | floor)
        and (.bytes | type) == "number" and .bytes >= 0
        and (.duration_ms | type) == "number" and .duration_ms >= 0)' \
    "$TMP/access.jsonl"
check "times are UTC with milliseconds, within the test's run ($t0 .. $t1)" \
    jq -e -s --argjson t0 "$t0" --argjson t1 "$t1" '
        all(.[]; .time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$")
            and (sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) as $t
            | $t >= $t0 and $t <= $t1)' "$TMP/access.jsonl" "$TMP/messages.jsonl"
while read -r id method path status bytes; do
    check "$id: $method $path $status, $bytes body bytes" \
        jq -e -s --arg id "$id" --arg m "$method" --arg p "$path" \
        --argjson s "$status" --argjson b "$bytes" '
        [.[] | select(.request_id == $id)] as $l
        | ($l | length) == 1 and $l[0].method == $m
          and ($p == "(odd)" or $l[0].path == $p)
          and $l[0].status == $s and $l[0].bytes == $b' "$TMP/access.jsonl"
done <"$TMP/expect"
check "a generated request id is 16 hex digits ($generated)" \
    sh -c "echo '$generated' | grep -Eq '^[0-9a-f]{16}$'"
check "the odd path is logged decoded, escaped as JSON (U+FFFD for the bad byte)" \
    jq -e -s '[.[] | select(.request_id == "log-7")][0].path
        == "/no\"such\n\ufffdé"' "$TMP/access.jsonl"
check "the query string is not part of the path" \
    jq -e -s 'all(.[]; .path | contains("?") | not)' "$TMP/access.jsonl"
check "the slow upload took over 1.1 s (duration_ms)" \
    jq -e -s '[.[] | select(.request_id == "log-9")][0].duration_ms >= 1100' \
    "$TMP/access.jsonl"
check "the others took under a second" \
    jq -e -s 'all(.[] | select(.request_id != "log-9"); .duration_ms < 1000)' \
    "$TMP/access.jsonl"
check "messages have time, level and msg: start, drain, stop" \
    jq -e -s 'all(keys == ["level", "msg", "time"])
        and any(.msg | test("listening on http://127.0.0.1:[0-9]+"))
        and any(.msg | test("SIGTERM"))
        and any(.msg | test("stopped"))' "$TMP/messages.jsonl"

# --- text (the default) ---------------------------------------------------
LOG="$TMP/text.log"
if ! start_daemon "$LOG" --port 0; then
    not_ok "attnd starts with the default log format" "$(head -c 400 "$LOG")"
    exit 1
fi
BASE="http://127.0.0.1:$PORT"
http GET /healthz -H 'X-Request-Id: txt-1'
hz=$(size)
post_json /regression/nw "$NW" -H 'X-Request-Id: txt-2'
nw=$(size)
http GET "$ODD" -H 'X-Request-Id: txt-3'
odd=$(size)
stop_daemon
check "a text line per request and three message lines" \
    sh -c "[ \$(wc -l <'$LOG') -eq 6 ]"
re='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z'
check "GET /healthz: time id method path status bytes duration client token" \
    grep -Eq "$re txt-1 GET /healthz 200 ${hz}B [0-9]+\\.[0-9]{3}ms 127\\.0\\.0\\.1 -\$" "$LOG"
check "POST /regression/nw 200 with its body size" \
    grep -Eq "$re txt-2 POST /regression/nw 200 ${nw}B [0-9]+\\.[0-9]{3}ms 127\\.0\\.0\\.1 -\$" \
    "$LOG"
check "an odd path stays one token: bytes outside ! .. ~ as \\xHH" \
    grep -Fq ' txt-3 GET /no"such\x0a\xff\xc3\xa9 404 '"${odd}B " "$LOG"
check "the start message is plain text" \
    grep -Eq '^attnd listening on http://127\.0\.0\.1:[0-9]+ ' "$LOG"
if grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMP"/*.log; then
    not_ok "no sanitizer report" \
        "$(grep -h -E -m 3 'Sanitizer|runtime error:' "$TMP"/*.log)"
else
    ok "no sanitizer report"
fi
echo "1..$T"
