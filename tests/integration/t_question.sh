#!/bin/sh
# t_question.sh — a question folder, question.json and request.json
# (docs/offline.md "A question folder"): docs/offline.md's PrairieLearn
# tests/run.sh and Gradescope run_autograder, run as written with attnd on
# the PATH in folders laid out as /grade and /autograder, grade a question
# whose comparison and points are its own (an answer right only to the
# question's tolerance gets full points, a wrong field 0, a missing one
# fails as missing, a file that is not JSON still gives a document, every
# document valid by tests/grading/schemas); `attnd grade --question` gives
# the bytes that /grade/batch gives for docs/batch.md's submissions built
# with jq from the same folder; question.json and request.json that are
# not a question exit 1 naming the file; a problem's run_autograder
# grades the student's own variant and notes a copy for the instructor
# alone; a line that gives a member the
# question gives too is that line's problem; the memory budget holds.
#   usage: sh t_question.sh BASE_URL   (ATTND in the environment)
BASE=${1:?usage: t_question.sh BASE_URL}
. "$(dirname "$0")/lib.sh"
MAX_TIME=60
HERE=$(cd "$(dirname "$0")" && pwd)
DOCS="$HERE/../../docs"
SCHEMAS="$HERE/../grading/schemas"

if [ -z "${ATTND:-}" ] || [ ! -x "$ATTND" ]; then
    not_ok "ATTND names the attnd binary (tests/integration/run.sh exports it)"
    exit 0
fi
# the scripts call attnd by name, as in the grader images
mkdir -p "$TMP/bin"
ln -s "$ATTND" "$TMP/bin/attnd"
PATH="$TMP/bin:$PATH"
export PATH

# check_doc WHAT FILE FILTER: FILTER (jq -e) holds on the document FILE
check_doc() {
    if jq -e "$3" "$2" >/dev/null 2>"$TMP/jq_err"; then
        ok "$1"
    else
        not_ok "$1" "jq: $3" "$(head -c 600 "$2")" "$(head -c 200 "$TMP/jq_err")"
    fi
}

# valid WHAT FORMAT FILE: FILE is valid by FORMAT's schema
valid() {
    if /usr/bin/python3 - "$SCHEMAS/$2_results.schema.json" "$3" \
        >"$TMP/schema_err" 2>&1 <<'EOF'; then
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
for e in errors[:3]:
    print(list(e.absolute_path), e.message)
sys.exit(1 if errors else 0)
EOF
        ok "$1: valid by $2_results.schema.json"
    else
        not_ok "$1: valid by $2_results.schema.json" \
            "$(head -c 400 "$TMP/schema_err")" "$(head -c 300 "$3")"
    fi
}

# 1. the two runner scripts, as docs/offline.md shows them
extract() {
    awk -v tag="($1)" '
        index($0, "<!-- tested: tests/integration/t_question.sh") &&
            index($0, tag) { on = 1; next }
        on && /^```sh$/ { body = 1; next }
        body && /^```$/ { exit }
        body { print }' "$DOCS/offline.md"
}
extract PrairieLearn >"$TMP/run.sh"
extract Gradescope >"$TMP/run_autograder"
check "docs/offline.md has PrairieLearn's tests/run.sh, calling attnd grade --question" \
    grep -q 'attnd grade --question tests --format prairielearn' "$TMP/run.sh"
check "docs/offline.md has Gradescope's run_autograder, calling attnd grade --question" \
    grep -q 'attnd grade --question "$q" --format gradescope' "$TMP/run_autograder"

