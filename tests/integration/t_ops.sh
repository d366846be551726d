#!/bin/sh
# t_ops.sh — operational routes and the HTTP behaviour every response shares:
# CORS and security headers, X-Request-Id, Server-Timing, HEAD, OPTIONS
# preflight, 405 with Allow, gzip, keep-alive, 414/431 (docs/contract.md sections 1
# and 14).
#   usage: sh t_ops.sh BASE_URL
BASE=${1:?usage: t_ops.sh BASE_URL}
. "$(dirname "$0")/lib.sh"

NW='{"x_train":[1,2,4],"y_train":[0,3,1],"x_query":[2.5],"w":0.5,"y_query":[3]}'

# --- operations routes ---------------------------------------------------
http GET /healthz
check_status "GET /healthz is 200" 200
check_json "/healthz says ok" '.status == "ok"'
check_header_has "/healthz is JSON" Content-Type application/json
check_header "Access-Control-Allow-Origin is * by default" \
    Access-Control-Allow-Origin '*'
check_header "Access-Control-Expose-Headers" Access-Control-Expose-Headers \
    'X-Request-Id, Server-Timing, Retry-After, Inference-Header-Content-Length'
check_header "X-Content-Type-Options: nosniff" X-Content-Type-Options nosniff
check_header "Cache-Control: no-store" Cache-Control no-store
id1=$(header X-Request-Id)
check "a generated X-Request-Id is 16 hex digits" \
    sh -c "echo '$id1' | grep -Eq '^[0-9a-f]{16}$'"
get_len=$(header Content-Length)
get_body=$(cat "$TMP/body")

http GET /healthz
id2=$(header X-Request-Id)
check "generated request ids differ ($id1, $id2)" [ "$id1" != "$id2" ]

http GET /healthz -H 'X-Request-Id: it-log-marker-7f3a'
check_header "the client's X-Request-Id is echoed" X-Request-Id \
    it-log-marker-7f3a

long_id=$(head -c 200 /dev/zero | tr '\0' 'x')
http GET /healthz -H "X-Request-Id: $long_id"
check "a 200-character X-Request-Id is replaced by a generated one" \
    sh -c "echo '$(header X-Request-Id)' | grep -Eq '^[0-9a-f]{16}$'"
http GET /healthz -H 'X-Request-Id: two words'
check "an X-Request-Id with a blank is replaced by a generated one" \
    sh -c "echo '$(header X-Request-Id)' | grep -Eq '^[0-9a-f]{16}$'"

http HEAD /healthz
check_status "HEAD /healthz is 200" 200
check_header "HEAD has GET's Content-Length" Content-Length "$get_len"
check_header "HEAD has the CORS header too" Access-Control-Allow-Origin '*'
# head_then_get PATH: HEAD PATH, then GET /version on the same connection;
# the GET parses only if the HEAD answer carried no body bytes.
head_then_get() {
    got=$(curl -sS --max-time "$MAX_TIME" -I -o /dev/null "$BASE$1" \
        --next -sS --max-time "$MAX_TIME" -o "$TMP/after_head" \
        -w '%{http_code} %{num_connects}' "$BASE/version")
    [ "$got" = "200 0" ] && jq -e '.name == "attnd"' "$TMP/after_head"
}
check "HEAD /healthz sends no body (a GET after it on the connection parses)" \
    head_then_get /healthz

http GET /v2/health/live
check_json "/v2/health/live" '.live == true'
http GET /v2/health/ready
check_json "/v2/health/ready while serving" '.ready == true'
check_status "/v2/health/ready is 200 while serving" 200

http GET /version
check_status "GET /version is 200" 200
check_json "/version names attnd, api 1, threads and BLAS" \
    '.name == "attnd" and .api_version == "1" and (.version | type) == "string"
     and (.threads | type) == "number" and .threads >= 1
     and (.blas.threads | type) == "number" and .blas.threads >= 1'

