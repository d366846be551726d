#!/bin/sh
# t_json_suite.sh — JSON parser conformance over HTTP: every file of
# nst/JSONTestSuite (tests/json/json-test-suite) is posted byte for byte to
# every POST route of the live daemon, one curl process per batch (route and
# file prefix) on keep-alive connections. The rules are those of
# tests/unit/test_json_suite.c:
#   y_ never 400 invalid_json (422), except y_object_escaped_null_in_key
#      (a key holding \u0000 is invalid_json, docs/contract.md section 1);
#   n_ always 400 invalid_json;
#   i_ 400 invalid_json or 422, never another status;
# every answer is problem+json, and /healthz answers after each batch.
#   usage: sh tests/integration/t_json_suite.sh BASE_URL
BASE=${1:?usage: t_json_suite.sh BASE_URL}
DIR=$(cd "$(dirname "$0")" && pwd)
SUITE="$DIR/../json/json-test-suite"
. "$DIR/lib.sh"

NUL_KEY=y_object_escaped_null_in_key.json

# batch ROUTE PREFIX: post every PREFIX_*.json to ROUTE; prints one line per
# file to $TMP/answers: "NAME STATUS CODE" (CODE "-" when none).
batch() {
    route=$1
    prefix=$2
    rm -rf "$TMP/out"
    mkdir "$TMP/out"
    : >"$TMP/config"
    for f in "$SUITE/${prefix}"_*.json; do
        name=${f##*/}
        [ -s "$TMP/config" ] && echo next >>"$TMP/config"
        printf 'url = "%s%s"\ndata-binary = "@%s"\nheader = "Content-Type: application/json"\nheader = "Expect:"\noutput = "%s/out/%s"\nmax-time = 10\nsilent\nwrite-out = "%%{http_code} %s\\n"\n' \
            "$BASE" "$route" "$f" "$TMP" "$name" "$name" >>"$TMP/config"
    done
    curl -K "$TMP/config" >"$TMP/codes" 2>"$TMP/curl_err"
    # "NAME CODE" for every body that names a code
    grep -o -H '"code":"[a-z_]*"' "$TMP"/out/* 2>/dev/null |
        sed 's|.*/\([^/:]*\):"code":"\([a-z_]*\)"|\1 \2|' >"$TMP/codes_by_name"
    awk 'NR == FNR { code[$1] = $2; next }
         { print $2, $1, ($2 in code) ? code[$2] : "-" }' \
        "$TMP/codes_by_name" "$TMP/codes" >"$TMP/answers"
}

for route in /attention/dot /attention/additive /regression/nw; do
    for prefix in y n i; do
        batch "$route" "$prefix"
        files=$(ls "$SUITE/${prefix}"_*.json | wc -l)
        answered=$(wc -l <"$TMP/answers")
        bad=$(awk -v p="$prefix" -v nulkey="$NUL_KEY" '
            {
                ij = ($2 == 400 && $3 == "invalid_json")
                if ($1 == nulkey) ok = ij
                else if (p == "y") ok = ($2 == 422 && $3 != "-")
                else if (p == "n") ok = ij
                else ok = ij || ($2 == 422 && $3 != "-")
                if (!ok) print $1 ": " $2 " " $3
            }' "$TMP/answers")
        what="$route: $files ${prefix}_ files answered by the contract"
        if [ "$answered" -eq "$files" ] && [ -z "$bad" ]; then
            ok "$what"
        else
            not_ok "$what" "$answered answers for $files files" \
                "$(echo "$bad" | head -n 5 | tr '\n' ';')" \
                "$(head -c 200 "$TMP/curl_err")"
        fi
        if jq -e -s 'all(.[]; .type == "about:blank" and (.status | type) == "number")' \
            "$TMP"/out/* >/dev/null 2>&1; then
            ok "$route: every ${prefix}_ answer is a problem document"
        else
            not_ok "$route: every ${prefix}_ answer is a problem document"
        fi
        check_alive "$route ${prefix}_ files"
    done
done
exit 0
