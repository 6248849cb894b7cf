"""A minimal GGUF header reader: magic, version, counts and scalar metadata.

GGUF (llama.cpp's model format) starts with b"GGUF", a uint32 version, the
tensor count and the metadata key/value count (uint64 since version 2),
then the key/value pairs, all little-endian. Only what verification needs
is read: scalar values are returned, arrays are skipped. Anything that
does not parse raises `GGUFError` with the reason.

Kept by hand rather than llama.cpp's `gguf` package, whose GGUFReader maps and
parses the whole file (every tensor's entry) to answer one key and fails on a
truncated download with a numpy dtype error instead of saying the file is cut.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

MAGIC = b"GGUF"
_MAX_STRING = 1 << 20  # no key or scalar string in a sane header is longer
_MAX_KV = 1 << 16

# value type -> struct format of a scalar (little-endian)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


class GGUFError(ValueError):
    """The file is not a GGUF file, or its header is damaged."""


def has_magic(path: Path) -> bool:
    """True when the file starts with the GGUF magic bytes."""
    try:
        with path.open("rb") as fh:
            return fh.read(4) == MAGIC
    except OSError:
        return False


def _read(fh: BinaryIO, n: int) -> bytes:
    data = fh.read(n)
    if len(data) != n:
        raise GGUFError("header ends early (truncated file)")
    return data


def _unpack(fh: BinaryIO, fmt: str) -> Any:
    return struct.unpack(fmt, _read(fh, struct.calcsize(fmt)))[0]


def _string(fh: BinaryIO, len_fmt: str) -> str:
    length = _unpack(fh, len_fmt)
    if length > _MAX_STRING:
        raise GGUFError(f"implausible string length {length} in header")
    return _read(fh, length).decode("utf-8", errors="replace")


def _skip_array(fh: BinaryIO, len_fmt: str) -> None:
    item_type = _unpack(fh, "<I")
    count = _unpack(fh, len_fmt)
    if item_type in _SCALARS:
        fh.seek(struct.calcsize(_SCALARS[item_type]) * count, 1)
    elif item_type == _STRING:
        for _ in range(count):
            fh.seek(_unpack(fh, len_fmt), 1)
    elif item_type == _ARRAY:
        for _ in range(count):
            _skip_array(fh, len_fmt)
    else:
        raise GGUFError(f"unknown array item type {item_type}")


def _value(fh: BinaryIO, value_type: int, len_fmt: str) -> Any:
    if value_type in _SCALARS:
        return _unpack(fh, _SCALARS[value_type])
    if value_type == _STRING:
        return _string(fh, len_fmt)
    if value_type == _ARRAY:
        _skip_array(fh, len_fmt)
        return None
    raise GGUFError(f"unknown metadata value type {value_type}")


def read_header(path: Path, stop_at: str | None = None) -> dict[str, Any]:
    """Version, tensor count and scalar metadata of a GGUF file.

    Returns {"version": int, "tensor_count": int, "metadata": {key: value}};
    array values are skipped (absent from metadata). With `stop_at`, reading
    stops once that key has been read.
    """
    with path.open("rb") as fh:
        if fh.read(4) != MAGIC:
            raise GGUFError(f"{path} is not a GGUF file (no GGUF magic bytes at the start)")
        version = _unpack(fh, "<I")
        if version not in (1, 2, 3):
            raise GGUFError(f"unsupported GGUF version {version}")
        len_fmt = "<I" if version == 1 else "<Q"
        tensor_count = _unpack(fh, len_fmt)
        kv_count = _unpack(fh, len_fmt)
        if kv_count > _MAX_KV:
            raise GGUFError(f"implausible metadata count {kv_count}")
        metadata: dict[str, Any] = {}
        for _ in range(kv_count):
            key = _string(fh, len_fmt)
            value = _value(fh, _unpack(fh, "<I"), len_fmt)
            if value is not None:
                metadata[key] = value
            if key == stop_at:
                break
    return {"version": version, "tensor_count": tensor_count, "metadata": metadata}


def model_name(path: Path) -> str | None:
    """The `general.name` of a GGUF file, or None when it has none."""
    name = read_header(path, stop_at="general.name")["metadata"].get("general.name")
    return name if isinstance(name, str) else None


def encode_header(metadata: dict[str, str | int], tensor_count: int = 0) -> bytes:
    """A version-3 GGUF header with string/uint32 metadata (for fixtures and tools)."""

    def s(text: str) -> bytes:
        raw = text.encode("utf-8")
        return struct.pack("<Q", len(raw)) + raw

    out = [MAGIC, struct.pack("<IQQ", 3, tensor_count, len(metadata))]
    for key, value in metadata.items():
        if isinstance(value, str):
            out.append(s(key) + struct.pack("<I", _STRING) + s(value))
        else:
            out.append(s(key) + struct.pack("<I", 4) + struct.pack("<I", value))
    return b"".join(out)