# 2. the questions. dot: output to 3 significant digits (3 points),
# weights within 1 % (1 point), partial credit. The reference output is
# 1.6697615493266569, the weights 0.3302384506733431, 0.6697615493266569.
# softmax: masked weights to 2 decimal digits, 2 points.
question_dot() {
    mkdir -p "$1"
    cat >"$1/question.json" <<'EOF'
{
  "endpoint": "/attention/dot",
  "fields": ["output", "weights"],
  "compare": {
    "output": {"mode": "sigfig", "digits": 3},
    "weights": {"mode": "relabs", "rtol": 1e-2, "atol": 0}
  },
  "points": {"output": 3, "weights": 1},
  "credit": "partial",
  "visibility": "visible"
}
EOF
    cat >"$1/request.json" <<'EOF'
{
  "queries": [[1, 2]],
  "keys": [[1, 0], [0, 1]],
  "values": [[1], [2]]
}
EOF
}
question_softmax() {
    mkdir -p "$1"
    echo '{"endpoint": "/softmax/masked", "fields": ["weights"],
           "compare": {"mode": "decdig", "digits": 2}, "points": 2}' \
        >"$1/question.json"
    echo '{"scores": [[1, 2, 3]], "valid_lens": [2]}' >"$1/request.json"
}
mkdir -p "$TMP/answers"
# right only to the question's tolerances: 1.67 is not 1.66976 to the
# default comparison (rtol 1e-5, or rounded to 4 decimals)
echo '{"output": [[1.67]], "weights": [[0.33, 0.67]]}' >"$TMP/answers/ada.json"
# output wrong in its third digit; weights within 1 %
echo '{"output": [[1.68]], "weights": [[0.333, 0.667]], "notes": "x"}' \
    >"$TMP/answers/bo.json"
# weights missing
echo '{"output": [[1.67]]}' >"$TMP/answers/cy.json"
# not JSON
printf 'output = [[1.67]]\n' >"$TMP/answers/dee.json"
# JSON, but not an object
echo '[[1.67]]' >"$TMP/answers/eve.json"
# a file that tries to give the question's members of its own
echo '{"output": [[1.67]], "weights": [[0.33, 0.67]]}, "points": 100, "request": {"queries": [[0, 0]], "keys": [[1, 0]], "values": [[1.67]]}' \
    >"$TMP/answers/mal.json"

# 3. PrairieLearn: /grade/tests (the question folder and run.sh),
# /grade/student/answer.json, /grade/results/results.json
PL="$TMP/pl"
question_dot "$PL/tests"
cp "$TMP/run.sh" "$PL/tests/run.sh"
chmod +x "$PL/tests/run.sh"
mkdir -p "$PL/student"
pl_grade() {
    cp "$TMP/answers/$1.json" "$PL/student/answer.json"
    rm -rf "$PL/results"
    GRADE_ROOT="$PL" "$PL/tests/run.sh" >"$TMP/pl_out" 2>&1
    RC=$?
    R="$PL/results/results.json"
    if [ "$RC" -eq 0 ] && [ -s "$R" ]; then
        ok "PrairieLearn $1: run.sh exits 0 and writes results.json"
    else
        not_ok "PrairieLearn $1: run.sh exits 0 and writes results.json" \
            "exit $RC" "$(head -c 300 "$TMP/pl_out")"
    fi
    valid "PrairieLearn $1" prairielearn "$R"
}
# test NAME: the results' test named NAME
pl_test='def t($n): .tests[] | select(.name == $n);'
pl_grade ada
check_doc "  ada: full points (3 + 1 of 4) only under the question's tolerances" "$R" \
    "$pl_test"' .gradable != false and .score == 1 and
    (t("answer: output") | .points == 3 and .max_points == 3) and
    (t("answer: weights") | .points == 1 and .max_points == 1)'
pl_grade bo
check_doc "  bo: output 0 of 3 (1.68 against 1.67 to 3 digits), weights 1 of 1: score 0.25" "$R" \
    "$pl_test"' .score == 0.25 and
    (t("answer: output") | .points == 0 and .max_points == 3) and
    (t("answer: weights") | .points == 1)'
pl_grade cy
check_doc "  cy: weights missing fails as missing, output 3 of 3: score 0.75" "$R" \
    "$pl_test"' .score == 0.75 and (t("answer: output") | .points == 3) and
    (t("answer: weights") | .points == 0 and (.output | test("has no weights")))'
pl_grade dee
check_doc "  dee (not JSON): gradable false, saying answer.json cannot be read" "$R" \
    '.gradable == false and (.message | test("cannot read answer.json"))'
