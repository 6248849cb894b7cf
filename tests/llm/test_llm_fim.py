"""Which fill-in-the-middle dialect an endpoint gets (llm/fim.py), and the client's answer for a configured one."""

from __future__ import annotations

import pytest

from agent_core.llm.fim import QWEN_TOKENS, choose_fim, fim_tokens


@pytest.mark.parametrize(
    "setting, base_url, model, bundled, server, dialect, family, parallel",
    [
        ("auto", "http://127.0.0.1:8077/v1", "qwen2.5-coder-1.5b", True, None, "tokens", "Qwen2.5-Coder", 4),
        ("auto", "http://127.0.0.1:8077/v1", "anything", True, None, "tokens", "Qwen2.5-Coder", 4),  # bundled
        ("auto", "http://127.0.0.1:11434/v1", "qwen2.5-coder:1.5b", False, "Ollama", "suffix", None, 1),
        ("auto", "http://gpu-box:11434/v1", "codellama:7b", False, None, "suffix", None, 1),  # Ollama's port
        ("auto", "http://127.0.0.1:1234/v1", "qwen2.5-coder-7b-instruct", False, "LM Studio", "tokens",
         "Qwen2.5-Coder", 1),
        ("auto", "http://127.0.0.1:8080/v1", "bigcode/starcoder2-3b", False, None, "tokens", "StarCoder", 1),
        ("auto", "https://api.openai.com/v1", "gpt-4o-mini", False, None, "chat", None, 1),
        ("chat", "http://127.0.0.1:8077/v1", "qwen2.5-coder-1.5b", True, None, "chat", None, 1),
        ("tokens", "http://127.0.0.1:8077/v1", "qwen2.5-coder-1.5b", True, None, "tokens", "Qwen2.5-Coder", 4),
        ("tokens", "https://example.test/v1", "my-model", False, None, "tokens", "Qwen2.5-Coder", 1),
        ("suffix", "https://example.test/v1", "my-model", False, None, "suffix", None, 1),
    ],
)
def test_the_dialect_follows_the_server_and_the_model(setting, base_url, model, bundled, server, dialect, family,
                                                     parallel):
    spec = choose_fim(setting, base_url=base_url, model=model, bundled=bundled, server_name=server)
    assert spec.dialect == dialect
    assert (spec.tokens.family if spec.tokens else None) == family
    assert spec.parallel == parallel, "only the bundled server's raw prompts are decoded together"


def test_qwen_tokens_lay_out_prefix_suffix_middle():
    assert fim_tokens("Qwen2.5-Coder-1.5B-Instruct") == QWEN_TOKENS
    assert QWEN_TOKENS.prompt("a\n", "c\n") == "<|fim_prefix|>a\n<|fim_suffix|>c\n<|fim_middle|>"
    assert fim_tokens("llama-3-8b") is None


async def test_the_client_decides_for_a_configured_endpoint(make_client):
    assert (await make_client(model="qwen2.5-coder-7b").fim_spec("coder")).dialect == "tokens"
    assert (await make_client(model="gpt-4o-mini").fim_spec("coder")).dialect == "chat"
    assert (await make_client(model="gpt-4o-mini", fim="suffix").fim_spec("coder")).dialect == "suffix"
