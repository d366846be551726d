#!/bin/sh
# d_gzip.sh — response compression on daemons of its own (docs/contract.md section 1,
# "Accept-Encoding: gzip is honoured for bodies >= 1 KiB"; section 15,
# --gzip-min-bytes): Accept-Encoding negotiation (RFC 9110 section 12.5.3),
# the threshold exactly at its value, Vary, HEAD, and 0 turning
# compression off. Bodies are checked by decompressing them with gzip(1).
#   usage: sh tests/integration/d_gzip.sh PATH/TO/attnd
ATTND=${1:?usage: d_gzip.sh PATH/TO/attnd}
DIR=$(cd "$(dirname "$0")" && pwd)
BASE=""
. "$DIR/lib.sh"
. "$DIR/daemon.sh"
PID=""
trap 'kill_daemon; rm -rf "$TMP"' EXIT

gzipped() { [ "$(header Content-Encoding)" = gzip ]; }
plain() { ! has_header Content-Encoding; }
vary_encoding() { header Vary | grep -q 'Accept-Encoding'; }
# unzips_to FILE: the last body, decompressed, is FILE
unzips_to() { gzip -dc <"$TMP/body" 2>/dev/null | cmp -s - "$1"; }

# a dot request whose answer is about 170 KB: B=2, Nq=Nk=64, d=dv=16
awk 'BEGIN { srand(7); printf "{"
    split("queries keys values", f, " ")
    for (t = 1; t <= 3; t++) { printf "%s\"%s\":[", (t > 1 ? "," : ""), f[t]
        for (b = 0; b < 2; b++) { printf "%s[", (b ? "," : "")
            for (i = 0; i < 64; i++) { printf "%s[", (i ? "," : "")
                for (j = 0; j < 16; j++)
                    printf "%s%.6f", (j ? "," : ""), rand() * 2 - 1
                printf "]" }
            printf "]" }
        printf "]" }
    printf "}" }' >"$TMP/dot.json"

# --- the default: 1 KiB ----------------------------------------------------
if ! start_daemon "$TMP/a.log" --port 0; then
    not_ok "attnd starts" "$(head -c 400 "$TMP/a.log")"
    exit 1
fi
BASE="http://127.0.0.1:$PORT"
post_file /attention/dot "$TMP/dot.json"
cp "$TMP/body" "$TMP/dot.plain"
plain_size=$(wc -c <"$TMP/dot.plain" | tr -d ' ')
check "a $plain_size-byte answer without Accept-Encoding is plain" plain
check "  and says Vary: Accept-Encoding" vary_encoding
post_file /attention/dot "$TMP/dot.json" -H 'Accept-Encoding: gzip'
gz_size=$(wc -c <"$TMP/body" | tr -d ' ')
check "with Accept-Encoding: gzip it is gzip ($gz_size bytes, $((100 * gz_size / plain_size)) % of the plain size)" gzipped
check "  and decompresses to the plain answer" unzips_to "$TMP/dot.plain"
check "  and says Vary: Accept-Encoding" vary_encoding

# negotiation
http GET /openapi.json
cp "$TMP/body" "$TMP/doc.plain"
for ae in 'x-gzip' 'GZip' '*' 'br;q=1, gzip;q=0.001' 'identity;q=0.5, *;q=0.1'; do
    http GET /openapi.json -H "Accept-Encoding: $ae"
    check "Accept-Encoding: $ae -> gzip" sh -c \
        "[ '$(header Content-Encoding)' = gzip ] && gzip -dc <'$TMP/body' | cmp -s - '$TMP/doc.plain'"
done
for ae in 'gzip;q=0' 'GZIP; Q=0.000' '*;q=0' 'gzip;q=0, *' 'identity' 'br, deflate'; do
    http GET /openapi.json -H "Accept-Encoding: $ae"
    check "Accept-Encoding: $ae -> plain" sh -c \
        "! grep -qi '^content-encoding' '$TMP/headers' && cmp -s '$TMP/body' '$TMP/doc.plain'"
done
http GET /openapi.json -H 'Accept-Encoding: gzip'
get_len=$(header Content-Length)
http HEAD /openapi.json -H 'Accept-Encoding: gzip'
check "HEAD with gzip: Content-Encoding and the Content-Length GET sends ($get_len)" \
    sh -c "[ '$(header Content-Encoding)' = gzip ] && [ '$(header Content-Length)' = '$get_len' ]"
http GET /version
cp "$TMP/body" "$TMP/version.plain"
vsize=$(wc -c <"$TMP/version.plain" | tr -d ' ')
http GET /version -H 'Accept-Encoding: gzip'
check "a $vsize-byte answer (under 1 KiB) is plain" plain
check "  with no Vary: Accept-Encoding" sh -c "! header Vary | grep -q Accept-Encoding"
stop_daemon

# --- the threshold, exactly ------------------------------------------------
if start_daemon "$TMP/b.log" --port 0 --gzip-min-bytes "$vsize"; then
    BASE="http://127.0.0.1:$PORT"
    http GET /version -H 'Accept-Encoding: gzip'
    check "--gzip-min-bytes $vsize: the $vsize-byte /version is gzip" gzipped
    check "  and decompresses to it" unzips_to "$TMP/version.plain"
    http GET /healthz -H 'Accept-Encoding: gzip'
    check "  a 15-byte /healthz is not" plain
    stop_daemon
else
    not_ok "starts with --gzip-min-bytes $vsize" "$(head -c 300 "$TMP/b.log")"
fi
if ATTND_GZIP_MIN_BYTES=$((vsize + 1)) start_daemon "$TMP/c.log" --port 0; then
    BASE="http://127.0.0.1:$PORT"
    http GET /version -H 'Accept-Encoding: gzip'
    check "ATTND_GZIP_MIN_BYTES=$((vsize + 1)): the $vsize-byte /version is plain" plain
    stop_daemon
else
    not_ok "starts with ATTND_GZIP_MIN_BYTES" "$(head -c 300 "$TMP/c.log")"
fi

# --- 0: off --------------------------------------------------------------
if start_daemon "$TMP/d.log" --port 0 --gzip-min-bytes 0; then
    BASE="http://127.0.0.1:$PORT"
    post_file /attention/dot "$TMP/dot.json" -H 'Accept-Encoding: gzip'
    check "--gzip-min-bytes 0: the $plain_size-byte answer is plain" plain
    check "  byte for byte" cmp -s "$TMP/body" "$TMP/dot.plain"
    check "  with no Vary: Accept-Encoding" sh -c "! header Vary | grep -q Accept-Encoding"
    stop_daemon
    check "  and the daemon exits 0" [ "$RC" -eq 0 ]
else
    not_ok "starts with --gzip-min-bytes 0" "$(head -c 300 "$TMP/d.log")"
fi

# --- the option itself -----------------------------------------------------
"$ATTND" --help >"$TMP/help" 2>&1
check "--help lists --gzip-min-bytes and ATTND_GZIP_MIN_BYTES" \
    sh -c "grep -q -- '--gzip-min-bytes' '$TMP/help' && grep -q ATTND_GZIP_MIN_BYTES '$TMP/help'"
for bad in -1 1.5 12Q; do
    "$ATTND" --gzip-min-bytes "$bad" >"$TMP/out" 2>"$TMP/err" </dev/null
    rc=$?
    check "--gzip-min-bytes $bad: exit 2 naming the option" \
        sh -c "[ $rc -eq 2 ] && grep -q -- '--gzip-min-bytes' '$TMP/err'"
done
if grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMP"/*.log; then
    not_ok "no sanitizer report"
else
    ok "no sanitizer report"
fi
echo "1..$T"
