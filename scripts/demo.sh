#!/usr/bin/env bash
# `make demo`: fix a small buggy project with the bundled local model, offline.
#
#   scripts/demo.sh [digits|pagination|temperature]
#
# 1. fetches and verifies the local model (once; later runs reuse it),
# 2. serves it on a loopback port for the duration of the demo (unless
#    AGENTLS_BASE_URL / OPENAI_BASE_URL names another endpoint),
# 3. copies examples/<name> to a temp dir (the repo stays clean), shows its
#    failing tests, runs `agentls fix DIR --json --apply`, shows the diff and
#    runs the tests again.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXAMPLE="${1:-digits}"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
AGENTLS=("$PY" -m agent_core)

if [ ! -d "$ROOT/examples/$EXAMPLE" ]; then
    echo "demo: no example named $EXAMPLE (choose: $(ls "$ROOT/examples" | tr '\n' ' '))" >&2
    exit 2
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/agentls-demo.XXXXXX")"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "${AGENTLS_BASE_URL:-}${OPENAI_BASE_URL:-}" ]; then
    echo "== local model: fetch (verified once, then reused)"
    "${AGENTLS[@]}" model fetch
    echo "== local model: serve"
    "${AGENTLS[@]}" model serve >"$WORK/serve.out" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 600); do
        if grep -q "serving" "$WORK/serve.out"; then break; fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            cat "$WORK/serve.out" >&2
            echo "demo: the model server did not start (see above)" >&2
            exit 2
        fi
        sleep 0.5
    done
    head -n 1 "$WORK/serve.out"
fi

PROJECT="$WORK/$EXAMPLE"
mkdir -p "$PROJECT"
# The README names the bug; the model should find it from the failing test alone.
(cd "$ROOT/examples/$EXAMPLE" && tar --exclude=README.md --exclude=__pycache__ --exclude=.agentls -cf - .) \
    | (cd "$PROJECT" && tar -xf -)
cp -r "$PROJECT" "$WORK/original"

echo "== $EXAMPLE: tests before the fix"
(cd "$PROJECT" && PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 "$PY" -m pytest -q -p no:cacheprovider 2>&1 | tail -n 5) || true

echo "== agentls fix $EXAMPLE --json --apply"
set +e
"${AGENTLS[@]}" fix "$PROJECT" --json --apply >"$WORK/fix.json"
STATUS=$?
set -e
tail -n 1 "$WORK/fix.json"

echo "== the change"
(cd "$WORK" && diff -ru --exclude=.agentls --exclude=__pycache__ original "$EXAMPLE") || true

echo "== $EXAMPLE: tests after the fix"
(cd "$PROJECT" && PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 "$PY" -m pytest -q -p no:cacheprovider 2>&1 | tail -n 5) || true

# Keep the run's journal (every prompt, answer and test report) outside the temp dir.
if [ -d "$PROJECT/.agentls/runs" ]; then
    KEEP="$ROOT/.agentls/demo/$EXAMPLE"
    rm -rf "$KEEP" && mkdir -p "$KEEP" && cp -r "$PROJECT/.agentls/runs/." "$KEEP/"
    echo "== journal kept in $KEEP (agentls trace reads it)"
fi
case "$STATUS" in
    0) echo "demo: fixed and verified by the tests in the sandbox; the change above was applied to the copy" ;;
    1) echo "demo: the model did not fix it this time, so nothing was applied (agentls applies only a change" \
            "the tests verify). The 1.5B model samples: run it again, or try another example:" \
            "$(ls "$ROOT/examples" | tr '\n' ' ')" ;;
    *) echo "demo: agentls fix could not run (exit code $STATUS, see above)" ;;
esac
exit "$STATUS"
