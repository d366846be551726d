#!/bin/sh
# t_lb.sh — scale-out on loopback: Debian's nginx, with a configuration made
# here around docker/nginx/attnd-proxy.conf (the lines the compose load
# balancer uses), in front of two attnd processes. Requests must spread over
# both; then one replica is stopped with SIGTERM while two request loops
# run through nginx, and every answer must still be 200 and right: the
# stopped replica drains (readiness 503 on a connection it already had, new
# connections refused, its in-flight request answered, exit 0) and nginx
# sends what it refuses to the other one.
#   usage: sh tests/ops/t_lb.sh PATH/TO/attnd
ATTND=${1:?usage: t_lb.sh PATH/TO/attnd}
case $ATTND in /*) ;; *) ATTND=$(pwd)/$ATTND ;; esac
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE=""
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/integration/daemon.sh"
PY=/usr/bin/python3
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
A_PID=""
B_PID=""
NGINX_PID=""
cleanup() {
    for p in $A_PID $B_PID $NGINX_PID; do kill -KILL "$p" 2>/dev/null; done
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

# two replicas, one HTTP thread each, JSON access logs
if start_daemon "$TMP/a.log" --port 0 --threads 1 --log-format json &&
    A_PID=$PID && A_PORT=$PORT &&
    start_daemon "$TMP/b.log" --port 0 --threads 1 --log-format json &&
    B_PID=$PID && B_PORT=$PORT; then
    ok "two attnd replicas on ports $A_PORT and $B_PORT"
else
    not_ok "two attnd replicas start" "$(cat "$TMP"/*.log | head -c 400)"
    echo "1..$T"
    exit 1
fi

# a free port for nginx (asked of the kernel, then released)
LB_PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$TMP/nginx"
cat >"$TMP/nginx/nginx.conf" <<EOF
worker_processes 1;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log info;
events { worker_connections 256; }
http {
    log_format lb '\$status \$upstream_addr \$upstream_status \$upstream_http_x_request_id';
    access_log $TMP/nginx/access.log lb;
    client_body_temp_path $TMP/nginx/body;
    proxy_temp_path $TMP/nginx/proxy;
    fastcgi_temp_path $TMP/nginx/fastcgi;
    uwsgi_temp_path $TMP/nginx/uwsgi;
    scgi_temp_path $TMP/nginx/scgi;
    upstream attnd {
        server 127.0.0.1:$A_PORT;
        server 127.0.0.1:$B_PORT;
        keepalive 8;
    }
    server {
        listen 127.0.0.1:$LB_PORT;
        location / {
            proxy_pass http://attnd;
            include $ROOT/docker/nginx/attnd-proxy.conf;
        }
    }
}
EOF
NGINX_ARGS="-e $TMP/nginx/stderr.log -p $TMP/nginx/ -c $TMP/nginx/nginx.conf"
# shellcheck disable=SC2086
if "$NGINX" $NGINX_ARGS -t >"$TMP/nginx/t.out" 2>&1; then
    ok "nginx -t accepts the configuration with attnd-proxy.conf"
else
    not_ok "nginx -t accepts the configuration with attnd-proxy.conf" \
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

# served NAME PORT: POST /regression/nw 200 answers counted by a replica
served() {
    curl -sS --max-time 5 "http://127.0.0.1:$2/metrics" |
        sed -n 's/^attnd_requests_total{route="\/regression\/nw",method="POST",status="200"} \([0-9]*\)$/\1/p'
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
# (a request is counted when the replica is done with it, which can be a
# moment after nginx has passed the answer on)
k=0
while a=$(served a "$A_PORT") && b=$(served b "$B_PORT") &&
    [ $((${a:-0} + ${b:-0})) -lt 40 ] && [ $k -lt 100 ]; do
    sleep 0.05
    k=$((k + 1))
done
check "both replicas served ($a + $b = 40, at least 10 each)" \
    sh -c "[ $((${a:-0} + ${b:-0})) -eq 40 ] && [ ${a:-0} -ge 10 ] && [ ${b:-0} -ge 10 ]"
http GET /healthz -H 'X-Request-Id: lb-trace-1'
check_header "X-Request-Id passes through nginx both ways" X-Request-Id \
    lb-trace-1
check "  and names the request in the replica's access log" \
    sh -c "grep -h '\"request_id\":\"lb-trace-1\"' '$TMP/a.log' '$TMP/b.log' |
        grep -q '\"path\":\"/healthz\"'"

# --- stop replica A while two loops run through nginx ----------------------
# Each step waits for the one before (files as signals), not for a time:
# the loops run until A is gone, whatever the machine's load.

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

# loop NAME: chunks of 25 requests (one curl, at most 50/s) until the file
# "stopped" exists, then two more chunks; one status line per request in
# NAME.codes, the bodies in NAME.CHUNK.K
loop() {
    n=0
    after=0
    while [ $after -lt 2 ] && [ $n -lt 60 ]; do
        [ -f "$TMP/stopped" ] && after=$((after + 1))
        n=$((n + 1))
        k=0
        while [ $k -lt 25 ]; do
            printf 'url = "%s/regression/nw"\noutput = "%s.%d.%d"\n' \
                "$BASE" "$TMP/$1" "$n" "$k"
            k=$((k + 1))
        done >"$TMP/$1.curl"
        curl -s --max-time 60 --rate 50/s -K "$TMP/$1.curl" \
            -H 'Content-Type: application/json' --data-binary "$NW" \
            -w '%{http_code}\n' >>"$TMP/$1.codes"
    done
}
loop loop1 &
L1=$!
loop loop2 &
L2=$!
wait_for "the loops" sh -c "[ -s '$TMP/loop1.codes' ] && [ -s '$TMP/loop2.codes' ]"

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
a_before=$(served a "$A_PORT")
kill -TERM "$A_PID"
refused_at_a() {
    curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$A_PORT/healthz"
    [ $? -eq 7 ]
}
wait_for "A to refuse connections" refused_at_a
refused=$?
touch "$TMP/go"
wait "$PROBE"
wait "$SLOW"
PID=$A_PID
wait_daemon
A_PID=""
a_rc=$RC
touch "$TMP/stopped"
wait "$L1"
wait "$L2"

check "A: new connections refused while it drains" [ "$refused" -eq 0 ]
check "A: readiness 503 {\"ready\":false} on a connection it already had" \
    grep -qx 'during 503 {"ready":false}' "$TMP/ready.out"
check "A: the upload in flight at SIGTERM is answered 200" \
    [ "$(cat "$TMP/slow.status")" = 200 ]
check "A: exits 0 after draining" [ "$a_rc" -eq 0 ]
total=$(cat "$TMP/loop1.codes" "$TMP/loop2.codes" | wc -l | tr -d ' ')
good=$(cat "$TMP/loop1.codes" "$TMP/loop2.codes" | grep -c '^200$')
right=$(jq -s --argjson p "$NW_PRED" '[.[] | select(.predictions[0] == $p)]
    | length' "$TMP"/loop1.*.* "$TMP"/loop2.*.* 2>/dev/null)
check "no request lost: $good of $total answers through nginx are 200, ${right:-0} right" \
    sh -c "[ $good -eq $total ] && [ ${right:-0} -eq $total ] && [ $total -ge 100 ]"
if [ "$good" -ne "$total" ]; then
    echo "#   $(cat "$TMP/loop1.codes" "$TMP/loop2.codes" | sort | uniq -c | tr '\n' ' ')"
fi
b_after=$(served b "$B_PORT")
check "B took over: it served $((b_after - b)) of the $total (A $((a_before - a)) before its stop)" \
    [ $((2 * (b_after - b))) -gt "$total" ]
failovers=$(grep -Ec 'connect\(\) failed \(111|upstream prematurely closed|reset by peer' \
    "$TMP/nginx/error.log")
check "nginx met the stopped replica ($failovers failed attempts logged) and sent those requests on" \
    [ "$failovers" -ge 1 ]
retried=$(grep -c '^200 [^ ]*, ' "$TMP/nginx/access.log")
echo "# nginx answered $retried requests after trying more than one replica"

kill -QUIT "$NGINX_PID"
wait "$NGINX_PID"
NGINX_PID=""
PID=$B_PID
stop_daemon
B_PID=""
check "B exits 0 on SIGTERM" [ "$RC" -eq 0 ]
if grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMP/a.log" "$TMP/b.log"; then
    not_ok "no sanitizer report from the replicas"
else
    ok "no sanitizer report from the replicas"
fi
echo "1..$T"
