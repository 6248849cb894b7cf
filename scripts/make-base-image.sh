#!/usr/bin/env bash
# Make a Debian base image with Python 3 for the Docker sandbox, with no registry.
#
# Usage: scripts/make-base-image.sh [TAG]      (default agentls/base:local)
# Needs DOCKER_HOST (or the default socket) to reach an engine, and debootstrap.
#
# debootstrap builds a minimal bookworm root filesystem with python3-minimal
# from Debian's package mirror; `docker import` turns its tarball into an
# image. The tarball is cached under ~/.cache/agentls so a rerun (or a new
# engine data root) only re-imports it. Skips everything if TAG exists.
set -euo pipefail

TAG="${1:-agentls/base:local}"
SUITE="${AGENTLS_BASE_SUITE:-bookworm}"
MIRROR="${AGENTLS_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agentls"
TARBALL="$CACHE/rootfs-$SUITE-python3.tar"

log() { echo "make-base-image: $*" >&2; }

if docker image inspect "$TAG" >/dev/null 2>&1; then
    log "$TAG already exists"
    exit 0
fi

if [ ! -s "$TARBALL" ]; then
    command -v debootstrap >/dev/null || {
        log "installing debootstrap"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=600 debootstrap >&2
    }
    mkdir -p "$CACHE"
    ROOT="$(mktemp -d /tmp/rootfs.XXXXXX)"
    trap 'rm -rf "$ROOT"' EXIT
    log "debootstrap $SUITE from $MIRROR into $ROOT (about 35 s)"
    debootstrap --variant=minbase --include=python3-minimal,python3 "$SUITE" "$ROOT" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 || {
        log "debootstrap failed; see $CACHE/debootstrap.log"
        tail -n 20 "$CACHE/debootstrap.log" >&2
        exit 1
    }
    # Trim what a sandbox never needs: package caches and docs.
    rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/* "$ROOT"/usr/share/doc "$ROOT"/usr/share/man
    tar -C "$ROOT" --numeric-owner -cf "$TARBALL.part" .
    mv "$TARBALL.part" "$TARBALL"
fi

log "importing $TARBALL as $TAG"
docker import -c 'CMD ["/usr/bin/python3"]' "$TARBALL" "$TAG" >/dev/null
log "done: $TAG"
