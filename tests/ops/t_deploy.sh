#!/bin/sh
# t_deploy.sh — the deployment files, checked without a cluster or a
# container engine:
#   * docker/k8s/*.yaml by tests/ops/k8s/validate.mjs (the Kubernetes API
#     schemas from the npm package kubernetes-models, unknown fields, and
#     attnd's rules), which must also catch three planted mistakes;
#   * docker/compose.scale.yaml by docker-compose's own schema (`config`),
#     with the replica count as `--scale` leaves it;
#   * docker/nginx/nginx.conf by `nginx -t` (paths moved to a temp dir).
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
fi

# --- nginx -------------------------------------------------------------------
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$NGINX" ]; then
    not_ok "nginx is installed (apt-get install nginx)"
else
    mkdir -p "$TMP/nginx"
    sed -e "s|/tmp/|$TMP/nginx/|g" \
        -e "s|/etc/nginx/attnd-proxy.conf|$ROOT/docker/nginx/attnd-proxy.conf|" \
        docker/nginx/nginx.conf >"$TMP/nginx/nginx.conf"
    if "$NGINX" -e "$TMP/nginx/stderr.log" -p "$TMP/nginx/" \
        -c "$TMP/nginx/nginx.conf" -t >"$TMP/nginx/t.out" 2>&1; then
        ok "nginx -t accepts docker/nginx/nginx.conf"
    else
        not_ok "nginx -t accepts docker/nginx/nginx.conf" \
            "$(head -c 600 "$TMP/nginx/t.out")"
    fi
fi
echo "1..$T"
