#!/bin/sh
# smoke.sh — load and fault checks against daemons of its own, on loopback,
# bounded in time (`make load-smoke` ≈ 3 min; `make soak` runs the same
# checks longer). Prints TAP and ends with "load: N passed, N failed".
#   1. saturation: wrk on LOAD_CONNECTIONS keep-alive connections cycling
#      dot, additive and NW bodies (mixed.lua) for LOAD_SECONDS after a
#      LOAD_WARMUP run: no non-2xx answer, no socket error, resident memory
#      (VmRSS) drift under RSS_DRIFT_KB from the end of the warm-up;
#   2. slowloris: SLOW_CONNS connections from 127.0.0.2 … that never finish
#      their headers (slowloris.pl) while a normal client makes
#      PROBE_REQUESTS requests, each on a new connection: all 200, p99
#      under PROBE_P99_MS;
#   3. disconnects: DISCONNECTS clients that close mid-upload and as many
#      that close after 4 KiB of a 2 MB answer (disconnect.pl), after a
#      quarter as many to warm up: every descriptor is released within a
#      second and VmRSS stays within DISCONNECT_RSS_KB of its value before;
#   4. SIGTERM under load (16 closed-loop keep-alive clients, drain.pl):
#      every request on a connection the daemon accepted is answered (as
#      many answers as access-log lines, none cut off), exit status 0;
#   5. health under compute: two additive requests computing for seconds
#      while /healthz is probed for HEALTH_SECONDS: p99 under HEALTH_P99_MS
#      (health_probe.py);
#   6. resource attacks (attacks.py, ATTACKS_MODE --short or --long, each
#      against daemons of its own): huge answers to clients that do not
#      read, a slow reader, tree bombs, health beside maximal compute, slow
#      headers, slow uploads, gzip answers, HEAD of a huge answer, a tiny
#      multihead request with a huge answer; each of its TAP lines counts
#      here as one check;
#   7. a class under attack (class.py, CLASS_MODE --short or --full, a
#      daemon of its own with docs/class.md's configuration): students, a
#      teacher and a /healthz probe beside one attacker per phase; each
#      phase's TAP line counts here as one check;
#   8. a class of 300 (class300.py, CLASS300_MODE --short or --full, a
#      daemon of its own per setting with docs/class.md's configuration
#      for 300): 300 keep-alive students from 300 addresses and from one,
#      alone and beside a /grade/batch of 10,000; each TAP line counts;
#   9. with ASAN_ATTND: 2 to 4 against the AddressSanitizer daemon, which
#      must then exit 0 with no report (LeakSanitizer runs at exit).
# Needs wrk, perl, curl and jq.
#   usage: sh tests/load/smoke.sh ATTND [ASAN_ATTND]
ATTND=${1:?usage: smoke.sh ATTND [ASAN_ATTND]}
ASAN_ATTND=${2:-}
DIR=$(cd "$(dirname "$0")" && pwd)
LOAD_SECONDS=${LOAD_SECONDS:-20}
LOAD_WARMUP=${LOAD_WARMUP:-5}
LOAD_CONNECTIONS=${LOAD_CONNECTIONS:-32}
RSS_DRIFT_KB=${RSS_DRIFT_KB:-5120}
SLOW_CONNS=${SLOW_CONNS:-500}
SLOW_SECONDS=${SLOW_SECONDS:-15}
SLOW_INTERVAL=${SLOW_INTERVAL:-5}
PROBE_REQUESTS=${PROBE_REQUESTS:-300}
PROBE_P99_MS=${PROBE_P99_MS:-100}
DISCONNECTS=${DISCONNECTS:-100}
DISCONNECT_RSS_KB=${DISCONNECT_RSS_KB:-4096}
HEALTH_SECONDS=${HEALTH_SECONDS:-3}
HEALTH_P99_MS=${HEALTH_P99_MS:-50}
ATTACKS_MODE=${ATTACKS_MODE:---short}
CLASS_MODE=${CLASS_MODE:---short}
CLASS300_MODE=${CLASS300_MODE:---short}
TMP=$(mktemp -d)
PIDS=""
trap 'for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
N=0
FAILED=0
ok() {
    N=$((N + 1))
    echo "ok $N - $1"
}
not_ok() {
    N=$((N + 1))
    FAILED=$((FAILED + 1))
    echo "not ok $N - $1"
    shift
    for line in "$@"; do echo "#   $line"; done
}
check() { # check WHAT COMMAND...
    what=$1
    shift
    if "$@"; then ok "$what"; else not_ok "$what"; fi
}

