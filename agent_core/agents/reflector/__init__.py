"""The reflector agent: prompt, output schema and the stateless call."""
