#!/bin/sh
# load.sh — a bounded load check: ROUNDS rounds of REQUESTS mixed valid
# requests (dot, additive, NW bodies in turn) over CONNECTIONS concurrent
# keep-alive connections with curl --parallel. Every answer must be 2xx; with
# the daemon's PID, its resident memory (VmRSS) is read before and after
# each round and must stop growing after the first (no per-request leak).
# Prints TAP.
#   usage: sh tests/load/load.sh BASE_URL [PID]
#   env:   LOAD_REQUESTS (10000), LOAD_CONNECTIONS (32), LOAD_ROUNDS (2),
#          LOAD_RSS_SLACK_KB (8192: growth allowed after the first round)
BASE=${1:?usage: load.sh BASE_URL [PID]}
PID=${2:-}
REQUESTS=${LOAD_REQUESTS:-10000}
CONNECTIONS=${LOAD_CONNECTIONS:-32}
ROUNDS=${LOAD_ROUNDS:-2}
SLACK_KB=${LOAD_RSS_SLACK_KB:-8192}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
T=0
ok() {
    T=$((T + 1))
    echo "ok $T - $1"
}
not_ok() {
    T=$((T + 1))
    echo "not ok $T - $1"
    shift
    for line in "$@"; do echo "#   $line"; done
}

rss_kb() {
    [ -n "$PID" ] && sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' \
        "/proc/$PID/status" 2>/dev/null
}

# Bodies: dot B=2, Nq=4, Nk=8, d=dv=8; additive with seeded parameters;
# NW with 50 training pairs and 20 queries.
jq -cn 'def mat(n; m; s): [range(n) as $i | [range(m) as $j |
            ((($i * m + $j) * s) | sin)]];
        {queries: [mat(4; 8; 0.3), mat(4; 8; 0.7)],
         keys: [mat(8; 8; 0.5), mat(8; 8; 0.9)],
         values: [mat(8; 8; 0.2), mat(8; 8; 0.4)], valid_lens: [5, 8]}' \
    >"$TMP/dot.json"
jq -cn 'def mat(n; m; s): [range(n) as $i | [range(m) as $j |
            ((($i * m + $j) * s) | sin)]];
        {queries: [mat(4; 6; 0.3)], keys: [mat(12; 5; 0.5)],
         values: [mat(12; 3; 0.2)], num_hiddens: 8, seed: 7}' \
    >"$TMP/additive.json"
jq -cn '{x_train: [range(50) | . / 10], y_train: [range(50) | (. / 10) | sin],
         x_query: [range(20) | . / 4], w: 2}' >"$TMP/nw.json"

for kind in dot additive nw; do
    case $kind in
    dot) path=/attention/dot ;;
    additive) path=/attention/additive ;;
    nw) path=/regression/nw ;;
    esac
    code=$(curl -sS --max-time 10 -o "$TMP/$kind.out" -w '%{http_code}' \
        -H 'Content-Type: application/json' --data-binary "@$TMP/$kind.json" \
        "$BASE$path")
    if [ "$code" = 200 ]; then
        ok "load body $kind is a valid request"
    else
        not_ok "load body $kind is a valid request" "status $code" \
            "$(head -c 300 "$TMP/$kind.out")"
    fi
done

# One curl config with REQUESTS transfers, cycling through the three bodies.
i=0
while [ $i -lt "$REQUESTS" ]; do
    case $((i % 3)) in
    0) kind=dot path=/attention/dot ;;
    1) kind=additive path=/attention/additive ;;
    2) kind=nw path=/regression/nw ;;
    esac
    [ $i -gt 0 ] && echo next
    printf 'url = "%s%s"\ndata-binary = "@%s"\nheader = "Content-Type: application/json"\noutput = "/dev/null"\nmax-time = 20\nsilent\nwrite-out = "%%{http_code} %%{num_connects}\\n"\n' \
        "$BASE" "$path" "$TMP/$kind.json"
    i=$((i + 1))
done >"$TMP/config"

rss_before=$(rss_kb)
rss_first=""
round=1
while [ "$round" -le "$ROUNDS" ]; do
    start=$(date +%s.%N)
    curl --parallel --parallel-max "$CONNECTIONS" -K "$TMP/config" \
        >"$TMP/codes" 2>"$TMP/curl_err"
    end=$(date +%s.%N)
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
    total=$(wc -l <"$TMP/codes")
    good=$(grep -c '^2' "$TMP/codes")
    conns=$(awk '{ n += $2 } END { print n + 0 }' "$TMP/codes")
    rss=$(rss_kb)
    what="round $round: $REQUESTS mixed requests on $CONNECTIONS connections, all 2xx"
    if [ "$total" -eq "$REQUESTS" ] && [ "$good" -eq "$REQUESTS" ]; then
        ok "$what (${secs}s, $conns connections opened)"
    else
        not_ok "$what" "$total answers, $good 2xx" \
            "$(sort "$TMP/codes" | uniq -c | head -n 5 | tr '\n' ';')" \
            "$(head -c 300 "$TMP/curl_err")"
    fi
    echo "# round $round: ${secs}s, VmRSS ${rss:-?} kB (before any load: ${rss_before:-?} kB)"
    if [ "$round" -eq 1 ]; then
        rss_first=$rss
    fi
    round=$((round + 1))
done

if [ -n "$PID" ] && [ -n "$rss_first" ] && [ -n "$rss" ]; then
    growth=$((rss - rss_first))
    if [ "$growth" -le "$SLACK_KB" ]; then
        ok "VmRSS bounded: $rss_before kB before, $rss_first kB after round 1, $rss kB after round $ROUNDS (+$growth kB)"
    else
        not_ok "VmRSS bounded after the first round" \
            "$rss_before -> $rss_first -> $rss kB (+$growth kB > $SLACK_KB)"
    fi
fi
code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "$BASE/healthz")
if [ "$code" = 200 ]; then ok "healthz answers after the load"; else not_ok "healthz answers after the load" "status $code"; fi
exit 0
