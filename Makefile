# Two entry points a fresh machine needs: `make demo` (main job on the
# embedded defaults) and `make test` (the whole suite). Everything else is
# a building block of those two.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PYTEST := PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 $(PY) -m pytest -p pytest_asyncio.plugin -p pytest_lsp -p pytest_timeout

.PHONY: venv venv-local lint test demo vsix clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev]"
	touch $@

venv: $(VENV)/.installed

# The bundled local model's server: llama-cpp-python builds from source (~6 min on 2 cores), for the
# instruction sets this CPU has, and again when those change (scripts/build-local.sh says which and why).
venv-local: venv
	scripts/build-local.sh $(PY) $(VENV)/.installed-local

# ruff + mypy, configured in pyproject.toml; scripts/test.sh runs it before pytest.
lint: venv
	scripts/lint.sh

test:
	scripts/test.sh

demo: venv-local
	scripts/demo.sh

# The VS Code extension: type-check, lint and package editor_client/agentls-<version>.vsix.
vsix:
	cd editor_client && npm ci --no-audit --no-fund && npm run build && npm run lint && npm run package

clean:
	rm -rf $(VENV) build *.egg-info
