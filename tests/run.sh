#!/bin/sh
# Runs every test suite and ends with one line "N passed, N failed",
# after "# N skipped" (a TAP "ok ... # SKIP" counts as neither).
# Each suite prints TAP ("ok N - name" / "not ok N - name"); a suite that
# exits non-zero without reporting a failure counts as one failure.
#   usage: sh tests/run.sh BUILD_DIR [unit]   ("unit": unit tests only)
BUILD=${1:-build}
export CMOCKA_MESSAGE_OUTPUT=TAP
passed=0
failed=0
skipped=0
log=$(mktemp)
failures=$(mktemp)
trap 'rm -f "$log" "$failures"' EXIT

run_suite() {
    name=$1; shift
    echo "# suite: $name"
    started=$(date +%s)
    "$@" >"$log" 2>&1
    rc=$?
    cat "$log"
    echo "# suite: $name took $(($(date +%s) - started)) s"
    # a TAP "ok ... # SKIP why" ran nothing: counted apart from passes
    k=$(grep -ci '^ok .*# skip' "$log")
    p=$(($(grep -c '^ok ' "$log") - k))
    f=$(grep -c '^not ok ' "$log")
    grep '^not ok ' "$log" | sed "s/^/# $name: /" >>"$failures"
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "not ok - $name exited with status $rc" | tee -a "$failures"
        f=1
    fi
    if [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$k" -eq 0 ]; then
        echo "not ok - $name ran no test" | tee -a "$failures"
        f=1
    fi
    passed=$((passed + p))
    failed=$((failed + f))
    skipped=$((skipped + k))
}

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    run_suite "$(basename "$t")" "$t"
done
if [ "${2:-all}" != unit ]; then
    run_suite layers python3 tests/layers/check.py .
    run_suite cases-generated /usr/bin/python3 tests/cases/check_generated.py
fi
if [ "${2:-all}" != unit ]; then
    run_suite http-framing python3 tests/http/framing.py "$BUILD/attnd"
    run_suite http-connections python3 tests/http/connections.py "$BUILD/attnd"
    run_suite http-sharing python3 tests/http/sharing.py "$BUILD/attnd"
    run_suite http-probe python3 tests/http/probe.py "$BUILD/attnd"
    run_suite http-admission python3 tests/http/admission.py "$BUILD/attnd"
    run_suite http-refusals python3 tests/http/refusals.py "$BUILD/attnd"
    run_suite http-lanes python3 tests/http/lanes.py "$BUILD/attnd"
    run_suite docs-examples python3 tests/docs/examples.py "$BUILD/attnd"
    run_suite setup sh tests/setup/t_commands.sh "$BUILD"
    run_suite torch sh tests/torch/run.sh "$BUILD/attnd"
fi
if [ "${2:-all}" != unit ] && [ -f tests/integration/run.sh ]; then
    run_suite integration sh tests/integration/run.sh "$BUILD/attnd"
fi

# the last line is the summary CI reads; skips, counted in neither, on
# the line before it, and before them every failure again, by suite, so
# that the end of a long log names what failed
cat "$failures"
echo "# $skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
