#!/bin/sh
# t_grade_formats.sh — /grade's LMS formats (Gradescope, PrairieLearn)
# against the schemas of their published documentation, over HTTP and in
# the documents of several submissions (tests/grading/test_formats.py;
# docs/grading.md "LMS formats"). The batch documents come from the unit
# suite's test_grade_lms, beside the daemon binary ($ATTND).
#   usage: sh t_grade_formats.sh BASE_URL [BUILD/tests/test_grade_lms]
BASE=${1:?usage: t_grade_formats.sh BASE_URL [TEST_GRADE_LMS]}
WRITER=${2:-$(dirname "${ATTND:-build/attnd}")/tests/test_grade_lms}
exec /usr/bin/python3 "$(dirname "$0")/../grading/test_formats.py" "$BASE" \
    "$WRITER"
