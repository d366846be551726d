#!/bin/sh
# t_grade_batch.sh — POST /grade/batch over HTTP (docs/batch.md): both
# forms, problem lines, CRLF, canonical sharing, batch-level problems, and
# the batch's --max-work and --max-body-bytes on daemons of ATTND started
# by tests/integration/grade_batch.py.
#   usage: sh t_grade_batch.sh BASE_URL   (ATTND in the environment)
BASE=${1:?usage: t_grade_batch.sh BASE_URL}
exec /usr/bin/python3 "$(dirname "$0")/grade_batch.py" "$BASE" "${ATTND:-}"
