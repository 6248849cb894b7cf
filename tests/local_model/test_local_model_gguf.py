"""The minimal GGUF header reader: table of well-formed and broken headers."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from agent_core.local_model.gguf import GGUFError, encode_header, has_magic, model_name, read_header


def _s(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def _header_with_arrays() -> bytes:
    kvs = [
        _s("general.architecture") + struct.pack("<I", 8) + _s("qwen2"),
        _s("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 3) + _s("a") + _s("bb") + _s("ccc"),
        _s("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 2) + struct.pack("<ff", 0.5, 1.5),
        _s("qwen2.rope.freq_base") + struct.pack("<I", 6) + struct.pack("<f", 2.0),
        _s("general.name") + struct.pack("<I", 8) + _s("Tiny"),
    ]
    return b"GGUF" + struct.pack("<IQQ", 3, 7, len(kvs)) + b"".join(kvs) + b"\0" * 32


def test_reads_scalars_and_skips_arrays(tmp_path: Path):
    path = tmp_path / "m.gguf"
    path.write_bytes(_header_with_arrays())
    header = read_header(path)
    assert header["version"] == 3 and header["tensor_count"] == 7
    assert header["metadata"] == {"general.architecture": "qwen2", "qwen2.rope.freq_base": 2.0, "general.name": "Tiny"}
    assert model_name(path) == "Tiny"


def test_round_trip_of_the_fixture_encoder(tmp_path: Path):
    path = tmp_path / "e.gguf"
    path.write_bytes(encode_header({"general.name": "X", "n": 5}))
    assert read_header(path)["metadata"] == {"general.name": "X", "n": 5}


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"PK\x03\x04rest", "not a GGUF file"),
        (b"GGUF" + struct.pack("<I", 9) + b"\0" * 16, "unsupported GGUF version 9"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 50) + b"short", "truncated"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + _s("k") + struct.pack("<I", 77), "unknown metadata value type 77"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1 << 40), "implausible string length"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 1 << 30), "implausible metadata count"),
    ],
)
def test_broken_headers_are_explained(tmp_path: Path, data: bytes, reason: str):
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    with pytest.raises(GGUFError, match=reason):
        read_header(path)


def test_magic_check(tmp_path: Path):
    (tmp_path / "a").write_bytes(b"GGUF\x03")
    (tmp_path / "b").write_bytes(b"GGU")
    assert has_magic(tmp_path / "a") and not has_magic(tmp_path / "b") and not has_magic(tmp_path / "missing")