# --- bodies ------------------------------------------------------------------
# dot (2, 4, 8) x (2, 8, 8) with valid_lens, additive with seeded parameters,
# NW with 50 pairs and 20 queries (as tests/load/load.sh); big: dot (4, 128,
# 64), a 1.9 MB body with a 2 MB answer
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
jq -cn 'def mat(n; m; s): [range(n) as $i | [range(m) as $j |
            ((($i * m + $j) * s) | sin)]];
        [range(4) as $b | mat(128; 64; 0.1 + $b)] as $t |
        {queries: $t, keys: $t, values: $t}' >"$TMP/big.json"
MIX="/attention/dot=$TMP/dot.json /attention/additive=$TMP/additive.json /regression/nw=$TMP/nw.json"

# --- helpers -----------------------------------------------------------------
# start LOG BINARY [ARGS...]: start a daemon on a free port; sets PID, PORT
start() {
    log=$1
    bin=$2
    shift 2
    "$bin" --port 0 "$@" 2>"$log" &
    PID=$!
    PIDS="$PIDS $PID"
    PORT=""
    i=0
    while [ -z "$PORT" ] && [ $i -lt 200 ] && kill -0 "$PID" 2>/dev/null; do
        sleep 0.05
        PORT=$(sed -n 's/.*listening on http:\/\/[^ "]*:\([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
        i=$((i + 1))
    done
    [ -n "$PORT" ]
}
# stop [SIGNAL]: signal PID and wait at most 20 s; sets RC (124: killed)
stop() {
    kill -"${1:-TERM}" "$PID" 2>/dev/null
    i=0
    while kill -0 "$PID" 2>/dev/null && [ $i -lt 400 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    if kill -0 "$PID" 2>/dev/null; then
        kill -KILL "$PID"
        wait "$PID" 2>/dev/null
        RC=124
    else
        wait "$PID"
        RC=$?
    fi
}
rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$PID/status"; }
fds() { ls "/proc/$PID/fd" 2>/dev/null | wc -l; }
# field NAME FILE: a value from mixed.lua's RESULT line
field() { sed -n "s/^RESULT.* $1=\([0-9.]*\).*/\1/p" "$2"; }
# mix SECONDS CONNECTIONS OUT: wrk with the mixed bodies
mix() {
    # shellcheck disable=SC2086 # MIX is a list of arguments
    wrk -t2 -c"$2" -d"$1"s --timeout 10s -s "$DIR/mixed.lua" \
        "http://127.0.0.1:$PORT" -- $MIX >"$3" 2>&1
}
healthz() {
    [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
        "http://127.0.0.1:$PORT/healthz")" = 200 ]
}

# slowloris_probe NAME: SLOW_CONNS slow clients, PROBE_REQUESTS normal ones
slowloris_probe() {
    name=$1
    : >"$TMP/slow.out"
    perl "$DIR/slowloris.pl" 127.0.0.1 "$PORT" "$SLOW_CONNS" "$SLOW_SECONDS" \
        "$SLOW_INTERVAL" >"$TMP/slow.out" 2>&1 &
    slow=$!
    i=0
    while ! grep -q holding "$TMP/slow.out" && [ $i -lt 600 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    i=0 # the daemon accepts them as it polls: wait up to 3 s
    while [ "$(fds)" -lt "$SLOW_CONNS" ] && [ $i -lt 60 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    held_fds=$(fds)
    i=0
    while [ $i -lt "$PROBE_REQUESTS" ]; do
        [ $i -gt 0 ] && echo next
        printf 'url = "http://127.0.0.1:%s/regression/nw"\ndata-binary = "@%s"\nheader = "Content-Type: application/json"\nheader = "Connection: close"\noutput = "/dev/null"\nmax-time = 10\nsilent\nwrite-out = "%%{http_code} %%{time_total}\\n"\n' \
            "$PORT" "$TMP/nw.json"
        i=$((i + 1))
    done >"$TMP/probe.cfg"
    curl -K "$TMP/probe.cfg" >"$TMP/probe.out" 2>/dev/null
    wait "$slow"
    good=$(grep -c '^200 ' "$TMP/probe.out")
    p50=$(sort -k2 -n "$TMP/probe.out" | awk '{ t[NR] = $2 } END {
        printf "%.1f", 1000 * t[int((NR + 1) * 0.5)] }')
    p99=$(sort -k2 -n "$TMP/probe.out" | awk '{ t[NR] = $2 } END {
        i = int(NR * 0.99 + 0.999); printf "%.1f", 1000 * t[i] }')
    summary=$(tail -n 1 "$TMP/slow.out")
    what="$name: $SLOW_CONNS slow clients for ${SLOW_SECONDS}s ($held_fds daemon descriptors): a normal client's $PROBE_REQUESTS requests all 200, p50 $p50 ms, p99 $p99 ms < $PROBE_P99_MS ms"
    if [ "$good" -eq "$PROBE_REQUESTS" ] &&
        awk -v p="$p99" -v max="$PROBE_P99_MS" 'BEGIN { exit !(p < max) }' &&
        grep -q "holding $SLOW_CONNS" "$TMP/slow.out"; then
        ok "$what"
    else
        not_ok "$what" "$good of $PROBE_REQUESTS answered 200" \
            "$(tr '\n' ';' <"$TMP/slow.out")"
    fi
    echo "# $name: $summary"
}

# disconnects NAME COUNT RSS_LIMIT_KB: clients that leave mid-upload and
# mid-answer; first rounds of as many, until RSS stops growing (at most
# 4, or 1 without the memory check): each worker thread has its own malloc arena, and which threads a
# round reaches depends on timing; RSS_LIMIT_KB "-" skips the memory check
# (ASan keeps freed memory in quarantine; LeakSanitizer checks at exit)
disconnects() {
    name=$1
    count=$2
    rss0=$(rss_kb)
    rounds=4
    [ "$3" = - ] && rounds=1
    i=0
    while [ $i -lt $rounds ]; do
        perl "$DIR/disconnect.pl" 127.0.0.1 "$PORT" /attention/dot \
            "$TMP/big.json" "$count" >/dev/null 2>&1
        sleep 0.3
        rss_round=$(rss_kb)
        [ $i -gt 0 ] && [ $((rss_round - rss0)) -le 256 ] && break
        rss0=$rss_round
        i=$((i + 1))
    done
    fd0=$(fds)
    rss0=$(rss_kb)
    perl "$DIR/disconnect.pl" 127.0.0.1 "$PORT" /attention/dot \
        "$TMP/big.json" "$count" >"$TMP/disc.out" 2>&1
    i=0
    while [ "$(fds)" -gt "$fd0" ] && [ $i -lt 20 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    fd1=$(fds)
    rss1=$(rss_kb)
    check "$name: $(tr -d '\n' <"$TMP/disc.out"): descriptors $fd0 -> $fd1 within a second" \
        [ "$fd1" -le "$fd0" ]
    if [ "$3" != - ]; then
        check "$name: VmRSS $rss0 -> $rss1 kB (+$((rss1 - rss0)), limit $3)" \
            [ $((rss1 - rss0)) -le "$3" ]
    fi
    check "$name: healthz answers after the disconnects" healthz
}

# sigterm_under_load NAME LOG: SIGTERM 1.5 s into 4 s of closed-loop
# keep-alive clients (drain.pl), which tell a request cut on a connection
# that the daemon had accepted from one refused or never accepted
sigterm_under_load() {
    name=$1
    log=$2
    before=$(grep -c ' POST /[a-z/]* 200 ' "$log")
    (
        sleep 1.5
        kill -TERM "$PID"
    ) &
    # shellcheck disable=SC2086 # MIX is a list of arguments
    perl "$DIR/drain.pl" 127.0.0.1 "$PORT" 4 16 $MIX >"$TMP/term.out" 2>&1
    stop TERM
    answered=$(($(grep -c ' POST /[a-z/]* 200 ' "$log") - before))
    seen=$(sed -n 's/.*answered=\([0-9]*\).*/\1/p' "$TMP/term.out")
    cut=$(sed -n 's/.*cut=\([0-9]*\).*/\1/p' "$TMP/term.out")
    check "$name: SIGTERM under load: exit status $RC" [ "$RC" -eq 0 ]
    what="$name: every request the daemon accepted was answered ($answered in the access log, $(tr -d '\n' <"$TMP/term.out"))"
    if [ "$answered" = "$seen" ] && [ "$cut" = 0 ] &&
        grep -q 'non2xx=0$' "$TMP/term.out"; then
        ok "$what"
    else
        not_ok "$what"
    fi
}

# health_under_compute: two additive requests that compute for seconds
# (Nq = Nk = 1024, num_hiddens 1000) while /healthz is probed on new
# connections: the compute pool leaves the HTTP threads free, so its p99
# stays under HEALTH_P99_MS
health_under_compute() {
    jq -cn 'def mat(n; m; s): [range(n) as $i | [range(m) as $j |
                ((($i * m + $j) * s) | sin)]];
            [mat(1024; 4; 0.3)] as $t |
            {queries: $t, keys: $t, values: $t, num_hiddens: 1000, seed: 1,
             return_weights: false}' >"$TMP/heavy.json"
    heavy=""
    for i in 1 2; do
        curl -s -o /dev/null -w '%{http_code}' --max-time 120 \
            -H 'Content-Type: application/json' \
            --data-binary @"$TMP/heavy.json" \
            "http://127.0.0.1:$PORT/attention/additive" >"$TMP/heavy$i.code" &
        heavy="$heavy $!"
    done
    sleep 0.3
    python3 "$DIR/health_probe.py" "$PORT" "$HEALTH_SECONDS" >"$TMP/probe.out"
    # shellcheck disable=SC2086 # a list of process ids
    wait $heavy
    p99=$(sed -n 's/.*p99_ms=\([0-9.]*\).*/\1/p' "$TMP/probe.out")
    codes="$(cat "$TMP/heavy1.code") $(cat "$TMP/heavy2.code")"
    what="healthz while two additive requests compute: $(cat "$TMP/probe.out"); the two answered $codes; p99 < $HEALTH_P99_MS ms"
    if [ "$codes" = "200 200" ] && grep -q 'failed=0' "$TMP/probe.out" &&
        awk "BEGIN { exit !(${p99:-1e9} < $HEALTH_P99_MS) }"; then
        ok "$what"
    else
        not_ok "$what"
    fi
}

# suite NAME SCRIPT MODE: a python suite's checks (attacks.py, class.py),
# renumbered into this script's TAP; its other lines become comments
suite() {
    python3 "$DIR/$2" "$3" "$ATTND" >"$TMP/$1.out" 2>&1
    rc=$?
    while IFS= read -r line; do
        case $line in
        "ok "*) ok "$1: ${line#ok * - }" ;;
        "not ok "*) not_ok "$1: ${line#not ok * - }" ;;
        "#"*) echo "$line" ;;
        *) echo "# $line" ;;
        esac
    done <"$TMP/$1.out"
    if ! tail -n 1 "$TMP/$1.out" | grep -q "^$1: [0-9]* passed, [0-9]* failed\$"; then
        not_ok "$2 ran to its end (exit status $rc)"
    fi
}

