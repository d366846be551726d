#!/bin/sh
# t_mistakes_extreme.sh — under extreme inputs (scores near ±709, values
# near ±1e308, underflow, subnormals, equal rows, fully masked rows, huge
# projections, NW bandwidths from 5e-324 to 1.7e308) a mistake /grade
# names on dot, softmax/masked, additive, NW or multihead is finite where
# the student gave numbers, matches the answer under the default
# comparison and is no farther from it than the reference
# (tests/grading/mistakes_extreme.py; docs/misconceptions.md).
#   usage: sh t_mistakes_extreme.sh BASE_URL
BASE=${1:?usage: t_mistakes_extreme.sh BASE_URL}
exec /usr/bin/python3 "$(dirname "$0")/../grading/mistakes_extreme.py" "$BASE"
