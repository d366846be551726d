#!/bin/sh
# t_trace.sh — "trace": true on dot, multihead, additive and NW
# (docs/trace.md): every intermediate recomputed with numpy from the
# request, the answer unchanged by the trace, tensor_format and precision,
# /grade of a traced answer, wrong types, and the 413s of a trace over
# --max-elements, --max-work and the memory budget (two daemons of ATTND
# with small limits). numpy is Debian's, for /usr/bin/python3.
#   usage: sh t_trace.sh BASE_URL   (ATTND in the environment)
BASE=${1:?usage: t_trace.sh BASE_URL}
exec /usr/bin/python3 "$(dirname "$0")/trace_check.py" "$BASE"
