"""`python -m lsp_server`: serve LSP over stdio (or `--tcp HOST:PORT`)."""

from __future__ import annotations

import sys

from lsp_server.server import main

if __name__ == "__main__":
    sys.exit(main())
