#!/bin/sh
# t_svg.sh — weight heatmaps over HTTP (docs/contract.md section 11): an Accept that
# ranks image/svg+xml above application/json gets an SVG 1.1 picture
# (parsed as XML with xmllint; cells, panels, axis titles, viewBox counted),
# with Content-Type image/svg+xml and Vary: Accept; */*, no Accept, a tie
# or an Accept allowing neither get JSON; errors stay problem+json.
# Every picture is validated against the W3C SVG 1.1 DTD (second edition).
#   usage: sh t_svg.sh BASE_URL
#   needs xmllint (Debian libxml2-utils) and the DTD (Debian w3c-sgml-lib);
#   SVG11_DTD names another copy of svg11.dtd
BASE=${1:?usage: t_svg.sh BASE_URL}
. "$(dirname "$0")/lib.sh"
DTD=${SVG11_DTD:-/usr/share/xml/w3c-sgml-lib/schema/dtd/REC-SVG11-20110816/svg11.dtd}

if ! command -v xmllint >/dev/null 2>&1; then
    not_ok "xmllint is installed (apt-get install libxml2-utils)"
    exit 1
fi
if [ ! -r "$DTD" ]; then
    not_ok "the SVG 1.1 DTD is installed (apt-get install w3c-sgml-lib)" "$DTD"
    exit 1
fi

# xpath EXPR: evaluate on the last body (namespace-free: local-name()).
xpath() {
    xmllint --xpath "$1" "$TMP/body" 2>/dev/null
}

# check_svg WHAT CELLS PANELS: the last answer is a valid SVG 1.1 document
# (DTD) with a viewBox, CELLS <rect class="cell"> and PANELS panels.
check_svg() {
    why=""
    [ "$STATUS" = 200 ] || why="status $STATUS"
    case "$(header Content-Type)" in
    image/svg+xml*) ;;
    *) why="$why; content type '$(header Content-Type)'" ;;
    esac
    case "$(header Vary)" in
    *Accept*) ;;
    *) why="$why; Vary '$(header Vary)' lacks Accept" ;;
    esac
    if ! xmllint --noout --nonet --dtdvalid "$DTD" "$TMP/body" \
        2>"$TMP/xml_err"; then
        why="$why; not valid SVG 1.1: $(head -c 300 "$TMP/xml_err")"
    fi
    # one parse for every count: root|viewBox|cells|panels|Keys|Queries|bars
    facts=$(xpath "concat(local-name(/*), ' ', namespace-uri(/*), ' ',
        /*/@version, '|', /*/@viewBox, '|',
        count(//*[local-name()='rect'][@class='cell']), '|',
        count(//*[local-name()='g'][@class='panel']), '|',
        count(//*[local-name()='text'][.='Keys']), '|',
        count(//*[local-name()='text'][.='Queries']), '|',
        count(//*[local-name()='g'][@class='colorbar']))")
    IFS='|' read -r root vb cells panels keys queries bar <<EOF_FACTS
$facts
EOF_FACTS
    [ "$root" = "svg http://www.w3.org/2000/svg 1.1" ] ||
        why="$why; root element '$root'"
    case "$vb" in
    "0 0 "[0-9]*" "[0-9]*) ;;
    *) why="$why; viewBox '$vb'" ;;
    esac
    [ "$cells" = "$2" ] || why="$why; $cells cells, expected $2"
    [ "$panels" = "$3" ] || why="$why; $panels panels, expected $3"
    [ "$keys" = "$3" ] && [ "$queries" = "$3" ] ||
        why="$why; axis titles Keys $keys, Queries $queries"
    [ "$bar" = 1 ] || why="$why; $bar colour bars"
    if [ -z "$why" ]; then
        ok "$1"
    else
        not_ok "$1" "$why" "body: $(body_excerpt)"
    fi
}

# check_json_answer WHAT: 200 application/json with Vary: Accept.
check_json_answer() {
    why=""
    [ "$STATUS" = 200 ] || why="status $STATUS"
    case "$(header Content-Type)" in
    application/json*) ;;
    *) why="$why; content type '$(header Content-Type)'" ;;
    esac
    case "$(header Vary)" in
    *Accept*) ;;
    *) why="$why; Vary '$(header Vary)' lacks Accept" ;;
    esac
    jq -e '.weights | length > 0' "$TMP/body" >/dev/null 2>&1 ||
        why="$why; no weights in the JSON"
    if [ -z "$why" ]; then
        ok "$1"
    else
        not_ok "$1" "$why" "body: $(body_excerpt)"
    fi
}

