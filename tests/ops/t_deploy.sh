#!/bin/sh
# t_deploy.sh — the deployment files, checked without a cluster or a
# container engine:
#   * docker/k8s/*.yaml by tests/ops/k8s/validate.mjs (the Kubernetes API
#     schemas from the npm package kubernetes-models, unknown fields, and
#     attnd's rules; the KServe InferenceService by its structure and
#     against the Deployment), which must also catch planted mistakes;
#   * docker/compose.scale.yaml by docker-compose's own schema (`config`),
#     with the replica count as `--scale` leaves it, and the replicas'
#     settings behind the balancer (trusted proxy = the pinned network);
#   * docker/nginx/nginx.conf by `nginx -t` (paths moved to a temp dir),
#     and the rate limit, health probes and X-Forwarded-For lines in the
#     files it includes.
#   usage: sh tests/ops/t_deploy.sh
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
BASE=""
. "$ROOT/tests/integration/lib.sh"
K8S=$ROOT/tests/ops/k8s

# --- Kubernetes ------------------------------------------------------------
if [ ! -d "$K8S/node_modules/kubernetes-models" ]; then
    not_ok "kubernetes-models is installed (npm ci in tests/ops/k8s; make ops-test does it)"
else
    # the validator's TAP, renumbered into ours
    node "$K8S/validate.mjs" docker/k8s >"$TMP/k8s.out" 2>&1
    rc=$?
    while IFS= read -r line; do
        case "$line" in
        "ok "*) ok "k8s: ${line#* - }" ;;
        "not ok "*) not_ok "k8s: ${line#* - }" ;;
        "#"*) echo "$line" ;;
        esac
    done <"$TMP/k8s.out"
    check "validate.mjs exits 0" [ "$rc" -eq 0 ]

    # planted mistakes: a misspelt field deep down, a wrong type, a missing
    # probe; each must be reported
    mkdir -p "$TMP/bad"
    cp docker/k8s/*.yaml "$TMP/bad/"
    sed -i -e 's/readOnlyRootFilesystem: true/readOnlyRootFilesytem: true/' \
        -e 's/^\( *\)timeoutSeconds: 2$/\1timeoutSeconds: two/' \
        -e 's|path: /v2/health/live|path: /healthz|' "$TMP/bad/deployment.yaml"
    node "$K8S/validate.mjs" "$TMP/bad" >"$TMP/bad.out" 2>&1
    rc=$?
    check "a planted mistake fails the check (exit $rc)" [ "$rc" -eq 1 ]
    check "  a misspelt readOnlyRootFilesystem is an unknown field" \
        grep -q 'securityContext/readOnlyRootFilesytem: unknown field' "$TMP/bad.out"
    check "  timeoutSeconds: two breaks the schema" \
        grep -q 'readinessProbe/timeoutSeconds must be integer' "$TMP/bad.out"
    check "  a liveness probe on /healthz breaks the rule" \
        grep -q 'path /healthz, expected /v2/health/live' "$TMP/bad.out"

    # the probe port: probes back on the main port, a probe port that is
    # the main port, the Service sending requests to it
    mkdir -p "$TMP/bad3"
    cp docker/k8s/*.yaml "$TMP/bad3/"
    sed -i -e '/readinessProbe:/,/port:/s/port: probe/port: http/' \
        "$TMP/bad3/deployment.yaml"
    sed -i -e 's/targetPort: http/targetPort: probe/' "$TMP/bad3/service.yaml"
    node "$K8S/validate.mjs" "$TMP/bad3" >"$TMP/bad3.out" 2>&1
    rc=$?
    check "probe-port mistakes fail the check (exit $rc)" [ "$rc" -eq 1 ]
    check "  a readiness probe on the main port while ATTND_PROBE_PORT is set" \
        grep -q 'port http, expected the probe port' "$TMP/bad3.out"
    check "  a Service targeting the probe port" \
        grep -q 'targetPort probe is the probe port' "$TMP/bad3.out"
    mkdir -p "$TMP/bad4"
    cp docker/k8s/*.yaml "$TMP/bad4/"
    sed -i -e '/name: ATTND_PROBE_PORT/,/value:/s/value: "8081"/value: "8080"/' \
        "$TMP/bad4/deployment.yaml"
    node "$K8S/validate.mjs" "$TMP/bad4" >"$TMP/bad4.out" 2>&1
    check "  ATTND_PROBE_PORT equal to ATTND_PORT (attnd would refuse to start)" \
        grep -q 'ATTND_PROBE_PORT 8080 is ATTND_PORT' "$TMP/bad4.out"

    # and the rules about proxies, the preStop pause and the
    # InferenceService
    mkdir -p "$TMP/bad2"
    cp docker/k8s/*.yaml "$TMP/bad2/"
    sed -i -e 's|value: 10.244.0.0/16$|value: 0.0.0.0/0|' \
        -e 's|command: \["sleep", "5"\]|command: ["true"]|' \
        "$TMP/bad2/deployment.yaml"
    sed -i -e 's|image: attnd:latest|image: attnd:other|' \
        -e 's|- name: http1$|- name: http|' \
        -e 's|^    minReplicas: 2$|    protocolVersion: v2\n    minReplicas: 2|' \
        -e 's|path: /v2/health/ready|path: /healthz|' \
        "$TMP/bad2/inferenceservice.yaml"
    node "$K8S/validate.mjs" "$TMP/bad2" >"$TMP/bad2.out" 2>&1
    rc=$?
    check "a second set of planted mistakes fails the check (exit $rc)" [ "$rc" -eq 1 ]
    check "  ATTND_TRUSTED_PROXY 0.0.0.0/0 (anyone could name a client) breaks the rule" \
        grep -q '"0.0.0.0/0" is not inside a private or loopback range' "$TMP/bad2.out"
    check "  a preStop hook that does not pause breaks the rule" \
        grep -q 'no preStop pause' "$TMP/bad2.out"
    check "  InferenceService: another image than the Deployment's" \
        grep -q 'image attnd:other, the Deployment runs attnd:latest' "$TMP/bad2.out"
    check "  InferenceService: a port name Knative refuses" \
        grep -q 'port name "http": Knative allows only' "$TMP/bad2.out"
    check "  InferenceService: protocolVersion on the custom predictor is an unknown field" \
        grep -q '/spec/predictor/protocolVersion: unknown field' "$TMP/bad2.out"
    check "  InferenceService: a readiness probe on /healthz" \
        grep -q 'path /healthz, expected /v2/health/ready' "$TMP/bad2.out"
fi

# --- compose -----------------------------------------------------------------
if ! command -v docker-compose >/dev/null 2>&1; then
    not_ok "docker-compose is installed (apt-get install docker-compose)"
else
    check "docker-compose config accepts compose.scale.yaml" \
        docker-compose -f docker/compose.scale.yaml config -q
    docker-compose -f docker/compose.scale.yaml config >"$TMP/compose.out" 2>&1
    check "  the replicas publish no port (so that --scale can start many)" \
        sh -c "! sed -n '/^  attnd:/,/^  [a-z]/p' '$TMP/compose.out' | grep -q '^    ports:'"
    check "  only the load balancer is published, on loopback by default" \
        grep -q '127.0.0.1:8080:8080' "$TMP/compose.out"
    # replica_env NAME: the replicas' setting NAME in `config`'s output
    replica_env() {
        sed -n '/^  attnd:/,/^  [a-z]/p' "$1" |
            sed -n "s/^      $2: '*\([^']*\)'*\$/\1/p"
    }
    per_addr=$(replica_env "$TMP/compose.out" ATTND_MAX_CONNECTIONS_PER_ADDRESS)
    check "  the replicas hold no connection cap per address (ATTND_MAX_CONNECTIONS_PER_ADDRESS '$per_addr')" \
        [ "$per_addr" = 0 ]
    subnet=$(sed -n '/^networks:/,/^[a-z]/s/^ *- subnet: //p' "$TMP/compose.out")
    trusted=$(replica_env "$TMP/compose.out" ATTND_TRUSTED_PROXY)
    check "  the replicas trust the balancer's network: ATTND_TRUSTED_PROXY '$trusted' = the pinned subnet '$subnet'" \
        sh -c "[ -n '$subnet' ] && [ '$trusted' = '$subnet' ]"
    ATTND_SUBNET=10.213.0.0/24 docker-compose -f docker/compose.scale.yaml config \
        >"$TMP/compose2.out" 2>&1
    subnet2=$(sed -n '/^networks:/,/^[a-z]/s/^ *- subnet: //p' "$TMP/compose2.out")
    trusted2=$(replica_env "$TMP/compose2.out" ATTND_TRUSTED_PROXY)
    check "  ATTND_SUBNET=10.213.0.0/24 moves both ($subnet2, $trusted2)" \
        sh -c "[ '$subnet2' = 10.213.0.0/24 ] && [ '$trusted2' = 10.213.0.0/24 ]"
fi

# --- nginx -------------------------------------------------------------------
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$NGINX" ]; then
    not_ok "nginx is installed (apt-get install nginx)"
else
    mkdir -p "$TMP/nginx"
    # the included files sit next to nginx.conf, as in the image
    cp docker/nginx/attnd-*.conf "$TMP/nginx/"
    sed -e "s|/tmp/|$TMP/nginx/|g" \
        docker/nginx/nginx.conf >"$TMP/nginx/nginx.conf"
    if "$NGINX" -e "$TMP/nginx/stderr.log" -p "$TMP/nginx/" \
        -c "$TMP/nginx/nginx.conf" -t >"$TMP/nginx/t.out" 2>&1; then
        ok "nginx -t accepts docker/nginx/nginx.conf"
    else
        not_ok "nginx -t accepts docker/nginx/nginx.conf" \
            "$(head -c 600 "$TMP/nginx/t.out")"
    fi
    # the whole configuration as nginx reads it (includes expanded)
    "$NGINX" -e "$TMP/nginx/stderr.log" -p "$TMP/nginx/" \
        -c "$TMP/nginx/nginx.conf" -T >"$TMP/nginx/T.out" 2>&1
    check "  the image copies every file nginx.conf includes" \
        sh -c "for f in \$(sed -n 's/^ *include \\(attnd-[a-z]*\\.conf\\);\$/\\1/p' docker/nginx/*.conf | sort -u); do
            grep -q \"docker/nginx/\$f\" docker/nginx/Dockerfile || { echo \"missing \$f\"; exit 1; }; done"
    check "  a rate limit per client address: limit_req_zone \$binary_remote_addr ... rate=Nr/s" \
        grep -Eq '^limit_req_zone \$binary_remote_addr zone=attnd_per_client:[0-9]+m rate=[0-9]+r/s;$' \
        "$TMP/nginx/T.out"
    check "  applied with a burst, answered 429 (limit_req burst=N nodelay, limit_req_status 429)" \
        sh -c "grep -Eq '^ *limit_req zone=attnd_per_client burst=[0-9]+ nodelay;\$' '$TMP/nginx/T.out' &&
            grep -q '^limit_req_status 429;' '$TMP/nginx/T.out'"
    # the location blocks of attnd-routes.conf, one per paragraph
    locations=$(awk '/^location /{loc=$0} /limit_req zone/{print loc}' docker/nginx/attnd-routes.conf)
    check "  the limit is on 'location /' only, not on the health probes ($locations)" \
        [ "$locations" = "location / {" ]
    check "  its 429 is problem+json rate_limited with Retry-After and Access-Control-Allow-Origin: *" \
        sh -c "sed -n '/^location @attnd_rate_limited/,/^}/p' docker/nginx/attnd-routes.conf >'$TMP/r429' &&
            grep -q 'default_type application/problem+json;' '$TMP/r429' &&
            grep -q 'add_header Retry-After [0-9]* always;' '$TMP/r429' &&
            grep -q 'add_header Access-Control-Allow-Origin \\* always;' '$TMP/r429' &&
            grep -q '\"code\":\"rate_limited\"' '$TMP/r429'"
    check "  X-Forwarded-For is the address nginx saw (\$remote_addr)" \
        grep -q '^proxy_set_header X-Forwarded-For \$remote_addr;$' "$TMP/nginx/T.out"
    check "  a refused or reset connection, and a POST, go to the next replica" \
        grep -Eq '^proxy_next_upstream error timeout .*non_idempotent;$' "$TMP/nginx/T.out"
fi
echo "1..$T"
