#!/bin/sh
# t_grade.sh — POST /grade over HTTP: the grading pipeline of
# docs/grading.md run as written on a folder of answers, and the
# grades of a GET endpoint and of a wrong shape (every other grading case
# is a data case, replayed by t_cases.sh).
#   usage: sh t_grade.sh BASE_URL
BASE=${1:?usage: t_grade.sh BASE_URL}
. "$(dirname "$0")/lib.sh"
README="$(dirname "$0")/../../docs/grading.md"

# 1. docs/grading.md's pipeline: the shell block after its "tested" marker
awk '/<!-- tested: tests\/integration\/t_grade.sh/ { on = 1; next }
     on && /^```sh$/ { body = 1; next }
     body && /^```$/ { exit }
     body { print }' "$README" >"$TMP/pipeline.sh"
check "the README has the grading pipeline" grep -q 'curl' "$TMP/pipeline.sh"

# d2l's toy (docs/contract.md): outputs [[2, 3, 4, 5]] and [[10, 11, 12, 13]]
mkdir -p "$TMP/course/answers"
jq -n '{queries: [[[0.3, -1.2]], [[2.0, 0.5]]],
        keys: [range(2) | [range(10) | [1, 1]]],
        values: [range(2) | [range(10) as $i | [range(4) | 4 * $i + .]]],
        valid_lens: [2, 6]}' >"$TMP/course/request.json"
echo '{"output": [[[2, 3, 4, 5]], [[10, 11, 12, 13]]]}' \
    >"$TMP/course/answers/ada.json"
# bo: right outputs; weights right but for 0.5 on a masked key of example 0
jq -n '{output: [[[2, 3, 4, 5]], [[10, 11, 12, 13]]],
        weights: [[[0.5, 0.5, 0.5] + [range(7) | 0]],
                  [[range(6) | 1 / 6] + [range(4) | 0]]]}' \
    >"$TMP/course/answers/bo.json"
echo '{"outptu": [[[2, 3, 4, 5]], [[10, 11, 12, 13]]]}' \
    >"$TMP/course/answers/cy.json"
(cd "$TMP/course" && ATTND=$BASE sh "$TMP/pipeline.sh") \
    >"$TMP/table" 2>"$TMP/pipeline_err"
tab=$(printf '\t')
expect_line() {
    if grep -q "^$2\$" "$TMP/table"; then
        ok "$1"
    else
        not_ok "$1" "no line '$2' in:" "$(cat "$TMP/table" "$TMP/pipeline_err")"
    fi
}
check "the pipeline prints a header and one line per student" \
    [ "$(wc -l <"$TMP/table")" -eq 4 ]
# ada's largest error is the reference's rounding (below 1e-14)
if awk -F '\t' '$1 == "ada" && $2 == "PASS" && $3 == "1/1" &&
    $4 + 0 < 1e-14 { found = 1 } END { exit !found }' "$TMP/table"; then
    ok "pipeline: ada passes with errors at rounding level"
else
    not_ok "pipeline: ada passes with errors at rounding level" "$(cat "$TMP/table")"
fi
expect_line "pipeline: bo fails one of two fields by 0.5" \
    "bo${tab}FAIL${tab}1/2${tab}0.5"
expect_line "pipeline: cy's misspelt field is named" \
    "cy${tab}ERROR${tab}unknown_field at /answer/outptu${tab}-"
cp "$TMP/table" "$TMP/last_table"

# 1b. a member given twice is refused: a second "request" pasted after the
# answer must not replace the one the answer is graded against
post_json /grade '{"endpoint": "/softmax/masked",
    "request": {"scores": [[1, 2]]}, "answer": {"weights": [[0.5, 0.5]]},
    "request": {"scores": [[1, 1]]}}'
check_problem "a grading request that gives request twice is refused" 400 \
    invalid_json
check_json "the refusal names the repeated member" \
    '.detail | test("twice: .\"request\"")'
post_json /grade '{"endpoint": "/softmax/masked",
    "request": {"scores": [[1, 2]], "scores": [[1, 1]]},
    "answer": {"weights": [[0.5, 0.5]]}}'
check_problem "a member twice inside the embedded request is refused too" \
    400 invalid_json

# 2. a GET endpoint: request holds the query parameters; P[1][0] = sin 1
post_json /grade '{"endpoint": "/encoding/positional",
    "request": {"num_steps": 2, "d": 2},
    "answer": {"P": [[0, 1], [0.8414709848078965, 0.5]]}}'
check_status "grade a GET endpoint" 200
check_json "the wrong entry is P[1][1] (cos 1 = 0.5403...)" \
    '.pass == false and .fields.P.mismatches == 1 and
     .fields.P.first_mismatch.pointer == "/answer/P/1/1" and
     (.fields.P.first_mismatch.expected - 0.5403023058681398 | fabs) < 1e-15'

# 3. a wrong shape is a grade; an error in the request points under it
post_json /grade '{"endpoint": "/softmax/masked",
    "request": {"scores": [[1, 2], [3, 4]]},
    "answer": {"weights": [0.27, 0.73]}}'
check_json "a wrong shape is a grade" \
    '.pass == false and .score == 0 and
     .fields.weights == {"pass": false, "score": 0, "error": "shape",
     "expected": [2, 2], "got": [2]}'
post_json /grade '{"endpoint": "/softmax/masked",
    "request": {"scores": [[1, 2], [3, 4]], "valid_lens": [3, 1]},
    "answer": {"weights": [[1, 0], [1, 0]]}}'
check_problem "the request's own error, under /request" 422 invalid_value \
    /request/valid_lens/0
exit 0
