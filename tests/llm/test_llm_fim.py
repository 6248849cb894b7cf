"""Which fill-in-the-middle dialect an endpoint gets (llm/fim.py), and the client's answer for a configured one."""

from __future__ import annotations

import pytest

from agent_core.llm.fim import QWEN_TOKENS, choose_fim, fim_tokens


@pytest.mark.parametrize(
    "setting, base_url, model, bundled, server, dialect, family",
    [
        ("auto", "http://127.0.0.1:8077/v1", "qwen2.5-coder-1.5b", True, None, "tokens", "Qwen2.5-Coder"),
        ("auto", "http://127.0.0.1:8077/v1", "anything", True, None, "tokens", "Qwen2.5-Coder"),  # the bundled one
        ("auto", "http://127.0.0.1:11434/v1", "qwen2.5-coder:1.5b", False, "Ollama", "suffix", None),
        ("auto", "http://gpu-box:11434/v1", "codellama:7b", False, None, "suffix", None),  # Ollama's port
        ("auto", "http://127.0.0.1:1234/v1", "qwen2.5-coder-7b-instruct", False, "LM Studio", "tokens",
         "Qwen2.5-Coder"),
        ("auto", "http://127.0.0.1:8080/v1", "bigcode/starcoder2-3b", False, None, "tokens", "StarCoder"),
        ("auto", "https://api.openai.com/v1", "gpt-4o-mini", False, None, "chat", None),
        ("chat", "http://127.0.0.1:8077/v1", "qwen2.5-coder-1.5b", True, None, "chat", None),
        ("tokens", "https://example.test/v1", "my-model", False, None, "tokens", "Qwen2.5-Coder"),
        ("suffix", "https://example.test/v1", "my-model", False, None, "suffix", None),
    ],
)
def test_the_dialect_follows_the_server_and_the_model(setting, base_url, model, bundled, server, dialect, family):
    spec = choose_fim(setting, base_url=base_url, model=model, bundled=bundled, server_name=server)
    assert spec.dialect == dialect
    assert (spec.tokens.family if spec.tokens else None) == family


def test_qwen_tokens_lay_out_prefix_suffix_middle():
    assert fim_tokens("Qwen2.5-Coder-1.5B-Instruct") == QWEN_TOKENS
    assert QWEN_TOKENS.prompt("a\n", "c\n") == "<|fim_prefix|>a\n<|fim_suffix|>c\n<|fim_middle|>"
    assert fim_tokens("llama-3-8b") is None


async def test_the_client_decides_for_a_configured_endpoint(make_client):
    assert (await make_client(model="qwen2.5-coder-7b").fim_spec("coder")).dialect == "tokens"
    assert (await make_client(model="gpt-4o-mini").fim_spec("coder")).dialect == "chat"
    assert (await make_client(model="gpt-4o-mini", fim="suffix").fim_spec("coder")).dialect == "suffix"


@pytest.mark.parametrize("said, model, parallel", [
    ("4", "qwen2.5-coder-7b", 4),
    (None, "qwen2.5-coder-7b", 1),  # a server that says nothing gets one request at a time
    ("many", "qwen2.5-coder-7b", 1),
    ("400", "qwen2.5-coder-7b", 16),
    ("4", "gpt-4o-mini", 1),  # a chat prompt: the model list is not even asked
])
async def test_a_server_that_says_it_writes_completions_together_gets_as_many_at_once(scripted_llm, make_client, said,
                                                                                      model, parallel):
    scripted_llm.parallel = said
    client = make_client(model=model)

    assert (await client.fim_spec("coder")).parallel == parallel
    scripted_llm.parallel = "2"
    assert (await client.fim_spec("coder")).parallel == parallel, "asked once per endpoint, remembered"
