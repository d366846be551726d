#!/bin/sh
# t_variants.sh — a variant per student (docs/variants.md): `attnd
# variants` draws each student's handout of tests/variants/dot from the
# golden secret; its lines are the golden ones drawn on the machine they
# were checked in from (the same inputs, the same bytes on any machine),
# numpy reproduces every drawn number from HMAC-SHA-256 and np.random.seed,
# a group shares one variant, a new version changes every variant and
# nothing else does, the secret appears in no output, and bad rosters,
# marks and secrets are refused with exit 1.
#   usage: sh t_variants.sh BASE_URL   (ATTND in the environment)
BASE=${1:?usage: t_variants.sh BASE_URL}
. "$(dirname "$0")/lib.sh"
DIR=$(cd "$(dirname "$0")/../variants" && pwd)

if [ -z "${ATTND:-}" ] || [ ! -x "$ATTND" ]; then
    not_ok "ATTND names the attnd binary (tests/integration/run.sh exports it)"
    exit 0
fi

variants() {
    "$ATTND" variants "$@" >"$TMP/out" 2>"$TMP/err"
    RC=$?
}

variants --question "$DIR/dot" --roster "$DIR/roster.csv" --secret-file "$DIR/secret"
if [ "$RC" = 0 ] && cmp -s "$TMP/out" "$DIR/golden-v1.ndjson"; then
    ok "the golden roster's handouts, version 1: byte for byte the checked-in ones"
else
    not_ok "the golden roster's handouts, version 1: byte for byte the checked-in ones" \
        "exit $RC: $(head -c 300 "$TMP/err")" "$(diff "$TMP/out" "$DIR/golden-v1.ndjson" | head -c 400)"
fi
cp "$TMP/out" "$TMP/v1"
cat "$TMP/err" >"$TMP/all_err"
variants --question "$DIR/dot" --roster "$DIR/roster.csv" --secret-file "$DIR/secret" --version 2
if [ "$RC" = 0 ] && cmp -s "$TMP/out" "$DIR/golden-v2.ndjson"; then
    ok "version 2: byte for byte the checked-in ones"
else
    not_ok "version 2: byte for byte the checked-in ones" "exit $RC: $(head -c 300 "$TMP/err")"
fi
cat "$TMP/err" >>"$TMP/all_err"
cp "$TMP/out" "$TMP/v2"

# numpy reproduces each variant: the key, each member's words, the draw
out=$(/usr/bin/python3 - "$DIR" "$TMP/v1" "$TMP/v2" <<'EOF_PY'
import hashlib, hmac, json, sys
import numpy as np
d = sys.argv[1]
secret = open(f'{d}/secret', 'rb').read().rstrip(b'\r\n')
template = json.load(open(f'{d}/dot/request.json'))
drawn = {}
for version, path in (('1', sys.argv[2]), ('2', sys.argv[3])):
    for line in open(path):
        s = json.loads(line)
        who = s.get('group', s['student'])
        key = hmac.new(secret, f'{who}\x1fdot\x1f{version}'.encode(), hashlib.sha256).digest()
        for name, v in template.items():
            if not (isinstance(v, dict) and 'draw' in v):
                assert s['request'][name] == v, (name, s['request'][name])
                continue
            draw = v['draw']
            np.random.seed(np.frombuffer(hmac.new(key, name.encode(), hashlib.sha256).digest(), dtype='<u4'))
            if draw['distribution'] == 'normal':
                x = np.random.normal(draw.get('mean', 0), draw.get('std', 1), draw['shape'])
            else:
                x = np.random.uniform(draw.get('low', 0), draw.get('high', 1), draw['shape'])
            if 'round' in draw:
                x = np.round(x, draw['round'])
            assert np.array_equal(np.array(s['request'][name]), x), (who, version, name)
            drawn[(s['student'], version, name)] = s['request'][name]
students = sorted({k[0] for k in drawn})
names = sorted({k[2] for k in drawn})
# a group shares one variant; everyone else differs, in every member
same = [(a, b) for a in students for b in students if a < b and all(drawn[(a, '1', n)] == drawn[(b, '1', n)] for n in names)]
assert same == [('alan', 'grace')], same
differ = all(drawn[(a, '1', n)] != drawn[(b, '1', n)] for a in students for b in students
             if a < b and (a, b) != ('alan', 'grace') for n in names)
bumped = all(drawn[(s, '1', n)] != drawn[(s, '2', n)] for s in students for n in names)
print(f'{len(drawn)} members drawn' if differ and bumped else f'differ {differ} bumped {bumped}')
EOF_PY
)
case "$out" in
*" members drawn") ok "numpy reproduces every drawn member from HMAC-SHA-256 and np.random.seed; a group (alan, grace) shares one variant, the others all differ, and version 2 changes every member ($out)" ;;
*) not_ok "numpy reproduces every variant" "$out" ;;
esac

