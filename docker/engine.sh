#!/bin/sh
# Make sure a container engine answers, and print the command line to reach
# it on stdout ("docker", or "podman --runtime runc" as a fallback). Progress
# goes to stderr.
#
# With a running Docker engine this only checks `docker info`. Otherwise, as
# root on Debian/Ubuntu, it installs docker.io when dockerd is missing and
# starts dockerd in the background (log: $ATTND_DOCKERD_LOG). The engine it
# starts keeps running, like the service would; `sh docker/engine.sh stop`
# stops it again.
#
#   usage: sh docker/engine.sh [start|stop|status]
#   env:   ATTND_ENGINE=docker|podman      force one engine (default: docker,
#                                           podman only when docker fails)
#          ATTND_DOCKERD_LOG=FILE           dockerd's log
#                                           (default /var/log/attnd-dockerd.log)
#          ATTND_ENGINE_TIMEOUT=SECONDS     wait for dockerd (default 60)
set -u

LOG=${ATTND_DOCKERD_LOG:-/var/log/attnd-dockerd.log}
PIDFILE=/run/attnd-dockerd.pid
WAIT=${ATTND_ENGINE_TIMEOUT:-60}
PODMAN="podman --runtime runc"

say() { echo "engine: $*" >&2; }

docker_answers() {
    command -v docker >/dev/null 2>&1 &&
        timeout 20 docker info >/dev/null 2>&1
}

apt_install() {
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        say "need root and apt-get to install: $*"
        return 1
    fi
    say "installing $*"
    export DEBIAN_FRONTEND=noninteractive
    # Another apt-get may hold the lock for a while: wait for it.
    lock="-o DPkg::Lock::Timeout=300"
    if ! timeout 900 apt-get install -y -q $lock --no-install-recommends "$@" \
        >/dev/null 2>&1; then
        timeout 300 apt-get update -q $lock >/dev/null 2>&1
        timeout 900 apt-get install -y -q $lock --no-install-recommends "$@" \
            >&2 || return 1
    fi
}

start_dockerd() {
    if ! command -v dockerd >/dev/null 2>&1; then
        apt_install docker.io || return 1
    fi
    # docker.io's client lands in /usr/bin; another one may come first in PATH.
    command -v docker >/dev/null 2>&1 || return 1
    if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
        say "dockerd $(cat "$PIDFILE") is starting"
    else
        say "starting dockerd (log: $LOG)"
        mkdir -p "$(dirname "$LOG")"
        # setsid: the engine outlives this script and its terminal.
        setsid dockerd >>"$LOG" 2>&1 </dev/null &
        echo $! >"$PIDFILE"
    fi
    i=0
    while [ "$i" -lt "$WAIT" ]; do
        docker_answers && { say "dockerd is up after ${i}s"; return 0; }
        if ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
            say "dockerd exited; last lines of $LOG:"
            tail -n 20 "$LOG" >&2
            rm -f "$PIDFILE"
            return 1
        fi
        sleep 1
        i=$((i + 1))
    done
    say "dockerd did not answer within ${WAIT}s; last lines of $LOG:"
    tail -n 20 "$LOG" >&2
    return 1
}

# Podman runs containers itself (no daemon). Here it needs the runc runtime
# and ulimits below the sandbox's hard limits, which docker/test.sh passes.
podman_answers() {
    command -v podman >/dev/null 2>&1 ||
        apt_install podman runc netavark aardvark-dns iptables || return 1
    timeout 30 $PODMAN info >/dev/null 2>&1
}

stop_dockerd() {
    [ -f "$PIDFILE" ] || { say "no dockerd started by this script"; return 0; }
    pid=$(cat "$PIDFILE")
    if kill -0 "$pid" 2>/dev/null; then
        say "stopping dockerd $pid"
        kill -TERM "$pid"
        i=0
        while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 30 ]; do
            sleep 1
            i=$((i + 1))
        done
    fi
    rm -f "$PIDFILE"
}

case ${1:-start} in
start)
    case ${ATTND_ENGINE:-docker} in
    docker)
        if docker_answers || start_dockerd; then
            echo docker
            exit 0
        fi
        say "docker is not usable here; trying podman"
        ;;
    podman) ;;
    *)
        say "ATTND_ENGINE must be docker or podman"
        exit 2
        ;;
    esac
    if podman_answers; then
        echo "$PODMAN"
        exit 0
    fi
    say "no container engine could be started"
    exit 1
    ;;
stop) stop_dockerd ;;
status)
    if docker_answers; then
        docker info --format 'docker {{.ServerVersion}}, {{.Driver}}' 2>/dev/null
    else
        echo "no Docker engine answers"
        exit 1
    fi
    ;;
*)
    echo "usage: sh docker/engine.sh [start|stop|status]" >&2
    exit 2
    ;;
esac
