#!/bin/sh
# run.sh — the operations checks (make ops-test): install and uninstall
# with pkg-config (t_install.sh), nginx in front of two attnd processes:
# its rate limit per client, a rolling restart under load, X-Forwarded-For
# (t_lb.sh), and the Kubernetes, KServe, compose and nginx files
# (t_deploy.sh). Each prints TAP; this ends with
# one line "N passed, N failed".
# Needs nginx, docker-compose, node, and tests/ops/k8s/node_modules
# (`npm ci` there; the Makefile target runs it).
#   usage: sh tests/ops/run.sh BUILD_DIR
BUILD=${1:-build}
DIR=$(cd "$(dirname "$0")" && pwd)
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_suite() {
    name=$1
    shift
    echo "# suite: $name"
    t0=$(date +%s)
    "$@" >"$log" 2>&1
    rc=$?
    cat "$log"
    p=$(grep -c '^ok ' "$log")
    f=$(grep -c '^not ok ' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "not ok - $name exited with status $rc"
        f=1
    fi
    if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
        echo "not ok - $name ran no test"
        f=1
    fi
    echo "# $name: $p passed, $f failed, $(($(date +%s) - t0)) s"
    passed=$((passed + p))
    failed=$((failed + f))
}

run_suite install sh "$DIR/t_install.sh" "$BUILD"
run_suite lb sh "$DIR/t_lb.sh" "$BUILD/attnd"
run_suite deploy sh "$DIR/t_deploy.sh"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