pl_grade eve
check_doc "  eve (an array): not gradable, saying it is no JSON object" "$R" \
    '.gradable == false and (.message | test("cannot read answer.json: it holds array, not one JSON object"))'
rm -f "$PL/student/answer.json" "$PL/results/results.json"
GRADE_ROOT="$PL" "$PL/tests/run.sh" >"$TMP/pl_out" 2>&1
check_doc "  no answer.json: not gradable, saying none was handed in" "$R" \
    '.gradable == false and (.message | test("no answer.json was handed in"))'
pl_grade mal
check_doc "  a file pasting members after its answer is not JSON: not gradable" "$R" \
    '.gradable == false'

# 4. Gradescope: /autograder/source/questions/<q>/, /autograder/submission,
# /autograder/results/results.json; two questions in one document
GS="$TMP/gs"
question_dot "$GS/source/questions/dot"
question_softmax "$GS/source/questions/softmax"
cp "$TMP/run_autograder" "$GS/run_autograder"
chmod +x "$GS/run_autograder"
gs_grade() {
    what=$1
    rm -rf "$GS/results"
    AUTOGRADER_ROOT="$GS" "$GS/run_autograder" >"$TMP/gs_out" 2>&1
    RC=$?
    R="$GS/results/results.json"
    if [ "$RC" -eq 0 ] && [ -s "$R" ]; then
        ok "Gradescope $what: run_autograder exits 0 and writes results.json"
    else
        not_ok "Gradescope $what: run_autograder exits 0 and writes results.json" \
            "exit $RC" "$(head -c 300 "$TMP/gs_out")"
    fi
    valid "Gradescope $what" gradescope "$R"
}
gs_test='def t($n): .tests[] | select(.name == $n);'
mkdir -p "$GS/submission"
cp "$TMP/answers/ada.json" "$GS/submission/dot.json"
echo '{"weights": [[0.27, 0.73, 0]]}' >"$GS/submission/softmax.json"
gs_grade "right to the questions' tolerances"
check_doc "  6 of 6 points: dot's output 3, weights 1, softmax's weights 2, in order, each question named" "$R" \
    "$gs_test"' .score == 6 and
    ([.tests[].name] == ["dot: output", "dot: weights", "softmax: weights"]) and
    (t("dot: output") | .score == 3 and .max_score == 3) and
    (t("dot: weights") | .score == 1 and .max_score == 1) and
    (t("softmax: weights") | .score == 2 and .max_score == 2) and
    (.output | test("^dot: pass.*\nsoftmax: pass"))'
cp "$TMP/answers/bo.json" "$GS/submission/dot.json"
echo '{"weights": [[0.28, 0.72, 0]]}' >"$GS/submission/softmax.json"
gs_grade "wrong"
check_doc "  1 of 6: dot's output 0 of 3, softmax's 0.28 (0.2689 to 2 decimals) 0 of 2" "$R" \
    "$gs_test"' .score == 1 and (t("dot: output") | .score == 0) and
    (t("dot: weights") | .score == 1) and (t("softmax: weights") | .score == 0)'
cp "$TMP/answers/dee.json" "$GS/submission/dot.json"
rm -f "$GS/submission/softmax.json"
gs_grade "not JSON, and no file"
check_doc "  0 of 6: every field fails as missing, the summary saying why" "$R" \
    '.score == 0 and (.tests | length) == 3 and
    (.output | test("dot: dot.json is not one JSON object") and
               test("softmax: no softmax.json was handed in")) and
    ([.tests[] | .score == 0 and (.output | test("the answer has no"))] | all) and
    ([.tests[].max_score] == [3, 1, 2])'
cp "$TMP/answers/mal.json" "$GS/submission/dot.json"
gs_grade "members pasted after the answer"
check_doc "  nothing earned: the file is not JSON, its points and request unread" "$R" \
    '.score == 0 and ([.tests[].max_score] == [3, 1, 2])'
mkdir -p "$GS/source/questions/zbroken"
echo '{"endpoint": "/attention/dot", "pionts": 3}' \
    >"$GS/source/questions/zbroken/question.json"
