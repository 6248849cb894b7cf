"""A user's own local model server (Ollama, LM Studio) is found on its default port when nothing is configured."""

from __future__ import annotations

import pytest
from llm_support import GOOD, Verdict

from agent_core.llm.base import LLMUnavailable
from agent_core.llm.detect import DetectedServer, detect_local_server
from agent_core.llm.openai_client import OpenAIChatClient
from agent_core.local_model.registry import ENV_MODEL_DIR
from agent_core.settings import Settings
from testkit.scripted_llm import ScriptedLLM

OLLAMA_PORT = 11434


@pytest.fixture
def ollama():
    """A scripted OpenAI-compatible server on Ollama's own port, listing Ollama-style model names."""
    server = ScriptedLLM(port=OLLAMA_PORT)
    server.models = ["llama3.1:8b", "qwen2.5-coder:1.5b"]
    with server:
        yield server


@pytest.fixture
def no_bundled_model(tmp_path, monkeypatch):
    """An empty model directory: the bundled model cannot start, so a fallback to it fails loudly."""
    monkeypatch.setenv(ENV_MODEL_DIR, str(tmp_path / "models"))
    monkeypatch.delenv("AGENTLS_LOCAL_MODEL", raising=False)
    monkeypatch.delenv("AGENTLS_AUTO_FETCH", raising=False)


def _ask(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


async def test_a_running_ollama_is_used_with_its_code_model_and_named(ollama, no_bundled_model, capsys):
    ollama.add("planner", GOOD)
    client = OpenAIChatClient(Settings(base_url=None, request_timeout_s=5.0))
    try:
        answer = await client.structured("planner", _ask("plan"), Verdict)
    finally:
        await client.aclose()
    assert answer.summary == GOOD["summary"]
    (request,) = ollama.requests
    assert request["model"] == "qwen2.5-coder:1.5b"  # the default model name is not Ollama's: its coder is picked
    err = capsys.readouterr().err
    assert "using Ollama at http://127.0.0.1:11434/v1" in err and "qwen2.5-coder:1.5b" in err


async def test_detection_off_leaves_the_running_server_alone(ollama, no_bundled_model):
    client = OpenAIChatClient(Settings(base_url=None, detect_local_servers=False, request_timeout_s=5.0))
    try:
        with pytest.raises(LLMUnavailable):
            await client.structured("planner", _ask("plan"), Verdict)
    finally:
        await client.aclose()
    assert ollama.requests == []


def test_a_configured_model_the_server_has_is_kept():
    server = DetectedServer("LM Studio", "http://127.0.0.1:1234/v1", ("mistral-7b", "deepseek-coder-6.7b", "m2"))
    assert server.pick_model("m2") == "m2"
    assert server.pick_model("qwen2.5-coder-1.5b") == "deepseek-coder-6.7b"
    assert DetectedServer("Ollama", "u", ("llama3:8b",)).pick_model("x") == "llama3:8b"


def test_a_server_listing_no_models_or_nothing_listening_is_not_picked(scripted_llm):
    scripted_llm.models = []
    empty = (("Empty", scripted_llm.base_url),)
    assert detect_local_server(empty) is None
    with ScriptedLLM() as live:
        found = detect_local_server((*empty, ("Live", live.base_url)))
    assert found is not None and (found.name, found.models) == ("Live", ("scripted",))
