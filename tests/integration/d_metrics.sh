#!/bin/sh
# d_metrics.sh — GET /metrics against its own attnd (docs/contract.md section 14):
# the text is checked by Prometheus's own linter (promtool check metrics,
# Debian package prometheus) and read back with the prometheus_client
# parser (Debian package python3-prometheus-client, through
# metrics_read.py); then the counters must move by exactly what this script
# sent: requests by route template, method and status, the duration
# histogram (cumulative buckets, +Inf = count = requests), in-flight, body
# bytes both ways, and bounded labels under a scan of random paths.
#   usage: sh tests/integration/d_metrics.sh PATH/TO/attnd
ATTND=${1:?usage: d_metrics.sh PATH/TO/attnd}
DIR=$(cd "$(dirname "$0")" && pwd)
BASE=""
. "$DIR/lib.sh"
. "$DIR/daemon.sh"
PID=""
SLOW=""
trap 'kill_daemon; [ -n "$SLOW" ] && kill "$SLOW" 2>/dev/null; rm -rf "$TMP"' EXIT
PY=/usr/bin/python3

for tool in promtool "$PY"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        not_ok "$tool is installed (apt-get install prometheus python3-prometheus-client)"
        exit 1
    fi
done
if ! "$PY" -c 'import prometheus_client.parser' 2>/dev/null; then
    not_ok "python3-prometheus-client is installed"
    exit 1
fi

LOG="$TMP/attnd.log"
if ! start_daemon "$LOG" --port 0 --threads 2; then
    not_ok "attnd starts" "$(head -c 400 "$LOG")"
    exit 1
fi
BASE="http://127.0.0.1:$PORT"

# scrape NAME: GET /metrics into $TMP/NAME.txt, parsed into $TMP/NAME.json;
# returns 1 when the request or the parse fails. SCRAPED adds up the bytes
# of every scrape (they count in attnd_response_bytes_total too).
SCRAPED=0
scrape() {
    curl -sS --max-time "$MAX_TIME" -o "$TMP/$1.txt" -D "$TMP/$1.headers" \
        "$BASE/metrics" 2>"$TMP/curl_err" || return 1
    SCRAPED=$((SCRAPED + $(wc -c <"$TMP/$1.txt")))
    "$PY" "$DIR/metrics_read.py" <"$TMP/$1.txt" >"$TMP/$1.json" 2>"$TMP/$1.err"
}

# JQ_DEFS: val(name; labels) sums the samples of that name whose labels
# include the given ones exactly (0 when none).
JQ_DEFS='def val($n; $l): [.samples[] | select(.name == $n)
    | select(. as $s | $l | to_entries | all(.value == $s.labels[.key]))
    | .value] | add // 0;'

# value NAME JSON_LABELS [SCRAPE]: a sample's value in the scrape (default
# "now"), printed as an integer when it is one.
value() {
    jq -r --arg n "$1" --argjson l "$2" "$JQ_DEFS"' val($n; $l)
        | if . == floor then floor else . end' "$TMP/${3:-now}.json"
}

# delta NAME JSON_LABELS: value in "now" minus value in "before".
delta() {
    echo $(($(value "$1" "$2" now) - $(value "$1" "$2" before)))
}

# settle: scrape into "now" until the scrape is the only request in flight:
# a request's counters move when libmicrohttpd reports it complete, which
# can be a moment after curl has read the answer, and always before the
# gauge lets go of it.
settle() {
    i=0
    while [ $i -lt 200 ]; do
        scrape now || return 1
        [ "$(value attnd_in_flight_requests '{}')" = 1 ] && return 0
        sleep 0.05
        i=$((i + 1))
    done
    return 1
}

# --- the document ------------------------------------------------------------
http GET /metrics
check_status "GET /metrics is 200" 200
check_header "its media type is the text format 0.0.4" Content-Type \
    'text/plain; version=0.0.4; charset=utf-8'
cp "$TMP/body" "$TMP/first.txt"
if promtool check metrics <"$TMP/first.txt" >"$TMP/promtool.out" 2>&1; then
    ok "promtool check metrics: no error, no lint"
else
    not_ok "promtool check metrics: no error, no lint" \
        "$(head -c 600 "$TMP/promtool.out")"
fi
if "$PY" "$DIR/metrics_read.py" <"$TMP/first.txt" >"$TMP/first.json" \
    2>"$TMP/parse.err"; then
    ok "prometheus_client parses it"
else
    not_ok "prometheus_client parses it" "$(cat "$TMP/parse.err")"
