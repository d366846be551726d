#!/bin/sh
# t_grade_own.sh — every data case's own answer passes /grade
# (tests/cases/grade_own_answers.py; docs/contract.md section 13).
#   usage: sh t_grade_own.sh BASE_URL
BASE=${1:?usage: t_grade_own.sh BASE_URL}
exec python3 "$(dirname "$0")/../cases/grade_own_answers.py" "$BASE"
