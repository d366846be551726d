#!/bin/sh
# d_variants.sh — grading each student's own variant (docs/variants.md),
# on a daemon of its own started with a secret and graders' tokens: the
# handouts of POST /variants are attnd variants' byte for byte; a class of
# 24 (tests/variants/class.py: right answers, copies of another's right
# answer, copies perturbed within rtol, dot.no_scale on the student's own
# variant, slips, a study group) graded over HTTP and by attnd grade
# --question gives the same bytes; every copy is named with its source and
# nothing else is (precision and recall 1); the copy report reaches only
# the instructor's side of a Gradescope document; a request without a
# grader's token, or to a server without a secret, is refused; with the
# class's roster, an id off it or a group not its own is refused, a copy
# of a student who handed nothing in is traced, and the class graded in
# batches under --max-body-bytes still finds every copy, each batch the
# bytes attnd grade gives; what one request may draw is bounded before it
# is drawn; the secret is in no answer, log line or metric.
#   usage: sh tests/integration/d_variants.sh PATH/TO/attnd
ATTND=${1:?usage: d_variants.sh PATH/TO/attnd}
DIR=$(cd "$(dirname "$0")" && pwd)
V=$(cd "$DIR/../variants" && pwd)
BASE=""
. "$DIR/lib.sh"
. "$DIR/daemon.sh"
PID=""
trap 'kill_daemon; rm -rf "$TMP"' EXIT

TOKEN=ta-9d1c7e4b2a6f08e3c5
printf 'ta-ada %s\n' "$TOKEN" >"$TMP/graders"
SECRET=$(cat "$V/secret")
LOG="$TMP/attnd.log"
if ! start_daemon "$LOG" --port 0 --grading-token-file "$TMP/graders" \
    --variant-secret-file "$V/secret"; then
    not_ok "attnd starts with --grading-token-file and --variant-secret-file" \
        "$(head -c 400 "$LOG")"
    exit 0
fi
BASE="http://127.0.0.1:$PORT"
AUTH="Authorization: Bearer $TOKEN"

# the question folder: the problem's marked request and its endpoint
mkdir -p "$TMP/q/dot"
cp "$V/dot/request.json" "$TMP/q/dot/"
echo '{"endpoint": "/attention/dot"}' >"$TMP/q/dot/question.json"

# 1. the handouts, offline and from the server
"$ATTND" variants --question "$V/dot" --roster "$V/class-roster.csv" \
    --secret-file "$V/secret" >"$TMP/handouts" 2>/dev/null
/usr/bin/python3 - "$V" >"$TMP/vreq" <<'EOF_PY'
import json, sys
v = sys.argv[1]
students = []
for line in open(f'{v}/class-roster.csv'):
    line = line.split('#')[0].strip()
    if line:
        s, *g = [p.strip() for p in line.split(',')]
        students.append({'id': s, 'group': g[0]} if g else s)
print(json.dumps({'problem': 'dot', 'request': json.load(open(f'{v}/dot/request.json')),
                  'students': students}))
EOF_PY
curl -s -o "$TMP/http_handouts" -w '%{http_code}' -H "$AUTH" \
    -H 'Content-Type: application/json' --data-binary @"$TMP/vreq" \
    "$BASE/variants" >"$TMP/code"
if [ "$(cat "$TMP/code")" = 200 ] && cmp -s "$TMP/http_handouts" "$TMP/handouts"; then
    ok "POST /variants with a grader's token: attnd variants' handouts, byte for byte"
else
    not_ok "POST /variants with a grader's token: attnd variants' handouts, byte for byte" \
        "status $(cat "$TMP/code")" "$(head -c 300 "$TMP/http_handouts")"
fi
curl -s -o "$TMP/body" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary @"$TMP/vreq" "$BASE/variants" >"$TMP/code"
if [ "$(cat "$TMP/code")" = 401 ] && grep -q '"code":"unauthorized"' "$TMP/body"; then
    ok "POST /variants without a grader's token: 401 unauthorized"
else
    not_ok "POST /variants without a grader's token: 401 unauthorized" \
        "status $(cat "$TMP/code")" "$(head -c 300 "$TMP/body")"
