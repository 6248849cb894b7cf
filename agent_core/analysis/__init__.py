"""Code analysis on tree-sitter: parsing, symbols, imports, existing tests and workspace outlines."""
