"""The agents: one directory per role with its prompt, output schema and call."""
