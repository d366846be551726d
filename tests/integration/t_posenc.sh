#!/bin/sh
# t_posenc.sh — GET /encoding/positional over HTTP (docs/contract.md section 10):
# every entry against jq's sin and cos, the sin² + cos² = 1 pairs, odd d,
# HEAD and OPTIONS, query parameters checked like body fields (pointers
# /<name>), the --max-elements bound, and a large table.
#   usage: sh t_posenc.sh BASE_URL
BASE=${1:?usage: t_posenc.sh BASE_URL}
. "$(dirname "$0")/lib.sh"

# jq: P[i, c] of the contract, angle i / 10000^((c - c % 2) / d)
P='def p($i; $c; $d): ($i / pow(10000; ($c - $c % 2) / $d)) as $a |
    if $c % 2 == 0 then ($a | sin) else ($a | cos) end;'

http GET '/encoding/positional?num_steps=50&d=16'
check_status "num_steps=50&d=16 is 200" 200
check_json "P is (50, 16)" '(.P | length) == 50 and all(.P[]; length == 16)'
check_json "every entry is sin or cos of i / 10000^(2j/d) (1e-12)" "$P"'
    [range(50) as $i | range(16) as $c |
     ((.P[$i][$c] - p($i; $c; 16)) | fabs) <= 1e-12] | all'
check_json "each column pair has sin² + cos² = 1" '
    [.P[] as $r | range(0; 16; 2) as $c |
     (($r[$c] * $r[$c] + $r[$c + 1] * $r[$c + 1] - 1) | fabs) < 1e-15] | all'
check_json "position 0 is [0, 1, 0, 1, ...]" \
    '.P[0] == [range(8) | 0, 1]'
ctype=$(header Content-Type)
case "$ctype" in
application/json*) ok "Content-Type: $ctype" ;;
*) not_ok "Content-Type is application/json" "got '$ctype'" ;;
esac
if has_header Server-Timing; then
    ok "Server-Timing: $(header Server-Timing)"
else
    not_ok "Server-Timing on a computed result"
fi

http GET '/encoding/positional?num_steps=4&d=7&tensor_format=flat'
check_json "odd d ends with a sine column; flat form" "$P"'
    .P.shape == [4, 7] and (.P.data | length) == 28 and
    ([range(4) as $i | range(7) as $c |
      ((.P.data[$i * 7 + $c] - p($i; $c; 7)) | fabs) <= 1e-12] | all)'
http GET '/encoding/positional?d=2.0&num_steps=3e0&precision=3'
check_json "integral reals as integers; precision 3" \
    '.P == [[0, 1], [0.841, 0.54], [0.909, -0.416]]'
http GET '/encoding/positional?num_steps=2&d=2&d=1'
check_json "a repeated parameter: the last wins" '.P == [[0], [0.8414709848078965]]'

http HEAD '/encoding/positional?num_steps=3&d=4'
check_status "HEAD is 200" 200
check_header_has "... with the GET answer's Content-Type" Content-Type \
    application/json
http OPTIONS /encoding/positional
check_status "OPTIONS is 204" 204
check_header_has "... allowing GET" Allow GET
http POST '/encoding/positional?num_steps=3&d=4' \
    -H 'Content-Type: application/json' --data-binary '{}'
check_problem "POST is 405" 405 method_not_allowed
check_header "... with Allow" Allow "GET, HEAD, OPTIONS"

# --- parameters checked like body fields ------------------------------------
http GET '/encoding/positional'
check_problem "no parameters: missing_field /num_steps" 422 missing_field \
    /num_steps
http GET '/encoding/positional?num_steps=3'
check_problem "no d: missing_field /d" 422 missing_field /d
http GET '/encoding/positional?num_steps=3&d='
check_problem "an empty d: wrong_type /d" 422 wrong_type /d
http GET '/encoding/positional?num_steps=1.5&d=4'
check_problem "a fraction: wrong_type /num_steps" 422 wrong_type /num_steps
http GET '/encoding/positional?num_steps=0&d=4'
check_problem "num_steps 0: invalid_value /num_steps" 422 invalid_value \
    /num_steps
http GET '/encoding/positional?num_steps=3&d=-2'
check_problem "d -2: invalid_value /d" 422 invalid_value /d
http GET '/encoding/positional?num_steps=3&d=4&dim=4'
check_problem "an unknown parameter: unknown_field /dim" 422 unknown_field /dim
LONG=$(head -c 1500 /dev/zero | tr '\0' x)
http GET "/encoding/positional?$LONG=1"
check_problem "an unknown parameter too long for a pointer: unknown_field at the root" \
    422 unknown_field ""
check "  its detail gives its length, not bytes past the pointer's end" \
    jq -e '.detail | startswith("unknown query parameter of 1500 bytes")' "$TMP/body"
http GET '/encoding/positional?num_steps=3&d=4&tensor_format=csv'
check_problem "tensor_format csv: invalid_value" 422 invalid_value \
    /tensor_format
http GET '/encoding/positional?num_steps=100000&d=1000'
check_problem "P of 1e8 entries: 413 (--max-elements)" 413 payload_too_large
check_json "... naming the limit" '.detail | contains("--max-elements")'
check_fast "... at once" 1
check_alive "the bad parameters"

# --- a large table: 4096 × 512 (2 Mi entries) -----------------------------------
http GET '/encoding/positional?num_steps=4096&d=512&tensor_format=flat&precision=8'
check_status "4096 × 512 is 200" 200
check_json "... spot entries match jq (1e-7 at 8 digits)" "$P"'
    .P.shape == [4096, 512] and
    ([range(0; 4096; 409) as $i | range(0; 512; 51) as $c |
      ((.P.data[$i * 512 + $c] - p($i; $c; 512)) | fabs) <= 1e-7] | all)'
check_alive "the large table"
exit 0
