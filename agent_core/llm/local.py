"""The endpoint of a run with no `base_url`: a local model server the user runs, else the bundled model.

A server found on loopback (detect.py) is used as it is, and said so on
stderr; otherwise agent_core.local_model starts (or finds) the bundled
llama-cpp-python server. Either failure is an `LLMUnavailable` with its cause
in one line.
"""

from __future__ import annotations

import asyncio
import inspect
import sys

from agent_core.llm.base import LLMError, LLMUnavailable
from agent_core.llm.detect import DetectedServer, detect_local_server
from agent_core.settings import Settings

NO_ENDPOINT = "no endpoint configured: set AGENTLS_BASE_URL or run `agentls model fetch`"


async def local_endpoint(settings: Settings) -> tuple[str, DetectedServer | None]:
    """The URL to send requests to, and the detected server it belongs to (None: the bundled model)."""
    if settings.detect_local_servers:
        detected = await asyncio.to_thread(detect_local_server)
        if detected is not None:
            model = detected.pick_model(settings.model)
            print(f"agentls: no endpoint configured; using {detected.name} at {detected.base_url} "
                  f"(model {model}); set base_url to choose another, or detect_local_servers = false",
                  file=sys.stderr, flush=True)
            return detected.base_url, detected
    try:
        from agent_core.local_model.endpoint import ensure_local_endpoint
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("agent_core.local_model"):
            raise LLMUnavailable(NO_ENDPOINT) from None
        raise
    try:
        if inspect.iscoroutinefunction(ensure_local_endpoint):
            url = await ensure_local_endpoint(settings)
        else:
            url = await asyncio.to_thread(ensure_local_endpoint, settings)
    except LLMError:
        raise
    except Exception as exc:
        raise LLMUnavailable(f"local model unavailable: {' '.join(str(exc).split())}") from exc
    return str(url), None
