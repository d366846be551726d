#!/bin/sh
# t_masks.sh — attn_mask and key_padding_mask on the wire: shapes, kinds,
# pointers, fully masked rows. The numbers against PyTorch are
# tests/torch/masks.py (make test).
#   usage: sh t_masks.sh BASE_URL
BASE=${1:?usage: t_masks.sh BASE_URL}
DIR=$(dirname "$0")
. "$DIR/lib.sh"

# --- the wire rules --------------------------------------------------------
QKV='"queries": [[1, 0], [0, 1]], "keys": [[1, 0], [0, 1], [1, 1]], "values": [[1], [2], [3]]'
post_json /attention/dot "{$QKV, \"attn_mask\": [[false, true, false], [true, true, true]]}"
check_json "bool attn_mask: masked weights exactly 0, an empty row all 0 (zero)" \
    '.weights == [[0.5, 0, 0.5], [0, 0, 0]] and .output == [[2], [0]]'
post_json /attention/dot "{$QKV, \"attn_mask\": [[false, true, false], [true, true, true]], \"fully_masked\": \"uniform\"}"
check_json "  uniform: the empty row is 1/Nk" \
    '.weights[1] == [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]'
post_json /attention/dot "{$QKV, \"attn_mask\": [[0, null, 0], [null, null, null]], \"fully_masked\": \"error\"}"
check_problem "float attn_mask: a row of null under error is 422" 422 invalid_value /attn_mask/1
check_json "  naming the query" '.detail | contains("query 1 sees no key")'
post_json /attention/dot "{$QKV, \"attn_mask\": [[0, null, 0], [null, true, null]]}"
check_problem "numbers and booleans mixed: wrong_type at the first other entry" 422 wrong_type /attn_mask/1/1
post_json /attention/dot "{$QKV, \"attn_mask\": [[true, false, false], [false, 0, true]]}"
check_problem "  booleans first: the first number is blamed" 422 wrong_type /attn_mask/1/1
post_json /attention/dot "{$QKV, \"attn_mask\": [[false, false, false]]}"
check_problem "attn_mask of the wrong shape is shape_mismatch" 422 shape_mismatch /attn_mask
check_json "  with expected and got" '.expected == [2, 3] and .got == [1, 3]'
post_json /attention/dot "{$QKV, \"attn_mask\": [[false, false], [false, false, true]]}"
check_problem "a ragged attn_mask is ragged_array" 422 ragged_array /attn_mask/1
post_json /attention/dot "{$QKV, \"key_padding_mask\": [false, true]}"
check_problem "key_padding_mask of the wrong shape" 422 shape_mismatch /key_padding_mask
check_json "  expected (Nk)" '.expected == [3] and .got == [2]'
post_json /attention/dot "{$QKV, \"key_padding_mask\": [0, 1, 1]}"
check_problem "key_padding_mask takes booleans only" 422 wrong_type /key_padding_mask/0
post_json /attention/dot "{$QKV, \"key_padding_mask\": [true, true, true], \"fully_masked\": \"error\"}"
check_problem "all keys padding under error: the key_padding_mask is blamed" 422 invalid_value /key_padding_mask
post_json /attention/dot "{$QKV, \"key_padding_mask\": [false, true, true], \"return_scores\": true}"
check_json "key padding: padded scores print as null, weights 0" \
    '.scores[0][1] == null and .scores[1][2] == null and .weights == [[1, 0, 0], [1, 0, 0]]'
post_json /attention/dot "{$QKV, \"attn_mask\": {\"shape\": [2, 3], \"data\": [false, true, false, true, true, true]}}"
check_json "the flat {shape, data} form" '.weights == [[0.5, 0, 0.5], [0, 0, 0]]'
post_json /attention/dot "{$QKV, \"attn_mask\": [[false, false, false], [false, false, false]], \"keys\": 1}"
check_problem "wrong_type of another field comes before the mask's shape" 422 wrong_type /keys
post_json /attention/dot "{$QKV, \"attn_mask\": [[false, false, false]], \"valid_lens\": [1, 5]}"
check_problem "the mask's shape comes before valid_lens' values" 422 shape_mismatch /attn_mask
BQKV='"queries": [[[1, 0], [0, 1]]], "keys": [[[1, 0], [0, 1]]], "values": [[[1], [2]]]'
post_json /attention/dot "{$BQKV, \"attn_mask\": [[[false, true], [false, false]]], \"valid_lens\": [1], \"fully_masked\": \"error\"}"
check_json "attn_mask AND valid_lens: each row keeps key 0" '.weights == [[[1, 0], [1, 0]]]'
post_json /attention/dot "{$BQKV, \"attn_mask\": [[[true, false], [false, false]]], \"valid_lens\": [1], \"fully_masked\": \"error\"}"
check_problem "attn_mask AND valid_lens empties row 0: the mask's row is blamed" 422 invalid_value /attn_mask/0/0
check_json "  naming query 0 of example 0" '.detail | contains("query 0 of example 0")'
MH='"queries": [[1, 0], [0, 1]], "num_heads": 2, "num_hiddens": 2, "seed": 1'
post_json /attention/multihead "{$MH, \"attn_mask\": [[[false, true], [true, true]], [[true, false], [false, false]]], \"fully_masked\": \"error\"}"
check_problem "multihead (H, Nq, Nk) unbatched: head 0's empty row is blamed" 422 invalid_value /attn_mask/0/1
check_json "  naming query and head" '.detail | contains("query 1, head 0")'
post_json /attention/multihead "{$MH, \"attn_mask\": [[[false, true], [true, true]], [[true, false], [false, false]]]}"
check_json "  zero: per-head rows" '.weights[0][1] == [0, 0] and .weights[1][0] == [0, 1]'
post_json /attention/multihead "{$MH, \"attn_mask\": [[[false, true], [true, true]], [[true, false], [false, false]], [[true, false], [false, false]]]}"
check_problem "multihead attn_mask with a wrong leading axis" 422 shape_mismatch /attn_mask
post_json /softmax/masked '{"scores": [[0, 0, 0], [1, 2, 3]], "attn_mask": [[0, null, 0], [null, 0, 0]]}'
check_json "softmax/masked with a float mask" \
    '.weights == [[0.5, 0, 0.5], [0, 0.2689414213699951, 0.7310585786300049]]'
post_json /attention/additive "{$QKV, \"num_hiddens\": 2, \"seed\": 1, \"attn_mask\": [[false, true, true], [true, true, false]]}"
check_json "additive takes attn_mask" '.weights[0] == [1, 0, 0] and .weights[1] == [0, 0, 1]'

echo "1..$T"