# the secret is in no handout and no message
secret=$(cat "$DIR/secret")
variants --question "$DIR/dot" --roster "$DIR/roster.csv" --secret-file "$DIR/secret" --out "$TMP/handouts"
if [ "$RC" = 0 ] && [ "$(ls "$TMP/handouts" | wc -l)" = 5 ] &&
    cmp -s "$TMP/handouts/ada.json" "$(sed -n 1p "$TMP/v1" | sed 's/^{"student":"ada","request"://; s/}$//' >"$TMP/ada"; echo "$TMP/ada")" &&
    ! grep -rqF "$secret" "$TMP/handouts" "$TMP/v1" "$TMP/v2" "$TMP/all_err" "$TMP/err"; then
    ok "--out writes one handout per student (ada.json is her line's request); the secret appears in none, nor in any message"
else
    not_ok "--out writes one handout per student; the secret appears in none" "exit $RC: $(cat "$TMP/err")"
fi

# refusals: exit 1 and a message naming the fault
refused() {
    if [ "$RC" = 1 ] && [ ! -s "$TMP/out" ] && grep -q "$2" "$TMP/err"; then
        ok "$1"
    else
        not_ok "$1" "exit $RC, stderr: $(head -c 300 "$TMP/err")"
    fi
}
ATTND_VARIANT_SECRET=short variants --question "$DIR/dot" --roster "$DIR/roster.csv"
refused "a secret of 5 bytes is refused" "at least 16"
env -u ATTND_VARIANT_SECRET "$ATTND" variants --question "$DIR/dot" --roster "$DIR/roster.csv" >"$TMP/out" 2>"$TMP/err"
RC=$?
refused "no secret at all is refused" "no secret"
printf 'ada\n../etc/passwd\n' >"$TMP/roster"
variants --question "$DIR/dot" --roster "$TMP/roster" --secret-file "$DIR/secret"
refused "a roster id that is no file name (../etc/passwd) is refused before anything is written" "is not an id"
printf 'ada\nada\n' >"$TMP/roster"
variants --question "$DIR/dot" --roster "$TMP/roster" --secret-file "$DIR/secret"
refused "a student listed twice is refused" "listed twice"
mkdir -p "$TMP/bad"
printf '{"queries": {"draw": {"shape": [2, 3], "distribution": "normal", "std": -1}}}' >"$TMP/bad/request.json"
variants --question "$TMP/bad" --roster "$DIR/roster.csv" --secret-file "$DIR/secret"
refused "a mark with std -1 is refused, its pointer named" "/queries/draw/std"
printf '{"queries": {"draw": {"shape": [2, 3], "distribution": "normal", "sd": 1}}}' >"$TMP/bad/request.json"
variants --question "$TMP/bad" --roster "$DIR/roster.csv" --secret-file "$DIR/secret"
refused "a mark with an unknown member (sd) is refused" "/queries/draw/sd"
printf '{"queries": [[1, 2]]}' >"$TMP/bad/request.json"
variants --question "$TMP/bad" --roster "$DIR/roster.csv" --secret-file "$DIR/secret"
refused "a request.json that marks nothing is refused: every student would get the same" "marks no member"
