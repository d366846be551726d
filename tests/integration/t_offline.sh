#!/bin/sh
# t_offline.sh — the offline grader (docs/offline.md): `attnd run PATH`
# writes to stdout byte for byte the body curl gets from the daemon at
# BASE_URL, for dot attention (JSON), an SVG heatmap (--accept), a GET
# route (whose stdin is left unread), POST /grade, an answer the daemon
# streams (chunked), a problem answer (on stderr, exit 2, stdout empty)
# and malformed JSON; usage errors exit 1; there is no body limit unless
# --max-body-bytes or ATTND_MAX_BODY_BYTES sets one, but the daemon's JSON
# tree estimate (a 64 MB body of empty objects: 413, peak RSS under
# 300 MB) and memory budget (--memory-budget, ATTND_MEMORY_BUDGET: the
# daemon's 413s byte for byte) hold; the README's NW example is answered
# as it shows; `attnd grade` is
# POST /grade/batch with the same bytes and an exit status that follows the
# answer (0, 2, or 3 with the count of submissions not graded on stderr).
#   usage: sh t_offline.sh BASE_URL   (ATTND in the environment)
BASE=${1:?usage: t_offline.sh BASE_URL}
. "$(dirname "$0")/lib.sh"
MAX_TIME=60

if [ -z "${ATTND:-}" ] || [ ! -x "$ATTND" ]; then
    not_ok "ATTND names the attnd binary (tests/integration/run.sh exports it)"
    exit 0
fi

# offline PATH [ARGS...] < BODY: attnd run; stdout to $TMP/out, stderr to
# $TMP/err, the exit status to $RC
offline() {
    "$ATTND" run "$@" >"$TMP/out" 2>"$TMP/err"
    RC=$?
}

# same_bytes WHAT FILE_A FILE_B: cmp, with both sizes and a first
# difference to explain a failure
same_bytes() {
    if cmp -s "$2" "$3"; then
        ok "$1 ($(wc -c <"$2") bytes)"
    else
        not_ok "$1" "$(wc -c <"$2") bytes against $(wc -c <"$3")" \
            "$(cmp "$2" "$3" 2>&1 | head -n 1)" \
            "offline: $(head -c 200 "$2")" "http: $(head -c 200 "$3")"
    fi
}

# answered WHAT: exit 0, nothing on stderr, stdout the daemon's body
answered() {
    if [ "$RC" -eq 0 ] && [ ! -s "$TMP/err" ]; then
        ok "$1: exit 0, stderr empty"
    else
        not_ok "$1: exit 0, stderr empty" "exit $RC" "$(head -c 300 "$TMP/err")"
    fi
    same_bytes "$1: stdout is the HTTP body byte for byte" "$TMP/out" "$TMP/body"
}

# refused WHAT: exit 2, nothing on stdout, stderr the daemon's problem
refused() {
    if [ "$RC" -eq 2 ] && [ ! -s "$TMP/out" ]; then
        ok "$1: exit 2, stdout empty"
    else
        not_ok "$1: exit 2, stdout empty" "exit $RC" "$(head -c 300 "$TMP/out")"
    fi
    same_bytes "$1: stderr is the HTTP problem byte for byte" "$TMP/err" "$TMP/body"
}

# 1. dot attention: the textbook's two keys, output 1.6697615493266569
cat >"$TMP/dot.json" <<'EOF'
{"queries": [[1, 2]], "keys": [[1, 0], [0, 1]], "values": [[1], [2]],
 "return_scores": true}
EOF
post_file /attention/dot "$TMP/dot.json"
check_status "dot over HTTP: 200" 200
offline /attention/dot <"$TMP/dot.json"
answered "dot"
check "dot: output 1.6697615493266569, scores 1/sqrt(2) and sqrt(2)" jq -e '
    .output == [[1.6697615493266569]] and
    (.scores[0][0] - 0.7071067811865475 | fabs) < 1e-15 and
    (.scores[0][1] - 1.414213562373095 | fabs) < 1e-15' "$TMP/out"

# 2. the same weights as an SVG heatmap
post_file /attention/dot "$TMP/dot.json" -H 'Accept: image/svg+xml'
check_header_has "dot with Accept: image/svg+xml over HTTP is SVG" \
    Content-Type image/svg+xml
offline /attention/dot --accept image/svg+xml <"$TMP/dot.json"
answered "dot --accept image/svg+xml"
check "  and it is an SVG document with 2 cells" sh -c \
    "grep -q '<svg' '$TMP/out' && [ \$(grep -o 'class=\"cell\"' '$TMP/out' | wc -l) -eq 2 ]"

