"""A stand-in for `python -m llama_cpp.server` in tests: same flags, a tiny /v1 API.

Answers GET /v1/models with the alias, and POST /v1/chat/completions with a
fixed message; while a file `<model>.busy` exists /v1/models takes 5 s,
as llama.cpp's does while it is generating; GET /crash kills it. `--die`
imitates a model that fails to load (a log line, exit 1).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def make_handler(alias: str, model: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: dict) -> None:
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            if self.path == "/v1/models":
                if os.path.exists(model + ".busy"):  # like llama.cpp while it generates
                    time.sleep(5)
                self._send(200, {"object": "list", "data": [{"id": alias, "object": "model", "owned_by": "me"}]})
            elif self.path == "/crash":  # a server that dies mid-run
                print("fake-server: segmentation fault (pretend)", flush=True)
                os._exit(3)
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            message = {"role": "assistant", "content": "stand-in answer"}
            self._send(
                200,
                {
                    "id": "x",
                    "object": "chat.completion",
                    "model": alias,
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
                },
            )

        def log_message(self, fmt: str, *args: object) -> None:
            sys.stderr.write("fake-server: " + fmt % args + "\n")

    return Handler


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--model_alias", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--die", action="store_true")
    args, _ = parser.parse_known_args()
    print(f"fake-server: loading {args.model}", flush=True)
    if args.die:
        print("fake-server: error: failed to load model (bad tensor data)", flush=True)
        return 1
    server = ThreadingHTTPServer((args.host, args.port), make_handler(args.model_alias, args.model))
    print(f"fake-server: listening on {args.host}:{args.port}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