fi

# http_class SUBS: $TMP/http_class, the {"id", "answer"} lines of SUBS as
# POST /grade/batch takes them: the problem's id, endpoint and request.json
# added, as attnd grade --question adds them
http_class() {
    /usr/bin/python3 - "$V/dot/request.json" "$1" >"$TMP/http_class" <<'EOF_PY'
import json, sys
template = json.load(open(sys.argv[1]))
for line in open(sys.argv[2]):
    s = json.loads(line)
    print(json.dumps(dict({'problem': 'dot', 'endpoint': '/attention/dot',
                           'request': template}, **s)))
EOF_PY
}

# 2. the class, graded offline and over HTTP
/usr/bin/python3 "$V/class.py" "$ATTND" "$TMP/handouts" "$TMP"
"$ATTND" grade --question "$TMP/q/dot" --secret-file "$V/secret" \
    <"$TMP/subs.ndjson" >"$TMP/offline" 2>"$TMP/offline_err"
http_class "$TMP/subs.ndjson"
batch() { # batch OUT [CURL ARGS...]
    out=$1
    shift
    curl -s -o "$out" -w '%{http_code}' -H 'Content-Type: application/x-ndjson' \
        --data-binary @"$TMP/http_class" "$@" >"$TMP/code"
}
batch "$TMP/http" -H "$AUTH" "$BASE/grade/batch"
if [ "$(cat "$TMP/code")" = 200 ] && [ -s "$TMP/offline" ] &&
    cmp -s "$TMP/http" "$TMP/offline"; then
    ok "the class over HTTP and through attnd grade --question: the same bytes"
else
    not_ok "the class over HTTP and through attnd grade --question: the same bytes" \
        "status $(cat "$TMP/code"); offline: $(head -c 200 "$TMP/offline_err")" \
        "$(cmp "$TMP/http" "$TMP/offline" 2>&1)"
fi
out=$(/usr/bin/python3 - "$TMP/offline" "$TMP/truth.json" <<'EOF_PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
truth = json.load(open(sys.argv[2]))
grades, summary = lines[:-1], lines[-1]['copies']
by_id = {g['id']: g for g in grades}
wrong = []
for who, (kind, source) in truth.items():
    g = by_id[who]
    if kind == 'right' and not g.get('pass'):
        wrong.append(f'{who} answered its own variant and failed')
    if kind == 'no_scale' and (g.get('misconception') or {}).get('code') != 'dot.no_scale':
        wrong.append(f'{who}: dot.no_scale not named')
    if kind == 'copy' and g.get('pass'):
        wrong.append(f'{who} passed with another variant')
flagged = {m['id']: m['matches']['student'] for m in summary['matches']}
copies = {w: s for w, (k, s) in truth.items() if k in ('copy', 'perturbed')}
tp = sum(1 for w, s in flagged.items() if copies.get(w) == s)
precision = tp / len(flagged) if flagged else 0
recall = tp / len(copies)
if precision != 1 or recall != 1:
    wrong.append(f'precision {precision:.3f} recall {recall:.3f}: {flagged} vs {copies}')
if summary['variants'] != len(truth):
    wrong.append(f"variants {summary['variants']}")
print('; '.join(wrong) if wrong else f'{len(copies)} copies, precision 1.000 recall 1.000')
EOF_PY
)
case $out in
*"precision 1.000 recall 1.000") ok "copies caught, each with its source: $out" ;;
*) not_ok "copies caught, each with its source" "$out" ;;
esac

# 3. with the class's roster: every student's variant is compared, ids
# off the roster and groups not the roster's are refused
/usr/bin/python3 - "$TMP/subs.ndjson" "$TMP/truth.json" >"$TMP/subs_roster.ndjson" <<'EOF_PY'
import json, sys
subs = [json.loads(l) for l in open(sys.argv[1])]
truth = json.load(open(sys.argv[2]))
# the source of the first plain copy hands in nothing: only the roster
# knows its variant
gone = next(s for w, (k, s) in truth.items() if k == 'copy')
for s in subs:
    if s['id'] == gone:
        continue
    if s['id'] == 't01':
        s = dict(s, group='study2')
    print(json.dumps(s))
