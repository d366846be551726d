#!/bin/sh
# t_transformer.sh — POST /transformer/encoder and /transformer/decoder on
# the wire: state_dict keys and shapes with their pointers, PyTorch's
# names, parameters given or drawn, unbatched input, masks, limits. The
# numbers against PyTorch are tests/torch/transformer.py (make test).
#   usage: sh t_transformer.sh BASE_URL
BASE=${1:?usage: t_transformer.sh BASE_URL}
DIR=$(dirname "$0")
. "$DIR/lib.sh"

# --- the wire rules --------------------------------------------------------
ENC=/transformer/encoder
DEC=/transformer/decoder
SRC='"src": [[1, 0, 2, -1], [0, 1, 1, 0], [2, 2, 0, 1]]'
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 2, \"dim_feedforward\": 3, \"seed\": 4}"
check_status "seeded encoder, unbatched src (3, 4), is 200" 200
check_json "output (3, 4), weights (L, H, S, S) = (2, 2, 3, 3): no batch axis" \
    '(.output | length) == 3 and (.output[0] | length) == 4 and
     (.weights | length) == 2 and (.weights[0] | length) == 2 and
     (.weights[0][0] | length) == 3 and (.weights[0][0][0] | length) == 3'
check_json "every weight row sums to 1" \
    '[.weights[][][] | add] | all((. - 1 | fabs) < 1e-15)'
check_json "the drawn state_dict has PyTorch's 24 keys in state_dict order" \
    '(.state_dict | keys_unsorted) == ([range(2) as $l |
      ["self_attn.in_proj_weight", "self_attn.in_proj_bias",
       "self_attn.out_proj.weight", "self_attn.out_proj.bias",
       "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
       "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"][] |
      "layers.\($l).\(.)"])'
check_json "  in_proj_weight (3E, E) xavier-uniform within sqrt(6/(4E)); norms 1 and 0" \
    '(.state_dict["layers.0.self_attn.in_proj_weight"] | length) == 12 and
     ([.state_dict["layers.1.self_attn.in_proj_weight"][][] | fabs] | max) <= 0.6123724356957945 and
     .state_dict["layers.0.norm2.weight"] == [1, 1, 1, 1] and
     .state_dict["layers.1.norm1.bias"] == [0, 0, 0, 0]'
cp "$TMP/body" "$TMP/seeded"
# the drawn parameters given back give the same answer
SD=$(jq -c .state_dict "$TMP/seeded")
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 2, \"state_dict\": $SD}"
check_json "the answered state_dict given back answers the same output" \
    '.output == $s[0].output and .weights == $s[0].weights' --slurpfile s "$TMP/seeded"

# state_dict keys: missing, extra, misspelt, shapes; pointers keep the dots
MISSING=$(jq -c '.state_dict | del(.["layers.1.norm2.bias"])' "$TMP/seeded")
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 2, \"state_dict\": $MISSING}"
check_problem "a missing state_dict key is 422 missing_field at it" 422 \
    missing_field /state_dict/layers.1.norm2.bias
EXTRA=$(jq -c '.state_dict + {"layers.2.linear1.weight": [[1]]}' "$TMP/seeded")
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 2, \"state_dict\": $EXTRA}"
check_problem "a key of a third layer with num_layers 2 is 422 unknown_field" \
    422 unknown_field /state_dict/layers.2.linear1.weight
check_json "  the detail names a close key and the layers" \
    '(.detail | contains("did you mean `layers.0.linear1.weight`")) and
     (.detail | contains("l = 0 … 1"))'
TYPO=$(jq -c '.state_dict | with_entries(.key |= sub("norm1.weight"; "norm1.wieght"))' "$TMP/seeded")
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 2, \"state_dict\": $TYPO}"
check_problem "a misspelt key is unknown_field before the missing one" 422 \
    unknown_field /state_dict/layers.0.norm1.wieght
SLASH=$(jq -c '.state_dict + {"a/b~c": 1}' "$TMP/seeded")
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 2, \"state_dict\": $SLASH}"
check_problem "  RFC 6901 escapes '/' and '~' in a key's pointer, never the dots" \
    422 unknown_field '/state_dict/a~1b~0c'
SHAPE=$(jq -c '.state_dict + {"layers.1.linear2.weight": [[1, 2], [3, 4]]}' "$TMP/seeded")
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 2, \"state_dict\": $SHAPE}"
check_problem "a wrong shape is 422 shape_mismatch at its key" 422 \
    shape_mismatch /state_dict/layers.1.linear2.weight
check_json "  with expected (E, F) = (4, 3) and got" \
    '.expected == [4, 3] and .got == [2, 2] and (.detail | contains("(E, F)"))'
