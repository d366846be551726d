#!/bin/sh
# t_class_of_300.sh — a seeded class of 300 students (right answers,
# every catalogued mistake of /attention/dot and /softmax/masked, honest
# slips; six ways of writing numbers) graded in one POST /grade/batch with
# the default comparison, and each submission's Gradescope and
# PrairieLearn documents against their schemas
# (tests/grading/class_of_300.py; docs/grading-a-class.md).
#   usage: sh t_class_of_300.sh BASE_URL
BASE=${1:?usage: t_class_of_300.sh BASE_URL}
exec /usr/bin/python3 "$(dirname "$0")/../grading/class_of_300.py" "$BASE"
