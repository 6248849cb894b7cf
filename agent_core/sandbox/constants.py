"""What every sandbox backend agrees on: who runs the tests, with which Python, what is kept.

The process and bubblewrap backends run tests as `SANDBOX_UID` when agentls
runs as root, the Docker backend always; `SANDBOX_PYTHON` is the interpreter
outside /root that uid can run (and the sandbox image's). `TEST_TOOLS` are
the distributions runs rely on inside the sandbox: copied into the host
backends' site folder and installed into the image. `tmpfs_sizes` is how
big a run's /tmp and /dev/shm may grow (RAM the memory limit does not count
in bubblewrap, so each is a share of it).
"""

from __future__ import annotations

SANDBOX_UID = 65534  # "nobody"
SANDBOX_PYTHON = "/usr/bin/python3"
OUTPUT_CAP = 200_000  # bytes of a command's output kept (its tail)
TEST_TOOLS = ("pytest", "hypothesis", "coverage")
MIN_TMPFS_MB = 16


def tmpfs_sizes(memory_mb: int) -> tuple[int, int]:
    """MiB of a run's /tmp and /dev/shm: half and a quarter of its memory setting (at least MIN_TMPFS_MB each).

    A tmpfs lives in host RAM: unsized, each could take half the machine's (12 GB each on a 24 GB host),
    outside the address-space limit. Sized so, a run holds at most 1.75 times its memory setting.
    """
    return max(MIN_TMPFS_MB, memory_mb // 2), max(MIN_TMPFS_MB, memory_mb // 4)
