# lib.sh — helpers for the curl-driven integration tests. Sourced by each
# t_*.sh after it sets BASE (the daemon's base URL, e.g. http://127.0.0.1:8080).
# Every check prints one TAP line ("ok N - what" / "not ok N - what", with
# "#" lines explaining a failure). Needs curl and jq only.

T=0
MAX_TIME=${MAX_TIME:-10}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
STATUS=000

ok() {
    T=$((T + 1))
    echo "ok $T - $1"
}

# not_ok WHAT [EXPLANATION...]
not_ok() {
    T=$((T + 1))
    echo "not ok $T - $1"
    shift
    for line in "$@"; do
        echo "#   $line"
    done
}

# check WHAT COMMAND...: ok when COMMAND succeeds (its output is kept only
# to explain a failure).
check() {
    what=$1
    shift
    if "$@" >"$TMP/check_out" 2>&1; then
        ok "$what"
    else
        not_ok "$what" "failed: $*" "$(head -c 300 "$TMP/check_out")"
    fi
}

# http METHOD PATH [CURL ARGS...]: one request. The status goes to $STATUS
# ("000" when the connection failed), the headers to $TMP/headers, the body
# to $TMP/body (empty for HEAD), curl's timing (seconds) to $TIME.
http() {
    method=$1
    path=$2
    shift 2
    body="$TMP/body"
    if [ "$method" = HEAD ]; then
        set -- --head "$@"
        : >"$TMP/body"
        body=/dev/null
    else
        set -- -X "$method" "$@"
    fi
    out=$(curl -sS --max-time "$MAX_TIME" -o "$body" -D "$TMP/headers" \
        -w '%{http_code} %{time_total}' "$@" "$BASE$path" 2>"$TMP/curl_err")
    STATUS=${out% *}
    TIME=${out#* }
    [ -n "$STATUS" ] || STATUS=000
}

# post_json PATH BODY [CURL ARGS...]
post_json() {
    path=$1
    body=$2
    shift 2
    http POST "$path" -H 'Content-Type: application/json' \
        --data-binary "$body" "$@"
}

# post_file PATH FILE [CURL ARGS...]
post_file() {
    path=$1
    file=$2
    shift 2
    http POST "$path" -H 'Content-Type: application/json' \
        --data-binary "@$file" "$@"
}

# header NAME: the value of the last response header NAME (case-insensitive).
header() {
    tr -d '\r' <"$TMP/headers" | grep -i "^$1:" | tail -n 1 |
        sed 's/^[^:]*:[[:space:]]*//'
}

# has_header NAME: the last response has a header NAME.
has_header() {
    tr -d '\r' <"$TMP/headers" | grep -qi "^$1:"
}

body_excerpt() {
    head -c 300 "$TMP/body" | tr '\n' ' '
}

# check_status WHAT EXPECTED
check_status() {
    if [ "$STATUS" = "$2" ]; then
        ok "$1"
    else
        not_ok "$1" "status $STATUS, expected $2" "body: $(body_excerpt)" \
            "$(cat "$TMP/curl_err")"
    fi
}

# check_header WHAT NAME EXPECTED
check_header() {
    got=$(header "$2")
    if [ "$got" = "$3" ]; then
        ok "$1"
    else
        not_ok "$1" "$2: '$got', expected '$3'"
    fi
}

# check_header_has WHAT NAME WORD: header NAME contains WORD.
check_header_has() {
    got=$(header "$2")
    case "$got" in
    *"$3"*) ok "$1" ;;
    *) not_ok "$1" "$2: '$got', expected it to contain '$3'" ;;
    esac
}

# check_json WHAT FILTER [JQ ARGS...]: ok when the jq FILTER yields true on
# the last body (jq -e: false, null or an error fail).
check_json() {
    what=$1
    filter=$2
    shift 2
    if jq -e "$@" "$filter" "$TMP/body" >/dev/null 2>"$TMP/jq_err"; then
        ok "$what"
    else
        not_ok "$what" "status $STATUS; jq: $filter" "body: $(body_excerpt)" \
            "$(cat "$TMP/jq_err")"
    fi
}

# check_problem WHAT STATUS CODE [POINTER]: an RFC 9457 problem with that
# status, content type, code and (when given) pointer, after which /healthz
# still answers.
check_problem() {
    what=$1
    want_status=$2
    want_code=$3
    ctype=$(header Content-Type)
    why=""
    [ "$STATUS" = "$want_status" ] || why="status $STATUS, expected $want_status"
    case "$ctype" in
    application/problem+json*) ;;
    *) why="$why; content type '$ctype'" ;;
    esac
    if ! jq -e --arg code "$want_code" --argjson status "$want_status" \
        '.code == $code and .status == $status and (.title | type) == "string"' \
        "$TMP/body" >/dev/null 2>&1; then
        why="$why; body is not a problem with code $want_code"
    fi
    if [ $# -ge 4 ] && ! jq -e --arg p "$4" '.pointer == $p' "$TMP/body" \
        >/dev/null 2>&1; then
        why="$why; pointer is not '$4'"
    fi
    healthz_ok || why="$why; /healthz does not answer afterwards"
    if [ -z "$why" ]; then
        ok "$what"
    else
        not_ok "$what" "$why" "body: $(body_excerpt)"
    fi
}

# check_fast WHAT SECONDS: the last request took less than SECONDS.
check_fast() {
    if awk -v t="$TIME" -v max="$2" 'BEGIN { exit !(t + 0 < max + 0) }'; then
        ok "$1"
    else
        not_ok "$1" "took ${TIME}s, limit ${2}s"
    fi
}

# healthz_ok: /healthz answers 200 {"status":"ok"}; the last request's
# status, headers and body are left as they were.
healthz_ok() {
    code=$(curl -sS --max-time "$MAX_TIME" -o "$TMP/healthz" \
        -w '%{http_code}' "$BASE/healthz" 2>/dev/null)
    [ "$code" = 200 ] && jq -e '.status == "ok"' "$TMP/healthz" >/dev/null 2>&1
}

# check_alive WHAT: /healthz still answers after WHAT.
check_alive() {
    if healthz_ok; then
        ok "healthz answers after $1"
    else
        not_ok "healthz answers after $1"
    fi
}
