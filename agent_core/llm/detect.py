"""Local model servers a user already runs, found on their default loopback ports.

When no endpoint is configured, agentls looks for an OpenAI-compatible server
that the user started themselves before it starts the bundled model: Ollama
(11434) and LM Studio (1234) are the two that run as desktop services with a
fixed default port. llama.cpp's server (8080) and vLLM (8000) share their
ports with too many other programs to be guessed; they are configured with
`base_url` (docs/local-model.md).

A probe is one `GET /v1/models` with a short timeout: a closed port costs
about a millisecond on loopback.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

PROBE_TIMEOUT_S = 0.5

# (name, base URL) in the order they are tried.
KNOWN_SERVERS: tuple[tuple[str, str], ...] = (
    ("Ollama", "http://127.0.0.1:11434/v1"),
    ("LM Studio", "http://127.0.0.1:1234/v1"),
)

# Words that mark a code model in a server's model list, best first.
_CODE_HINTS = ("coder", "code", "starcoder", "deepseek", "qwen")


@dataclass(frozen=True)
class DetectedServer:
    """A running server: its product name, its base URL and the models it lists."""

    name: str
    base_url: str
    models: tuple[str, ...]

    def pick_model(self, wanted: str) -> str:
        """`wanted` when the server has it, else its most code-like model, else its first."""
        if wanted in self.models:
            return wanted
        for hint in _CODE_HINTS:
            for model in self.models:
                if hint in model.lower():
                    return model
        return self.models[0]


def _list_models(client: httpx.Client, base_url: str) -> tuple[str, ...] | None:
    """The model ids a server lists, or None when nothing OpenAI-compatible answers there."""
    try:
        response = client.get(f"{base_url}/models")
        if response.status_code != 200:
            return None
        data = response.json().get("data")
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    if not isinstance(data, list):
        return None
    ids = tuple(str(item["id"]) for item in data if isinstance(item, dict) and item.get("id"))
    return ids or None


def detect_local_server(
    servers: tuple[tuple[str, str], ...] = KNOWN_SERVERS, timeout_s: float = PROBE_TIMEOUT_S
) -> DetectedServer | None:
    """The first known local server that answers with at least one model, or None."""
    # trust_env=False: a proxy from the environment must not see (or answer for) a loopback probe.
    with httpx.Client(timeout=timeout_s, trust_env=False) as client:
        for name, base_url in servers:
            models = _list_models(client, base_url)
            if models:
                return DetectedServer(name=name, base_url=base_url, models=models)
    return None