print(json.dumps({'id': 'zz99', 'answer': subs[0]['answer']}))
EOF_PY
"$ATTND" grade --question "$TMP/q/dot" --secret-file "$V/secret" \
    --roster "$V/class-roster.csv" <"$TMP/subs_roster.ndjson" >"$TMP/roster_out" 2>/dev/null
out=$(/usr/bin/python3 - "$TMP/roster_out" "$TMP/truth.json" <<'EOF_PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
truth = json.load(open(sys.argv[2]))
gone = next(s for w, (k, s) in truth.items() if k == 'copy')
copier = next(w for w, (k, s) in truth.items() if k == 'copy' and s == gone)
by_id = {l.get('id'): l for l in lines[:-1]}
report = lines[-1]['copies']
flagged = {m['id']: m['matches'] for m in report['matches']}
bad = []
if flagged.get(copier, {}).get('student') != gone or 'id' in flagged.get(copier, {}):
    bad.append(f'{copier} not traced to {gone} (on the roster only): {flagged.get(copier)}')
if (by_id['zz99'].get('problem') or {}).get('pointer') != '/id':
    bad.append('zz99 (off the roster) not refused at /id')
if (by_id['t01'].get('problem') or {}).get('pointer') != '/group':
    bad.append('t01 with a group not the roster\'s not refused at /group')
if report['references'] != 23:  # 24 students, a group of two
    bad.append(f"references {report['references']}, not the roster's 23 variants")
print('; '.join(bad) or 'ok')
EOF_PY
)
if [ "$out" = ok ]; then
    ok "with --roster: a copy of a student who handed nothing in is traced; off-roster ids and wrong groups are refused"
else
    not_ok "with --roster: a copy of a student who handed nothing in is traced; off-roster ids and wrong groups are refused" "$out"
fi

# 4. the copy report is the instructor's alone in Gradescope's document
batch "$TMP/gs" -H "$AUTH" "$BASE/grade/batch?format=gradescope"
out=$(/usr/bin/python3 - "$TMP/gs" <<'EOF_PY'
import json, sys
doc = json.load(open(sys.argv[1]))
notes = [t for t in doc['tests'] if 'copy:' in t.get('output', '')]
seen = [t['name'] for t in doc['tests'] if t.get('visibility') != 'hidden' and 'copy' in t.get('output', '')]
bad = 'copy' in doc['output'] or seen or any(t['visibility'] != 'hidden' for t in notes)
print('bad' if bad else f'{len(notes)} hidden notes')
EOF_PY
)
case $out in
"9 hidden notes") ok "Gradescope: each copy in a hidden instructor test, none in what students see" ;;
*) not_ok "Gradescope: each copy in a hidden instructor test, none in what students see" "$out" ;;
esac

# 5. refusals: no grader's token; a server without a secret
batch "$TMP/nogr" "$BASE/grade/batch"
n=$(grep -c '"code":"unauthorized","pointer":"/request"' "$TMP/nogr")
if [ "$(cat "$TMP/code")" = 200 ] && [ "$n" = 24 ] && ! grep -q '"copies"' "$TMP/nogr"; then
    ok "a batch without a grader's token: each variant a 401 line, nothing graded"
else
    not_ok "a batch without a grader's token: each variant a 401 line, nothing graded" \
        "status $(cat "$TMP/code"), $n lines" "$(head -c 300 "$TMP/nogr")"
fi
curl -s -H "$AUTH" "$BASE/metrics" >"$TMP/metrics"
stop_daemon
cat "$LOG" >"$TMP/logs"

# 6. a daemon with the roster grades as attnd grade --roster does
if start_daemon "$LOG" --port 0 --grading-token-file "$TMP/graders" \
    --variant-secret-file "$V/secret" --roster "$V/class-roster.csv"; then
    BASE="http://127.0.0.1:$PORT"
    http_class "$TMP/subs_roster.ndjson"
    batch "$TMP/http_roster" -H "$AUTH" "$BASE/grade/batch"
    if cmp -s "$TMP/http_roster" "$TMP/roster_out"; then
        ok "--roster on the daemon: the same bytes as attnd grade --roster"
    else
        not_ok "--roster on the daemon: the same bytes as attnd grade --roster" \
            "$(cmp "$TMP/http_roster" "$TMP/roster_out" 2>&1)"
    fi
    # handouts by id alone: the roster says the group; off the roster, none
    /usr/bin/python3 - "$V/dot/request.json" >"$TMP/vreq_ids" <<'EOF_PY'
