"""The coder agent: prompt, output schema and the stateless call."""