# 3. a GET route: the query from PATH, stdin not read (cat gets it all)
http GET '/encoding/positional?num_steps=4&d=8'
check_status "positional over HTTP: 200" 200
printf 'not for attnd\n' >"$TMP/stdin"
{
    "$ATTND" run '/encoding/positional?num_steps=4&d=8' >"$TMP/out" 2>"$TMP/err"
    RC=$?
    cat >"$TMP/rest"
} <"$TMP/stdin"
answered "GET /encoding/positional?num_steps=4&d=8"
check "  P is (4, 8) with P[1][0] = sin 1" jq -e '
    (.P | length) == 4 and (.P[0] | length) == 8 and
    .P[1][0] == 0.8414709848078965' "$TMP/out"
check "  and stdin is left unread for a GET route" cmp -s "$TMP/stdin" "$TMP/rest"

# 4. POST /grade: weights 0.33 fail, the output passes
jq -n --slurpfile req "$TMP/dot.json" '{endpoint: "/attention/dot",
    request: $req[0], answer: {output: [[1.66976]], weights: [[0.33, 0.67]]}}' \
    >"$TMP/grade.json"
post_file /grade "$TMP/grade.json"
check_status "/grade over HTTP: 200" 200
offline /grade <"$TMP/grade.json"
answered "/grade"
check "  output passes, weights fail at /answer/weights/0/0" jq -e '
    .pass == false and .fields.output.pass == true and
    .fields.weights.first_mismatch.pointer == "/answer/weights/0/0"' "$TMP/out"

# 5. an answer the daemon streams (chunked): B=2, Nq=Nk=160, 51,200 weights
jq -cn '
  def mat(n; m; s): [range(n) as $i | [range(m) as $j |
      ((($i * m + $j) * s) | sin)]];
  {queries: [mat(160; 8; 0.37), mat(160; 8; 0.29)],
   keys: [mat(160; 8; 0.61), mat(160; 8; 0.17)],
   values: [mat(160; 8; 0.13), mat(160; 8; 0.71)], causal: true}' \
    >"$TMP/large.json"
post_file /attention/dot "$TMP/large.json"
check "large dot over HTTP: 200, streamed (chunked)" sh -c \
    "[ '$STATUS' = 200 ] && grep -qi '^Transfer-Encoding: chunked' '$TMP/headers'"
offline /attention/dot <"$TMP/large.json"
answered "large dot"
check "  weights (2, 160, 160), causal: row 0 is [1, 0, ...]" jq -e '
    (.weights[1] | length) == 160 and (.weights[1][159] | length) == 160 and
    .weights[0][0][0] == 1 and .weights[0][0][1] == 0' "$TMP/out"

# 6. a problem: keys missing -> 422 at /keys, on stderr
echo '{"queries": [[1, 2]], "values": [[1], [2]]}' >"$TMP/nokeys.json"
post_file /attention/dot "$TMP/nokeys.json"
check_status "missing keys over HTTP: 422" 422
offline /attention/dot <"$TMP/nokeys.json"
refused "missing keys"
check "  the problem names /keys" jq -e \
    '.status == 422 and .code == "missing_field" and .pointer == "/keys"' "$TMP/err"

# 7. malformed JSON: 400 invalid_json, as over HTTP
printf '{"queries": [[1, 2]], "keys": [[1, 0' >"$TMP/bad.json"
post_file /attention/dot "$TMP/bad.json"
check_status "malformed JSON over HTTP: 400" 400
offline /attention/dot <"$TMP/bad.json"
refused "malformed JSON"
check "  the problem is invalid_json" jq -e \
    '.status == 400 and .code == "invalid_json"' "$TMP/err"

# a percent-encoded path is decoded as the daemon decodes it
http POST /attention/%64ot -H 'Content-Type: application/json' \
    --data-binary "@$TMP/dot.json"
offline /attention/%64ot <"$TMP/dot.json"
answered "/attention/%64ot"

# 8. an unknown path is a 404 problem, as over HTTP (GET: stdin unread)
http GET /attention/dotx
offline /attention/dotx </dev/null
refused "unknown path /attention/dotx"

