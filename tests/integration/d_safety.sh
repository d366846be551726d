#!/bin/sh
# d_safety.sh — the shared-lab settings, each on daemons of their own:
# refusals of bad settings at start, bearer tokens (401s, open routes,
# order of checks, no token in the log), per-client rate limits (429 with
# Retry-After and recovery; one client flooding at 10x its limit while a
# second, from 127.0.0.2, is always answered), the per-client in-flight
# cap, --max-connections (503 under slow uploads), X-Forwarded-For from a
# trusted proxy only, HTTPS with a throwaway certificate, the hardening
# headers and the lab page's Content-Security-Policy, the CORS allow-list.
# Loopback only; every wait is bounded.
#   usage: sh tests/integration/d_safety.sh PATH/TO/attnd
ATTND=${1:?usage: d_safety.sh PATH/TO/attnd}
DIR=$(cd "$(dirname "$0")" && pwd)
BASE=""
. "$DIR/lib.sh"
. "$DIR/daemon.sh"
PID=""
trap 'kill_daemon; rm -rf "$TMP"' EXIT

NW='{"x_train":[1,2,4],"y_train":[0,3,1],"x_query":[2.5],"w":0.5,"y_query":[3]}'
NW_PRED=1.4774782878985795
TOKEN1=lab-7f3a9c2e41d8b6f0a5e3c1d9
TOKEN2=tutor.Q2hhcHRlciAxMQ==
WRONG=lab-7f3a9c2e41d8b6f0a5e3c1d8
printf '# tokens for the attention lab\n\n  %s  \n# %s (retired)\n%s\r\n' \
    "$TOKEN1" "$WRONG" "$TOKEN2" >"$TMP/tokens"

# start LOG ARGS...: start_daemon, BASE set; a failure is reported and ends
# the script (later checks need the daemon)
start() {
    log=$1
    shift
    if start_daemon "$log" --port 0 "$@"; then
        BASE="http://127.0.0.1:$PORT"
        return 0
    fi
    not_ok "attnd starts with $*" "$(head -c 400 "$log")"
    exit 0
}

# stop: SIGTERM the daemon; a non-zero exit (a sanitizer's leak report
# makes it 23) is remembered for the last check
EXITS=""
stop() {
    stop_daemon
    [ "$RC" -eq 0 ] || EXITS="$EXITS $log:$RC"
}

# nw_ok WHAT [CURL ARGS...]: the golden NW request answers 200 and right
nw_ok() {
    what=$1
    shift
    post_json /regression/nw "$NW" "$@"
    if [ "$STATUS" = 200 ] && jq -e --argjson p "$NW_PRED" \
        '(.predictions[0] - $p | fabs) < 1e-12' "$TMP/body" >/dev/null 2>&1; then
        ok "$what"
    else
        not_ok "$what" "status $STATUS" "body: $(body_excerpt)"
    fi
}

# status_of ARGS...: the HTTP status of one curl request (000: none)
status_of() {
    curl -sS --max-time "$MAX_TIME" -o /dev/null -w '%{http_code}' "$@" \
        2>/dev/null
}