fi
check "families and types: requests counter, duration histogram, in-flight gauge, byte counters, memory budget gauges and refusals, build info" \
    jq -e '.families == {"attnd_requests": "counter",
        "attnd_request_duration_seconds": "histogram",
        "attnd_in_flight_requests": "gauge",
        "attnd_request_bytes": "counter", "attnd_response_bytes": "counter",
        "attnd_memory_budget_bytes": "gauge",
        "attnd_memory_reserved_bytes": "gauge",
        "attnd_memory_reserved_peak_bytes": "gauge",
        "attnd_memory_waiting_requests": "gauge",
        "attnd_memory_refusals": "counter",
        "attnd_refused": "counter",
        "attnd_compute_waiting_jobs": "gauge",
        "attnd_compute_running_jobs": "gauge",
        "attnd_answers": "counter",
        "attnd_build_info": "gauge"}' "$TMP/first.json"
http GET /version
version=$(jq -r .version "$TMP/body")
blas=$(jq -r '"\(.blas.name) \(.blas.version)"' "$TMP/body")
check "attnd_build_info{version=\"$version\", blas=\"$blas\"} 1 (as /version)" \
    jq -e --arg v "$version" --arg b "$blas" \
    '[.samples[] | select(.name == "attnd_build_info")]
     == [{"name": "attnd_build_info", "labels": {"version": $v, "blas": $b},
          "value": 1}]' "$TMP/first.json"
http HEAD /metrics
check_status "HEAD /metrics is 200" 200
check "  with no body" [ ! -s "$TMP/body" ]
http POST /metrics -H 'Content-Type: application/json' --data-binary '{}'
check_status "POST /metrics is 405" 405
check_header "  Allow: GET, HEAD, OPTIONS" Allow "GET, HEAD, OPTIONS"

# --- counters move by what is sent ---------------------------------------
NW='{"x_train":[1,2,4],"y_train":[0,3,1],"x_query":[2.5],"w":0.5}'
settle
cp "$TMP/now.json" "$TMP/before.json"
scraped_before=$((SCRAPED - $(wc -c <"$TMP/now.txt")))
sent_req=0
sent_resp=0
# track: add the last exchange's body sizes to the expected byte counts
track() {
    sent_req=$((sent_req + $1))
    sent_resp=$((sent_resp + $(wc -c <"$TMP/body")))
}
for i in 1 2 3; do
    http GET /healthz
    track 0
done
for i in 1 2; do
    post_json /regression/nw "$NW"
    track ${#NW}
done
BAD='{"queries": [[1, 2]'
post_json /attention/dot "$BAD"
track ${#BAD}
http GET /v2/models/attention_dot
track 0
http DELETE /healthz
track 0
http HEAD /healthz
track 0
# a scanner: 60 paths nobody routes
i=0
while [ $i -lt 60 ]; do
    printf 'url = "%s/scan/%s/%d.php"\noutput = "%s/scanned.%d"\n' "$BASE" \
        "$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')" "$i" "$TMP" "$i"
    i=$((i + 1))
done >"$TMP/scan.curl"
curl -sS --max-time 20 -K "$TMP/scan.curl" 2>>"$TMP/curl_err"
sent_resp=$((sent_resp + $(cat "$TMP"/scanned.* | wc -c)))
settle
# every scrape from "before" to the one before "now" has been counted
sent_resp=$((sent_resp + SCRAPED - $(wc -c <"$TMP/now.txt") - scraped_before))
check "GET /healthz 200 counted 3 times" \
    [ "$(delta attnd_requests_total '{"route":"/healthz","method":"GET","status":"200"}')" = 3 ]
check "POST /regression/nw 200 counted twice" \
    [ "$(delta attnd_requests_total '{"route":"/regression/nw","method":"POST","status":"200"}')" = 2 ]
check "a bad body counts as POST /attention/dot 400" \
    [ "$(delta attnd_requests_total '{"route":"/attention/dot","method":"POST","status":"400"}')" = 1 ]
check "a model path counts under its template /v2/models/{model}" \
    [ "$(delta attnd_requests_total '{"route":"/v2/models/{model}","method":"GET","status":"200"}')" = 1 ]
check "DELETE counts as method \"other\", status 405" \
    [ "$(delta attnd_requests_total '{"route":"/healthz","method":"other","status":"405"}')" = 1 ]
check "HEAD is a method of its own" \
    [ "$(delta attnd_requests_total '{"route":"/healthz","method":"HEAD","status":"200"}')" = 1 ]
check "60 unknown paths: route \"other\", GET 404, counted 60 times" \
    [ "$(delta attnd_requests_total '{"route":"other","method":"GET","status":"404"}')" = 60 ]
check "and no raw path or model name in any label" \
    jq -e '[.samples[].labels | to_entries[] | .value
            | select(test("scan|\\.php|attention_dot"))] == []' "$TMP/now.json"
routes=$(jq '[.samples[] | select(.name == "attnd_requests_total")
              | .labels.route] | unique | length' "$TMP/now.json")
check "the route label takes 7 values here (the scan added one: \"other\")" \
    [ "$routes" = 7 ]
check "request bytes grew by the bodies sent ($sent_req)" \
    [ "$(delta attnd_request_bytes_total '{}')" = "$sent_req" ]
check "response bytes grew by the bodies received, scrapes included ($sent_resp)" \
    [ "$(delta attnd_response_bytes_total '{}')" = "$sent_resp" ]

# the histogram: cumulative buckets, +Inf = _count = that route's requests
check "every histogram: buckets cumulative, +Inf = _count = requests_total of the route, _sum > 0" \
    jq -e "$JQ_DEFS"'. as $m
        | [.samples[] | select(.name == "attnd_request_duration_seconds_count")
           | .labels.route] as $routes
        | ($routes | length) >= 6 and ($routes | all(. as $r
            | [$m.samples[] | select(.name ==
                "attnd_request_duration_seconds_bucket" and .labels.route == $r)
               | .value] as $b
            | ($b | length) == 18
            and ([range(1; $b | length)] | all($b[.] >= $b[. - 1]))
            and $b[-1] == ($m | val("attnd_request_duration_seconds_count";
                                    {"route": $r}))
            and $b[-1] == ($m | val("attnd_requests_total"; {"route": $r}))
            and ($m | val("attnd_request_duration_seconds_sum";
                          {"route": $r})) > 0))' "$TMP/now.json"
check "bucket bounds: 100 µs to 30 s, then +Inf" \
    jq -e '[.samples[] | select(.name == "attnd_request_duration_seconds_bucket"
             and .labels.route == "/healthz") | .labels.le]
        == ["0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01",
            "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30",
            "+Inf"]' "$TMP/now.json"
