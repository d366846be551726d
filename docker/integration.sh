#!/bin/sh
# Run every integration script tests/integration/t_*.sh against a running
# attnd and end with one line "N passed, N failed". Each script takes the
# base URL as its only argument and prints TAP ("ok N - ..." /
# "not ok N - ..."); a script that exits non-zero without reporting a
# failure, or reports no test at all, counts as one failure.
#
#   usage: sh docker/integration.sh [BASE_URL] [TESTS_DIR]
#          (defaults: http://attnd:8080 and tests/integration)
#   env:   ATTND_TEST_TIMEOUT  seconds allowed per script (default 300)
URL=${1:-http://attnd:8080}
DIR=${2:-tests/integration}
LIMIT=${ATTND_TEST_TIMEOUT:-300}
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for t in "$DIR"/t_*.sh; do
    [ -f "$t" ] || continue
    name=$(basename "$t" .sh)
    echo "# suite: $name"
    # Run it with the interpreter its first line names, else with sh.
    interp=$(sed -n '1s/^#![[:space:]]*//p' "$t")
    timeout "$LIMIT" ${interp:-sh} "$t" "$URL" >"$log" 2>&1
    rc=$?
    cat "$log"
    p=$(grep -c '^ok ' "$log")
    f=$(grep -c '^not ok ' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        [ "$rc" -eq 124 ] && why="timed out after ${LIMIT}s" ||
            why="exited with status $rc"
        echo "not ok - $name $why"
        f=1
    fi
    if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
        echo "not ok - $name ran no test"
        f=1
    fi
    passed=$((passed + p))
    failed=$((failed + f))
done
if [ $((passed + failed)) -eq 0 ]; then
    echo "not ok - no integration script found in $DIR"
    failed=1
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