echo '{}' >"$GS/source/questions/zbroken/request.json"
gs_grade "a question folder that is not a question"
check_doc "  its test says attnd could not grade it, naming question.json" "$R" \
    "$gs_test"' (.tests | length) == 4 and
    (t("zbroken") | .score == 0 and
     (.output | test("could not grade: attnd grade: zbroken/question.json: unknown member `pionts`")))'
rm -rf "$GS/source/questions/zbroken"

# 4b. a problem (docs/variants.md): run_autograder grades the student's
# own variant, the student named by submission_metadata.json, and a copy
# of another student's is a note in the hidden instructor test alone
GV="$TMP/gsv"
mkdir -p "$GV/source/questions/dotv" "$GV/submission"
cp "$HERE/../variants/dot/request.json" "$GV/source/questions/dotv/"
echo '{"endpoint": "/attention/dot", "fields": ["output", "weights"]}' \
    >"$GV/source/questions/dotv/question.json"
cp "$HERE/../variants/secret" "$GV/source/course.secret"
printf 'ada@uni.edu\nbo@uni.edu\n' >"$GV/source/roster.csv"
cp "$TMP/run_autograder" "$GV/run_autograder"
chmod +x "$GV/run_autograder"
"$ATTND" variants --question "$GV/source/questions/dotv" \
    --roster "$GV/source/roster.csv" --secret-file "$GV/source/course.secret" \
    >"$TMP/gv_handouts" 2>/dev/null
for who in ada bo; do
    jq -c "select(.student == \"$who@uni.edu\") | .request" "$TMP/gv_handouts" |
        "$ATTND" run /attention/dot | jq -c '{output, weights}' >"$TMP/gv_$who.json"
done
echo '{"users": [{"email": "ada@uni.edu", "id": 1, "name": "Ada"}]}' \
    >"$GV/submission_metadata.json"
gsv_grade() {
    rm -rf "$GV/results"
    AUTOGRADER_ROOT="$GV" "$GV/run_autograder" >"$TMP/gs_out" 2>&1
    R="$GV/results/results.json"
    valid "Gradescope, a problem: $1" gradescope "$R"
}
cp "$TMP/gv_ada.json" "$GV/submission/dotv.json"
gsv_grade "Ada's own variant"
check_doc "  Ada's answer to her own variant: 2 of 2, no note" "$R" \
    '.score == 2 and ([.tests[].name] == ["ada@uni.edu: output", "ada@uni.edu: weights"])'
cp "$TMP/gv_bo.json" "$GV/submission/dotv.json"
gsv_grade "Bo's answer handed in by Ada"
check_doc "  Bo's answer handed in by Ada: 0 of 2, Bo named in the hidden instructor test only" "$R" \
    '.score == 0 and
    ([.tests[] | select(.name == "ada@uni.edu: notes for the instructor") |
      .visibility == "hidden" and (.output | test("variant of bo@uni.edu"))] == [true]) and
    ([.tests[] | select(.visibility != "hidden") | .output | test("bo@uni.edu")] | any | not) and
    (.output | test("bo@uni.edu") | not)'

# 5. /grade/batch reads the same folder: docs/batch.md's jq line against
# attnd grade --question, byte for byte, lines and gradescope's document
Q="$TMP/dot"
question_dot "$Q"
for who in ada bo cy; do
    jq -c -n --arg id "$who" --slurpfile q "$Q/question.json" \
        --slurpfile r "$Q/request.json" --slurpfile a "$TMP/answers/$who.json" \
        '$q[0] + {id: $id, request: $r[0], answer: $a[0]}'
done >"$TMP/batch.ndjson"
for who in ada bo cy; do
    jq -c -n --arg id "$who" --slurpfile a "$TMP/answers/$who.json" \
        '{id: $id, answer: $a[0]}'
done >"$TMP/answers.ndjson"
http POST /grade/batch -H 'Content-Type: application/x-ndjson' \
    --data-binary "@$TMP/batch.ndjson"