import json, sys
print(json.dumps({'problem': 'dot', 'request': json.load(open(sys.argv[1])),
                  'students': ['t01']}))
EOF_PY
    curl -s -H "$AUTH" -H 'Content-Type: application/json' \
        --data-binary @"$TMP/vreq_ids" "$BASE/variants" >"$TMP/t01"
    sed 's/"t01"/"zz99"/' "$TMP/vreq_ids" >"$TMP/vreq_off"
    curl -s -H "$AUTH" -H 'Content-Type: application/json' \
        --data-binary @"$TMP/vreq_off" "$BASE/variants" >"$TMP/zz99"
    if [ "$(grep '"student":"t01"' "$TMP/handouts")" = "$(cat "$TMP/t01")" ] &&
        grep -q '"pointer":"/students/0"' "$TMP/zz99"; then
        ok "POST /variants with --roster: t01 by id alone gets its group's handout; an id off the roster is refused"
    else
        not_ok "POST /variants with --roster: t01 by id alone gets its group's handout; an id off the roster is refused" \
            "$(head -c 200 "$TMP/t01")" "$(head -c 200 "$TMP/zz99")"
    fi
    # what a grader's request may draw is bounded before it is drawn: a
    # batch of 17 problems, each with a suspect, draws the roster's
    # references per problem; marks of more than 2^20 entries in all, or
    # parameters beyond 1e15, are refused
    /usr/bin/python3 - "$V/dot/request.json" "$TMP" <<'EOF_PY'
import json, sys
t = json.load(open(sys.argv[1]))
out = sys.argv[2]
with open(out + '/p17.ndjson', 'w') as f:
    for i in range(17):
        f.write(json.dumps({'id': 's%02d' % (i + 1), 'problem': 'p%d' % i,
                            'endpoint': '/attention/dot', 'request': t,
                            'answer': {'output': [[[0.1, 0.2, 0.3]], [[0.4, 0.5, 0.6]]]}}) + '\n')
big = dict(t, **{'x%d' % i: {'draw': {'shape': [1024, 1024], 'distribution': 'normal'}}
                 for i in range(5)})
json.dump({'id': 's01', 'problem': 'p', 'endpoint': '/attention/dot',
           'request': big, 'answer': {'output': [[0]]}}, open(out + '/big.json', 'w'))
json.dump({'problem': 'p', 'students': ['s01'], 'request': {'queries': {'draw': {
    'shape': [1, 4], 'distribution': 'uniform', 'low': -1.7e308, 'high': 1.7e308}}}},
    open(out + '/inf.json', 'w'))
EOF_PY
    curl -s -H "$AUTH" -H 'Content-Type: application/x-ndjson' \
        --data-binary @"$TMP/p17.ndjson" "$BASE/grade/batch" >"$TMP/p17_out"
    curl -s -H "$AUTH" -H 'Content-Type: application/json' \
        --data-binary @"$TMP/big.json" "$BASE/grade" >"$TMP/big_out"
    curl -s -H "$AUTH" -H 'Content-Type: application/json' \
        --data-binary @"$TMP/inf.json" "$BASE/variants" >"$TMP/inf_out"
    if tail -n 1 "$TMP/p17_out" | grep -q '"copies":{"variants":17,"references":' &&
        grep -q '"pointer":"/request/x0/draw/shape"' "$TMP/big_out" &&
        grep -q '"pointer":"/request/queries/draw/low"' "$TMP/inf_out" &&
        healthz_ok; then
        ok "17 problems' roster references in one batch; 5 Mi drawn entries and a low of -1.7e308 refused before drawing"
    else
        not_ok "17 problems' roster references in one batch; 5 Mi drawn entries and a low of -1.7e308 refused before drawing" \
            "$(tail -c 200 "$TMP/p17_out")" "$(head -c 200 "$TMP/big_out")" "$(head -c 200 "$TMP/inf_out")"
    fi
    stop_daemon
    cat "$LOG" >>"$TMP/logs"