# --- 1..5 against the release daemon -------------------------------------------
LOG="$TMP/attnd.log"
if ! start "$LOG" "$ATTND"; then
    not_ok "attnd starts" "$(head -c 300 "$LOG")"
    echo "load: $((N - FAILED)) passed, $FAILED failed"
    exit 1
fi
ok "attnd starts on port $PORT"
rss_start=$(rss_kb)
mix "$LOAD_WARMUP" "$LOAD_CONNECTIONS" "$TMP/warm.out"
rss_warm=$(rss_kb)
mix "$LOAD_SECONDS" "$LOAD_CONNECTIONS" "$TMP/sat.out"
rss_end=$(rss_kb)
drift=$((rss_end - rss_warm))
reqs=$(field requests "$TMP/sat.out")
if [ "$(field non2xx "$TMP/warm.out")" = 0 ] &&
    [ "$(field errors "$TMP/warm.out")" = 0 ] &&
    [ "$(field non2xx "$TMP/sat.out")" = 0 ] &&
    [ "$(field errors "$TMP/sat.out")" = 0 ] && [ "${reqs:-0}" -gt 0 ]; then
    ok "saturation: ${LOAD_SECONDS}s on $LOAD_CONNECTIONS connections, $reqs requests ($(field rps "$TMP/sat.out")/s, p50 $(field p50_ms "$TMP/sat.out") ms, p99 $(field p99_ms "$TMP/sat.out") ms), all 2xx, no socket error"