check_status "/grade/batch with question.json + {id, request, answer}: 200" 200
attnd grade --question "$Q" <"$TMP/answers.ndjson" >"$TMP/out" 2>"$TMP/err"
RC=$?
check "  attnd grade --question: exit 0, the same bytes as /grade/batch" \
    sh -c "[ $RC -eq 0 ] && cmp '$TMP/out' '$TMP/body'"
if jq -s -e '[.[] | .score] == [1, 0.25, 0.75] and
    [.[] | .points.earned] == [4, 1, 3]' "$TMP/out" >/dev/null 2>&1; then
    ok "  scores 1, 0.25, 0.75 (points 4, 1, 3 of 4)"
else
    not_ok "  scores 1, 0.25, 0.75 (points 4, 1, 3 of 4)" "$(head -c 600 "$TMP/out")"
fi
http POST '/grade/batch?format=gradescope' \
    -H 'Content-Type: application/x-ndjson' --data-binary "@$TMP/batch.ndjson"
attnd grade --question "$Q" --format gradescope <"$TMP/answers.ndjson" \
    >"$TMP/out" 2>"$TMP/err"
RC=$?
check "  and with --format gradescope: exit 0, ?format=gradescope's bytes" \
    sh -c "[ $RC -eq 0 ] && [ '$STATUS' = 200 ] && cmp '$TMP/out' '$TMP/body'"
# the same lines as one JSON array
jq -s . "$TMP/answers.ndjson" >"$TMP/answers.json"
jq -s . "$TMP/batch.ndjson" >"$TMP/batch.json"
post_file /grade/batch "$TMP/batch.json"
attnd grade --question "$Q" <"$TMP/answers.json" >"$TMP/out" 2>"$TMP/err"
RC=$?
check "  an array of {id, answer}: exit 0, the batch's array byte for byte" \
    sh -c "[ $RC -eq 0 ] && [ '$STATUS' = 200 ] && cmp '$TMP/out' '$TMP/body'"
# without the question's comparison, ada's answer fails
jq 'del(.compare)' "$Q/question.json" >"$TMP/q.json"
mkdir -p "$TMP/strict"
cp "$TMP/q.json" "$TMP/strict/question.json"
cp "$Q/request.json" "$TMP/strict/request.json"
head -n 1 "$TMP/answers.ndjson" | attnd grade --question "$TMP/strict" >"$TMP/out" 2>"$TMP/err"
check_doc "  the same answer under the default comparison: both fields fail" "$TMP/out" \
    '.score == 0 and .fields.output.pass == false and .fields.weights.pass == false'

# 6. a line that gives a member the question gives too: its own problem
# line (the member twice), the other lines graded
{
    head -n 1 "$TMP/answers.ndjson"
    echo '{"id": "x", "answer": {"output": [[1.67]]}, "points": 100}'
    echo '{"id": "y", "answer": {"output": [[1.67]]}, "request": {"queries": [[0, 0]], "keys": [[1, 0]], "values": [[1.67]]}}'
    echo
    echo '{"id": "z", "answer": {"output": [[1.67]]}, "endpoint": "/attention/dot"}'
} >"$TMP/conflict.ndjson"
attnd grade --question "$Q" <"$TMP/conflict.ndjson" >"$TMP/out" 2>"$TMP/err"
RC=$?
check "a line giving points, request or endpoint as well: exit 3, 3 not graded" \
    sh -c "[ $RC -eq 3 ] && grep -q '^attnd grade: 3 of the submissions could not be graded$' '$TMP/err'"
if jq -s -e '.[0].score == 1 and
    (.[1].problem | .code == "invalid_json" and (.detail | test("^line 2 .*member twice: .*points"))) and
    (.[2].problem.detail | test("^line 3 .*member twice: .*request")) and
    (.[3].problem.detail | test("^line 5 .*member twice: .*endpoint"))' \
    "$TMP/out" >/dev/null 2>&1; then
    ok "  each is a problem line naming the member and its line; the first line is graded"
else
    not_ok "  each is a problem line naming the member and its line; the first line is graded" \
        "$(head -c 900 "$TMP/out")"
fi

