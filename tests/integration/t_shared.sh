#!/bin/sh
# t_shared.sh — identical requests computed once (docs/operations.md,
# "Identical requests"): a computed answer carries an ETag and
# Cache-Control: no-cache; the same request, however its JSON is written,
# gets the same ETag and the same bytes, from the answers kept (no compute
# time); If-None-Match naming it is 304 without a body; another request,
# an error, or a route that computes nothing carries no ETag and no-store.
#   usage: sh t_shared.sh BASE_URL
BASE=${1:?usage: t_shared.sh BASE_URL}
. "$(dirname "$0")/lib.sh"

# a request of its own, so that no other suite has computed it before
A='{"queries": [[0.25, -1.5]], "keys": [[1, 0], [0, 1], [2, 2]], "values": [[1], [2], [3]], "valid_lens": 2}'
B='{"valid_lens":2.0,"values":[[1.0],[2],[3e0]],"keys":[[1,0.0],[0,1],[2,2]],"queries":[[0.25,-1.50]]}'

post_json /attention/dot "$A"
check_status "a computed answer is 200" 200
check_header "  with Cache-Control: no-cache" Cache-Control no-cache
etag=$(header ETag)
check "  and an ETag of 32 hex digits, quoted ($etag)" \
    sh -c "echo '$etag' | grep -Eq '^\"[0-9a-f]{32}\"\$'"
cp "$TMP/body" "$TMP/first"

post_json /attention/dot "$B"
check_status "the same request written otherwise (order, 1.0, 3e0, spaces) is 200" 200
check_header "  with the same ETag" ETag "$etag"
check "  and the same bytes" cmp -s "$TMP/body" "$TMP/first"
check_header "  from the answers kept: no compute time" Server-Timing "compute;dur=0.000"

rm -f "$TMP/body" # curl writes no file for an answer without a body
post_json /attention/dot "$A" -H "If-None-Match: $etag"
check_status "If-None-Match naming it is 304" 304
check "  with no body" [ ! -s "$TMP/body" ]
check_header "  (Content-Length 0)" Content-Length 0
check_header "  and its ETag" ETag "$etag"
post_json /attention/dot "$A" -H "If-None-Match: \"0123\", W/$etag"
check_status "  also in a list, weakly" 304
post_json /attention/dot "$A" -H 'If-None-Match: "0123"'
check_status "If-None-Match naming another is the answer" 200

post_json /attention/dot "$(echo "$A" | sed 's/0.25/0.5/')"
check_status "another request is computed" 200
check "  with another ETag" [ "$(header ETag)" != "$etag" ]

post_json /attention/dot '{"queries": [[1, 0]]}' -H 'If-None-Match: *'
check_status "If-None-Match: * on a request that fails is its error, not 304" 422

# bodies the compute threads read (over 2 KiB), of one length: each its
# own answer, from the first byte to the last (the key of a body's bytes
# is taken before the server frees them)
for seed in 1 2; do
    python3 -c "
import json, random
r = random.Random($seed)
q = [[[round(r.uniform(-1, 1), 6) for _ in range(64)] for _ in range(600)]]
print(json.dumps({'queries': q, 'keys': q, 'values': q}))" >"$TMP/big$seed.json"
done
post_file /attention/dot "$TMP/big1.json"
check_status "a 1.1 MB request is 200" 200
cp "$TMP/body" "$TMP/big1.out"
post_file /attention/dot "$TMP/big2.json"
check_status "another of about its length is 200" 200
check "  with its own answer" sh -c "! cmp -s '$TMP/body' '$TMP/big1.out'"
post_file /attention/dot "$TMP/big1.json"
check "the first again: its own answer, byte for byte" cmp -s "$TMP/body" "$TMP/big1.out"
healthz_ok "  and the server is up"

post_json /grade "{\"endpoint\": \"/attention/dot\", \"request\": $A, \"answer\": {\"output\": [[1]]}}"
check_status "/grade answers" 200
check "  without an ETag: a grade keeps its answer's member order" \
    sh -c "! grep -qi '^etag:' '$TMP/headers'"

post_json /attention/dot '{"queries": [[1, 0]]}'
check_status "an error" 422
check "  carries no ETag" sh -c "! grep -qi '^etag:' '$TMP/headers'"
check_header "  and no-store" Cache-Control no-store
http GET /healthz
check "a route that computes nothing carries no ETag" \
    sh -c "! grep -qi '^etag:' '$TMP/headers'"
check_header "  and no-store" Cache-Control no-store
echo "1..$T"
