#!/bin/sh
# t_grade_formats.sh — /grade's LMS formats (Gradescope, PrairieLearn)
# against the schemas of their published documentation, over HTTP, for
# single answers and for the documents of a batch
# (tests/grading/test_formats.py; docs/grading.md "LMS formats").
#   usage: sh t_grade_formats.sh BASE_URL
BASE=${1:?usage: t_grade_formats.sh BASE_URL}
exec /usr/bin/python3 "$(dirname "$0")/../grading/test_formats.py" "$BASE"
