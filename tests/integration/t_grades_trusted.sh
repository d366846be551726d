#!/bin/sh
# t_grades_trusted.sh — grades a class can trust: answers as students
# write numbers, comparisons per question and per field, exact and finite
# scores, documents within their caps, and a mistake named only where its
# own answer explains the student's (tests/grading/grades_trusted.py;
# docs/grading.md "Comparisons").
#   usage: sh t_grades_trusted.sh BASE_URL
BASE=${1:?usage: t_grades_trusted.sh BASE_URL}
exec /usr/bin/python3 "$(dirname "$0")/../grading/grades_trusted.py" "$BASE"