else
    not_ok "saturation: every answer 2xx, no socket error" \
        "$(grep -h -E 'RESULT|Socket' "$TMP/warm.out" "$TMP/sat.out" | tr '\n' ';')"
fi
check "saturation: VmRSS $rss_start kB at start, $rss_warm after ${LOAD_WARMUP}s warm-up, $rss_end at the end: drift $drift kB < $RSS_DRIFT_KB" \
    [ "$drift" -lt "$RSS_DRIFT_KB" ]
slowloris_probe "slowloris"
check "healthz answers after the slow clients" healthz
disconnects "disconnects" "$DISCONNECTS" "$DISCONNECT_RSS_KB"
health_under_compute
sigterm_under_load "release" "$LOG"

# --- 6. resource attacks, each against daemons of its own ---------------------
suite attacks attacks.py "$ATTACKS_MODE"
suite class class.py "$CLASS_MODE"
suite class300 class300.py "$CLASS300_MODE"

# --- 9. the AddressSanitizer daemon ----------------------------------------------
if [ -n "$ASAN_ATTND" ]; then
    ALOG="$TMP/asan.log"
    if start "$ALOG" "$ASAN_ATTND"; then
        ok "ASan attnd starts on port $PORT"
        mix 3 "$LOAD_CONNECTIONS" "$TMP/asan_mix.out"
        what="ASan: 3 s of mixed load, all 2xx ($(field requests "$TMP/asan_mix.out") requests)"
        if [ "$(field non2xx "$TMP/asan_mix.out")" = 0 ] &&
            [ "$(field errors "$TMP/asan_mix.out")" = 0 ]; then
            ok "$what"
        else
            not_ok "$what" "$(grep -h -E 'RESULT|Socket' "$TMP/asan_mix.out")"
        fi
        # slow clients against the instrumented daemon: for leaks, not speed
        SLOW_SECONDS=5
        PROBE_P99_MS=1000
        PROBE_REQUESTS=50
        slowloris_probe "ASan slowloris"
        disconnects "ASan disconnects" $((DISCONNECTS / 4 + 1)) -
        sigterm_under_load "ASan" "$ALOG"
        if grep -q -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$ALOG"; then
            not_ok "ASan: no sanitizer report (leaks checked at exit)" \
                "$(grep -m 3 -E 'ERROR|runtime error' "$ALOG")"
        else
            ok "ASan: no sanitizer report (leaks checked at exit)"
        fi
    else
        not_ok "ASan attnd starts" "$(head -c 300 "$ALOG")"
    fi
fi
echo "load: $((N - FAILED)) passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
