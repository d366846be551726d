#!/bin/sh
# t_self_attention.sh — POST /attention/self against the seed note's own
# code (note 2, section 4.6), run verbatim with numpy: the drawn W_Q, W_K,
# W_V to the bit (NumPy's legacy generator), the note's printout, output
# and weights, batches, masks, the trace, gradients against finite
# differences, and the errors (tests/integration/notes_self_attention.py).
# Debian's python3, which has numpy (python3-numpy); without numpy the
# checks fail.
#   usage: sh t_self_attention.sh BASE_URL
BASE=${1:?usage: t_self_attention.sh BASE_URL}
if [ ! -x /usr/bin/python3 ]; then
    echo "not ok 1 - /usr/bin/python3 (with python3-numpy) runs the note's code"
    exit 1
fi
exec /usr/bin/python3 "$(dirname "$0")/notes_self_attention.py" "$BASE"
