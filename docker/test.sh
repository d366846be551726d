#!/bin/sh
# `make docker-test`: build the attnd image (its build runs the unit tests),
# run it on a private network, wait until its HEALTHCHECK passes, run the
# curl suite (tests/integration/t_*.sh) from a test container against
# http://attnd:8080, stop attnd with SIGTERM and require exit status 0.
# Prints TAP and ends with one line "N passed, N failed".
#
# Needs no running engine: docker/engine.sh installs and starts dockerd when
# none answers, and docker/base-image.sh builds debian:bookworm-slim with
# mmdebstrap when no registry can be reached.
#
#   env: ATTND_ENGINE=docker|podman   engine choice (see docker/engine.sh)
#        ATTND_IMAGE                  image tag (default attnd:latest)
#        ATTND_TESTS_IMAGE            test image tag (default attnd-tests:latest)
#        ATTND_KEEP=1                 leave the containers and network behind
set -u
cd "$(dirname "$0")/.." || exit 1

IMAGE=${ATTND_IMAGE:-attnd:latest}
TESTS_IMAGE=${ATTND_TESTS_IMAGE:-attnd-tests:latest}
OUT=build/docker
RUN_ID=attnd-test-$$
NET=$RUN_ID
DAEMON=$RUN_ID-attnd
TESTER=$RUN_ID-tests
HEALTH_WAIT=60
STOP_WAIT=20
passed=0
failed=0
t0=$(date +%s)
mkdir -p "$OUT"

ok() { echo "ok - $*"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $*"; failed=$((failed + 1)); }
elapsed() { echo $(($(date +%s) - ${1:-$t0})); }
note() { echo "# $*"; }

cleanup() {
    [ -n "${DOCKER:-}" ] || return 0
    if [ "${ATTND_KEEP:-0}" = 1 ]; then
        note "kept: containers $DAEMON, network $NET"
        return 0
    fi
    timeout 60 $DOCKER rm -f "$TESTER" "$DAEMON" >/dev/null 2>&1
    timeout 60 $DOCKER network rm "$NET" >/dev/null 2>&1
}

finish() {
    cleanup
    note "total $(elapsed)s"
    echo "$passed passed, $failed failed"
    trap - EXIT
    [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
    exit $?
}
trap finish EXIT
trap 'not_ok "interrupted"; exit 1' INT TERM HUP

show_daemon_log() {
    timeout 30 $DOCKER logs "$DAEMON" >"$OUT/attnd.log" 2>&1
    note "attnd's log ($OUT/attnd.log), last lines:"
    tail -n 20 "$OUT/attnd.log" | sed 's/^/#   /'
}

# 1. Engine.
t=$(date +%s)
DOCKER=$(sh docker/engine.sh start 2>"$OUT/engine.log")
rc=$?
sed 's/^/# /' "$OUT/engine.log"
[ "$rc" -eq 0 ] || { not_ok "no container engine"; exit 1; }
export DOCKER
note "engine: $DOCKER ($(elapsed "$t")s)"
RUN_OPTS=
BUILD_OPTS=
HEALTH_OPTS="--health-interval 1s"
case $DOCKER in
podman*)
    # The sandbox's hard limits are lower than podman's defaults. Podman
    # schedules health checks with systemd timers: without systemd, this
    # script runs them itself.
    RUN_OPTS="--ulimit nofile=20000:20000 --ulimit nproc=32768:32768"
    BUILD_OPTS="--format docker $RUN_OPTS"
    HEALTH_OPTS="--health-interval disable"
    ;;
*)
    # BuildKit needs the buildx plugin; without it, use the classic builder.
    timeout 20 docker buildx version >/dev/null 2>&1 || export DOCKER_BUILDKIT=0
    ;;
esac

# 2. Base image.
t=$(date +%s)
sh docker/base-image.sh 2>&1 | sed 's/^/# /'
timeout 30 $DOCKER image inspect debian:bookworm-slim >/dev/null 2>&1 ||
    { not_ok "base image debian:bookworm-slim"; exit 1; }
note "base image ready ($(elapsed "$t")s)"

# 3. Images. Some processors need OpenBLAS's kernel chosen by hand: pass the
# host's choice on to the build (unit tests) and to attnd.
t=$(date +%s)
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
set -- --build-arg "VERSION=$version"
source=$(git remote get-url origin 2>/dev/null) &&
    case $source in https://*) set -- "$@" --build-arg "SOURCE=$source" ;; esac
blas_env=
for v in OPENBLAS_CORETYPE OPENBLAS_L2_SIZE; do
    eval "val=\${$v:-}"
    [ -n "$val" ] || continue
    set -- "$@" --build-arg "$v"
    blas_env="$blas_env -e $v"
