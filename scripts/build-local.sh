#!/usr/bin/env bash
# Build the bundled model's server (llama-cpp-python, from source) into a virtualenv, for the instruction
# sets this CPU has, and rebuild it when those flags change.
#
#   scripts/build-local.sh PYTHON STAMP      (what `make venv-local` calls)
#
# PYTHON is the virtualenv's interpreter; STAMP records the CMake flags of the last build. With the flags
# unchanged and STAMP newer than the venv's own install, nothing is done.
#
# The flags (CMAKE_ARGS overrides them): -DGGML_NATIVE=OFF always, and each x86 extension /proc/cpuinfo
# (AGENTLS_CPUINFO: another file of its form, for the tests) lists turned on by name. Not -DGGML_NATIVE=ON: on a virtual CPU that advertises AMX, -march=native
# compiles AMX tile instructions the kernel has not enabled for the process, and the server dies (a general
# protection fault at `ldtilecfg`) on its first completion. AVX-512 is turned on where the CPU has it: it
# reads a prompt 1.6 times as fast as AVX2 alone on this project's 2-core machine (853 tokens in 8.0 s
# against 12.9 s), and the search's fills took 1.07 times as long without it (docs/local-model.md).
#
# The build goes around pip's wheel cache (--no-cache-dir): pip keys a built wheel by its source, not by
# CMAKE_ARGS, so a wheel built earlier with other flags would come back.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=$1
STAMP=$2
INSTALLED=$(dirname "$STAMP")/.installed

cpu_flags() {
    local flags
    flags=" $(grep -m1 -w '^flags' "${AGENTLS_CPUINFO:-/proc/cpuinfo}" 2>/dev/null | cut -d: -f2) "
    local args="-DGGML_NATIVE=OFF"
    has() { for f in "$@"; do [[ $flags == *" $f "* ]] || return 1; done; }
    if has avx2; then
        args+=" -DGGML_AVX=ON -DGGML_AVX2=ON"
        has fma && args+=" -DGGML_FMA=ON"
        has f16c && args+=" -DGGML_F16C=ON"
        # GGML_AVX512 compiles with -mavx512f -mavx512cd -mavx512vl -mavx512dq -mavx512bw: all five or none
        if has avx512f avx512cd avx512vl avx512dq avx512bw; then
            args+=" -DGGML_AVX512=ON"
            has avx512vbmi && args+=" -DGGML_AVX512_VBMI=ON"
            has avx512_vnni && args+=" -DGGML_AVX512_VNNI=ON"
            has avx512_bf16 && args+=" -DGGML_AVX512_BF16=ON"
        fi
    fi
    echo "$args"
}

ARGS=${CMAKE_ARGS:-$(cpu_flags)}
if [ -f "$STAMP" ] && [ "$STAMP" -nt "$INSTALLED" ] && [ "$(cat "$STAMP")" = "$ARGS" ]; then
    exit 0
fi
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$ARGS" ]; then
    # the same version again when one is installed (built with other flags), else the `local` extra's newest
    version=$("$PY" -c 'import importlib.metadata as m; print("==" + m.version("llama-cpp-python"))' 2>/dev/null \
        || echo ">=0.3")
    echo "build-local.sh: building llama-cpp-python$version with $ARGS (a few minutes)" >&2
    CMAKE_ARGS="$ARGS" "$PY" -m pip install -q --no-cache-dir --force-reinstall --no-deps \
        "llama-cpp-python$version"
fi
"$PY" -m pip install -q -e ".[local,dev]"  # the server's other packages; llama-cpp-python is there now
printf '%s\n' "$ARGS" > "$STAMP"
