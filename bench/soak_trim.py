"""The language server with glibc's `malloc_trim(0)` called every EVERY seconds: a soak comparison run.

    python -m bench.soak_trim EVERY [-- server arguments]

If the server's RSS grows because glibc keeps freed memory in its malloc
arenas (fragmentation, not a leak), trimming returns it to the system and the
RSS of a soak run under this wrapper stays lower and flat; a real leak grows
the same with or without it. `bench/soak.py --malloc-trim EVERY` starts the
server this way. Diagnostic only: the product does not trim.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading
import time


def trim_forever(every: float) -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    while True:
        time.sleep(every)
        libc.malloc_trim(0)


def main() -> None:
    every = float(sys.argv[1])
    rest = sys.argv[2:]
    server_args = rest[1:] if rest[:1] == ["--"] else rest
    threading.Thread(target=trim_forever, args=(every,), name="malloc-trim", daemon=True).start()
    from lsp_server.server import main as serve

    sys.exit(serve(server_args))


if __name__ == "__main__":
    main()
