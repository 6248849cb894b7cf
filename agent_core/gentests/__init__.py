"""Generate tests: targets from tree-sitter, tests from the tester agent, kept only when they earn their place."""
