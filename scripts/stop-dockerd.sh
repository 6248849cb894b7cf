#!/usr/bin/env bash
# Stop the private Docker engine started by scripts/start-dockerd.sh.
# Keeps its data root (images stay cached) unless --purge is given.
set -euo pipefail

D="${AGENTLS_DOCKERD_DIR:-/tmp/dockerd.agentls}"
PIDFILE="$D/dockerd.pid"

if [ -f "$PIDFILE" ] && pid="$(cat "$PIDFILE")" && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "stop-dockerd: dockerd $pid ignored SIGTERM; killing" >&2
        kill -KILL "$pid" || true
    fi
    echo "stop-dockerd: stopped dockerd $pid" >&2
else
    echo "stop-dockerd: no dockerd running from $D" >&2
fi
rm -f "$D/docker.sock" "$PIDFILE"
if [ "${1:-}" = "--purge" ]; then
    rm -rf "$D"
fi
