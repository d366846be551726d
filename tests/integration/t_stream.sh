#!/bin/sh
# t_stream.sh — large answers are printed while they are sent (chunked
# transfer coding, no Content-Length) and are byte for byte the answers a
# client gets whole: compressed as they are sent (gzip, chunked), over
# HTTP/1.0 (no chunked coding: the connection closes at the end), with the
# flat tensor form, a precision, and masked scores printed as null. Small
# answers keep their Content-Length.
#   usage: sh t_stream.sh BASE_URL
BASE=${1:?usage: t_stream.sh BASE_URL}
. "$(dirname "$0")/lib.sh"
MAX_TIME=60

chunked() { [ "$(header Transfer-Encoding)" = chunked ] && ! has_header Content-Length; }
has_length() { has_header Content-Length && ! has_header Transfer-Encoding; }
unzips_to() { gzip -dc <"$TMP/body" | cmp - "$1"; }
same_as() { cmp "$TMP/body" "$1"; }

# dot attention, B=2, Nq=Nk=160, d=dv=8: 51,200 weights (streamed), and
# the same with causal masking, scores, flat tensors and 6 digits
jq -cn '
  def mat(n; m; s): [range(n) as $i | [range(m) as $j |
      ((($i * m + $j) * s) | sin)]];
  {queries: [mat(160; 8; 0.37), mat(160; 8; 0.29)],
   keys: [mat(160; 8; 0.61), mat(160; 8; 0.17)],
   values: [mat(160; 8; 0.13), mat(160; 8; 0.71)]}' >"$TMP/dot.json"
jq -c '. + {causal: true, return_scores: true, tensor_format: "flat",
            precision: 6}' "$TMP/dot.json" >"$TMP/dot_flat.json"

for req in dot dot_flat; do
    post_file /attention/dot "$TMP/$req.json"
    check_status "$req: 200" 200
    check "$req: streamed (Transfer-Encoding: chunked, no Content-Length)" chunked
    check "$req: request id and Server-Timing are sent" sh -c \
        "grep -qi '^X-Request-Id:' '$TMP/headers' && grep -qi '^Server-Timing: compute' '$TMP/headers'"
    cp "$TMP/body" "$TMP/$req.streamed"
    post_file /attention/dot "$TMP/$req.json" -H 'Accept-Encoding: gzip'
    check "$req: with Accept-Encoding: gzip it is compressed as it is sent (chunked)" \
        sh -c "[ \"\$(grep -i '^Content-Encoding:' '$TMP/headers' | tr -d '\r' | cut -d' ' -f2)\" = gzip ] && grep -qi '^Transfer-Encoding: chunked' '$TMP/headers'"
    check "$req: and decompresses to the streamed bytes" unzips_to "$TMP/$req.streamed"
    post_file /attention/dot "$TMP/$req.json" --http1.0
    check "$req: over HTTP/1.0 the same bytes arrive" same_as "$TMP/$req.streamed"
done

check_json_file() { jq -e "$2" "$1" >/dev/null; }
check "the streamed answer is JSON: weights (2, 160, 160), rows sum to 1" \
    check_json_file "$TMP/dot.streamed" '
    (.weights | length) == 2 and (.weights[1] | length) == 160 and
    (.weights[1][159] | length) == 160 and
    ([.weights[][] | add | ((. - 1) | fabs) <= 1e-12] | all)'
check "flat, causal: masked scores print as null" \
    check_json_file "$TMP/dot_flat.streamed" '
    .weights.shape == [2, 160, 160] and .scores.data[1] == null and
    .scores.data[0] != null and (.weights.data | length) == 51200'
# every number's significant digits: sign, exponent, point, leading zeros off
digits_at_most() {
    grep -oE -- '-?[0-9][0-9.]*(e[-+]?[0-9]+)?' "$1" |
        sed 's/e.*//; s/[-.]//g; s/^0*//' | awk -v n="$2" '
        length($0) > n { bad++ } END { exit (NR < 1000 || bad > 0) }'
}
check "  and every number has at most 6 significant digits" \
    digits_at_most "$TMP/dot_flat.streamed" 6

# the weights of Nadaraya–Watson, m = n = 200: 40,000 entries
jq -cn '{x_train: [range(200) | . / 40], y_train: [range(200) | (. / 40) | sin],
         x_query: [range(200) | . / 40 + 0.01], w: 2}' >"$TMP/nw.json"
post_file /regression/nw "$TMP/nw.json"
check_status "regression/nw m = n = 200: 200" 200
check "  streamed" chunked
cp "$TMP/body" "$TMP/nw.streamed"
post_file /regression/nw "$TMP/nw.json" -H 'Accept-Encoding: gzip'
check "  the same bytes as gzip gives" unzips_to "$TMP/nw.streamed"

# small answers are sent whole
post_json /attention/dot '{"queries":[[1,0]],"keys":[[1,0],[0,1]],"values":[[1],[2]]}'
check_status "a small answer: 200" 200
check "  with a Content-Length" has_length

echo "1..$T"
