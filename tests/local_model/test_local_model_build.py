"""scripts/build-local.sh (`make venv-local`): llama-cpp-python built for the instruction sets the CPU lists, and
built again, around pip's wheel cache, only when those change. `PYTHON` is a stand-in that logs each pip call
(a real build takes minutes; the real one runs in scripts/test.sh, and the batched server's tests use it)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "build-local.sh"
BASE = "fpu vme sse sse2 ssse3 sse4_1 sse4_2 avx"
AVX512 = "avx512f avx512cd avx512vl avx512dq avx512bw"


@pytest.fixture
def venv(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A stand-in interpreter that logs its arguments (and says which llama-cpp-python is installed, when one
    is), the venv's own install stamp, and the local one's path."""
    log = tmp_path / "calls.log"
    python = tmp_path / "python"
    python.write_text(f"""#!/bin/sh
if [ "$1" = "-c" ]; then
    [ -f {tmp_path}/installed ] && echo "==$(cat {tmp_path}/installed)" && exit 0
    exit 1
fi
echo "CMAKE_ARGS=$CMAKE_ARGS $*" >> {log}
""")
    python.chmod(0o755)
    (tmp_path / ".installed").touch()
    return python, tmp_path / ".installed-local", log


def _build(venv: tuple[Path, Path, Path], flags: str, **env: str) -> list[str]:
    python, stamp, log = venv
    cpuinfo = stamp.parent / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\nbugs\t\t: none\n")
    environ = {k: v for k, v in os.environ.items() if k != "CMAKE_ARGS"} | {"AGENTLS_CPUINFO": str(cpuinfo)} | env
    log.unlink(missing_ok=True)
    subprocess.run([str(SCRIPT), str(python), str(stamp)], check=True, env=environ, capture_output=True, timeout=60)
    return log.read_text().splitlines() if log.exists() else []


def test_avx512_is_built_in_only_where_the_cpu_has_all_its_parts(venv):
    first = _build(venv, f"{BASE} avx2 fma f16c {AVX512} avx512vbmi avx512_vnni")
    assert len(first) == 2, "llama-cpp-python built on its own, then the rest of the extra"
    build, rest = first
    assert "--no-cache-dir --force-reinstall --no-deps llama-cpp-python>=0.3" in build
    assert "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=ON " \
           "-DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON " in build + " "
    assert "BF16" not in build, "not listed, not built"
    assert rest.endswith("-m pip install -q -e .[local,dev]")
    assert venv[1].read_text().strip() == build.split("CMAKE_ARGS=")[1].split(" -m pip")[0]

    (venv[0].parent / "installed").write_text("0.3.36")
    without = _build(venv, f"{BASE} avx2 fma f16c avx512f avx512cd avx512vl avx512dq")  # no avx512bw
    assert "-DGGML_AVX2=ON" in without[0] and "AVX512" not in without[0]
    assert "llama-cpp-python==0.3.36" in without[0], "built again at the version installed"
    assert "AVX" not in _build(venv, BASE)[0], "no AVX2: none of them"


def test_nothing_is_built_again_while_the_flags_stay_and_a_changed_venv_reinstalls_the_rest(venv):
    flags = f"{BASE} avx2 fma f16c"
    assert len(_build(venv, flags)) == 2
    assert _build(venv, flags) == [], "the same flags, the stamp newer than the venv: nothing to do"
    os.utime(venv[1], (1, 1))  # the venv's install (pyproject.toml changed) is newer than the stamp
    again = _build(venv, flags)
    assert len(again) == 1 and again[0].endswith("-e .[local,dev]"), "the extra again, no new build"
    chosen = _build(venv, flags, CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_BLAS=ON")
    assert "CMAKE_ARGS=-DGGML_NATIVE=OFF -DGGML_BLAS=ON" in chosen[0], "CMAKE_ARGS chooses them"
