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

# The bundled local model's server: llama-cpp-python builds from source (~6 min on 2 cores).
# Not -DGGML_NATIVE=ON: on a virtual CPU that advertises AMX, -march=native compiles AMX tile
# instructions the kernel has not enabled for the process, and the server dies (a general
# protection fault at `ldtilecfg`) on its first completion. AVX2/FMA/F16C where the CPU has them.
LLAMA_CMAKE_ARGS := $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && echo "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" || echo "-DGGML_NATIVE=OFF")
$(VENV)/.installed-local: $(VENV)/.installed
	CMAKE_ARGS="$${CMAKE_ARGS:-$(LLAMA_CMAKE_ARGS)}" $(PY) -m pip install -q -e ".[local,dev]"
	touch $@

venv-local: $(VENV)/.installed-local

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