NW='{"x_train":[1,2,4],"y_train":[0,3,1],"x_query":[2.5],"w":0.5,"y_query":[3]}'

# --- negotiation ------------------------------------------------------------
post_json /regression/nw "$NW" -H 'Accept: image/svg+xml'
check_svg "NW, Accept image/svg+xml: an SVG heatmap of 1 x 3 cells" 3 1
darkest=$(xpath "string(//*[local-name()='rect'][@class='cell'][@x='1']/@fill)")
if [ "$darkest" = "#67000d" ]; then
    ok "NW: key 1 is drawn #67000d (the colour bar's top)"
else
    not_ok "NW: key 1 is drawn #67000d (the colour bar's top)" "fill '$darkest'"
fi
title=$(xpath "string(/*/*[local-name()='title'])")
case "$title" in
*Nadaraya*"1 query"*"3 keys"*) ok "NW: the picture's title names the route and the size" ;;
*) not_ok "NW: the picture's title names the route and the size" "title '$title'" ;;
esac

post_json /regression/nw "$NW" -H 'Accept: */*'
check_json_answer "Accept */* alone: JSON, with Vary: Accept"
post_json /regression/nw "$NW"
check_json_answer "no Accept: JSON"
post_json /regression/nw "$NW" -H 'Accept: text/html'
check_json_answer "Accept allowing neither type: JSON, not 406"
post_json /regression/nw "$NW" -H 'Accept: image/svg+xml, application/json'
check_json_answer "a tie in q: JSON"
post_json /regression/nw "$NW" \
    -H 'Accept: image/svg+xml;q=0.5, application/json'
check_json_answer "image/svg+xml;q=0.5 under application/json: JSON"
post_json /regression/nw "$NW" \
    -H 'Accept: application/json;q=0.5, image/svg+xml'
check_svg "application/json;q=0.5 under image/svg+xml: SVG" 3 1
post_json /regression/nw "$NW" -H 'Accept: image/*, */*;q=0.1'
check_svg "image/* above */*;q=0.1: SVG" 3 1

# --- d2l's toy: 2 examples of 1 query x 10 keys -----------------------------
KEYS=$(jq -cn '[range(2) | [range(10) | [1, 1]]]')
VALS=$(jq -cn '[range(2) | [range(10) as $i | [range(4) | $i * 4 + .]]]')
post_json /attention/dot "{\"queries\": [[[0.5, -1]], [[2, 0.25]]],
    \"keys\": $KEYS, \"values\": $VALS, \"valid_lens\": [2, 6]}" \
    -H 'Accept: image/svg+xml'
check_svg "dot, d2l's toy: 2 panels of 1 x 10 cells" 20 2
white=$(xpath "count(//*[local-name()='rect'][@class='cell'][@fill='#fff5f0'])")
if [ "$white" = 12 ]; then
    ok "dot toy: the 12 masked keys (8 + 4) are drawn white"
else
    not_ok "dot toy: the 12 masked keys (8 + 4) are drawn white" "$white white cells"
fi
post_json /attention/additive "{\"queries\": [[[0.5, -1]], [[2, 0.25]]],
    \"keys\": $KEYS, \"values\": $VALS, \"valid_lens\": [2, 6],
    \"num_hiddens\": 8}" -H 'Accept: image/svg+xml'
check_svg "additive, d2l's toy: 2 panels of 1 x 10 cells" 20 2
post_json /attention/additive "{\"queries\": [[[0.5, -1]], [[2, 0.25]]],
    \"keys\": $KEYS, \"values\": $VALS, \"valid_lens\": [2, 6],
    \"num_hiddens\": 8}" -H 'Accept: application/json'