# 7. a folder that is not a question: exit 1, the file named, nothing on
# stdout, stdin not graded
bad_folder() {
    what=$1
    want=$2
    mkdir -p "$TMP/bad"
    printf '%s' "$3" >"$TMP/bad/question.json"
    printf '%s' "$4" >"$TMP/bad/request.json"
    attnd grade --question "$TMP/bad" <"$TMP/answers.ndjson" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -eq 1 ] && [ ! -s "$TMP/out" ] && grep -q -- "$want" "$TMP/err"; then
        ok "$what: exit 1, '$want' on stderr"
    else
        not_ok "$what: exit 1, '$want' on stderr" "exit $rc" \
            "stderr: $(head -c 300 "$TMP/err")" "stdout: $(head -c 100 "$TMP/out")"
    fi
}
REQ='{"queries": [[1, 2]], "keys": [[1, 0], [0, 1]], "values": [[1], [2]]}'
bad_folder "question.json not JSON" "bad/question.json is not valid JSON" \
    '{"endpoint": "/attention/dot",' "$REQ"
bad_folder "question.json an array" "bad/question.json holds an array, not a JSON object" \
    '["output"]' "$REQ"
bad_folder "question.json with a misspelt member" \
    'bad/question.json: unknown member `pionts`; did you mean `points`?' \
    '{"endpoint": "/attention/dot", "pionts": 3}' "$REQ"
bad_folder "question.json with a request" \
    'bad/question.json: `request` is not a question.s setting' \
    '{"endpoint": "/attention/dot", "request": {}}' "$REQ"
bad_folder "question.json with a format" '`format` is not a question.s setting' \
    '{"format": "gradescope"}' "$REQ"
bad_folder "question.json giving a member twice" "bad/question.json is not valid JSON: duplicate" \
    '{"points": 1, "points": 100}' "$REQ"
bad_folder "request.json not JSON" "bad/request.json is not valid JSON" \
    '{"endpoint": "/attention/dot"}' '{"queries": [[1, 2]],'
bad_folder "request.json a number" "bad/request.json holds an integer, not a JSON object" \
    '{"endpoint": "/attention/dot"}' '3'
# settings the grader refuses, and a request the endpoint refuses, are
# found once, before any student is graded
bad_folder "fields naming no field" \
    'bad/question.json: invalid_value at /fields/1: `weigths` is not a field /attention/dot answers with; did you mean `weights`?' \
    '{"endpoint": "/attention/dot", "fields": ["output", "weigths"]}' "$REQ"
bad_folder "an unknown comparison" \
    'bad/question.json: invalid_value at /compare: unknown comparison "sigfig3"' \
    '{"endpoint": "/attention/dot", "compare": "sigfig3"}' "$REQ"
bad_folder "an endpoint that computes nothing" \
    'bad/question.json: invalid_value at /endpoint' \
    '{"endpoint": "/attention/dott"}' "$REQ"
bad_folder "a request the endpoint refuses" \
    'bad/request.json: shape_mismatch at /values' \
    '{"endpoint": "/attention/dot"}' \
    '{"queries": [[1, 2]], "keys": [[1, 0]], "values": [[1], [2]]}'
# a folder leaving the endpoint to each submission, and one hiding the
# reference: both graded
mkdir -p "$TMP/open"
printf '%s' '{"fields": ["output"], "show_expected": false}' >"$TMP/open/question.json"
printf '%s' "$REQ" >"$TMP/open/request.json"
echo '{"id": "a", "endpoint": "/attention/dot", "answer": {"output": [[1.7]]}}' |
    attnd grade --question "$TMP/open" >"$TMP/out" 2>"$TMP/err"
RC=$?
check_doc "question.json without endpoint, with show_expected false: each line's endpoint graded, no reference quoted (exit $RC)" \
    "$TMP/out" '.id == "a" and .fields.output.pass == false and
    (.fields.output.first_mismatch | has("expected") | not) and
    .fields.output.max_abs_err == null'
rm -f "$TMP/bad/request.json"
attnd grade --question "$TMP/bad" <"$TMP/answers.ndjson" >"$TMP/out" 2>"$TMP/err"
check "no request.json: exit 1, 'cannot read .../request.json'" \
    sh -c "[ $? -eq 1 ] && [ ! -s '$TMP/out' ] && grep -q 'cannot read .*bad/request.json: No such file' '$TMP/err'"