check "no series for a route that saw no request" \
    jq -e '[.samples[] | select(.labels.route == "/encoding/positional")]
        == []' "$TMP/now.json"

# --- in flight, and a slow request's duration ----------------------------
settle
check "in flight: 1 when idle (the scrape itself)" \
    [ "$(value attnd_in_flight_requests '{}')" = 1 ]
cp "$TMP/now.json" "$TMP/before.json"
# the second half goes 1.2 s after the file "go" appears, which is once
# the server has the request in flight (a busy machine may start curl late)
half=$((${#NW} / 2))
(
    printf '%s' "$NW" | cut -c1-$half | tr -d '\n'
    k=0
    while [ ! -f "$TMP/go" ] && [ $k -lt 400 ]; do
        sleep 0.05
        k=$((k + 1))
    done
    sleep 1.2
    printf '%s' "$NW" | cut -c$((half + 1))- | tr -d '\n'
) | curl -sS --max-time 30 -o "$TMP/slow.body" -w '%{http_code}' \
    -H 'Content-Type: application/json' -X POST -T - \
    "$BASE/regression/nw" >"$TMP/slow.status" 2>&1 &
SLOW=$!
k=0
while scrape now && [ "$(value attnd_in_flight_requests '{}')" != 2 ] &&
    [ $k -lt 200 ]; do
    sleep 0.05
    k=$((k + 1))
done
check "in flight: 2 while an upload is under way" \
    [ "$(value attnd_in_flight_requests '{}')" = 2 ]
touch "$TMP/go"
wait "$SLOW"
SLOW=""
check "the slow upload is answered 200" [ "$(cat "$TMP/slow.status")" = 200 ]
settle
check "its duration (> 1.2 s) is above the 1 s bucket and within 10 s" \
    sh -c "[ $(delta attnd_request_duration_seconds_bucket \
        '{"route":"/regression/nw","le":"1"}') = 0 ] &&
           [ $(delta attnd_request_duration_seconds_bucket \
        '{"route":"/regression/nw","le":"10"}') = 1 ]"
# (the upload is held back 1.2 s; the check keeps a 0.1 s margin, as the
# bucket check above already pins the duration above 1 s)
check "  and the duration sum grew by more than 1.1 s" \
    jq -e --argjson was "$(value attnd_request_duration_seconds_sum \
        '{"route":"/regression/nw"}' before)" "$JQ_DEFS"'
        val("attnd_request_duration_seconds_sum"; {"route": "/regression/nw"})
        - $was > 1.1' "$TMP/now.json"
check "in flight is back to 1" [ "$(value attnd_in_flight_requests '{}')" = 1 ]

# --- compression and the linter on a fuller document ----------------------
http GET /metrics -H 'Accept-Encoding: gzip'
check_header "Prometheus's Accept-Encoding: gzip is honoured" \
    Content-Encoding gzip
if gzip -dc <"$TMP/body" >"$TMP/unzipped.txt" 2>/dev/null &&
    promtool check metrics <"$TMP/unzipped.txt" >"$TMP/promtool.out" 2>&1; then
    ok "the document with every kind of series passes promtool"
else
    not_ok "the document with every kind of series passes promtool" \
        "$(head -c 600 "$TMP/promtool.out")"
fi

stop_daemon
check "attnd exits 0 on SIGTERM" [ "$RC" -eq 0 ]
if grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$LOG"; then
    not_ok "no sanitizer report" "$(grep -E -m 3 'Sanitizer|runtime error:' "$LOG")"
else
    ok "no sanitizer report"
fi
echo "1..$T"