check_json_answer "additive with Accept application/json: JSON"

# --- multi-head: one panel per example and head -----------------------------
MHQ=$(jq -cn '[range(2) as $b | [range(4) as $i | [range(4) as $j | (($b * 16 + $i * 4 + $j) | sin)]]]')
post_json /attention/multihead "{\"queries\": $MHQ, \"num_heads\": 2,
    \"num_hiddens\": 8, \"seed\": 0}" -H 'Accept: image/svg+xml'
check_svg "multihead (B 2, H 2, 4 x 4): 4 panels of 16 cells" 64 4
labels=$(xpath "count(//*[local-name()='text'][.='example 1, head 1'])")
if [ "$labels" = 1 ]; then
    ok "multihead panels are labelled by example and head"
else
    not_ok "multihead panels are labelled by example and head" "$labels"
fi
MHQ1=$(jq -cn '[range(4) as $i | [range(4) as $j | (($i * 4 + $j) | sin)]]')
post_json /attention/multihead "{\"queries\": $MHQ1, \"num_heads\": 2,
    \"num_hiddens\": 8, \"seed\": 0}" -H 'Accept: image/svg+xml'
check_svg "unbatched multihead (H 2): 2 panels, one per head" 32 2

# --- the seed's identity picture: queries = keys = 10 I, scale 1 ------------
EYE=$(jq -cn '[range(10) as $i | [range(10) as $j | if $i == $j then 10 else 0 end]]')
post_json /attention/dot "{\"queries\": $EYE, \"keys\": $EYE, \"values\": $EYE,
    \"scale\": 1}" -H 'Accept: image/svg+xml'
check_svg "unbatched 10 x 10 identity: one panel of 100 cells" 100 1
diag=$(xpath "count(//*[local-name()='rect'][@class='cell'][@x=@y][@fill='#67000d'])")
if [ "$diag" = 10 ]; then
    ok "identity: the 10 diagonal cells are the darkest"
else
    not_ok "identity: the 10 diagonal cells are the darkest" "$diag dark diagonal cells"
fi

# --- a panel over 256 x 256 is block-averaged --------------------------------
jq -cn '{queries: {shape: [300, 1], data: [range(300) | . / 300]},
         keys: {shape: [300, 1], data: [range(300) | . / 300]},
         values: {shape: [300, 1], data: [range(300) | 1]}}' >"$TMP/big.json"
post_file /attention/dot "$TMP/big.json" -H 'Accept: image/svg+xml'
check_svg "300 x 300 weights: 256 x 256 cells" 65536 1
title=$(xpath "string(//*[local-name()='g'][@class='panel']/*[local-name()='title'])")
case "$title" in
*"300 queries × 300 keys, block-averaged to 256 × 256"*)
    ok "the downsampled panel says so in its title" ;;
*) not_ok "the downsampled panel says so in its title" "title '$title'" ;;
esac

# --- errors stay problem+json --------------------------------------------------
post_json /regression/nw '{"x_train":[1,2,4],"y_train":[0,3],"x_query":[2.5]}' \
    -H 'Accept: image/svg+xml'
check_problem "a shape error with Accept image/svg+xml is problem+json" \
    422 shape_mismatch /y_train
post_json /regression/nw '{"x_train":' -H 'Accept: image/svg+xml'
check_problem "a syntax error with Accept image/svg+xml is problem+json" \
    400 invalid_json
jq -cn '{queries: {shape: [17, 256, 1], data: [range(17 * 256) | 1]},
         keys: {shape: [17, 256, 1], data: [range(17 * 256) | 1]},
         values: {shape: [17, 256, 1], data: [range(17 * 256) | 1]}}' \
    >"$TMP/many.json"
post_file /attention/dot "$TMP/many.json" -H 'Accept: image/svg+xml'
check_problem "17 panels of 256 x 256 (over 2^20 cells) is a 413 problem" \
    413 payload_too_large
# --- token labels and palettes (docs/pictures.md) -----------------------------
LQKV='"queries": [[1, 0], [0, 1]], "keys": [[1, 0], [0, 1], [1, 1]],
    "values": [[1], [2], [3]]'
