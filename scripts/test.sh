#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh Debian machine, then run it.
#
#   scripts/test.sh [pytest args...]      (what `make test` and .ci/run call)
#
# Installs the system packages the real-part tests drive (bubblewrap, Neovim,
# Emacs + eglot, Docker's engine, debootstrap, Chromium for the report), creates the virtualenv with
# the local model's server, fetches the bundled model, starts
# a private Docker engine with a locally built sandbox image, runs the linter and
# type checker (scripts/lint.sh), and runs pytest.
# Every step is idempotent: a second run only runs the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "test.sh: $*" >&2; }

APT_PACKAGES=(bubblewrap neovim emacs-nox elpa-eglot docker.io debootstrap chromium)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        log "missing system packages (${missing[*]}); run as root or install them first"
        exit 2
    fi
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q -o DPkg::Lock::Timeout=600 >&2
    apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >&2
fi

make -s venv
# llama-cpp-python's server (built from source, ~6 min on 2 cores, once) and the bundled model (fetched and
# verified once): tests/local_model/test_local_model_batched.py runs the bundled server on it.
make -s venv-local
.venv/bin/agentls model fetch >&2

# A private Docker engine and the sandbox image, for the Docker backend's tests.
# An engine this script starts is stopped again when the tests end.
sock=/tmp/dockerd.agentls/docker.sock
if ! { [ -S "$sock" ] && DOCKER_HOST="unix://$sock" timeout 5 docker version >/dev/null 2>&1; }; then
    trap 'scripts/stop-dockerd.sh >&2 || true' EXIT
fi
eval "$(scripts/start-dockerd.sh)"
export DOCKER_HOST
scripts/make-base-image.sh >&2
.venv/bin/agentls sandbox build-image >&2

scripts/lint.sh >&2

export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
.venv/bin/python -m pytest -p pytest_asyncio.plugin -p pytest_lsp -p pytest_timeout -q "${@:-tests}"
