"""Builds the LLM client a run uses, from settings."""

from __future__ import annotations

from agent_core.llm.base import LLMClient, LLMObserver
from agent_core.settings import Settings


def make_llm_client(settings: Settings, observer: LLMObserver | None = None) -> LLMClient:
    """The OpenAI-compatible client for `settings`; `observer` sees every completed call."""
    from agent_core.llm.openai_client import OpenAIChatClient  # the openai import is heavy: load on demand

    return OpenAIChatClient(settings, observer=observer)