# 9. usage errors: exit 1 with a message, nothing on stdout
usage_error() {
    what=$1
    want=$2
    shift 2
    "$ATTND" "$@" </dev/null >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -eq 1 ] && [ ! -s "$TMP/out" ] && grep -q -- "$want" "$TMP/err"; then
        ok "$what: exit 1, '$want' on stderr"
    else
        not_ok "$what: exit 1, '$want' on stderr" "exit $rc" \
            "stderr: $(head -c 300 "$TMP/err")" "stdout: $(head -c 100 "$TMP/out")"
    fi
}
usage_error "attnd run without a path" "which path" run
usage_error "a path without /" "does not begin with /" run attention/dot
usage_error "an unknown option" "unknown option '--bogus'" run /healthz --bogus
usage_error "a server option offline" "--port is a server option" \
    run /healthz --port 9
usage_error "a bad limit" "invalid value 'lots'" run /healthz --max-work lots
usage_error "two paths" "unexpected argument '/version'" run /healthz /version

# 10. no body limit offline unless one is given: 17 MiB of JSON (the
# daemon's default limit is 16 MiB)
/usr/bin/python3 -c '
import sys
sys.stdout.write("{\"queries\": [[1, 2]], \"keys\": [[1, 0], [0, 1]], " +
                 " " * (17 << 20) + "\"values\": [[1], [2]]}")' >"$TMP/big.json"
post_file /attention/dot "$TMP/big.json"
check_status "17 MiB body over HTTP: 413" 413
offline /attention/dot <"$TMP/big.json"
check "17 MiB body offline: exit 0, output 1.6697615493266569" sh -c \
    "[ $RC -eq 0 ] && jq -e '.output == [[1.6697615493266569]]' '$TMP/out' >/dev/null"
offline /attention/dot --max-body-bytes 16M <"$TMP/big.json"
check "  with --max-body-bytes 16M: exit 2, 413 payload_too_large" sh -c \
    "[ $RC -eq 2 ] && jq -e '.status == 413 and .code == \"payload_too_large\"' '$TMP/err' >/dev/null"
ATTND_MAX_BODY_BYTES=64 "$ATTND" run /attention/dot <"$TMP/dot.json" \
    >"$TMP/out" 2>"$TMP/err"
RC=$?
check "  with ATTND_MAX_BODY_BYTES=64: exit 2, the limit is 64" sh -c \
    "[ $RC -eq 2 ] && jq -e '.status == 413 and (.detail | test(\"limit is 64\"))' '$TMP/err' >/dev/null"

# 11. attnd grade: POST /grade/batch with the same bytes; exit 0 for a 2xx
# answer grading every line, 3 when some line is a problem of its own
# (here the second: keys missing), 2 for a 4xx/5xx answer
jq -c ". + {id: \"a\"}" "$TMP/grade.json" >"$TMP/batch.ndjson"
jq -c --slurpfile req "$TMP/nokeys.json" \
    '{id: "b", endpoint: "/attention/dot", request: $req[0],
      answer: {output: [[1.66976]]}}' -n >>"$TMP/batch.ndjson"
jq -s . "$TMP/batch.ndjson" >"$TMP/batch.json"
# grade_like WHAT HTTP_ARGS... -- GRADE_ARGS...: attnd grade against curl
grade_like() {
    what=$1
    shift
    input=$1
    ctype=$2
    query=$3
    shift 3
    http POST "/grade/batch$query" -H "Content-Type: $ctype" \
        --data-binary "@$input"
    "$ATTND" grade "$@" <"$input" >"$TMP/out" 2>"$TMP/err"
    RC=$?
    case $STATUS in
    2??)
        same_bytes "$what: stdout is the HTTP body byte for byte" \
            "$TMP/out" "$TMP/body"
        if [ "$RC" -eq 3 ] && grep -q '^attnd grade: 1 of the submissions could not be graded$' "$TMP/err"; then
            ok "$what: exit 3, '1 of the submissions could not be graded'"
        else
            not_ok "$what: exit 3, '1 of the submissions could not be graded'" \
                "exit $RC" "$(head -c 300 "$TMP/err")"
        fi
        ;;
    *)
        refused "$what (HTTP $STATUS)"
        ;;
    esac
}
grade_like "attnd grade < lines" "$TMP/batch.ndjson" application/x-ndjson ""
grade_like "attnd grade < array" "$TMP/batch.json" application/json ""
grade_like "attnd grade --format gradescope" "$TMP/batch.ndjson" \
    application/x-ndjson "?format=gradescope" --format gradescope

# 12. the daemon's tree estimate and memory budget hold offline as well.
# A 64 MB "tree bomb" (millions of empty objects) took 5 GB of memory
# before its 422; now it is the daemon's 413 from the tree estimate (the
# daemon with its default 16 MiB body limit refuses it by its size), and
# the process stays small.
/usr/bin/python3 -c '
import sys
n = (64 << 20) // 3
sys.stdout.write("{\"queries\": [" + ",".join(["{}"] * n) +
                 "], \"keys\": [[1, 0], [0, 1]], \"values\": [[1], [2]]}")' \
    >"$TMP/bomb.json"