# --- computed answers ----------------------------------------------------
post_json /regression/nw "$NW"
check_status "POST /regression/nw is 200" 200
check "a computed answer has Server-Timing: compute;dur=<ms>" \
    sh -c "echo '$(header Server-Timing)' | grep -Eq '^compute;dur=[0-9]+(\\.[0-9]+)?$'"
check_header_has "a computed answer has Vary: Accept" Vary Accept
check_header "a computed answer has the CORS header" \
    Access-Control-Allow-Origin '*'
post_json /regression/nw "$NW" -H 'Content-Type: application/json; charset=utf-8'
check_status "a charset parameter on the content type is accepted" 200

# --- methods: 405 with Allow, HEAD on POST routes, OPTIONS ----------------
http GET /attention/dot
check_problem "GET on a POST route is 405" 405 method_not_allowed
check_header_has "the 405 lists POST in Allow" Allow POST
http HEAD /attention/dot
check_status "HEAD on a POST-only route is 405" 405
check_header_has "HEAD's 405 lists POST in Allow" Allow POST
check "HEAD's 405 sends no body (a GET after it on the connection parses)" \
    head_then_get /attention/dot
http DELETE /healthz
check_problem "DELETE /healthz is 405" 405 method_not_allowed
check_header_has "its Allow lists GET" Allow GET
check_alive "405s"

http OPTIONS /attention/dot -H 'Origin: https://example.org' \
    -H 'Access-Control-Request-Method: POST' \
    -H 'Access-Control-Request-Headers: content-type, x-request-id'
check_status "OPTIONS preflight is 204" 204
check "the preflight has no body" [ ! -s "$TMP/body" ]
check_header_has "preflight for a POST route allows POST" \
    Access-Control-Allow-Methods POST
for h in Content-Type Authorization X-Request-Id Inference-Header-Content-Length; do
    check_header_has "preflight allows the $h header" \
        Access-Control-Allow-Headers "$h"
done
check "preflight has a numeric Access-Control-Max-Age" \
    sh -c "echo '$(header Access-Control-Max-Age)' | grep -Eq '^[0-9]+$'"
check_header "preflight has Access-Control-Allow-Origin" \
    Access-Control-Allow-Origin '*'
http OPTIONS /regression/nw -H 'Authorization: Bearer wrong'
check_status "a preflight never needs a token" 204
http OPTIONS /healthz -H 'Access-Control-Request-Method: GET'
check_status "preflight for a GET route is 204" 204
check_header_has "preflight for a GET route allows GET" \
    Access-Control-Allow-Methods GET

http GET /no/such/route
check_problem "an unknown path is 404" 404 not_found
check_header "a 404 still has the CORS header" Access-Control-Allow-Origin '*'
check_alive "a 404"

# --- gzip ----------------------------------------------------------------
PE='/regression/nw/dataset?n_train=40'
http GET "$PE"
check_status "GET $PE is 200" 200
cp "$TMP/body" "$TMP/plain"
check "a small answer without Accept-Encoding is not compressed" \
    sh -c "! grep -qi '^content-encoding' '$TMP/headers'"
check_header_has "a large answer has Vary: Accept-Encoding" Vary \
    Accept-Encoding
http GET "$PE" -H 'Accept-Encoding: gzip'
check_header "Accept-Encoding: gzip gives Content-Encoding: gzip" \
    Content-Encoding gzip
check "the gzip body is smaller" \
    [ "$(wc -c <"$TMP/body")" -lt "$(wc -c <"$TMP/plain")" ]
http GET "$PE" --compressed
check "the gzip body decompresses to the plain body" cmp -s "$TMP/body" \
    "$TMP/plain"
http GET "$PE" -H 'Accept-Encoding: gzip;q=0, identity'
check "gzip;q=0 refuses compression" \
    sh -c "! grep -qi '^content-encoding' '$TMP/headers'"
