#!/bin/sh
# run.sh — the unit suites of BUILD under valgrind memcheck, counted by
# tests/run.sh itself: each BUILD/tests/test_* gets a wrapper script in
# BUILD/memcheck/tests/ that runs it under valgrind, and tests/run.sh runs
# the wrappers ("unit": no daemon). A memcheck error or a definite or
# indirect leak makes valgrind exit 99, which tests/run.sh counts as a
# failed suite. OpenBLAS runs on one thread (with it, OpenBLAS 0.3.21 and
# jansson need no suppression file); the long randomized suites run fewer
# iterations (their full counts run natively in `make test`). Add valgrind
# options through VALGRIND_OPTS (e.g. --track-origins=yes).
#   usage: sh tests/valgrind/run.sh BUILD_DIR
BUILD=${1:?usage: run.sh BUILD_DIR}
WRAP="$BUILD/memcheck"
rm -rf "$WRAP"
mkdir -p "$WRAP/tests"
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    cat >"$WRAP/tests/$(basename "$t")" <<WRAPPER
#!/bin/sh
start=\$(date +%s)
valgrind --tool=memcheck --quiet --error-exitcode=99 \\
    --leak-check=full --show-leak-kinds=definite,indirect \\
    --errors-for-leak-kinds=definite,indirect \\
    "$(cd "$(dirname "$t")" && pwd)/$(basename "$t")"
rc=\$?
echo "# memcheck: \$((\$(date +%s) - start)) s, exit \$rc"
exit \$rc
WRAPPER
    chmod +x "$WRAP/tests/$(basename "$t")"
done
export OPENBLAS_NUM_THREADS=1
export NUMFMT_ITERATIONS=${NUMFMT_ITERATIONS:-20000}
export NUMFMT_THREADS=1
export NUMPARSE_ITERATIONS=${NUMPARSE_ITERATIONS:-20000}
export FASTPATH_ITERATIONS=${FASTPATH_ITERATIONS:-200}
exec sh tests/run.sh "$WRAP" unit
