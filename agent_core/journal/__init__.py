"""Run journals: writing one (writer.py) and reading them back.

`writer.Journal` appends a run's redacted records; `trace` reads a journal
back into a `Trace` and lists runs; `render` shows a trace as text or
Markdown; `lease` is the run's lock, which tells a live run from an
interrupted one. The read side imports nothing of the pipeline, so the
`agentls trace` command and the language server's trace viewer load no graph.
"""
