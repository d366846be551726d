#!/bin/sh
# t_cases.sh — replay every data case tests/cases/<endpoint>/<case>/ over
# HTTP and compare the answer as tests/cases/README.md specifies: status,
# Allow, content type, and the body (structurally with a relative 1e-12
# tolerance for successes; code, pointer, expected, got for problems).
#   usage: sh t_cases.sh BASE_URL [CASES_DIR]
BASE=${1:?usage: t_cases.sh BASE_URL [CASES_DIR]}
CASES=${2:-$(dirname "$0")/../cases}
. "$(dirname "$0")/lib.sh"

# jq: the comparison of one answer with its expected.json, as README.md
# says. check($h; $x; $got): $h {name, status, ctype, allow, head}, $x the
# expected file, $got the body (null for HEAD or no body). Yields "" when
# they agree, else the reasons.
COMPARE='
def same($g; $e; $at; $atol; $rtol):
  if ($e | type) == "number" then
    if ($g | type) == "number" and
       (($g - $e) | fabs) <= $atol + $rtol * ($e | fabs)
    then empty else "\($at): \($g) vs \($e)" end
  elif ($e | type) == "object" then
    if ($g | type) != "object" then "\($at): not an object"
    elif ($g | keys) != ($e | keys) then
      "\($at): keys \($g | keys) vs \($e | keys)"
    else ($e | keys[]) as $k |
      same($g[$k]; $e[$k]; "\($at)/\($k)"; $atol; $rtol) end
  elif ($e | type) == "array" then
    if ($g | type) != "array" then "\($at): not an array"
    elif ($g | length) != ($e | length) then
      "\($at): length \($g | length) vs \($e | length)"
    else range($e | length) as $i |
      same($g[$i]; $e[$i]; "\($at)/\($i)"; $atol; $rtol) end
  elif $g == $e then empty
  else "\($at): \($g) vs \($e)" end;
