"""The LLM layer: structured output from OpenAI-compatible endpoints."""
