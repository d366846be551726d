#!/bin/sh
# run.sh — run every libFuzzer target (BUILD/fuzz/fuzz_*) for SECONDS each
# and report in TAP: executions, executions per second, coverage
# (libFuzzer's "cov", edges, and "ft", features), corpus size and peak RSS.
# The seed corpora are written first (BUILD/fuzz/corpus, tests/fuzz/corpus.c);
# a target with seeds kept as files (tests/fuzz/seeds/<target>, e.g. the
# request heads of fuzz_framing) is given those as well;
# what a target learns is kept in BUILD/fuzz/learned/<target> for the next
# run. A crash, a sanitizer report, a leak, a broken invariant or a timeout
# (an input slower than 10 s) fails: the input is saved under
# BUILD/fuzz/crashes/ and must become a regression input in
# tests/fuzz/regressions/<target>/ (which test_fuzz_replay runs in
# `make test`) with the fix.
# Ends with "fuzz: N passed, N failed".
#   usage: sh tests/fuzz/run.sh BUILD_DIR SECONDS
BUILD=${1:?usage: run.sh BUILD_DIR SECONDS}
SECONDS_EACH=${2:?usage: run.sh BUILD_DIR SECONDS}
DIR=$(cd "$(dirname "$0")" && pwd)
FUZZ="$BUILD/fuzz"
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export OPENBLAS_NUM_THREADS=1
N=0
passed=0
failed=0

"$FUZZ/corpus" "$FUZZ/seeds" || {
    echo "not ok - seed corpora could not be written"
    echo "fuzz: 0 passed, 1 failed"
    exit 1
}
mkdir -p "$FUZZ/crashes"

# final_stat NAME LOG: libFuzzer's final "stat::NAME: value"
final_stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -n 1; }

for bin in "$FUZZ"/fuzz_*; do
    [ -x "$bin" ] || continue
    target=${bin##*/}
    case $target in
    fuzz_request) opts="-max_len=16384 -dict=$DIR/request.dict" ;;
    fuzz_tensor) opts="-max_len=8192" ;;
    fuzz_numfmt) opts="-max_len=9" ;;
    fuzz_framing) opts="-max_len=4096 -dict=$DIR/framing.dict" ;;
    *) opts="-max_len=16384" ;;
    esac
    mkdir -p "$FUZZ/seeds/$target"
    corpus="$FUZZ/learned/$target"
    log="$FUZZ/$target.log"
    mkdir -p "$corpus"
    kept=
    [ -d "$DIR/seeds/$target" ] && kept="$DIR/seeds/$target"
    rm -f "$FUZZ/crashes/$target-"*
    # shellcheck disable=SC2086 # $opts is a list of flags
    "$FUZZ/$target" -max_total_time="$SECONDS_EACH" -timeout=10 \
        -rss_limit_mb=2560 -print_final_stats=1 $opts \
        -artifact_prefix="$FUZZ/crashes/$target-" \
        "$corpus" "$FUZZ/seeds/$target" ${kept:+"$kept"} >"$log" 2>&1
    rc=$?
    runs=$(final_stat number_of_executed_units "$log")
    speed=$(final_stat average_exec_per_sec "$log")
    rss=$(final_stat peak_rss_mb "$log")
    done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
    cov=$(echo "$done_line" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
    ft=$(echo "$done_line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
    corp=$(echo "$done_line" | sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p')
    N=$((N + 1))
    what="$target: ${SECONDS_EACH} s, ${runs:-?} runs (${speed:-?}/s), cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}, peak RSS ${rss:-?} MB"
    crash=$(ls "$FUZZ/crashes/$target-"* 2>/dev/null | head -n 1)
    if [ "$rc" -eq 0 ] && [ -z "$crash" ] && [ -n "$done_line" ]; then
        echo "ok $N - $what"
        passed=$((passed + 1))
    else
        echo "not ok $N - $target: exit $rc${crash:+, input saved as $crash}"
        grep -E 'fuzz check failed|ERROR: |runtime error|SUMMARY|Test unit written' \
            "$log" | head -n 8 | sed 's/^/#   /'
        echo "#   full log: $log"
        echo "#   replay: $FUZZ/$target ${crash:-INPUT}; then copy the input to"
        echo "#   tests/fuzz/regressions/$target/<what-it-caught> with the fix"
        failed=$((failed + 1))
    fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