else
    not_ok "attnd starts with --roster" "$(head -c 300 "$LOG")"
fi
if start_daemon "$LOG" --port 0 --grading-token-file "$TMP/graders"; then
    BASE="http://127.0.0.1:$PORT"
    batch "$TMP/nosecret" -H "$AUTH" "$BASE/grade/batch"
    if grep -q 'draws no variants' "$TMP/nosecret"; then
        ok "a server without --variant-secret-file says it draws no variants"
    else
        not_ok "a server without --variant-secret-file says it draws no variants" \
            "$(head -c 300 "$TMP/nosecret")"
    fi
    stop_daemon
    cat "$LOG" >>"$TMP/logs"
else
    not_ok "attnd starts with --grading-token-file alone" "$(head -c 300 "$LOG")"
fi

# 6b. a class bigger than --max-body-bytes, in batches: each batch over
# HTTP gives attnd grade's bytes for it, and with the roster every copy of
# a right answer is found whichever batch its source is in
if start_daemon "$LOG" --port 0 --grading-token-file "$TMP/graders" \
    --variant-secret-file "$V/secret" --roster "$V/class-roster.csv" \
    --max-body-bytes 16384; then
    BASE="http://127.0.0.1:$PORT"
    http_class "$TMP/subs.ndjson"
    split -l 6 "$TMP/http_class" "$TMP/part_"
    split -l 6 "$TMP/subs.ndjson" "$TMP/subpart_"
    same=0 parts=0 big=0
    : >"$TMP/parts_copies"
    for part in "$TMP"/part_*; do
        parts=$((parts + 1))
        [ "$(wc -c <"$part")" -le 16384 ] || big=1
        curl -s -H "$AUTH" -H 'Content-Type: application/x-ndjson' \
            --data-binary @"$part" "$BASE/grade/batch" >"$part.http"
        "$ATTND" grade --question "$TMP/q/dot" --secret-file "$V/secret" \
            --roster "$V/class-roster.csv" <"$TMP/subpart_${part##*/part_}" \
            >"$part.offline" 2>/dev/null
        cmp -s "$part.http" "$part.offline" && same=$((same + 1))
        tail -n 1 "$part.http" >>"$TMP/parts_copies"
    done
    out=$(/usr/bin/python3 - "$TMP/parts_copies" "$TMP/truth.json" <<'EOF_PY'
import json, sys
found = {}
for line in open(sys.argv[1]):
    for m in json.loads(line)['copies']['matches']:
        found[m['id']] = m['matches']['student']
truth = json.load(open(sys.argv[2]))
copies = {w: s for w, (k, s) in truth.items() if k in ('copy', 'perturbed')}
print('ok' if found == copies else f'{found} vs {copies}')
EOF_PY
)
    if [ "$big" = 0 ] && [ "$same" = "$parts" ] && [ "$out" = ok ]; then
        ok "the class in $parts batches under --max-body-bytes 16384: HTTP and attnd grade the same bytes, every copy found"
    else
        not_ok "the class in batches under --max-body-bytes: HTTP and attnd grade the same bytes, every copy found" \
            "$same of $parts batches the same; a batch too big: $big" "$out"
    fi
    stop_daemon
    cat "$LOG" >>"$TMP/logs"
else
    not_ok "attnd starts with --max-body-bytes 16384" "$(head -c 300 "$LOG")"
fi

# 7. the secret is nowhere
if ! grep -qF -- "$SECRET" "$TMP/handouts" "$TMP/http_handouts" "$TMP/offline" \
    "$TMP/http" "$TMP/gs" "$TMP/nogr" "$TMP/nosecret" "$TMP/offline_err" \
    "$TMP/logs" "$LOG" "$TMP/metrics"; then
    ok "the secret is in no handout, grade, problem, log line or metric"
else
    not_ok "the secret is in no handout, grade, problem, log line or metric"
fi
echo "1..$T"
