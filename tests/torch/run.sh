#!/bin/sh
# run.sh — attnd against PyTorch (Debian's python3-torch, float64): the
# masks (masks.py) and the Transformer blocks (transformer.py), each
# against a daemon started here on a free loopback port. Runs on the host
# only (make test); the container's curl suite does not carry PyTorch.
# Without torch for /usr/bin/python3 each script fails, never skips.
# Prints one TAP stream, renumbered.
#   usage: sh tests/torch/run.sh PATH/TO/attnd
ATTND=${1:?usage: run.sh PATH/TO/attnd}
case $ATTND in
/*) ;;
*) ATTND=$(pwd)/$ATTND ;;
esac
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../integration/daemon.sh"
WORK=$(mktemp -d)
PID=""
N=0
trap 'kill_daemon; rm -rf "$WORK"' EXIT

if ! start_daemon "$WORK/daemon.log" --port 0; then
    echo "not ok 1 - attnd starts"
    sed 's/^/#   /' "$WORK/daemon.log"
    exit 1
fi
for script in masks.py transformer.py; do
    echo "# $script"
    /usr/bin/python3 "$DIR/$script" "http://127.0.0.1:$PORT" >"$WORK/out" 2>&1
    rc=$?
    while IFS= read -r line; do
        case $line in
        "ok "* | "not ok "*)
            N=$((N + 1))
            printf '%s\n' "$line" | sed "s/^\(not \)\{0,1\}ok [0-9]*/\1ok $N/" ;;
        "#"*) printf '%s\n' "$line" ;;
        esac
    done <"$WORK/out"
    if [ "$rc" -ne 0 ] && ! grep -q '^not ok' "$WORK/out"; then
        N=$((N + 1))
        echo "not ok $N - $script exits 0 (status $rc)"
        tail -n 5 "$WORK/out" | sed 's/^/#   /'
    fi
done
stop_daemon
echo "1..$N"