def check($h; $x; $got):
  [ (if $h.status != $x.status then
       "status \($h.status), expected \($x.status)" else empty end),
    (if $x.allow != null and $h.allow != $x.allow then
       "Allow \"\($h.allow)\", expected \"\($x.allow)\"" else empty end),
    (if $x.status < 400 then
       (if ($h.ctype | startswith("application/json")) | not then
          "content type \"\($h.ctype)\"" else empty end),
       (if $h.head then empty
        else (first(same($got; $x.body; ""; $x.atol // 1e-15;
                         $x.rtol // 1e-12)) // empty) end)
     elif ($x.body | has("error")) then
       (if ($h.ctype | startswith("application/json")) | not then
          "content type \"\($h.ctype)\"" else empty end),
       (if $h.head then empty
        elif ($got | type) != "object" or ($got | keys) != ["error"] or
             (($got.error | type) != "string") or
             (($got.error | startswith($x.body.error)) | not)
        then "\($got | tojson), expected {\"error\": \"\($x.body.error)...\"}"
        else empty end)
     else
       (if ($h.ctype | startswith("application/problem+json")) | not then
          "content type \"\($h.ctype)\"" else empty end),
       (if $h.head then empty
        elif ($got | type) != "object" then "the body is not a problem"
        else
          (["code", "pointer", "expected", "got"][] as $m |
           if ($x.body | has($m)) then
             (if $got[$m] != $x.body[$m] then
                "\($m) \($got[$m] | tojson), expected \($x.body[$m] | tojson)"
              else empty end)
           elif ($got | has($m)) then "unexpected member \($m)"
           else empty end),
          (if $got.status != $x.status or $got.type != "about:blank" then
             "problem status/type" else empty end)
        end)
     end)
  ] | join("; ");'

# 1. every case's request from route and meta.json, with one jq for all,
#    fields separated by US (0x1f; a tab would let empty fields collapse):
#    dir, method, path, query, accept, content type
#    (content type "<none>": send none; "": application/json with a body)
for route_file in "$CASES"/*/route; do
    [ -f "$route_file" ] || continue
    endpoint_dir=$(dirname "$route_file")
    read -r route_method route_path <"$route_file"
    for dir in "$endpoint_dir"/*/; do
        dir=${dir%/}
        [ -f "$dir/expected.json" ] || continue
        printf '{"dir": "%s", "method": "%s", "path": "%s"}\n' \
            "$dir" "$route_method" "$route_path"
        if [ -f "$dir/meta.json" ]; then cat "$dir/meta.json"; else echo '{}'; fi
    done
done >"$TMP/plan.json"
jq -r -n '[inputs] as $a | range(0; $a | length; 2) as $i |
    $a[$i] as $c | $a[$i + 1] as $m |
    [$c.dir, ($m.method // $c.method), ($m.path // $c.path),
     ($m.query // ""), ($m.accept // ""),
     (if $m | has("content_type") then ($m.content_type // "<none>")
      else "" end)] | join("\u001f")' "$TMP/plan.json" >"$TMP/plan.txt"
n_cases=$(wc -l <"$TMP/plan.txt")
check "read the data cases ($n_cases)" [ "$n_cases" -gt 0 ]

# 2. send each case; one record per case in $TMP/stream: a header object,
#    expected.json, then the body (null for HEAD or an empty body)
us=$(printf '\037')
: >"$TMP/stream"
while IFS="$us" read -r dir method path query accept ctype; do
    name=${dir#"$CASES"/}
    set --
    [ -n "$accept" ] && set -- "$@" -H "Accept: $accept"
    if [ -f "$dir/request.json" ]; then
        set -- "$@" --data-binary "@$dir/request.json"
        [ -z "$ctype" ] && ctype=application/json
    fi
    case $ctype in
    "") ;;
    "<none>") set -- "$@" -H 'Content-Type:' ;;
    *) set -- "$@" -H "Content-Type: $ctype" ;;
    esac
    head=false
    out="$TMP/body"
    if [ "$method" = HEAD ]; then
        set -- "$@" --head
        head=true
        out=/dev/null
    else
        set -- "$@" -X "$method"
    fi
    url="$BASE$path"
    [ -n "$query" ] && url="$url?$query"
    : >"$TMP/body"
    # status, content type and Allow from curl itself (no header parsing)
    answer=$(curl -sS --globoff --path-as-is --max-time "$MAX_TIME" \
        -o "$out" -w "%{http_code}$us%{content_type}$us%header{allow}" \
        "$@" "$url" 2>>"$TMP/curl_errs")
    IFS="$us" read -r status ctype allow <<EOF
$answer
EOF
    printf '{"name": "%s", "status": %d, "ctype": "%s", "allow": "%s", "head": %s}\n' \
        "$name" "${status:-0}" "$ctype" "$allow" "$head" >>"$TMP/stream"
    cat "$dir/expected.json" >>"$TMP/stream"
    echo >>"$TMP/stream"
    if $head || [ ! -s "$TMP/body" ]; then
        echo null >>"$TMP/stream"
    else
        cat "$TMP/body" >>"$TMP/stream"
        echo >>"$TMP/stream"
    fi
done <"$TMP/plan.txt"

# 3. compare everything with one jq; a body that is not JSON makes the
#    whole stream unreadable, which is itself a failure
if jq -r -n "$COMPARE"'
    [inputs] as $a | range(0; $a | length; 3) as $i |
    $a[$i] as $h | check($h; $a[$i + 1]; $a[$i + 2]) as $why |
    if $why == "" then "ok\t\($h.name)"
    else "not ok\t\($h.name)\t\($why)" end' \
    "$TMP/stream" >"$TMP/verdicts" 2>"$TMP/jq_err"; then
    tab=$(printf '\t')
    while IFS="$tab" read -r verdict name why; do
        if [ "$verdict" = ok ]; then
            ok "$name"
        else
            not_ok "$name" "$why"
        fi
    done <"$TMP/verdicts"
else
    not_ok "every answer is JSON" "$(head -c 300 "$TMP/jq_err")"
fi
check_alive "every data case"
exit 0
