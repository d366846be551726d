#!/bin/sh
# t_mistakes.sh — every mistake in the catalogue of misconceptions
# (docs/misconceptions.md) is named by /grade for an answer computed the
# mistaken way, and none is named for a right answer: one script per
# route, tests/grading/mistakes_<route>.py, each its own TAP stream, here
# joined into one. mistakes_extreme.py, a property test over random
# requests, has its own t_mistakes_extreme.sh.
#   usage: sh t_mistakes.sh BASE_URL
BASE=${1:?usage: t_mistakes.sh BASE_URL}
DIR="$(dirname "$0")/../grading"
N=0
STATUS=0
for t in "$DIR"/mistakes_*.py; do
    [ -e "$t" ] || continue
    case $t in */mistakes_extreme.py) continue ;; esac # t_mistakes_extreme.sh
    OUT=$(/usr/bin/python3 "$t" "$BASE") || STATUS=1
    printf '%s\n' "$OUT" | while IFS= read -r line; do
        case $line in
        "ok "* | "not ok "*) printf '%s\n' "$line" ;;
        esac
    done
done
exit $STATUS