post_file /attention/dot "$TMP/bomb.json"
check_status "64 MB tree bomb over HTTP: 413" 413
# peak_rss ARGS... < BODY: attnd ARGS with stdout to $TMP/out, stderr to
# $TMP/err; RC its exit status, RSS_KB its peak resident set in KiB
peak_rss() {
    set -- $(/usr/bin/python3 -c '
import resource, subprocess, sys
with open(sys.argv[2], "wb") as out, open(sys.argv[3], "wb") as err:
    rc = subprocess.call(sys.argv[4:], stdout=out, stderr=err)
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
        x "$TMP/out" "$TMP/err" "$ATTND" "$@")
    RC=$1
    RSS_KB=$2
}
# the bound: 300 MB (the tree estimate refuses before a tree is built;
# before it, 5 GB), and 700 MB for a binary built with AddressSanitizer,
# whose shadow and quarantine double what a process holds
RSS_MAX_KB=300000
grep -q __asan_init "$ATTND" && RSS_MAX_KB=700000
peak_rss run /attention/dot <"$TMP/bomb.json"
check "64 MB tree bomb offline: exit 2, 413 payload_too_large from the tree estimate (64 MiB)" \
    sh -c "[ $RC -eq 2 ] && [ ! -s '$TMP/out' ] && jq -e '.status == 413 and
        .code == \"payload_too_large\" and
        (.detail | test(\"as a tree of values, over the limit of 64 MiB\"))' \
        '$TMP/err' >/dev/null"
check "  and its peak RSS stays under $((RSS_MAX_KB / 1000)) MB (was 5 GB): ${RSS_KB} KiB" \
    test "$RSS_KB" -gt 0 -a "$RSS_KB" -lt "$RSS_MAX_KB"
# the same as one submission of attnd grade: a problem line, not 5 GB
# (its id unread: the submission is never parsed)
/usr/bin/python3 -c '
import sys
sys.stdout.write("{\"id\": 1, \"endpoint\": \"/attention/dot\", " +
                 "\"answer\": {\"output\": [[1]]}, \"request\": ")
sys.stdout.write(open(sys.argv[1]).read() + "}\n")' "$TMP/bomb.json" \
    >"$TMP/bomb.ndjson"
peak_rss grade <"$TMP/bomb.ndjson"
check "64 MB tree bomb as a submission of attnd grade: exit 3, its line a 413 (RSS ${RSS_KB} KiB < $((RSS_MAX_KB / 1000)) MB)" \
    sh -c "[ $RC -eq 3 ] && [ $RSS_KB -lt $RSS_MAX_KB ] && jq -e '.id == null and
        .problem.status == 413 and
        (.problem.detail | test(\"^line 1 of the body: .* tree of values, over the limit of 64 MiB\"))' \
        '$TMP/out' >/dev/null"
# the bound follows --max-body-bytes as in the daemon: 200 KB of empty
# objects (a tree of about 16 MiB) is within the default 64 MiB, the
# daemon's 422 byte for byte, and over the 1 MiB of --max-body-bytes 256K
/usr/bin/python3 -c '
import sys
sys.stdout.write("{\"queries\": [" + ",".join(["{}"] * 66000) +
                 "], \"keys\": [[1, 0], [0, 1]], \"values\": [[1], [2]]}")' \
    >"$TMP/small_bomb.json"
post_file /attention/dot "$TMP/small_bomb.json"
offline /attention/dot <"$TMP/small_bomb.json"
refused "200 KB of empty objects (HTTP $STATUS)"
check "  it is 422 wrong_type at /queries/0" jq -e \
    '.status == 422 and .code == "wrong_type" and .pointer == "/queries/0"' "$TMP/err"
offline /attention/dot --max-body-bytes 256K <"$TMP/small_bomb.json"
check "  with --max-body-bytes 256K: exit 2, 413 over the tree limit of 1 MiB" \
    sh -c "[ $RC -eq 2 ] && jq -e '.status == 413 and
        (.detail | test(\"tree of values, over the limit of 1 MiB\"))' \
        '$TMP/err' >/dev/null"
rm -f "$TMP/bomb.json" "$TMP/bomb.ndjson"

# 13. --memory-budget (ATTND_MEMORY_BUDGET): a request the default
# budget accepts (dot, 400 x 400 weights, 5.3 MiB of tensors and working
# set) is the daemon's 413 with a budget of 1M, byte for byte; a body
# larger than the budget is refused as the daemon refuses it
jq -cn 'def mat(n; m; s): [range(n) as $i | [range(m) as $j |
      ((($i * m + $j) * s) | sin)]];
  {queries: mat(400; 4; 0.37), keys: mat(400; 4; 0.61),
   values: mat(400; 4; 0.13)}' >"$TMP/mid.json"
post_file /attention/dot "$TMP/mid.json"
check_status "400 x 400 dot over HTTP (default budget): 200" 200
offline /attention/dot <"$TMP/mid.json"
answered "400 x 400 dot with the default budget"
/usr/bin/python3 -c '
import sys
sys.stdout.write("{\"queries\": [[1, 2]], \"keys\": [[1, 0], [0, 1]], " +
                 " " * (2 << 20) + "\"values\": [[1], [2]]}")' >"$TMP/2m.json"
. "$(dirname "$0")/daemon.sh"
trap 'kill_daemon; rm -rf "$TMP"' EXIT
SHARED_BASE=$BASE
if start_daemon "$TMP/budget.log" --port 0 --memory-budget 1M; then
    BASE="http://127.0.0.1:$PORT"
    post_file /attention/dot "$TMP/mid.json"
    check "  a daemon with --memory-budget 1M: 413, more than the whole budget" \
        sh -c "[ '$STATUS' = 413 ] && jq -e '.detail | test(\"would take 5.3 MiB of memory, more than the server.s whole memory budget of 1.0 MiB\")' '$TMP/body' >/dev/null"
    offline /attention/dot --memory-budget 1M <"$TMP/mid.json"
    refused "400 x 400 dot offline with --memory-budget 1M"
    ATTND_MEMORY_BUDGET=1M "$ATTND" run /attention/dot <"$TMP/mid.json" \
        >"$TMP/out" 2>"$TMP/err"
    RC=$?
    refused "400 x 400 dot offline with ATTND_MEMORY_BUDGET=1M"
    post_file /attention/dot "$TMP/2m.json"
    check "  a 2 MiB body to the daemon with --memory-budget 1M: 413" \
        sh -c "[ '$STATUS' = 413 ] && jq -e '.detail | test(\"the body would take 2.0 MiB\")' '$TMP/body' >/dev/null"
    offline /attention/dot --memory-budget=1M <"$TMP/2m.json"
    refused "a 2 MiB body offline with --memory-budget=1M"
    stop_daemon
else
    not_ok "a daemon with --memory-budget 1M starts" "$(head -c 300 "$TMP/budget.log")"
fi
BASE=$SHARED_BASE
offline /attention/dot --memory-budget 0 <"$TMP/mid.json"
check "  --memory-budget 0 (no budget): 400 x 400 dot answered" \
    sh -c "[ $RC -eq 0 ] && jq -e '(.output | length) == 400' '$TMP/out' >/dev/null"
usage_error "a bad --memory-budget" "invalid value 'lots'" \
    run /healthz --memory-budget lots

# 14. the README's worked example, answered exactly as it shows
echo '{"x_train":[1,2,4],"y_train":[0,3,1],"x_query":[2.5],"w":0.5,"y_query":[3]}' \
    >"$TMP/nw.json"
printf '%s' '{"predictions":[1.4774782878985795],"weights":[[0.304504342420284,0.39099131515943186,0.304504342420284]],"w":0.5,"loss":1.1590361819101205,"grad_w":-0.9063461621648087}' \
    >"$TMP/nw_readme"
post_file /regression/nw "$TMP/nw.json"
offline /regression/nw <"$TMP/nw.json"
answered "README's NW example"
same_bytes "  and it is the README's answer byte for byte" "$TMP/out" "$TMP/nw_readme"

# 15. --help names both commands
"$ATTND" --help >"$TMP/help" 2>&1
check "attnd --help mentions attnd run and attnd grade" sh -c \
    "grep -q 'attnd run PATH' '$TMP/help' && grep -q 'attnd grade' '$TMP/help'"
"$ATTND" run --help >"$TMP/help" 2>&1
RC=$?
check "attnd run --help: exit 0, both commands and the exit statuses" sh -c \
    "[ $RC -eq 0 ] && grep -q 'attnd run PATH' '$TMP/help' &&
     grep -q 'attnd grade' '$TMP/help' && grep -q 'Exit status' '$TMP/help'"
echo "1..$T"
