# daemon.sh — start and stop a local attnd for run.sh and d_daemon.sh.
# Needs ATTND (path to the binary). Sourced, not run.

# start_daemon LOG [ARGS...]: start "$ATTND" ARGS with stderr to LOG, wait
# for its "listening on http://ADDR:PORT" line, set PID and PORT. Returns 1
# when it does not come up within 10 s (PID is then still set if it runs).
start_daemon() {
    log=$1
    shift
    "$ATTND" "$@" 2>"$log" &
    PID=$!
    PORT=""
    i=0
    while [ $i -lt 200 ]; do
        PORT=$(sed -n 's/.*listening on https\{0,1\}:\/\/[^ "]*:\([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
        [ -n "$PORT" ] && return 0
        kill -0 "$PID" 2>/dev/null || return 1
        sleep 0.05
        i=$((i + 1))
    done
    return 1
}

# stop_daemon [SIGNAL]: send SIGNAL (TERM), wait at most 15 s, set RC to
# the exit status (124 when it had to be killed).
stop_daemon() {
    kill -"${1:-TERM}" "$PID" 2>/dev/null
    wait_daemon
}

# wait_daemon: wait at most 15 s for PID to exit, set RC as stop_daemon.
wait_daemon() {
    i=0
    while kill -0 "$PID" 2>/dev/null && [ $i -lt 300 ]; do
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
    PID=""
}

# kill_daemon: for traps; no-op when nothing runs.
kill_daemon() {
    if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
        kill -KILL "$PID" 2>/dev/null
    fi
}