RANK=$(jq -c '.state_dict + {"layers.0.norm1.bias": [[0, 0, 0, 0]]}' "$TMP/seeded")
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 2, \"state_dict\": $RANK}"
check_problem "a bias of rank 2 is shape_mismatch at it" 422 \
    shape_mismatch /state_dict/layers.0.norm1.bias
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 2, \"state_dict\": $SD, \"seed\": 1}"
check_problem "state_dict and seed together is 422 at /seed" 422 invalid_value /seed
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 2}"
check_problem "neither state_dict nor seed is 422 missing_field at /state_dict" \
    422 missing_field /state_dict
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 2, \"state_dict\": $SD, \"dim_feedforward\": 5}"
check_problem "dim_feedforward against linear1.weight's rows" 422 \
    invalid_value /dim_feedforward
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 2, \"seed\": 1, \"d_model\": 8}"
check_problem "d_model other than src's features is 422" 422 invalid_value /d_model

# hyper-parameters and PyTorch's names
post_json $ENC "{$SRC, \"nhead\": 2, \"num_layers\": 1, \"seed\": 1}"
check_problem "PyTorch's nhead is unknown_field" 422 unknown_field /nhead
check_json "  and says num_heads" '.detail | contains("`num_heads`")'
post_json $ENC "{$SRC, \"num_heads\": 3, \"num_layers\": 1, \"seed\": 1}"
check_problem "num_heads not dividing d_model" 422 invalid_value /num_heads
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 65, \"seed\": 1}"
check_problem "num_layers above 64" 422 invalid_value /num_layers
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 1, \"seed\": 1, \"activation\": \"tanh\"}"
check_problem "activation other than relu, gelu" 422 invalid_value /activation
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 1, \"seed\": 1, \"layer_norm_eps\": -1}"
check_problem "a negative layer_norm_eps" 422 invalid_value /layer_norm_eps
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 1, \"seed\": 1, \"layer_norm_eps\": 0}"
check_problem "layer_norm_eps 0 (0/0 on a constant row) is 422 at it" 422 invalid_value /layer_norm_eps
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 1, \"seed\": 1, \"src_mask\": [[0]]}"
check_problem "src_mask (1, 1) for S = 3 is shape_mismatch" 422 shape_mismatch /src_mask
check_json "  expected (S, S) = (3, 3)" '.expected == [3, 3] and .got == [1, 1]'
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 1, \"seed\": 1, \"src_mask\": [[[0, 0, 0], [0, 0, 0], [0, 0, 0]]]}"
check_problem "a 3-D src_mask is (H, S, S) unbatched, not (1, S, S)" 422 shape_mismatch /src_mask
check_json "  expected (2, 3, 3)" '.expected == [2, 3, 3]'
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 1, \"seed\": 1, \"src_key_padding_mask\": [0, 0, 1]}"
check_problem "src_key_padding_mask of numbers is wrong_type" 422 wrong_type /src_key_padding_mask/0
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 1, \"seed\": 1, \"src_mask\": [[false, true, true], [false, false, false], [false, false, false]], \"src_key_padding_mask\": [true, false, false], \"fully_masked\": \"error\"}"
check_problem "a row src_mask and the key padding hide wholly, under error" 422 invalid_value /src_mask/0
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 1, \"seed\": 1, \"src_mask\": [[false, true, true], [false, false, false], [false, false, false]], \"src_key_padding_mask\": [true, false, false]}"
check_status "  the same under zero is 200" 200
check_json "  its query 0 has zero weights in every head" \
    '[.weights[0][][0][]] | all(. == 0)'
post_json $DEC "{\"tgt\": [[1, 0, 2, -1], [0, 1, 1, 0]], \"memory\": [[1, 0, 0, 1], [0, 2, 1, 0], [-1, 0, 1, 1]], \"num_heads\": 2, \"num_layers\": 1, \"seed\": 1, \"memory_mask\": [[0, 0], [0, 0]]}"
check_problem "memory_mask (2, 2) for (T, S) = (2, 3) is shape_mismatch" 422 shape_mismatch /memory_mask
post_json $DEC "{\"tgt\": [[1, 0, 2, -1], [0, 1, 1, 0]], \"memory\": [[1, 0, 0, 1], [0, 2, 1, 0], [-1, 0, 1, 1]], \"num_heads\": 2, \"num_layers\": 1, \"seed\": 1, \"memory_key_padding_mask\": [true, true, true], \"fully_masked\": \"error\"}"
check_problem "memory_key_padding_mask hiding all of memory, under error" 422 invalid_value /memory_key_padding_mask
check_json "  the detail names the cross-attention" '.detail | contains("cross-attention")'
post_json $DEC "{\"tgt\": [[1, 0, 2, -1], [0, 1, 1, 0]], \"memory\": [[1, 0, 0, 1], [0, 2, 1, 0], [-1, 0, 1, 1]], \"num_heads\": 2, \"num_layers\": 1, \"seed\": 1, \"memory_mask\": [[0, null, -1], [null, 0, 0]], \"tgt_key_padding_mask\": [false, true]}"
check_status "a float memory_mask with null and tgt_key_padding_mask: 200" 200
check_json "  masked keys weigh exactly 0" \
    '[.cross_weights[0][][0][1], .cross_weights[0][][1][0], .self_weights[0][][][1]] | all(. == 0)'
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 1, \"seed\": 1, \"grad_output\": [[1, 2, 3, 4]]}"
check_problem "grad_output of another shape than the output" 422 \
    shape_mismatch /grad_output

