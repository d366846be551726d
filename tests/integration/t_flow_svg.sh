#!/bin/sh
# t_flow_svg.sh — the flow figure (docs/pictures.md "The flow figure"): a
# traced request ("trace": true) whose Accept asks for image/svg+xml gets
# note 2's self-attention figure, valid SVG 1.1 (the W3C DTD), its nodes the
# tensors of the computation and every cell's <title> the exact number of
# the JSON answer to the same request; the same without "trace" is still
# the weights' heatmap; a figure too large is 413 problem+json.
#   usage: sh t_flow_svg.sh BASE_URL
#   needs xmllint (libxml2-utils), the SVG 1.1 DTD (w3c-sgml-lib), python3
BASE=${1:?usage: t_flow_svg.sh BASE_URL}
. "$(dirname "$0")/lib.sh"
DTD=${SVG11_DTD:-/usr/share/xml/w3c-sgml-lib/schema/dtd/REC-SVG11-20110816/svg11.dtd}

# the notes' example (note 2 section 4.6), causal so that masking shows
NOTES='{"x": [[1.8, 0.4, 1.0, 2.2, 1.9, -1.0, 1.0, -0.2], [-0.1, 0.4, 0.1, 1.5, 0.8, 0.1, 0.4, 0.3],
  [1.5, -0.2, 0.3, -0.9, -2.6, 0.7, 0.9, -0.7], [2.3, -1.5, 0.0, -0.2, 1.5, 1.5, 0.2, 0.4]],
  "d_k": 4, "seed": 42, "causal": true, "trace": true}'

# figure ROUTE BODY NODES WHAT: the SVG figure of BODY, DTD-valid, with the
# nodes NODES (titles separated by |, in order) and every cell's <title>
# equal to the JSON answer's numbers (python3 reads both).
figure() {
    post_json "$1" "$2" -H 'Accept: image/svg+xml'
    why=""
    [ "$STATUS" = 200 ] || why="status $STATUS"
    case "$(header Content-Type)" in
    image/svg+xml*) ;;
    *) why="$why; content type '$(header Content-Type)'" ;;
    esac
    xmllint --noout --nonet --dtdvalid "$DTD" "$TMP/body" 2>"$TMP/xml_err" ||
        why="$why; not valid SVG 1.1: $(head -c 300 "$TMP/xml_err")"
    cp "$TMP/body" "$TMP/figure.svg"
    post_json "$1" "$2"
    cp "$TMP/body" "$TMP/answer.json"
    out=$(python3 - "$TMP/figure.svg" "$TMP/answer.json" "$1" "$2" "$3" <<'EOF_PY'
import json, re, sys
svg = open(sys.argv[1], encoding='utf-8').read()
answer = json.load(open(sys.argv[2]))
request = json.loads(sys.argv[4])
want_nodes = sys.argv[5].split('|')
nodes = re.findall(r'<g class="node"><title>(.+?) \(\d+, \d+\):', svg)
if nodes != want_nodes:
    print(f'nodes {nodes}, expected {want_nodes}'); sys.exit()
cells = re.findall(r'<rect class="cell"[^>]*><title>(.+?)\[(\d+)\]\[(\d+)\] = ([^<]+)</title>', svg)
trace, params = answer.get('trace', {}), answer.get('params', {})
# a node's title -> where its numbers are in the request or the answer
alias = {'X': 'x', 'QKᵀ': 'QK', 'Q, head': 'Q_heads', 'K, head': 'K_heads', 'V, head': 'V_heads',
         'weights · V': 'weighted_values'}
if 'output' not in trace: alias['output'] = 'weighted_values'
if '/attention/dot' == sys.argv[3]: alias.update({'Q': 'queries', 'K': 'keys', 'V': 'values'})
def source(name):
    key = alias.get(name, name)
    for place in (trace, request, params):
        if key in place: return place[key]
    if key in ('keys', 'values'):  # left out: the queries (multi-head self-attention)
        return source('queries')
    raise KeyError(name)
def first_block(t):
    while isinstance(t, list) and isinstance(t[0], list) and isinstance(t[0][0], list):
        t = t[0]
    return t
bad = []
for name, i, j, v in cells:
    t = first_block(source(name))
    x = t[int(i)][int(j)] if isinstance(t[0], list) else t[int(i) + int(j)]
    got = None if v == 'null' else float(v)
    if got != x: bad.append(f'{name}[{i}][{j}] = {v}, the answer {x}')
print(f'{len(cells)} cells' if not bad else '; '.join(bad[:3]))
EOF_PY
)
    case "$out" in
    *" cells") ;;
    *) why="$why; $out" ;;
    esac
    if [ -z "$why" ]; then ok "$4 ($out)"; else not_ok "$4" "$why"; fi
}

