#!/bin/sh
# run.sh — start attnd on a free loopback port, run every
# tests/integration/t_*.sh against it (base URL as the only argument), then
# the checks that start daemons of their own (d_daemon.sh, d_safety.sh,
# d_metrics.sh, d_logs.sh, d_gzip.sh) and the load check (tests/load/load.sh),
# then stop it with SIGTERM and check the exit status and the access log.
# Prints one TAP stream, renumbered.
#   usage: sh tests/integration/run.sh PATH/TO/attnd
ATTND=${1:?usage: run.sh PATH/TO/attnd}
case $ATTND in
/*) ;;
*) ATTND=$(pwd)/$ATTND ;;
esac
export ATTND # for t_*.sh that start a daemon of their own (t_limits.sh)
DIR=$(cd "$(dirname "$0")" && pwd)
N=0
WORK=$(mktemp -d)
PID=""
. "$DIR/daemon.sh"
cleanup() {
    kill_daemon
    rm -rf "$WORK"
}
trap cleanup EXIT

ok() {
    N=$((N + 1))
    echo "ok $N - $1"
}
not_ok() {
    N=$((N + 1))
    echo "not ok $N - $1"
    shift
    for line in "$@"; do echo "#   $line"; done
}

# run_script NAME COMMAND...: renumber its TAP lines into ours.
run_script() {
    name=$1
    shift
    echo "# $name"
    started=$(date +%s)
    "$@" >"$WORK/out" 2>"$WORK/err"
    rc=$?
    echo "# $name took $(($(date +%s) - started)) s"
    failed=0
    while IFS= read -r line; do
        case "$line" in
        "ok "*)
            ok "$name: ${line#* - }"
            ;;
        "not ok "*)
            not_ok "$name: ${line#* - }"
            failed=1
            ;;
        *) echo "$line" ;;
        esac
    done <"$WORK/out"
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
        not_ok "$name exited with status $rc" "$(head -c 500 "$WORK/err")"
    fi
}

LOG="$WORK/attnd.log"
if ! start_daemon "$LOG" --port 0; then
    not_ok "attnd starts and prints its port" "$(head -c 500 "$LOG")"
    echo "1..$N"
    exit 1
fi
ok "attnd starts on port $PORT and says so on stderr"
BASE="http://127.0.0.1:$PORT"

for t in "$DIR"/t_*.sh; do
    run_script "$(basename "$t" .sh)" sh "$t" "$BASE"
done
run_script d_daemon sh "$DIR/d_daemon.sh" "$ATTND"
run_script d_safety sh "$DIR/d_safety.sh" "$ATTND"
run_script d_metrics sh "$DIR/d_metrics.sh" "$ATTND"
run_script d_logs sh "$DIR/d_logs.sh" "$ATTND"
run_script d_gzip sh "$DIR/d_gzip.sh" "$ATTND"
run_script d_variants sh "$DIR/d_variants.sh" "$ATTND"
run_script load sh "$DIR/../load/load.sh" "$BASE" "$PID"

# the access log: one text line per request, e.g.
#   2025-01-31T12:00:00.123Z 0a1b2c3d4e5f6071 GET /healthz 200 16B 0.081ms 127.0.0.1 -
re='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z [!-~]+ GET /healthz 200 [0-9]+B [0-9.]+ms [!-~]+ [!-~]+$'
if grep -Eq "$re" "$LOG"; then
    ok "access log has text lines for /healthz"
else
    not_ok "access log has text lines for /healthz" "$(tail -n 3 "$LOG")"
fi
if grep -q ' it-log-marker-7f3a ' "$LOG"; then
    ok "access log carries the client's X-Request-Id"
else
    not_ok "access log carries the client's X-Request-Id"
fi

stop_daemon
# a sanitized build reports to stderr (and a leak makes the exit status 23)
if grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$LOG"; then
    not_ok "no sanitizer report from the daemon" \
        "$(grep -E -m 3 'Sanitizer|runtime error:' "$LOG")"
else
    ok "no sanitizer report from the daemon"
fi
if [ "$RC" -eq 0 ]; then
    ok "attnd exits 0 on SIGTERM"
else
    not_ok "attnd exits 0 on SIGTERM" "exit status $RC" "$(tail -n 5 "$LOG")"
fi
if grep -q 'stopped' "$LOG"; then
    ok "attnd logs its shutdown"
else
    not_ok "attnd logs its shutdown" "$(tail -n 3 "$LOG")"
fi
echo "1..$N"
