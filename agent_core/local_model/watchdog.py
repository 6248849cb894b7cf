"""Run a model server for as long as the process that started it lives.

    python -m agent_core.local_model.watchdog -- CMD [ARGS...]

The starter keeps the write end of a pipe on our stdin. When it exits for any
reason (even SIGKILL) the kernel closes that pipe, we read EOF, and the
server is stopped: no model server is left behind holding a gigabyte of RAM.
SIGTERM / SIGINT stop it too. The watchdog exits with the server's code when
the server ends by itself.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

_GRACE_S = 10.0


def _watch_stdin(stop: threading.Event) -> None:
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except (OSError, ValueError):
        pass
    stop.set()


def _terminate(child: subprocess.Popen) -> None:
    if child.poll() is not None:
        return
    child.terminate()
    try:
        child.wait(_GRACE_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        print("usage: python -m agent_core.local_model.watchdog -- CMD [ARGS...]", file=sys.stderr)
        return 2
    cmd = argv[argv.index("--") + 1 :]
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    try:
        child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
    except OSError as exc:
        print(f"watchdog: cannot start {cmd[0]}: {exc}", file=sys.stderr)
        return 127
    threading.Thread(target=_watch_stdin, args=(stop,), daemon=True).start()
    try:
        while not stop.wait(0.5):
            if child.poll() is not None:
                return child.returncode
    finally:
        _terminate(child)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