attnd grade --question </dev/null >"$TMP/out" 2>"$TMP/err"
check "--question without a folder: exit 1" \
    sh -c "[ $? -eq 1 ] && grep -q \"option '--question' needs a value\" '$TMP/err'"
attnd run /grade --question "$Q" </dev/null >"$TMP/out" 2>"$TMP/err"
check "attnd run takes no --question: exit 1" sh -c "[ $? -eq 1 ] && [ ! -s '$TMP/out' ]"
attnd grade --help >"$TMP/out" 2>&1
check "attnd grade --help describes --question DIR" \
    grep -q -- '--question DIR' "$TMP/out"

# 8. the memory budget: a request of 48 KB added to each of 40 lines
# (1.8 MiB built from 1.5 KB of stdin) is the daemon's 413 under a budget
# of 1M, and graded under the default one
mkdir -p "$TMP/large"
echo '{"endpoint": "/attention/dot", "fields": ["output"]}' >"$TMP/large/question.json"
jq -cn '{queries: [range(8000) | [1, 2]], keys: [[1, 0], [0, 1]],
         values: [[1], [2]]}' >"$TMP/large/request.json"
i=0
while [ $i -lt 40 ]; do
    echo "{\"id\": $i, \"answer\": {\"output\": [[1]]}}"
    i=$((i + 1))
done >"$TMP/forty.ndjson"
attnd grade --question "$TMP/large" --memory-budget 1M <"$TMP/forty.ndjson" \
    >"$TMP/out" 2>"$TMP/err"
RC=$?
check "40 lines with a 48 KB request under --memory-budget 1M: exit 2, 413 for the body built" \
    sh -c "[ $RC -eq 2 ] && [ ! -s '$TMP/out' ] && jq -e '.status == 413 and
        (.detail | test(\"the body built with the question.s settings and request would take 1.8 MiB\"))' \
        '$TMP/err' >/dev/null"
attnd grade --question "$TMP/large" <"$TMP/forty.ndjson" >"$TMP/out" 2>"$TMP/err"
RC=$?
check "  with the default budget: exit 0, 40 lines, each a wrong shape" \
    sh -c "[ $RC -eq 0 ] && [ \$(jq -s 'map(select(.fields.output.error == \"shape\")) | length' '$TMP/out') -eq 40 ]"
attnd grade --question "$TMP/large" --memory-budget 16K <"$TMP/forty.ndjson" \
    >"$TMP/out" 2>"$TMP/err"
check "  a request.json over the whole budget (16K): exit 1, naming it" \
    sh -c "[ $? -eq 1 ] && grep -q 'large/request.json would take .* more than the server.s whole memory budget' '$TMP/err'"

# 9. a question's file without end (a FIFO, /dev/zero) is refused where it
# passes the most a question's file may hold, not read for ever
mkdir -p "$TMP/endless"
ln -s /dev/zero "$TMP/endless/question.json"
cp "$TMP/large/request.json" "$TMP/endless/request.json"
timeout 20 "$ATTND" grade --question "$TMP/endless" --max-body-bytes 1M \
    <"$TMP/forty.ndjson" >"$TMP/out" 2>"$TMP/err"
RC=$?
check "a question.json that is /dev/zero, --max-body-bytes 1M: exit 1 at once, naming it and the limit" \
    sh -c "[ $RC -eq 1 ] && grep -q 'endless/question.json is over 1048576 bytes, the most a question.s file may hold' '$TMP/err'"
timeout 20 "$ATTND" grade --question "$TMP/endless" <"$TMP/forty.ndjson" \
    >"$TMP/out" 2>"$TMP/err"
RC=$?
check "  and without a body limit: exit 1 at 64 MiB (the JSON tree's bound)" \
    sh -c "[ $RC -eq 1 ] && grep -q 'endless/question.json is over 67108864 bytes' '$TMP/err'"
echo "1..$T"
