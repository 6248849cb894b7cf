"""How fast the bundled model answers a coder-sized request, idle and with a test run going beside it.

Starts the bundled model's server (agent_core.local_model) once per thread count
and sends R streamed chat requests shaped like a coder call (a ~1,500-token
prompt: a real module whole and a failing test's output; at most N output
tokens, temperature 0). Per request it records the prompt phase (time to the
first token) and the generation rate (output tokens after the first / the time
they took). Conditions, each with the same requests:

- idle: nothing else runs;
- tests: a real test suite runs in a loop beside it, started in a session of
  its own as the sandbox starts test runs (its own scheduler autogroup);
- tests-yielding: the same, with the test run's autogroup set to nice 19 (what
  the sandbox does with every test run: launcher.yielding_prefix, docs/local-model.md).

The prompt phase is short after the first request: llama.cpp keeps the previous
prompt's evaluated prefix (the system prompt and the module), so a request that
shares it evaluates only the rest.

    python -m bench.model_speed [--threads 2,1] [--requests 3] [--max-tokens 120]
        [--conditions idle,tests,tests-yielding] [--suite DIR --suite-python PY]

The suite defaults to tomlkit 0.12.2's tests from the real-history corpus cache
(`python -m bench.history_corpus fetch` makes it). Prints one line per request
and a table of medians; run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from openai import OpenAI

from agent_core.local_model.registry import MODELS, model_dir
from agent_core.local_model.serve import ServerConfig, start_server
from agent_core.sandbox.launcher import yield_cpu

HISTORY = Path.home() / ".cache" / "agentls-bench" / "history"
SUITE = HISTORY / "trees" / "tomlkit-0.12.2"
SUITE_PYTHON = HISTORY / "venvs" / "tomlkit-0.12.2" / "bin" / "python"
MODEL = model_dir() / MODELS["qwen2.5-coder-1.5b"].file_name()
MODULE = Path(__file__).resolve().parents[1] / "examples" / "pagination"


def coder_prompt(variant: int) -> list[dict[str, str]]:
    """A coder-shaped request: the same system prompt and module every time (a prefix a prompt cache can
    keep), a different question at the end."""
    sources = sorted(MODULE.rglob("*.py"))
    shown = "\n\n".join(f"# {p.relative_to(MODULE)}\n{p.read_text()}" for p in sources)[:5200]
    return [
        {"role": "system", "content": "You fix bugs in Python code. Answer with the changed function whole, "
                                      "in one fenced python block, and nothing else."},
        {"role": "user", "content": f"{shown}\n\nThe test `test_case_{variant}` fails with:\n"
                                    f"AssertionError: assert {variant + 3} == {variant + 2}\n"
                                    "Fix the function the failure points at."},
    ]


def timed_request(client: OpenAI, alias: str, variant: int, max_tokens: int) -> dict[str, float]:
    start = time.monotonic()
    first = None
    chunks = 0
    usage = None
    stream = client.chat.completions.create(
        model=alias, messages=coder_prompt(variant), max_tokens=max_tokens, temperature=0, stream=True,
        stream_options={"include_usage": True},
    )
    for event in stream:
        if event.usage is not None:
            usage = event.usage
        if event.choices and event.choices[0].delta.content:
            chunks += 1
            if first is None:
                first = time.monotonic()
    end = time.monotonic()
    first = first or end
    out = usage.completion_tokens if usage else chunks
    return {
        "prompt_tokens": float(usage.prompt_tokens if usage else 0),
        "prompt_s": first - start,
        "gen_tokens": float(out),
        "gen_tps": (out - 1) / (end - first) if out > 1 and end > first else 0.0,
    }


class Load:
    """A real test suite run over and over in a session of its own, until stopped."""

    def __init__(self, suite: Path, python: Path, yielding: bool) -> None:
        loop = f"while true; do {python} -m pytest -q -x -p no:cacheprovider >/dev/null 2>&1; done"
        self.proc = subprocess.Popen(["sh", "-c", loop], cwd=suite, start_new_session=True)
        if yielding:
            yield_cpu(self.proc.pid)

    def stop(self) -> None:
        os.killpg(self.proc.pid, 9)
        self.proc.wait()


def run(threads: int, conditions: list[str], args: argparse.Namespace) -> list[tuple[int, str, dict[str, float]]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="agentls-model-speed-") as state_dir:
        server = start_server(ServerConfig(MODEL, "bench", threads=threads, batch_threads=threads), Path(state_dir))
        try:
            client = OpenAI(base_url=server.base_url, api_key="none", timeout=600)
            warm = client.chat.completions.create(model="bench", messages=coder_prompt(0), max_tokens=1)
            prompt_tokens = float(warm.usage.prompt_tokens if warm.usage else 0)  # the stream reports no usage
            for condition in conditions:
                load = Load(args.suite, args.suite_python, condition == "tests-yielding") if condition != "idle" \
                    else None
                try:
                    time.sleep(3 if load else 0)
                    for i in range(args.requests):
                        figures = timed_request(client, "bench", i + 1, args.max_tokens)
                        figures["prompt_tokens"] = figures["prompt_tokens"] or prompt_tokens
                        load_avg = os.getloadavg()[0]
                        print(f"threads={threads} {condition:15} #{i + 1}: prompt {figures['prompt_tokens']:.0f} tok "
                              f"in {figures['prompt_s']:.1f} s, {figures['gen_tokens']:.0f} tok at "
                              f"{figures['gen_tps']:.1f} tok/s (load {load_avg:.2f})", flush=True)
                        rows.append((threads, condition, figures))
                finally:
                    if load:
                        load.stop()
        finally:
            server.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="2,1")
    parser.add_argument("--requests", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=120)
    parser.add_argument("--conditions", default="idle,tests,tests-yielding")
    parser.add_argument("--suite", type=Path, default=SUITE)
    parser.add_argument("--suite-python", type=Path, default=SUITE_PYTHON)
    args = parser.parse_args()
    conditions = args.conditions.split(",")
    rows = []
    for threads in (int(t) for t in args.threads.split(",")):
        rows += run(threads, conditions, args)
    print(f"\n{'threads':>7} {'condition':15} {'prompt s':>9} {'prompt tok/s':>12} {'gen tok/s':>9}  (medians)")
    for threads in sorted({r[0] for r in rows}, reverse=True):
        for condition in conditions:
            mine = [r[2] for r in rows if r[0] == threads and r[1] == condition]
            if not mine:
                continue
            prompt_s = statistics.median(m["prompt_s"] for m in mine)
            prompt_tps = statistics.median(m["prompt_tokens"] / m["prompt_s"] for m in mine if m["prompt_s"])
            gen = statistics.median(m["gen_tps"] for m in mine)
            print(f"{threads:>7} {condition:15} {prompt_s:>9.1f} {prompt_tps:>12.0f} {gen:>9.1f}")


if __name__ == "__main__":
    main()
