"""What every sandbox backend agrees on: who runs the tests, with which Python, what is kept.

The process and bubblewrap backends run tests as `SANDBOX_UID` when agentls
runs as root, the Docker backend always; `SANDBOX_PYTHON` is the interpreter
outside /root that uid can run (and the sandbox image's). `TEST_TOOLS` are
the distributions runs rely on inside the sandbox: copied into the host
backends' site folder and installed into the image.
"""

from __future__ import annotations

SANDBOX_UID = 65534  # "nobody"
SANDBOX_PYTHON = "/usr/bin/python3"
OUTPUT_CAP = 200_000  # bytes of a command's output kept (its tail)
TEST_TOOLS = ("pytest", "hypothesis", "coverage")