# the decoder: memory against tgt, causal by default
TGT='"tgt": [[[1, 0], [0, 1], [1, 1]]], "memory": [[[2, 0], [0, 2]]]'
post_json $DEC "{$TGT, \"num_heads\": 1, \"num_layers\": 1, \"dim_feedforward\": 2, \"seed\": 9, \"trace\": true}"
check_status "seeded decoder with a trace is 200" 200
check_json "self_weights (1, 1, 1, 3, 3) causal: nothing above the diagonal" \
    '.self_weights[0][0][0] as $w | $w[0][1] == 0 and $w[0][2] == 0 and
     $w[1][2] == 0 and $w[0][0] == 1'
check_json "cross_weights (1, 1, 1, 3, 2), no mask" \
    '(.cross_weights[0][0][0] | length) == 3 and
     all(.cross_weights[0][0][0][][]; . > 0)'
check_json "trace.self_attention.masked has null above the diagonal" \
    '.trace["self_attention.masked"][0][0][0] as $m |
     $m[0][1] == null and $m[1][2] == null and ($m[2][0] | type) == "number"'
check_json "trace.norm_3 is the output" '.trace["norm_3"][0] == .output'
post_json $DEC "{$TGT, \"num_heads\": 1, \"num_layers\": 1, \"seed\": 9, \"causal\": false}"
check_json "causal false: every key is seen" \
    'all(.self_weights[0][0][0][][]; . > 0)'
post_json $DEC "{\"tgt\": [[1, 0]], \"memory\": [[[2, 0]]], \"num_heads\": 1, \"num_layers\": 1, \"seed\": 9}"
check_problem "memory batched and tgt unbatched is shape_mismatch at /memory" \
    422 shape_mismatch /memory
post_json $DEC "{\"tgt\": [[1, 0]], \"memory\": [[2, 0, 1]], \"num_heads\": 1, \"num_layers\": 1, \"seed\": 9}"
check_problem "memory with other features than tgt" 422 shape_mismatch /memory

# limits: refused before anything is allocated
BIG=$(jq -nc '[range(16) | [range(256) | 0.01]]')
post_json $ENC "{\"src\": $BIG, \"num_heads\": 4, \"num_layers\": 64, \"dim_feedforward\": 16000, \"seed\": 1}"
check_problem "64 layers of F = 16000 are over --max-work: 413" 413 payload_too_large
post_json $ENC "{\"src\": $BIG, \"num_heads\": 4, \"num_layers\": 64, \"dim_feedforward\": 17000, \"seed\": 1}"
check_problem "a feed-forward layer over --max-elements: 413" 413 payload_too_large
check_json "  naming ffn_hidden" '.detail | contains("ffn_hidden")'
post_json $ENC "{$SRC, \"num_heads\": 2, \"num_layers\": 1, \"seed\": 1, \"attn_mask\": [[false]]}"
check_problem "nn.MultiheadAttention's attn_mask on the encoder is unknown_field" \
    422 unknown_field /attn_mask
check_json "  naming src_mask and src_key_padding_mask" \
    '.detail | contains("`src_mask`") and contains("`src_key_padding_mask`")'
post_json $DEC "{$TGT, \"num_heads\": 1, \"num_layers\": 1, \"seed\": 9, \"key_padding_mask\": [[false, false]]}"
check_json "key_padding_mask on the decoder names tgt_ and memory_key_padding_mask" \
    '.detail | contains("`tgt_key_padding_mask`") and contains("`memory_key_padding_mask`")'
# a few bytes that would draw (and answer) 1.2 GB of parameters
WIDE=$(jq -nc '[[range(1024) | 0.5]]')
post_json $ENC "{\"src\": $WIDE, \"num_heads\": 1, \"num_layers\": 6, \"seed\": 1}"
check_problem "a seeded stack whose drawn state_dict is beyond the answer bound: 413" \
    413 payload_too_large
check_json "  saying drawn parameters are answered" '.detail | contains("parameters drawn from a seed are answered")'
# and 13 GB: the drawing alone is over --max-work (64 a parameter)
post_json $ENC "{\"src\": $WIDE, \"num_heads\": 1, \"num_layers\": 64, \"seed\": 1}"
check_problem "a seeded stack whose drawing is over --max-work: 413" \
    413 payload_too_large
check_json "  naming --max-work" '.detail | contains("--max-work")'
echo "1..$T"