post_json /attention/dot "{$LQKV, \"labels\": {\"queries\": [\"<script>\", \"a&b\"],
    \"keys\": [\"x\", \"y'\\\"\", \"ünïcödé-long-word\"]}}" -H 'Accept: image/svg+xml'
check_svg "labels with <script>, & and quotes: a valid SVG 1.1 picture" 6 1
facts=$(xpath "concat(count(//*[local-name()='text'][@class='tick-label']), '|',
    string((//*[local-name()='text'][@class='tick-label'])[4]/*), '|',
    string(//*[local-name()='rect'][@class='cell'][6]/*))")
want='5|<script>|query 1 “a&b”, key 2 “ünïcödé-long-word”: 0.401112'
if [ "$facts" = "$want" ] && ! grep -q '<script>' "$TMP/body"; then
    ok "labels: 5 tick labels, the text escaped (no <script> element), tooltips name the tokens"
else
    not_ok "labels: 5 tick labels, the text escaped (no <script> element), tooltips name the tokens" \
        "got '$facts'" "want '$want'"
fi
post_json /attention/dot "{$LQKV, \"labels\": {\"keys\": [\"x\", \"y\"]}}" \
    -H 'Accept: image/svg+xml'
check_problem "2 key labels for 3 keys: 422 shape_mismatch at /labels/keys" \
    422 shape_mismatch /labels/keys
post_json /attention/dot "{$LQKV, \"labels\": {\"queries\": [\"a\"]}}"
check_problem "labels are checked for JSON answers too" \
    422 shape_mismatch /labels/queries
post_json /softmax/masked '{"scores": [[1, 2], [3, 4]], "labels": {"queries": ["p", 7]}}'
check_problem "a label that is not a string: 422 wrong_type" \
    422 wrong_type /labels/queries/1
post_json /softmax/masked '{"scores": [[1, 2], [3, 4]], "labels": {"keys": ["a\u202eb", "c"]}}'
check_problem "a label with a right-to-left override: 422 at /labels/keys/0" \
    422 invalid_value /labels/keys/0
post_json /softmax/masked '{"scores": [[1, 2], [3, 4]], "labels": {"keys": ["\u2067x", "c"]}}'
check_problem "  so is a right-to-left isolate" 422 invalid_value /labels/keys/0
post_json /softmax/masked '{"scores": [[1, 2], [3, 4]], "labels": {"keys": ["c", "a\ufffeb"]}}'
check_problem "a label holding U+FFFE, which XML cannot carry: 422 at /labels/keys/1" \
    422 invalid_value /labels/keys/1
for pal in viridis rdbu; do
    post_json "/attention/dot?palette=$pal" "{$LQKV}" -H 'Accept: image/svg+xml'
    check_svg "?palette=$pal: a valid SVG 1.1 picture" 6 1
done
top=$(xpath "string(//*[local-name()='rect'][@class='cell'][1]/@fill)")
bar=$(xpath "string((//*[local-name()='g'][@class='colorbar']/*[local-name()='text'])[1])")
if [ "$top" = "#67001f" ] && [ "$bar" = "-0.4" ]; then
    ok "rdbu: the largest weight dark red, the scale from -0.4 (symmetric around 0)"
else
    not_ok "rdbu: the largest weight dark red, the scale from -0.4 (symmetric around 0)" \
        "fill '$top', first bar tick '$bar'"
fi
post_json "/attention/dot?palette=jet" "{$LQKV}" -H 'Accept: image/svg+xml'
check_problem "?palette=jet: 422 invalid_value at /palette" 422 invalid_value /palette

# --- GET / is the lab page -------------------------------------------------------
http GET /
check_status "GET / is 200" 200
check_header "GET / is HTML" Content-Type "text/html; charset=utf-8"
if grep -q '<title>attnd lab</title>' "$TMP/body" &&
    ! grep -q 'src="lab.js"' "$TMP/body"; then
    ok "GET / is the lab page with its script inlined"
else
    not_ok "GET / is the lab page with its script inlined" "body: $(body_excerpt)"
fi
check_alive "the SVG requests"
echo "1..$T"
