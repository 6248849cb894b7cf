#!/usr/bin/env bash
# Start a private Docker engine that needs no registry and no host networking.
#
# Usage: scripts/start-dockerd.sh [--stop]
#   eval "$(scripts/start-dockerd.sh)"   # sets DOCKER_HOST for this shell
#
# The engine keeps its data, exec root, socket, pid file and log under one
# directory D (default /tmp/dockerd.agentls, or $AGENTLS_DOCKERD_DIR). Running
# it again while the engine answers only prints the export line again.
# Installs Debian's docker.io (and debootstrap, for the base image) when
# dockerd is missing. The last line on stdout is always
#   export DOCKER_HOST=unix://D/docker.sock
set -euo pipefail

D="${AGENTLS_DOCKERD_DIR:-/tmp/dockerd.agentls}"
SOCK="$D/docker.sock"
PIDFILE="$D/dockerd.pid"

log() { echo "start-dockerd: $*" >&2; }

engine_answers() {
    [ -S "$SOCK" ] && DOCKER_HOST="unix://$SOCK" timeout 5 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

if [ "${1:-}" = "--stop" ]; then
    exec "$(dirname "$0")/stop-dockerd.sh"
fi

if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then
        log "dockerd/debootstrap missing and not root: install docker.io and debootstrap first"
        exit 1
    fi
    log "installing docker.io and debootstrap from Debian"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q -o DPkg::Lock::Timeout=600 docker.io debootstrap >&2 || { apt-get update -q -o DPkg::Lock::Timeout=600 >&2 && apt-get install -y -q -o DPkg::Lock::Timeout=600 docker.io debootstrap >&2; }
fi

mkdir -p "$D/data" "$D/exec"
if engine_answers; then
    log "engine already running at $SOCK"
    echo "export DOCKER_HOST=unix://$SOCK"
    exit 0
fi

if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    log "dockerd pid $(cat "$PIDFILE") exists but does not answer yet; waiting"
else
    rm -f "$SOCK" "$PIDFILE"
    log "starting dockerd under $D (log: $D/dockerd.log)"
    setsid dockerd --iptables=false --ip6tables=false --bridge=none \
        --data-root "$D/data" --exec-root "$D/exec" --pidfile "$PIDFILE" \
        -H "unix://$SOCK" >"$D/dockerd.log" 2>&1 </dev/null &
    disown || true
fi

for _ in $(seq 1 150); do
    if engine_answers; then
        log "engine up"
        echo "export DOCKER_HOST=unix://$SOCK"
        exit 0
    fi
    sleep 0.2
done
log "dockerd did not answer within 30 s; last log lines:"
tail -n 20 "$D/dockerd.log" >&2 || true
exit 1
