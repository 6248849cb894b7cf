"""The planner agent: prompt, output schema and the stateless call."""