figure /attention/self "$NOTES" "X|W_Q|W_K|W_V|Q|K|V|QKᵀ|scaled|masked|weights|output" \
    "self-attention, traced, as SVG: note 2's figure, X and the three weights to the output, every cell the answer's number"
hatched=$(grep -o 'fill="url(#flow-masked)"' "$TMP/figure.svg" | wc -l)
if [ "$hatched" = 12 ]; then
    ok "self-attention, causal: the 6 masked scores and their 6 weights are hatched"
else
    not_ok "self-attention, causal: the 6 masked scores and their 6 weights are hatched" \
        "$hatched hatched cells"
fi
figure /attention/dot '{"queries":[[1,0],[0,1]],"keys":[[1,0],[0,1],[1,1]],"values":[[1],[2],[3]],"valid_lens":2,"trace":true}' \
    "Q|K|V|QKᵀ|scaled|masked|weights|output" "dot product, traced, as SVG: Q, K and V to the output"
figure /attention/multihead '{"queries":[[[1,2,3,4],[2,1,0,1]]],"num_heads":2,"num_hiddens":4,"seed":0,"trace":true}' \
    "queries|keys|values|W_q|W_k|W_v|Q|K|V|Q, head|K, head|V, head|QKᵀ|scaled|masked|weights|weights · V|concat|W_o|output" \
    "multi-head, traced, as SVG: the projections, head 0 of example 0, concat and W_o"
figure /attention/additive '{"queries":[[1,0]],"keys":[[1,0],[0,1]],"values":[[1],[2]],"num_hiddens":3,"seed":0,"trace":true}' \
    "queries|keys|values|W_q|W_k|Q|K|w_v|scores|masked|weights|output" "additive, traced, as SVG: W_q, W_k and w_v to the scores"
figure /regression/nw '{"x_train":[1,2,4],"y_train":[0,3,1],"x_query":[2.5,3],"w":0.5,"trace":true}' \
    "x_query|x_train|distances|scores|weights|y_train|predictions" "Nadaraya–Watson, traced, as SVG: distances, kernel, weights, predictions"

# without "trace": the weights' heatmap, as before
post_json /attention/self '{"x":[[1,2],[3,4]],"d_k":2}' -H 'Accept: image/svg+xml'
if [ "$STATUS" = 200 ] && grep -q 'class="panel"' "$TMP/body" && ! grep -q 'class="node"' "$TMP/body"; then
    ok "without \"trace\": the weights' heatmap"
else
    not_ok "without \"trace\": the weights' heatmap" "status $STATUS: $(body_excerpt)"
fi

# a palette for the weights: weights[0][0] is 1 (causal: the first token
# sees only itself), the top of viridis
post_json '/attention/self?palette=viridis' "$NOTES" -H 'Accept: image/svg+xml'
top=$(grep -o '<rect class="cell"[^>]*><title>weights\[0\]\[0\] = 1<' "$TMP/body" | grep -o 'fill="[^"]*"')
if [ "$top" = 'fill="#fde725"' ]; then
    ok "?palette=viridis colours the weights with viridis: weights[0][0] = 1 is #fde725"
else
    not_ok "?palette=viridis colours the weights with viridis: weights[0][0] = 1 is #fde725" "$top"
fi

# too large: 300 tokens draw a 300 × 300 node
X300=$(python3 -c 'import json; print(json.dumps({"x": [[i % 7, 1] for i in range(300)], "d_k": 2, "trace": True}))')
post_json /attention/self "$X300" -H 'Accept: image/svg+xml'
check_problem "a figure with a node of 300 × 300 cells: 413 problem+json" 413 payload_too_large
