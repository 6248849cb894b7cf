"""Text embeddings for memory search.

`HashedNgramEmbedder` needs no model: character 3-5-grams and word uni/bigrams
are hashed into a fixed-size vector (signed feature hashing) and L2-normalised,
so cosine similarity is a dot product. `EndpointEmbedder` asks the configured
OpenAI-compatible endpoint's `/v1/embeddings` instead.
"""

from __future__ import annotations

import hashlib
import re
from typing import Protocol

import numpy as np

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|\S")


class Embedder(Protocol):
    name: str

    def embed(self, texts: list[str]) -> np.ndarray:
        """Rows of unit-length float32 vectors, one per text."""
        ...


def _features(text: str) -> list[str]:
    lowered = " ".join(text.lower().split())
    feats = [f"c:{lowered[i:i + n]}" for n in (3, 4, 5) for i in range(max(0, len(lowered) - n + 1))]
    words = _WORD.findall(lowered)
    feats += [f"w:{w}" for w in words]
    feats += [f"b:{a} {b}" for a, b in zip(words, words[1:], strict=False)]
    return feats


def _bucket(feature: str, dims: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dims, (1.0 if (value >> 63) & 1 else -1.0)


class HashedNgramEmbedder:
    """Deterministic, offline embedding by feature hashing."""

    def __init__(self, dims: int = 512) -> None:
        self.dims = dims
        self.name = f"hashed-ngram-{dims}"

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in _features(text):
                index, sign = _bucket(feature, self.dims)
                out[row, index] += sign
        return normalise(out)


class EndpointEmbedder:
    """Embeddings from an OpenAI-compatible `/v1/embeddings` endpoint."""

    def __init__(self, base_url: str, api_key: str | None, model: str, timeout_s: float = 30.0) -> None:
        import openai

        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s)
        self._model = model
        self.name = f"endpoint:{model}"

    def embed(self, texts: list[str]) -> np.ndarray:
        response = self._client.embeddings.create(model=self._model, input=texts)
        rows = [item.embedding for item in sorted(response.data, key=lambda d: d.index)]
        return normalise(np.asarray(rows, dtype=np.float32))


def normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)