done
note "building $IMAGE and $TESTS_IMAGE (log: $OUT/build.log)"
if ! timeout 1800 $DOCKER build $BUILD_OPTS "$@" --target runtime -t "$IMAGE" . \
        >"$OUT/build.log" 2>&1; then
    tail -n 40 "$OUT/build.log" | sed -e 's/\x1b\[[0-9;]*m//g' -e 's/^/#   /'
    not_ok "build $IMAGE (unit tests run in the build)"
    exit 1
fi
unit=$(sed -n 's/^\(#[0-9]* [0-9.]* \)\{0,1\}\([0-9]* passed, [0-9]* failed\)$/\2/p' \
    "$OUT/build.log" | tail -n 1)
ok "build $IMAGE, unit tests ${unit:-passed in an earlier build (cached)}"
if ! timeout 900 $DOCKER build $BUILD_OPTS "$@" --target tests -t "$TESTS_IMAGE" . \
        >>"$OUT/build.log" 2>&1; then
    tail -n 40 "$OUT/build.log" | sed -e 's/\x1b\[[0-9;]*m//g' -e 's/^/#   /'
    not_ok "build $TESTS_IMAGE"
    exit 1
fi
size=$($DOCKER image inspect --format '{{.Size}}' "$IMAGE")
note "images built ($(elapsed "$t")s); $IMAGE is $((size / 1000000)) MB ($size bytes)"

# 4. attnd on a private network, reachable as attnd:8080.
timeout 60 $DOCKER network create "$NET" >/dev/null ||
    { not_ok "create network $NET"; exit 1; }
t=$(date +%s)
if ! timeout 120 $DOCKER run -d --name "$DAEMON" --network "$NET" \
        --network-alias attnd --read-only --cap-drop ALL \
        --security-opt no-new-privileges $HEALTH_OPTS \
        $blas_env $RUN_OPTS "$IMAGE" >/dev/null 2>"$OUT/run.log"; then
    sed 's/^/#   /' "$OUT/run.log"
    not_ok "start attnd"
    exit 1
fi
status=starting
while [ "$(elapsed "$t")" -lt "$HEALTH_WAIT" ]; do
    case $DOCKER in
    podman*)
        # No systemd timer runs podman's checks here: run them by hand.
        timeout 10 $DOCKER healthcheck run "$DAEMON" >/dev/null 2>&1 &&
            status=healthy
        ;;
    *)
        status=$(timeout 10 $DOCKER inspect -f '{{.State.Health.Status}}' \
            "$DAEMON" 2>/dev/null)
        ;;
    esac
    [ "$status" = healthy ] && break
    running=$(timeout 10 $DOCKER inspect -f '{{.State.Running}}' "$DAEMON")
    [ "$running" = true ] || { status="exited"; break; }
    sleep 1
done
if [ "$status" != healthy ]; then
    not_ok "attnd healthy within ${HEALTH_WAIT}s (status: $status)"
    show_daemon_log
    exit 1
fi
ok "attnd healthy after $(elapsed "$t")s (HEALTHCHECK attnd --healthcheck)"

# 5. The curl suite from its own container.
t=$(date +%s)
timeout 1800 $DOCKER run --name "$TESTER" --network "$NET" \
    $blas_env $RUN_OPTS "$TESTS_IMAGE" http://attnd:8080 >"$OUT/integration.log" 2>&1
rc=$?
sed 's/^\([0-9]* passed, [0-9]* failed\)$/# integration: \1/' "$OUT/integration.log"
p=$(grep -c '^ok ' "$OUT/integration.log")
f=$(grep -c '^not ok ' "$OUT/integration.log")
passed=$((passed + p))
failed=$((failed + f))
[ "$p" -gt 0 ] || not_ok "the integration suite ran no test"
[ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || not_ok "test container exited with $rc"
note "integration suite: $p ok, $f not ok ($(elapsed "$t")s)"

# 6. Graceful stop: SIGTERM (the image's STOPSIGNAL) must end attnd with 0.
if [ "$(timeout 10 $DOCKER inspect -f '{{.State.Running}}' "$DAEMON")" != true ]; then
    not_ok "attnd still running after the suite"
    show_daemon_log
    exit 1
fi
t=$(date +%s)
timeout $((STOP_WAIT + 30)) $DOCKER stop -t "$STOP_WAIT" "$DAEMON" \
    >/dev/null 2>>"$OUT/run.log"
code=$(timeout 10 $DOCKER inspect -f '{{.State.ExitCode}}' "$DAEMON")
timeout 30 $DOCKER logs "$DAEMON" >"$OUT/attnd.log" 2>&1
if [ "$code" = 0 ]; then
    ok "attnd exited 0 on SIGTERM after $(elapsed "$t")s"
else
    not_ok "attnd exited $code on SIGTERM (137 = killed after ${STOP_WAIT}s)"
    show_daemon_log
fi
exit 0