# slow_upload OUT SECONDS [CURL ARGS...]: in the background, POST the NW
# request to /regression/nw, half of it now and the rest after SECONDS;
# the status goes to OUT, the body to OUT.body. Sets SLOW to its pid.
slow_upload() {
    out=$1
    secs=$2
    shift 2
    half=$((${#NW} / 2))
    (
        printf '%s' "$(printf '%s' "$NW" | cut -c1-$half)"
        sleep "$secs"
        printf '%s' "$(printf '%s' "$NW" | cut -c$((half + 1))-)"
    ) | curl -sS --max-time 10 -o "$out.body" -w '%{http_code}' \
        -H 'Content-Type: application/json' -X POST -T - "$@" \
        "$BASE/regression/nw" >"$out" 2>/dev/null &
    SLOW=$!
}

# --- settings the server refuses to start with -----------------------------
"$ATTND" --help >"$TMP/help" 2>&1
missing=""
for name in rate-limit burst max-concurrent-per-client max-connections \
    trusted-proxy auth-token-file metrics-public tls-cert tls-key; do
    grep -q -- "--$name" "$TMP/help" || missing="$missing --$name"
    var=ATTND_$(echo "$name" | tr 'a-z-' 'A-Z_')
    grep -q "$var" "$TMP/help" || missing="$missing $var"
done
check "--help lists the shared-lab flags and variables" [ -z "$missing" ]

# refused WHAT WORD ARGS...: exit status 2 and a message naming WORD
refused() {
    what=$1
    word=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    rc=$?
    if [ "$rc" -eq 2 ] && grep -q -- "$word" "$TMP/err"; then
        ok "$what: exit 2 with a message"
    else
        not_ok "$what: exit 2 with a message" "exit $rc" "$(cat "$TMP/err")"
    fi
}
: >"$TMP/empty"
printf '# nothing but comments\n\n' >"$TMP/comments"
printf 'good-token\nsecret words here\n' >"$TMP/badline"
refused "--rate-limit fast" --rate-limit "$ATTND" --rate-limit fast
refused "--rate-limit 1e3" --rate-limit "$ATTND" --rate-limit 1e3
refused "--rate-limit 5/h" --rate-limit "$ATTND" --rate-limit 5/h
refused "--burst 0" --burst "$ATTND" --burst 0
refused "--metrics-public=maybe" --metrics-public "$ATTND" --metrics-public=maybe
refused "--trusted-proxy 10.0.0.0/33" --trusted-proxy \
    "$ATTND" --trusted-proxy 10.0.0.0/33
refused "--trusted-proxy with a name" --trusted-proxy \
    "$ATTND" --trusted-proxy proxy.example
refused "--max-connections beyond the connection limit" --max-connections \
    "$ATTND" --max-connections 100000
refused "--cors-origin with a trailing slash" --cors-origin \
    "$ATTND" --cors-origin https://a.example/
refused "--cors-origin without a scheme" --cors-origin \
    "$ATTND" --cors-origin a.example
refused "a token file that does not exist" "cannot read $TMP/none" \
    "$ATTND" --auth-token-file "$TMP/none"
refused "an empty token file" "no token" "$ATTND" --auth-token-file "$TMP/empty"
refused "a token file of comments" "no token" \
    "$ATTND" --auth-token-file "$TMP/comments"
refused "a token file with a malformed line" "line 2" \
    "$ATTND" --auth-token-file "$TMP/badline"
check "  without echoing the line" sh -c "! grep -q 'secret' '$TMP/err'"
refused "ATTND_AUTH_TOKEN_FILE unreadable" "cannot read" \
    env ATTND_AUTH_TOKEN_FILE="$TMP/none" "$ATTND"

# a throwaway certificate for 127.0.0.1 and localhost (EC P-256: quick)
if openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$TMP/key.pem" -out "$TMP/cert.pem" -days 2 -subj /CN=localhost \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" >/dev/null 2>&1 &&
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$TMP/key2.pem" -out "$TMP/cert2.pem" -days 2 \
        -subj /CN=other >/dev/null 2>&1; then
    ok "openssl makes a self-signed certificate"
else
    not_ok "openssl makes a self-signed certificate"
fi
refused "--tls-cert without --tls-key" "go together" \
    "$ATTND" --tls-cert "$TMP/cert.pem"
refused "--tls-key without --tls-cert" "go together" \
    "$ATTND" --tls-key "$TMP/key.pem"
refused "an unreadable key" "cannot read $TMP/nokey.pem" \
    "$ATTND" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/nokey.pem"
refused "a key of another certificate" "belong together" \
    "$ATTND" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key2.pem"
refused "certificate and key swapped" "--tls-cert" \
    "$ATTND" --tls-cert "$TMP/key.pem" --tls-key "$TMP/cert.pem"
check "no key material in the message" sh -c "! grep -q 'PRIVATE' '$TMP/err'"

# --- bearer tokens ----------------------------------------------------------
LOG="$TMP/auth.log"
start "$LOG" --auth-token-file "$TMP/tokens"
check "the start-up line counts the tokens" grep -q 'bearer token required (2 listed)' "$LOG"
post_json /regression/nw "$NW"
check_problem "no token: 401" 401 unauthorized
check_header "no token: WWW-Authenticate: Bearer" WWW-Authenticate Bearer
post_json /regression/nw "$NW" -H "Authorization: Bearer $WRONG"
check_problem "a wrong token: 401" 401 unauthorized
check_header "a wrong token: WWW-Authenticate names invalid_token" \
    WWW-Authenticate 'Bearer error="invalid_token"'
post_json /regression/nw "$NW" -H "Authorization: Bearer #"
check_problem "a comment line is no token" 401 unauthorized
post_json /regression/nw "$NW" -H "Authorization: Basic $TOKEN1"
check_header "another scheme: WWW-Authenticate: Bearer" WWW-Authenticate Bearer
nw_ok "the first token: 200 and the right answer" \
    -H "Authorization: Bearer $TOKEN1"
nw_ok "the second token (after a comment, CR LF line): 200" \
    -H "Authorization: Bearer $TOKEN2"
nw_ok "the scheme is case-insensitive" -H "Authorization: bearer $TOKEN1"
for path in / /healthz /v2/health/live /v2/health/ready /openapi.json /version; do
    http GET "$path"
    check_status "GET $path is open without a token" 200
done
http HEAD /
check_status "HEAD / is open" 200
http OPTIONS /attention/dot -H 'Origin: https://a.example' \
    -H 'Access-Control-Request-Method: POST' \
    -H 'Access-Control-Request-Headers: authorization, content-type'
check_status "a preflight needs no token (204)" 204
check_header_has "the preflight allows Authorization" \
    Access-Control-Allow-Headers Authorization
http GET /metrics
check_problem "/metrics needs the token" 401 unauthorized
http GET /metrics -H "Authorization: Bearer $TOKEN1"
check_status "/metrics with the token: 200" 200
http GET /regression/nw/dataset
check_problem "GET /regression/nw/dataset needs the token" 401 unauthorized
# the Open Inference Protocol's own error body
http GET /v2
check_status "GET /v2 without a token: 401" 401
check_json "  with {\"error\"} as its only member" \
    'keys == ["error"] and (.error | test("Bearer"))'
check_header "  and WWW-Authenticate: Bearer" WWW-Authenticate Bearer
http GET /v2 -H "Authorization: Bearer $TOKEN2"
check_status "GET /v2 with a token: 200" 200
# order of checks: 404 -> 405 -> 401 -> 415
http GET /no/such/route
check_problem "an unknown path is 404 before 401" 404 not_found
http GET /attention/dot
check_problem "a wrong method is 405 before 401" 405 method_not_allowed
http POST /attention/dot --data-binary '{}' -H 'Content-Type: text/plain'
check_problem "no token is 401 before 415" 401 unauthorized
http POST /attention/dot --data-binary '{}' -H 'Content-Type: text/plain' \
    -H "Authorization: Bearer $TOKEN1"
check_problem "with the token the content type is checked (415)" 415 \
    unsupported_media_type
# a body announced with Expect: 100-continue is refused before it is sent
head -c 2000000 /dev/zero | tr '\0' ' ' >"$TMP/big.json"
post_file /regression/nw "$TMP/big.json" -H 'Expect: 100-continue'
check_problem "no token with Expect: 100-continue: 401" 401 unauthorized
check_fast "  answered before the 2 MB body is sent" 2
check_header "  and the connection closes" Connection close
check_header "a 401 still has nosniff" X-Content-Type-Options nosniff
check_header "a 401 still has Cache-Control: no-store" Cache-Control no-store
stop
for secret in "$TOKEN1" "$TOKEN2" "$WRONG"; do
    if grep -qF -- "$secret" "$LOG"; then
        not_ok "no token in the log" "found $secret"
    else
        ok "no token in the log (${#secret} characters)"
    fi
done
check "the log has the refused requests" grep -q ' POST /regression/nw 401 ' "$LOG"

# /metrics opened with --metrics-public (the rest still closed)
start "$TMP/metrics.log" --auth-token-file "$TMP/tokens" --metrics-public
http GET /metrics
check_status "--metrics-public: /metrics without a token" 200
post_json /regression/nw "$NW"
check_problem "--metrics-public: computing routes still need it" 401 unauthorized
stop

# --- the rate limit: 429, Retry-After, recovery -----------------------------
# (each check that needs a refusal leaves the bucket far from refilling, so
# a slow, busy machine cannot turn a 429 into a 200)
start "$TMP/rate.log" --rate-limit 0.5/s --burst 1
nw_ok "within the limit: 200"
t0=$(date +%s.%N)
post_json /regression/nw "$NW"
t1=$(date +%s.%N)
check_problem "over the limit: 429" 429 rate_limited
retry=$(header Retry-After)
# a token every 2 s: 2 s to wait, or 1 when more than a second has passed
check "  Retry-After: $retry s, as the bucket says after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s" \
    awk -v r="$retry" -v a="$t0" -v b="$t1" \
    'BEGIN { exit !(r == 2 || (r == 1 && b - a > 0.9)) }'
check_json "  the detail names the limit" '.detail | test("0.5 per second")'
check_header_has "  Retry-After is readable from scripts" \
    Access-Control-Expose-Headers Retry-After
sleep "$retry.1"
nw_ok "after Retry-After seconds: 200 again"
stop

start "$TMP/minute.log" --rate-limit 1/m --burst 2
nw_ok "1/m with bursts of 2: the first request"
nw_ok "  the second"
post_json /regression/nw "$NW"
check_problem "  the third: 429" 429 rate_limited
retry=$(header Retry-After)
check "  Retry-After: a minute for the next token ($retry s)" \
    sh -c "[ '$retry' -ge 58 ] && [ '$retry' -le 60 ]"
codes=""
for i in 1 2 3 4 5 6; do codes="$codes$(status_of "$BASE/healthz")"; done
check "health probes are never limited" [ "$codes" = 200200200200200200 ]
http GET /v2
check_status "GET /v2 over the limit: 429" 429
check_json "  with the protocol's {\"error\"}" 'keys == ["error"]'
retry=$(header Retry-After)
check "  and Retry-After ($retry s)" sh -c "[ '$retry' -ge 58 ] && [ '$retry' -le 60 ]"
stop

# --- fairness: 10x the limit from 127.0.0.1, 127.0.0.2 always answered -------
start "$TMP/fair.log" --rate-limit 5 --burst 5
# the flood: 50 requests/s for 3 s on one keep-alive connection
(
    date +%s.%N >"$TMP/flood.start"
    curl -sS --max-time 30 --rate 50/s -o /dev/null -w '%{http_code}\n' \
        -H 'Content-Type: application/json' --data-binary "$NW" \
        "$BASE/regression/nw#[1-150]" >"$TMP/flood" 2>/dev/null
    date +%s.%N >"$TMP/flood.end"
) &
FLOOD=$!
sleep 0.3
# the other client: 2 requests/s, well under its own limit
: >"$TMP/calm"
i=0
while [ $i -lt 6 ]; do
    curl -sS --max-time 5 --interface 127.0.0.2 -o /dev/null \
        -w '%{http_code} %{time_total}\n' -H 'Content-Type: application/json' \
        --data-binary "$NW" "$BASE/regression/nw" >>"$TMP/calm" 2>&1
    sleep 0.5
    i=$((i + 1))
done
wait "$FLOOD"
flood_ok=$(grep -c '^200$' "$TMP/flood")
flood_429=$(grep -c '^429$' "$TMP/flood")
calm_ok=$(grep -c '^200 ' "$TMP/calm")
slowest=$(awk '{ if ($2 > m) m = $2 } END { print m + 0 }' "$TMP/calm")
check "the flooding client sent 150 requests, each answered" \
    [ $((flood_ok + flood_429)) -eq 150 ]
# 5 at once, then 5 a second while it lasts (about 3 s): burst + rate x time
secs=$(awk -v a="$(cat "$TMP/flood.start")" -v b="$(cat "$TMP/flood.end")" \
    'BEGIN { printf "%.2f", b - a }')
check "  it got burst + rate x time through ($flood_ok of 150 in ${secs}s)" \
    awk -v n="$flood_ok" -v t="$secs" \
    'BEGIN { exit !(n >= 5 + 5 * (t - 0.5) - 1 && n <= 5 + 5 * t + 1) }'
check "  and 429 for the rest ($flood_429)" [ "$flood_429" -ge 100 ]
check "the other client got all 6 answered with 200 (slowest ${slowest}s)" \
    [ "$calm_ok" -eq 6 ]
check "  each within 2 s" awk -v t="$slowest" 'BEGIN { exit !(t < 2) }'
stop

# --- per-client in-flight cap -------------------------------------------------
start "$TMP/conc.log" --max-concurrent-per-client 1
slow_upload "$TMP/slow1" 3
sleep 0.5
nw_ok "a second client is served while the first uploads" --interface 127.0.0.2
post_json /regression/nw "$NW"
check_problem "the uploading client's second request: 429" 429 rate_limited
check_header "  Retry-After: 1" Retry-After 1
wait "$SLOW"
check "the slow upload itself is answered 200" [ "$(cat "$TMP/slow1")" = 200 ]
nw_ok "once it is answered, the client is served again"
stop

# --- --max-connections: 503 instead of an unbounded queue ---------------------
start "$TMP/over.log" --max-connections 2
slow_upload "$TMP/slowa" 3
A=$SLOW
slow_upload "$TMP/slowb" 3 --interface 127.0.0.2
B=$SLOW
sleep 0.5
post_json /regression/nw "$NW" --interface 127.0.0.3
check_problem "a third request while two are in flight: 503" 503 overloaded
check_header "  Retry-After: 1" Retry-After 1
check_fast "  answered at once" 1
http GET /healthz
check_status "health probes pass the cap" 200
wait "$A"
wait "$B"
check "both slow uploads are answered 200" \
    sh -c "[ \"\$(cat '$TMP/slowa')\" = 200 ] && [ \"\$(cat '$TMP/slowb')\" = 200 ]"
check "  and right" jq -e --argjson p "$NW_PRED" \
    '(.predictions[0] - $p | fabs) < 1e-12' "$TMP/slowb.body"
nw_ok "after they finish: 200 again"
stop

# --- X-Forwarded-For, believed only from a trusted proxy ----------------------
start "$TMP/xff.log" --rate-limit 1/m --burst 1 --trusted-proxy 127.0.0.1
nw_ok "via the proxy, client 198.51.100.1: 200" \
    -H 'X-Forwarded-For: 198.51.100.1'
post_json /regression/nw "$NW" -H 'X-Forwarded-For: 198.51.100.1'
check_problem "  again: 429" 429 rate_limited
nw_ok "via the proxy, client 198.51.100.2 has its own bucket" \
    -H 'X-Forwarded-For: 198.51.100.2'
post_json /regression/nw "$NW" -H 'X-Forwarded-For: 198.51.100.99, 198.51.100.1'
check_problem "a client cannot pick its address by sending one (rightmost counts)" \
    429 rate_limited
nw_ok "an untrusted peer's X-Forwarded-For is ignored: first request" \
    --interface 127.0.0.2 -H 'X-Forwarded-For: 198.51.100.3'
post_json /regression/nw "$NW" --interface 127.0.0.2 \
    -H 'X-Forwarded-For: 198.51.100.4'
check_problem "  second one with another X-Forwarded-For: 429 (same peer)" 429 \
    rate_limited
stop

# --- HTTPS ------------------------------------------------------------------
start "$TMP/tls.log" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem"
check "the start-up line says https" grep -q 'listening on https://' "$TMP/tls.log"
HTTPS="https://127.0.0.1:$PORT"
code=$(status_of --cacert "$TMP/cert.pem" "$HTTPS/healthz")
check "curl --cacert: /healthz over TLS is 200" [ "$code" = 200 ]
curl -sS --max-time 10 --cacert "$TMP/cert.pem" -o "$TMP/tls.body" \
    -H 'Content-Type: application/json' --data-binary "$NW" \
    "$HTTPS/regression/nw" 2>/dev/null
check "the NW request over TLS is right" jq -e --argjson p "$NW_PRED" \
    '(.predictions[0] - $p | fabs) < 1e-12' "$TMP/tls.body"
curl -sS --max-time 5 -o /dev/null "$HTTPS/healthz" 2>/dev/null
check "without --cacert curl rejects the self-signed certificate (60)" [ $? -eq 60 ]
curl -sS --max-time 5 -o /dev/null --cacert "$TMP/cert2.pem" \
    "$HTTPS/healthz" 2>/dev/null
check "with another CA it is rejected too" [ $? -eq 60 ]
code=$(status_of "http://127.0.0.1:$PORT/healthz")
check "plain HTTP on the TLS port gets no HTTP answer" [ "$code" = 000 ]
curl -sS --max-time 5 -o /dev/null --cacert "$TMP/cert.pem" --tls-max 1.1 \
    "$HTTPS/healthz" 2>/dev/null
check "TLS 1.1 is refused" [ $? -ne 0 ]
code=$(status_of --cacert "$TMP/cert.pem" --tlsv1.3 "$HTTPS/healthz")
check "TLS 1.3 works" [ "$code" = 200 ]
"$ATTND" --healthcheck --port "$PORT"
check "--healthcheck succeeds against the TLS server" [ $? -eq 0 ]
stop
check "the TLS server exits 0 on SIGTERM" [ "$RC" -eq 0 ]

# --- hardening headers and the lab page's CSP --------------------------------
# a token a minute, 4 at once: the 5th limited request below is a 429
# (the page, /version and the probes count against no client's rate)
start "$TMP/head.log" --cors-origin "https://a.example, http://localhost:3000" \
    --auth-token-file "$TMP/tokens" --rate-limit 1/m --burst 4
missing=""
seen=""
DATASET="GET /regression/nw/dataset"
for req in "GET /" "GET /healthz" "OPTIONS /attention/dot" \
    "POST /regression/nw" "GET /nowhere" "GET /version" "$DATASET" \
    "$DATASET" "$DATASET" "$DATASET"; do
    http ${req% *} "${req#* }" -H 'Origin: https://a.example'
    seen="$seen $STATUS"
    [ "$req" = "GET /" ] && cp "$TMP/headers" "$TMP/page.headers" &&
        cp "$TMP/body" "$TMP/page.html"
    [ "$(header X-Content-Type-Options)" = nosniff ] ||
        missing="$missing $req:nosniff"
    [ "$(header Cache-Control)" = no-store ] || missing="$missing $req:no-store"
    [ "$(header Access-Control-Allow-Origin)" = https://a.example ] ||
        missing="$missing $req:allow-origin"
done
check "the answers were 200 200 204 401 404 200 401 401 401 429 (got$seen)" \
    [ "$seen" = " 200 200 204 401 404 200 401 401 401 429" ]
check "  each with nosniff, no-store and the listed origin" [ -z "$missing" ]
cp "$TMP/page.headers" "$TMP/headers"
csp=$(header Content-Security-Policy)
check "GET / has a Content-Security-Policy" [ -n "$csp" ]
case "$csp" in
"default-src 'self'; "*) ok "  default-src 'self' first" ;;
*) not_ok "  default-src 'self' first" "$csp" ;;
esac
check "  no unsafe-eval, unsafe-inline only for style attributes" sh -c \
    "echo \"\$1\" | grep -v -q unsafe-eval && [ \$(echo \"\$1\" | grep -o unsafe-inline | wc -l) -eq 1 ] && echo \"\$1\" | grep -q \"style-src-attr 'unsafe-inline'\"" \
    - "$csp"
# the page's inline elements hashed by perl, independently of attnd
perl -MDigest::SHA=sha256_base64 -0777 -ne '
    while (/<(script|style)>(.*?)<\/\1>/sg) {
        my ($tag, $text) = ($1, $2);
        $text =~ s/\r\n?/\n/g;
        my $h = sha256_base64($text);
        $h .= "=" x ((4 - length($h) % 4) % 4);
        print "$tag $h\n";
    }' "$TMP/page.html" >"$TMP/hashes"
check "perl finds one inline script and one stylesheet in the page" \
    [ "$(grep -c '^script ' "$TMP/hashes")-$(grep -c '^style ' "$TMP/hashes")" = 1-1 ]
script_hash=$(sed -n 's/^script //p' "$TMP/hashes")
style_hash=$(sed -n 's/^style //p' "$TMP/hashes")
check_header_has "  script-src allows exactly that script" \
    Content-Security-Policy "script-src 'self' 'sha256-$script_hash';"
check_header_has "  style-src allows exactly that stylesheet" \
    Content-Security-Policy "style-src 'self' 'sha256-$style_hash';"
check_header_has "  frames only from the same origin" \
    Content-Security-Policy "frame-ancestors 'self'"
http GET /healthz
if has_header Content-Security-Policy; then
    not_ok "JSON answers carry no page policy"
else
    ok "JSON answers carry no page policy"
fi
# the CORS allow-list
http GET /healthz -H 'Origin: http://localhost:3000'
check_header "the second listed origin is echoed" Access-Control-Allow-Origin \
    http://localhost:3000
check_header_has "  with Vary: Origin" Vary Origin
http GET /healthz -H 'Origin: https://a.example.evil'
if has_header Access-Control-Allow-Origin; then
    not_ok "an origin that only starts like a listed one gets no header"
else
    ok "an origin that only starts like a listed one gets no header"
fi
http OPTIONS /attention/dot -H 'Origin: https://evil.example' \
    -H 'Access-Control-Request-Method: POST'
check_status "a preflight from an unlisted origin is still 204" 204
if has_header Access-Control-Allow-Origin; then
    not_ok "  but allows nothing (no Access-Control-Allow-Origin)"
else
    ok "  but allows nothing (no Access-Control-Allow-Origin)"
fi
post_json /regression/nw "$NW" -H 'Origin: https://a.example' \
    --interface 127.0.0.2
check_status "a 401 to a listed origin" 401
check_header "  carries its Access-Control-Allow-Origin (the page can read it)" \
    Access-Control-Allow-Origin https://a.example
stop
check "every daemon exited 0 on SIGTERM" [ -z "$EXITS" ]
# a sanitized build reports to stderr
if grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMP"/*.log; then
    not_ok "no sanitizer report from the daemons" \
        "$(grep -E -m 3 'Sanitizer|runtime error:' "$TMP"/*.log)"
else
    ok "no sanitizer report from the daemons ($(ls "$TMP"/*.log | wc -l) logs)"
fi
exit 0