check "  and the body is the plain one" cmp -s "$TMP/body" "$TMP/plain"
http GET /healthz -H 'Accept-Encoding: gzip'
check "a body under 1 KiB is not compressed" \
    sh -c "! grep -qi '^content-encoding' '$TMP/headers'"

# --- keep-alive: two requests, one connection ----------------------------
conns=$(curl -sS --max-time "$MAX_TIME" -o /dev/null -o /dev/null \
    -w '%{num_connects} ' "$BASE/healthz" "$BASE/version")
check "keep-alive: the second request reuses the connection ($conns)" \
    [ "$conns" = "1 0 " ]
conns=$(curl -sS --max-time "$MAX_TIME" -o /dev/null -o /dev/null \
    -w '%{num_connects} ' "$BASE/no/such" "$BASE/healthz")
check "keep-alive survives a 404 without a body ($conns)" [ "$conns" = "1 0 " ]

# --- raw HTTP/1.1 over one socket (curl's telnet:// sends bytes as given) --
HOSTPORT=${BASE#http://}
HOSTPORT=${HOSTPORT%%/*}
raw() { # raw BYTES: send BYTES (printf format), print the raw answer
    printf "$1" | curl -sS --max-time "$MAX_TIME" "telnet://$HOSTPORT" \
        2>/dev/null | tr -d '\r'
}
# statuses: the status codes in a raw answer (bodies end without newline,
# so a status line can follow a body on the same line)
statuses() { grep -ao 'HTTP/1\.[01] [0-9][0-9][0-9]' | cut -d' ' -f2 | tr '\n' ' '; }
NWLEN=$(printf '%s' "$NW" | wc -c)
R_HEALTHZ='GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n'
R_NW="POST /regression/nw HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: $NWLEN\r\n\r\n$NW"
R_404='GET /no/such HTTP/1.1\r\nHost: t\r\n\r\n'
R_LAST='GET /version HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'
got=$(raw "$R_HEALTHZ$R_NW$R_404$R_LAST" | statuses)
check "four pipelined requests are answered in order ($got)" \
    [ "$got" = "200 200 404 200 " ]
got=$(raw 'GET /healthz HTTP/1.0\r\n\r\n')
check "HTTP/1.0 is answered" sh -c "echo '$got' | grep -q '^HTTP/1.[01] 200'"
got=$(raw 'POST /nope HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n0123456789GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n')
check "a 404 before its body is read says Connection: close" \
    sh -c "echo '$got' | grep -q '^Connection: close'"
check "  and nothing more is answered on that connection" \
    [ "$(echo "$got" | statuses)" = "404 " ]
got=$(raw 'POST /regression/nw HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n{}')
check "Transfer-Encoding not ending in chunked: 400 and close (RFC 9112 6.3)" \
    sh -c "echo '$got' | grep -q '^HTTP/1.1 400' && echo '$got' | grep -q '^Connection: close'"
got=$(raw 'POST /regression/nw HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n')
check "a coding other than chunked alone: 501 problem+json and close (RFC 9112 6.1)" \
    sh -c "echo '$got' | grep -q '^HTTP/1.1 501' && echo '$got' | grep -q '^Connection: close' && echo '$got' | grep -q '^Content-Type: application/problem+json'"
got=$(raw 'POST /regression/nw HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"x": [GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n')
check "a read 400 body keeps the connection: invalid_json, then healthz" \
    [ "$(echo "$got" | statuses)" = "400 200 " ]
check_alive "raw requests"

# --- request target and header limits ------------------------------------
long=$(head -c 9000 /dev/zero | tr '\0' 'a')
http GET "/healthz?$long"
check_status "a 9000-byte URL is 414" 414
check_alive "a 414"
big=$(head -c 17000 /dev/zero | tr '\0' 'b')
http GET /healthz -H "X-Padding: $big"
check_status "a 17000-byte header block is 431" 431
check_alive "a 431"
http GET /healthz -H "X-Padding: $(head -c 8000 /dev/zero | tr '\0' 'c')"
check_status "an 8000-byte header is fine" 200
exit 0
