#!/bin/sh
# t_binary.sh — the v2 front's binary tensor data extension, through a
# client written with the standard library and numpy as a grader would
# (tests/binary/test_binary.py; docs/binary.md). Debian's python3, which
# has numpy (python3-numpy).
#   usage: sh t_binary.sh BASE_URL
BASE=${1:?usage: t_binary.sh BASE_URL}
exec /usr/bin/python3 "$(dirname "$0")/../binary/test_binary.py" "$BASE"
