#!/bin/sh
# t_chunked.sh — a request body of several hundred KB that arrives in many
# small chunked pieces over about a second gives exactly the answer of the
# same body sent at once; keep-alive requests on one connection stay
# independent.
#   usage: sh t_chunked.sh BASE_URL
BASE=${1:?usage: t_chunked.sh BASE_URL}
. "$(dirname "$0")/lib.sh"

# dot attention, B=1, Nq=64, Nk=512, d=dv=32: about 35,000 numbers
jq -cn '
  def mat(n; m; s): [range(n) as $i | [range(m) as $j |
      ((($i * m + $j) * s) | sin)]];
  {queries: [mat(64; 32; 0.37)], keys: [mat(512; 32; 0.61)],
   values: [mat(512; 32; 0.13)], return_weights: true}' >"$TMP/big.json"
size=$(wc -c <"$TMP/big.json")
check "the request body is several hundred KB ($size bytes)" \
    [ "$size" -gt 300000 ]

post_file /attention/dot "$TMP/big.json"
check_status "sent at once: 200" 200
cp "$TMP/body" "$TMP/at_once.json"
check_json "output (1, 64, 32), weights rows sum to 1" '
    (.output | length) == 1 and (.output[0] | length) == 64 and
    (.output[0][0] | length) == 32 and (.weights[0] | length) == 64 and
    (.weights[0][0] | length) == 512 and
    ([.weights[0][] | add | ((. - 1) | fabs) <= 1e-12] | all)'

# the same bytes in 8 KiB pieces, 10 ms apart, as chunked transfer coding
pieces=$(((size + 8191) / 8192))
slow_send() {
    i=0
    while [ $i -lt "$pieces" ]; do
        dd if="$TMP/big.json" bs=8192 skip=$i count=1 2>/dev/null
        sleep 0.01
        i=$((i + 1))
    done
}
slow_send | {
    # -T - streams stdin as it arrives, in chunked transfer coding
    out=$(curl -sS --max-time 30 -o "$TMP/body" -D "$TMP/headers" \
        -w '%{http_code}' -H 'Content-Type: application/json' -X POST \
        -T - "$BASE/attention/dot" 2>"$TMP/curl_err")
    echo "$out" >"$TMP/status"
}
STATUS=$(cat "$TMP/status")
check_status "$pieces chunked pieces over about a second: 200" 200
check "the chunked answer is byte-identical to the one-shot answer" \
    cmp -s "$TMP/body" "$TMP/at_once.json"

# the same request gzip-compressed in transit gives the same JSON
http POST /attention/dot -H 'Content-Type: application/json' \
    --data-binary "@$TMP/big.json" --compressed
check_header "the large answer is gzip-compressed on request" \
    Content-Encoding gzip
check "and decompresses to the same bytes" cmp -s "$TMP/body" \
    "$TMP/at_once.json"

# three requests on one keep-alive connection: valid, invalid, valid
curl -sS --max-time 30 -H 'Content-Type: application/json' \
    --data-binary "@$TMP/big.json" -o "$TMP/k1" "$BASE/attention/dot" \
    --next -sS --max-time 30 -H 'Content-Type: application/json' \
    --data-binary '{"queries": [[' \
    -o "$TMP/k2" "$BASE/attention/dot" \
    --next -sS --max-time 30 -H 'Content-Type: application/json' \
    --data-binary "@$TMP/big.json" -o "$TMP/k3" \
    -w '%{num_connects}' "$BASE/attention/dot" >"$TMP/conns" 2>"$TMP/curl_err"
check "keep-alive: valid, invalid, valid on one connection" \
    [ "$(cat "$TMP/conns")" = 0 ]
check "  the first answer is right" cmp -s "$TMP/k1" "$TMP/at_once.json"
check "  the second is invalid_json" jq -e '.code == "invalid_json"' "$TMP/k2"
check "  the third is right" cmp -s "$TMP/k3" "$TMP/at_once.json"
check_alive "chunked uploads"
exit 0
