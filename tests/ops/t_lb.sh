#!/bin/sh
# t_lb.sh — scale-out on loopback: Debian's nginx, with a configuration made
# here around the very files of the compose load balancer
# (docker/nginx/attnd-limits.conf, attnd-routes.conf, attnd-proxy.conf), in
# front of two attnd processes started with the replicas' settings of
# docker/compose.scale.yaml (--trusted-proxy for the balancer's address, no
# connection cap per address). Checked:
#   * requests spread over both replicas; X-Request-Id passes through;
#   * health probes are never rate-limited;
#   * the rate limit per client address holds for the pair as for one
#     process: a client from 127.0.0.2 at ten times the rate gets the
#     configured rate and burst answered (by both replicas together) and
#     the rest refused by nginx (429, problem+json, Retry-After, CORS),
#     while a calm client from 127.0.0.3 gets every answer;
#   * a rolling restart loses nothing: four closed-loop clients send
#     POST /attention/dot through nginx while replica A is stopped with
#     SIGTERM (it drains: readiness 503 on a connection it already had,
#     new connections refused, its in-flight upload answered, exit 0) and
#     started again on the same port, then B; every answer must be 200 and
#     right;
#   * X-Forwarded-For: behind nginx, a replica with its own --rate-limit
#     tells clients apart by the address nginx saw, and an address a client
#     writes into X-Forwarded-For itself is not believed.
# Every wait is bounded; every client is bound to its own loopback address.
#   usage: sh tests/ops/t_lb.sh PATH/TO/attnd
ATTND=${1:?usage: t_lb.sh PATH/TO/attnd}
case $ATTND in /*) ;; *) ATTND=$(pwd)/$ATTND ;; esac
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE=""
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/integration/daemon.sh"
PY=/usr/bin/python3
LOAD=$ROOT/tests/ops/lb_load.py
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
A_PID=""
B_PID=""
C_PID=""
NGINX_PID=""
LOOP=""
cleanup() {
    [ -n "$LOOP" ] && touch "$TMP/stop" && wait "$LOOP" 2>/dev/null
    for p in $A_PID $B_PID $C_PID $NGINX_PID; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT

if [ ! -x "$NGINX" ]; then
    not_ok "nginx is installed (apt-get install nginx)"
    echo "1..$T"
    exit 1
fi

NW='{"x_train":[1,2,4],"y_train":[0,3,1],"x_query":[2.5],"w":0.5}'
NW_PRED=1.4774782878985795
# the replicas' settings in compose.scale.yaml and deployment.yaml: every
# connection comes from the balancer (here 127.0.0.1)
REPLICA="--threads 1 --log-format json --max-connections-per-address 0 --trusted-proxy 127.0.0.1"

# two replicas, one HTTP thread each, JSON access logs
# shellcheck disable=SC2086
if start_daemon "$TMP/a.log" --port 0 $REPLICA &&
    A_PID=$PID && A_PORT=$PORT &&
    start_daemon "$TMP/b.log" --port 0 $REPLICA &&
    B_PID=$PID && B_PORT=$PORT; then
    ok "two attnd replicas on ports $A_PORT and $B_PORT"
else
    not_ok "two attnd replicas start" "$(cat "$TMP"/*.log | head -c 400)"
    echo "1..$T"
    exit 1
fi

# free ports for nginx (asked of the kernel, then released)
free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
LB_PORT=$(free_port)
LB2_PORT=$(free_port)
C_PORT=$(free_port)
mkdir -p "$TMP/nginx"
# the shipped files, included by name from the configuration's directory
# as nginx.conf includes them in the image
for f in attnd-limits.conf attnd-routes.conf attnd-proxy.conf; do
    ln -s "$ROOT/docker/nginx/$f" "$TMP/nginx/$f"
done
cat >"$TMP/nginx/nginx.conf" <<EOF
worker_processes 1;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log info;
events { worker_connections 512; }
http {
    log_format lb '\$status \$upstream_addr \$upstream_status \$upstream_http_x_request_id';
    access_log $TMP/nginx/access.log lb;
    client_body_temp_path $TMP/nginx/body;
    proxy_temp_path $TMP/nginx/proxy;
    fastcgi_temp_path $TMP/nginx/fastcgi;
    uwsgi_temp_path $TMP/nginx/uwsgi;
    scgi_temp_path $TMP/nginx/scgi;
    server_tokens off;
    include attnd-limits.conf;
    # a static group (a compose balancer finds its replicas through DNS):
    # kept-alive connections, and nginx's defaults of one failure taking a
    # replica out for 10 s (max_fails=1 fail_timeout=10s)
    upstream attnd {
        server 127.0.0.1:$A_PORT;
        server 127.0.0.1:$B_PORT;
        keepalive 8;
    }
    upstream attnd_c {
        server 127.0.0.1:$C_PORT;
    }
    server {
        listen 127.0.0.1:$LB_PORT;
        set \$attnd http://attnd;
        include attnd-routes.conf;
    }
    # for the X-Forwarded-For check: one replica with its own rate limit
    server {
        listen 127.0.0.1:$LB2_PORT;
        set \$attnd http://attnd_c;
        include attnd-routes.conf;
    }
}
EOF
NGINX_ARGS="-e $TMP/nginx/stderr.log -p $TMP/nginx/ -c $TMP/nginx/nginx.conf"
# shellcheck disable=SC2086
if "$NGINX" $NGINX_ARGS -t >"$TMP/nginx/t.out" 2>&1; then
    ok "nginx -t accepts the configuration with attnd-limits, -routes and -proxy.conf"
else
    not_ok "nginx -t accepts the configuration with attnd-limits, -routes and -proxy.conf" \
        "$(head -c 600 "$TMP/nginx/t.out")"
fi
# shellcheck disable=SC2086
"$NGINX" $NGINX_ARGS -g 'daemon off;' 2>>"$TMP/nginx/stderr.log" &
NGINX_PID=$!
BASE="http://127.0.0.1:$LB_PORT"
i=0
until curl -s -o /dev/null --max-time 1 "$BASE/healthz" 2>/dev/null; do
    i=$((i + 1))
    if [ $i -ge 100 ] || ! kill -0 "$NGINX_PID" 2>/dev/null; then
        not_ok "nginx starts on port $LB_PORT" "$(cat "$TMP/nginx/stderr.log" "$TMP/nginx/error.log" 2>/dev/null | head -c 600)"
        echo "1..$T"
        exit 1
    fi
    sleep 0.05
done
ok "nginx in front of both on port $LB_PORT"

# served PORT ROUTE: POST ROUTE 200 answers counted by the replica on PORT
served() {
    curl -sS --max-time 5 "http://127.0.0.1:$1/metrics" |
        sed -n "s|^attnd_requests_total{route=\"$2\",method=\"POST\",status=\"200\"} \([0-9]*\)\$|\1|p"
}
# wait_for WHAT COMMAND...: poll COMMAND for up to 20 s
wait_for() {
    what=$1
    shift
    k=0
    until "$@"; do
        k=$((k + 1))
        if [ $k -ge 400 ]; then
            echo "# gave up waiting for $what"
            return 1
        fi
        sleep 0.05
    done
}
# settled N ROUTE PORT...: the replicas on PORT... have counted N answers
# of ROUTE between them (a request is counted when the replica is done with
# it, which can be a moment after nginx has passed the answer on)
settled() {
    s_want=$1
    s_route=$2
    shift 2
    s_sum=0
    for s_port in "$@"; do
        s_n=$(served "$s_port" "$s_route")
        s_sum=$((s_sum + ${s_n:-0}))
    done
    [ "$s_sum" -ge "$s_want" ]
}
# at_least N PORT ROUTE: the replica on PORT has counted N answers of ROUTE
at_least() {
    [ "$(served "$2" "$3")" -ge "$1" ] 2>/dev/null
}

# --- spread ------------------------------------------------------------
: >"$TMP/spread"
i=0
while [ $i -lt 40 ]; do
    curl -sS --max-time 10 -H 'Content-Type: application/json' \
        --data-binary "$NW" "$BASE/regression/nw" >>"$TMP/spread" 2>&1
    echo >>"$TMP/spread"
    i=$((i + 1))
done
check "40 requests through nginx: 40 right answers" \
    jq -e -s --argjson p "$NW_PRED" 'length == 40 and
        all(.predictions[0] == $p)' "$TMP/spread"
wait_for "40 answers counted" settled 40 /regression/nw "$A_PORT" "$B_PORT"
a=$(served "$A_PORT" /regression/nw)
b=$(served "$B_PORT" /regression/nw)
check "both replicas served ($a + $b = 40, at least 10 each)" \
    sh -c "[ $((${a:-0} + ${b:-0})) -eq 40 ] && [ ${a:-0} -ge 10 ] && [ ${b:-0} -ge 10 ]"
http GET /healthz -H 'X-Request-Id: lb-trace-1'
check_header "X-Request-Id passes through nginx both ways" X-Request-Id \
    lb-trace-1
check "  and names the request in the replica's access log" \
    sh -c "grep -h '\"request_id\":\"lb-trace-1\"' '$TMP/a.log' '$TMP/b.log' |
        grep -q '\"path\":\"/healthz\"'"

# --- the rate limit ------------------------------------------------------
# the shipped figures, read from the files nginx runs
RATE=$(sed -n 's/^limit_req_zone .* rate=\([0-9]*\)r\/s;$/\1/p' "$ROOT/docker/nginx/attnd-limits.conf")
BURST=$(sed -n 's/^ *limit_req zone=attnd_per_client burst=\([0-9]*\) nodelay;$/\1/p' "$ROOT/docker/nginx/attnd-routes.conf")
if [ -z "$RATE" ] || [ -z "$BURST" ]; then
    not_ok "the shipped rate and burst are readable (rate '$RATE', burst '$BURST')"
    RATE=20
    BURST=40
fi

# health probes: 150 in a row from one address, on one connection (curl
# reuses it), far past the burst: none limited
k=0
while [ $k -lt 50 ]; do
    for path in /healthz /v2/health/ready /v2/health/live; do
        printf 'url = "%s%s"\noutput = "/dev/null"\n' "$BASE" "$path"
    done
    k=$((k + 1))
done >"$TMP/probes.curl"
curl -s --max-time 30 --interface 127.0.0.4 -K "$TMP/probes.curl" \
    -w '%{http_code}\n' >"$TMP/probes.codes" 2>&1
probes_ok=$(grep -c '^200$' "$TMP/probes.codes")
check "150 health probes in a row from 127.0.0.4 (/healthz, /v2/health/ready, /live): $probes_ok answered 200, none limited" \
    [ "$probes_ok" -eq 150 ]

a0=$(served "$A_PORT" /regression/nw)
b0=$(served "$B_PORT" /regression/nw)
FLOOD=$((10 * RATE))
CALM=$((RATE / 2))
SECS=3
"$PY" "$LOAD" rate "$LB_PORT" "$SECS" 127.0.0.2 "$FLOOD" 127.0.0.3 "$CALM" \
    >"$TMP/rate.json" 2>"$TMP/rate.err"
echo "# rate: $(cat "$TMP/rate.json" "$TMP/rate.err")"
f() { jq -r "$1" "$TMP/rate.json" 2>/dev/null; }
f_sent=$(f '.flood.sent')
f_rate=$(f '.flood.rate')
f_secs=$(f '.flood.seconds')
f_200=$(f '.flood.codes["200"] // 0')
f_429=$(f '.flood.codes["429"] // 0')
f_right=$(f '.flood.right')
f_good429=$(f '.flood.well_formed_429')
c_sent=$(f '.calm.sent')
c_200=$(f '.calm.codes["200"] // 0')
c_right=$(f '.calm.right')
# nginx lets the burst through at once (and one more: the first request
# finds the bucket empty), then one request per 1/RATE s
want=$(awk -v r="$RATE" -v b="$BURST" -v s="${f_secs:-0}" 'BEGIN { printf "%d", b + 1 + r * s }')
lo=$((want * 85 / 100))
hi=$((want * 115 / 100 + 2))
check "a client at ten times the rate (127.0.0.2): $f_sent requests in $f_secs s ($f_rate/s against $RATE r/s, burst $BURST)" \
    awk -v got="${f_rate:-0}" -v r="$RATE" 'BEGIN { exit !(got >= 5 * r) }'
check "  $f_200 answered 200, as for one process at the configured rate and burst (expected $want, $lo..$hi)" \
    sh -c "[ ${f_200:-0} -ge $lo ] && [ ${f_200:-0} -le $hi ]"
check "  every 200 right ($f_right of $f_200), the other $f_429 refused with 429" \
    sh -c "[ '${f_right:-x}' = '$f_200' ] && [ $((${f_200:-0} + ${f_429:-0})) -eq ${f_sent:-0} ] && [ ${f_429:-0} -gt 0 ]"
check "  every 429 problem+json rate_limited with Retry-After and Access-Control-Allow-Origin: * ($f_good429 of $f_429)" \
    [ "${f_good429:-x}" = "$f_429" ]
check "a calm client at the same time (127.0.0.3, $CALM/s): $c_200 of $c_sent answered 200, $c_right right" \
    sh -c "[ ${c_sent:-0} -ge $((CALM * SECS - 2)) ] && [ '${c_200:-x}' = '$c_sent' ] && [ '${c_right:-y}' = '$c_sent' ]"
wait_for "the replicas to count the answers" \
    settled $((a0 + b0 + f_200 + c_200)) /regression/nw "$A_PORT" "$B_PORT"
a1=$(served "$A_PORT" /regression/nw)
b1=$(served "$B_PORT" /regression/nw)
check "  the answered ones came from both replicas (A $((a1 - a0)) + B $((b1 - b0)) = $((f_200 + c_200))): one limit for the pair" \
    sh -c "[ $((a1 - a0 + b1 - b0)) -eq $((f_200 + c_200)) ] && [ $((a1 - a0)) -gt 0 ] && [ $((b1 - b0)) -gt 0 ]"
refused_warn=$(grep -c 'limiting requests, excess' "$TMP/nginx/error.log")
echo "# nginx logged $refused_warn refusals (limit_req_log_level warn)"

# --- rolling restart: A, then B, under four closed-loop clients -------------
# Each step waits for the one before (files and counters as signals), not
# for a time, so the loops run until both restarts are done whatever the
# machine's load. Each client stays under the limit per address (15 of
# 20 r/s), so any answer but 200 would be the restart's doing.
rm -f "$TMP/stop"
"$PY" "$LOAD" loop "$LB_PORT" 127.0.1.1,127.0.1.2,127.0.1.3,127.0.1.4 15 \
    "$TMP/stop" >"$TMP/loop.json" 2>"$TMP/loop.err" &
LOOP=$!
DOT=/attention/dot
both_serve() { at_least 1 "$A_PORT" $DOT && at_least 1 "$B_PORT" $DOT; }
wait_for "the loops to reach both replicas" both_serve

# A's own client: a connection opened before the stop asks for readiness
# again during the drain (when the file "go" appears)
cat >"$TMP/probe.py" <<'PROBE'
import http.client, os, sys, time
port, tmp = int(sys.argv[1]), sys.argv[2]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
c.request("GET", "/v2/health/ready"); r = c.getresponse(); r.read()
print("before", r.status, flush=True)
open(os.path.join(tmp, "probe-ready"), "w").close()
for _ in range(400):
    if os.path.exists(os.path.join(tmp, "go")):
        break
    time.sleep(0.05)
c.request("GET", "/v2/health/ready"); r = c.getresponse(); body = r.read()
print("during", r.status, body.decode(), flush=True)
PROBE
"$PY" "$TMP/probe.py" "$A_PORT" "$TMP" >"$TMP/ready.out" 2>&1 &
PROBE=$!
wait_for "the readiness client" test -f "$TMP/probe-ready"
# and an upload in flight at the stop, finished a second after "go"
half=$((${#NW} / 2))
(
    printf '%s' "$NW" | cut -c1-$half | tr -d '\n'
    wait_for "go" test -f "$TMP/go" >/dev/null
    sleep 1
    printf '%s' "$NW" | cut -c$((half + 1))- | tr -d '\n'
) | curl -sS --max-time 30 -o "$TMP/slow.body" -w '%{http_code}' \
    -H 'Content-Type: application/json' -X POST -T - \
    "http://127.0.0.1:$A_PORT/regression/nw" >"$TMP/slow.status" 2>&1 &
SLOW=$!
# the upload and the scrape asking are both in flight at A
in_flight_a() {
    [ "$(curl -s --max-time 5 "http://127.0.0.1:$A_PORT/metrics" |
        sed -n 's/^attnd_in_flight_requests \([0-9]*\)$/\1/p')" -ge 2 ] 2>/dev/null
}
wait_for "the upload to start" in_flight_a
a_dot=$(served "$A_PORT" $DOT)
t_stop_a=$(date +%s)
kill -TERM "$A_PID"
refused_at() {
    curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$1/healthz"
    [ $? -eq 7 ]
}
wait_for "A to refuse connections" refused_at "$A_PORT"
refused=$?
touch "$TMP/go"
wait "$PROBE"
wait "$SLOW"
PID=$A_PID
wait_daemon
A_PID=""
a_rc=$RC
check "A: new connections refused while it drains" [ "$refused" -eq 0 ]
check "A: readiness 503 {\"ready\":false} on a connection it already had" \
    grep -qx 'during 503 {"ready":false}' "$TMP/ready.out"
check "A: the upload in flight at SIGTERM is answered 200" \
    [ "$(cat "$TMP/slow.status")" = 200 ]
check "A: exits 0 after draining" [ "$a_rc" -eq 0 ]

# restart LOG PORT: start a replica again on PORT; sets PID
# shellcheck disable=SC2086
restart() {
    start_daemon "$1" --port "$2" $REPLICA
}
# takes_traffic PORT: the (new) replica on PORT has answered a request of
# the loops, which come only through nginx
takes_traffic() {
    at_least 1 "$1" $DOT
}
if restart "$TMP/a2.log" "$A_PORT"; then
    A_PID=$PID
    ok "A started again on port $A_PORT"
else
    not_ok "A started again on port $A_PORT" "$(head -c 300 "$TMP/a2.log")"
fi
# nginx took A out for fail_timeout (10 s) when it refused a connection:
# stopping B before A is back in would leave no replica to send to
wait_for "nginx to send to A again" takes_traffic "$A_PORT"
back_a=$(($(date +%s) - t_stop_a))
check "  and took requests from nginx again, $back_a s after its stop" takes_traffic "$A_PORT"

b_dot=$(served "$B_PORT" $DOT)
t_stop_b=$(date +%s)
PID=$B_PID
stop_daemon
B_PID=""
check "B: exits 0 after draining" [ "$RC" -eq 0 ]
# (as a new pod takes a moment to start: until nginx has found B gone)
refused_by() {
    grep -q "connect() failed (111: Connection refused) while connecting to upstream.*upstream: \"http://127.0.0.1:$1/" \
        "$TMP/nginx/error.log"
}
wait_for "nginx to find B gone" refused_by "$B_PORT"
if restart "$TMP/b2.log" "$B_PORT"; then
    B_PID=$PID
    ok "B started again on port $B_PORT"
else
    not_ok "B started again on port $B_PORT" "$(head -c 300 "$TMP/b2.log")"
fi
wait_for "nginx to send to B again" takes_traffic "$B_PORT"
back_b=$(($(date +%s) - t_stop_b))
check "  and took requests from nginx again, $back_b s after its stop" takes_traffic "$B_PORT"
# a moment of both replicas serving, then the loops end
wait_for "B to serve a few more" at_least $(($(served "$B_PORT" $DOT) + 10)) "$B_PORT" $DOT
touch "$TMP/stop"
wait "$LOOP"
LOOP=""
echo "# loop: $(cat "$TMP/loop.json" "$TMP/loop.err")"
g() { jq -r "$1" "$TMP/loop.json" 2>/dev/null; }
l_total=$(g '.requests')
l_200=$(g '.codes["200"] // 0')
l_right=$(g '.right')
l_secs=$(g '.seconds')
l_longest=$(g '.longest_s')
check "rolling restart, 4 clients for $l_secs s: $l_200 of $l_total answers 200, ${l_right} right, 0 lost (longest wait $l_longest s)" \
    sh -c "[ ${l_total:-0} -ge 200 ] && [ '$l_200' = '$l_total' ] && [ '$l_right' = '$l_total' ]"
if [ "$l_200" != "$l_total" ]; then
    echo "#   statuses: $(g '.codes') errors: $(g '.errors')"
fi
a2=$(served "$A_PORT" $DOT)
b2=$(served "$B_PORT" $DOT)
echo "# /attention/dot answered by A before its stop $a_dot, B before its stop $b_dot, A after its restart $a2, B after its restart $b2"
# failed attempts nginx logged, for the replica on PORT
failed_at() {
    grep -E 'connect\(\) failed \(111|upstream prematurely closed|reset by peer' \
        "$TMP/nginx/error.log" | grep -c "upstream: \"http://127.0.0.1:$1/"
}
fail_a=$(failed_at "$A_PORT")
fail_b=$(failed_at "$B_PORT")
check "nginx met both stopped replicas (failed attempts logged: A $fail_a, B $fail_b) and sent those requests on" \
    sh -c "[ $fail_a -ge 1 ] && [ $fail_b -ge 1 ]"
retried=$(grep -c '^200 [^ ]*, ' "$TMP/nginx/access.log")
echo "# nginx answered $retried requests after trying more than one replica"
no_live=$(grep -c 'no live upstreams' "$TMP/nginx/error.log")
check "nginx never ran out of replicas (\"no live upstreams\": $no_live)" [ "$no_live" -eq 0 ]

# --- X-Forwarded-For -----------------------------------------------------------
# Replica C, behind the second server block, with its own limit of one
# request a minute per client: it can only tell clients apart through the
# X-Forwarded-For that nginx sets.
# shellcheck disable=SC2086
if start_daemon "$TMP/c.log" --port "$C_PORT" $REPLICA --rate-limit 1/m --burst 1; then
    C_PID=$PID
    LB2="http://127.0.0.1:$LB2_PORT"
    code_from() {
        addr=$1
        shift
        curl -s --max-time 10 --interface "$addr" -o "$TMP/xff.body" -D "$TMP/xff.head" \
            -w '%{http_code}' -H 'Content-Type: application/json' \
            --data-binary "$NW" "$@" "$LB2/regression/nw"
    }
    s1=$(code_from 127.0.0.4)
    s2=$(code_from 127.0.0.4)
    attnd_429=$(grep -ci '^x-request-id:' "$TMP/xff.head")
    check "C behind nginx: client 127.0.0.4 gets $s1, then $s2 from attnd's own limit" \
        sh -c "[ '$s1' = 200 ] && [ '$s2' = 429 ] && [ $attnd_429 -eq 1 ] &&
            grep -q 'the limit is' '$TMP/xff.body'"
    s3=$(code_from 127.0.0.5)
    check "  client 127.0.0.5 through the same nginx has its own bucket: $s3" [ "$s3" = 200 ]
    s4=$(code_from 127.0.0.1 -H 'X-Forwarded-For: 127.0.0.5')
    check "  a client in the trusted range writing X-Forwarded-For: 127.0.0.5 is not taken for it: $s4" \
        [ "$s4" = 200 ]
    PID=$C_PID
    stop_daemon
    C_PID=""
else
    not_ok "replica C starts on port $C_PORT" "$(head -c 300 "$TMP/c.log")"
fi

kill -QUIT "$NGINX_PID"
wait "$NGINX_PID"
NGINX_PID=""
PID=$A_PID
stop_daemon
A_PID=""
a_rc=$RC
PID=$B_PID
stop_daemon
B_PID=""
check "A and B exit 0 on SIGTERM at the end" sh -c "[ $a_rc -eq 0 ] && [ $RC -eq 0 ]"
if grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMP"/*.log; then
    not_ok "no sanitizer report from the replicas"
else
    ok "no sanitizer report from the replicas"
fi
echo "1..$T"
