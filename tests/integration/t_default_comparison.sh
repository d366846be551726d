#!/bin/sh
# t_default_comparison.sh — the evidence for /grade's default comparison:
# 300 exercises answered right and wrong in six ways of writing numbers,
# graded under each candidate rule (tests/grading/default_comparison.py;
# docs/grading.md "Comparisons").
#   usage: sh t_default_comparison.sh BASE_URL
BASE=${1:?usage: t_default_comparison.sh BASE_URL}
exec /usr/bin/python3 "$(dirname "$0")/../grading/default_comparison.py" "$BASE"
