"""The bundled model's server: llama-cpp-python's OpenAI-compatible server, with the completions of one prompt
that are asked at the same time written together.

llama-cpp-python's server answers one request at a time. The search's fills ask each hole's samples of one
prompt (search/infill/generate.py), and a few sequences decoded in one batch cost little more than one:
writing is one matrix-vector product per token and layer, and a batch makes it a matrix product, which the
CPU does at several times the work per second. On this machine's 2 cores, one writing thread (the server's
default beside test runs, serve.default_threads), a 853-token prompt and 40 tokens a sample: 15.3 tokens a
second for one sequence, 26.7 for two, 33.2 for four, 24.7 for eight (2026-12-06, idle; four is PARALLEL).
No library does this here: llama.cpp's own C++ server does (`--parallel`), but it is not on PyPI, and
llama-cpp-python's server takes no `n` and runs a lock around every request.

So this module runs llama-cpp-python's server app behind a small ASGI layer of its own. A POST to
/v1/completions whose body is a plain prompt (a string, with `max_tokens`, `temperature`, `top_p`, `top_k`,
`min_p`, `seed`, `stop`, `stream`, `stream_options`: what an OpenAI client sends for a raw completion) joins a
queue; the requests of one model and prompt queued within GATHER_S of the first, at most PARALLEL, are
decoded together: the prompt once, into sequence 0 (reusing what the model's context already holds of it, as
llama-cpp-python does), its cache cells shared with sequences 1..n-1, then one token of each sequence per
step, each with its own sampler (temperature, seed), stops and token cap, each answered (streamed or not)
as the OpenAI API does. A client that closes its stream ends its sequence at the next step. Any other request
(chat, a suffix, logprobs, echo, `n`, a grammar) goes to llama-cpp-python's server unchanged, under the same
lock, so the two never use the model at once. After a batch the context holds the prompt in sequence 0 only,
as llama-cpp-python's own state says, so its next request reuses the prompt's cached tokens too.

The context also keeps the cache cells of the last KEPT prompts, each in a sequence of its own
(`batch_decoder.Kept`): a batch whose prompt shares more with one of them than with the last one starts
from a copy of its cells and reads only the rest. The search comes back to a function after holes
elsewhere, and a place's holes share the code before them, not the line after; llama-cpp-python's RAM cache
(`--cache true`) would do the same by saving the whole context's state after every answer, which cost more
than it saved here (docs/local-model.md).

It is a script, not a module of agent_core: it runs in the interpreter that has llama-cpp-python
(`AGENTLS_MODEL_SERVER_PYTHON`, agentls's own by default), which need not have agentls, with the one module
beside it that it imports (batch_decoder.py: the batch's decoding on the model; this file: the HTTP layer).
It takes llama-cpp-python's server's command-line flags, `--parallel` and `--kept`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

if __package__:  # imported as agent_core.local_model.batched_server (the tests, serve.py's constants)
    from .batch_decoder import Decoder, Job, Kept
else:  # run as a script by the server's Python, which need not have agentls: this directory is on its path
    from batch_decoder import Decoder, Job, Kept  # type: ignore[no-redef]

PARALLEL = 4  # sequences decoded at once (see the module docstring for the measure)
KEPT = 4  # earlier prompts whose cache cells the context keeps, in sequences of their own after the batch's
PARALLEL_HEADER = b"x-agentls-parallel"  # on every answer: how many (agent_core/llm/fim.py reads it)
GATHER_S = 0.1  # the longest the first request of a batch waits for the others sent with it (a full batch goes
# at once)
PLAIN_KEYS = {"model", "prompt", "max_tokens", "temperature", "top_p", "top_k", "min_p", "seed", "stop", "stream",
              "stream_options", "user", "n"}
DEFAULTS = {"max_tokens": 16, "temperature": 0.8, "top_p": 0.95, "top_k": 40, "min_p": 0.05}  # llama-cpp-python's

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def plain_job(body: bytes) -> tuple[Job, bool, bool] | None:
    """The job of a completion request this layer decodes itself, whether it is streamed and whether the
    usage is asked in the stream; None for any other request (llama-cpp-python's server answers it)."""
    try:
        request = json.loads(body)
    except ValueError:
        return None
    if not isinstance(request, dict) or not set(request) <= PLAIN_KEYS or not isinstance(request.get("prompt"), str):
        return None
    if request.get("n", 1) != 1 or not request["prompt"] or ("max_tokens" in request and request["max_tokens"] is None):
        return None  # several choices, no prompt, or no cap (up to the context's end): llama-cpp-python's own
    stop = request.get("stop") or []
    stop = [stop] if isinstance(stop, str) else stop
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        return None
    values = {key: request[key] if request.get(key) is not None else default for key, default in DEFAULTS.items()}
    options = request.get("stream_options") or {}
    try:
        job = Job(str(request.get("model") or ""), request["prompt"], max(1, int(values["max_tokens"])),
                  float(values["temperature"]), float(values["top_p"]), int(values["top_k"]), float(values["min_p"]),
                  int(request["seed"]) if request.get("seed") is not None else None, [s for s in stop if s])
    except (TypeError, ValueError):
        return None
    return job, bool(request.get("stream")), bool(isinstance(options, dict) and options.get("include_usage"))


class Batching:
    """The ASGI layer in front of llama-cpp-python's server app (see the module docstring)."""

    def __init__(self, app: Any, proxy: Callable[[], Any], parallel: int = PARALLEL, kept: int = KEPT) -> None:
        self.app, self.proxy, self.parallel = app, proxy, parallel
        self.pending: list[Job] = []
        self.worker: asyncio.Task | None = None
        self.kept = Kept(parallel, kept)
        self.passing = 0  # requests llama-cpp-python's own handler answers now

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        told = str(self.parallel).encode()

        async def telling(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (PARALLEL_HEADER, told)]}
            await send(message)

        await self._answer(scope, receive, telling)

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST" or scope["path"].rstrip("/") != "/v1/completions":
            await self._pass(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
        plain = plain_job(body)
        if plain is None:
            replayed = False

            async def replay() -> Message:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await self._pass(scope, replay, send)
            return
        job, stream, usage = plain
        self.pending.append(job)
        if self.worker is None or self.worker.done():
            self.worker = asyncio.create_task(self._work())
        watch = asyncio.create_task(self._watch(receive, job))
        try:
            await (self._stream(job, usage, send) if stream else self._whole(job, send))
        finally:
            job.cancelled = True  # answered or gone: its sequence stops at the next step
            watch.cancel()

    async def _pass(self, scope: Scope, receive: Receive, send: Send) -> None:
        """llama-cpp-python's server answers: a request that may use the model lets the kept prompts go first
        (Kept), under the model's lock, and no batch keeps one until it is answered."""
        if scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        self.passing += 1
        try:
            async with contextlib.asynccontextmanager(self.proxy)():  # also after a batch that keeps one now
                self.kept.forget()
            await self.app(scope, receive, send)
        finally:
            self.passing -= 1

    @staticmethod
    async def _watch(receive: Receive, job: Job) -> None:
        """Note that the client went away: its sequence stops, and its handler, which nothing would answer any
        more (uvicorn's `send` to a gone client returns quietly), is let go."""
        while (await receive())["type"] != "http.disconnect":
            pass
        job.cancelled = True
        job.out.put_nowait(("gone",))

    async def _work(self) -> None:
        loop = asyncio.get_running_loop()
        while self.pending:
            first, began = self.pending[0], loop.time()
            while loop.time() - began < GATHER_S and sum(job.key == first.key for job in self.pending) < self.parallel:
                await asyncio.sleep(GATHER_S / 20)
            group = [job for job in self.pending if job.key == first.key][: self.parallel]
            self.pending = [job for job in self.pending if job not in group]
            group = [job for job in group if not job.cancelled]
            if not group:
                continue
            print(f"batched_server: {len(group)} request(s) of one prompt decoded together", file=sys.stderr,
                  flush=True)
            async with contextlib.asynccontextmanager(self.proxy)() as proxy:
                try:
                    llama = proxy(first.model or None)
                    decoder = Decoder(llama, loop, self.parallel, self.kept, keep=not self.passing)
                except Exception as exc:  # noqa: BLE001 - the model failed to load: each request hears why
                    for job in group:
                        job.out.put_nowait(("error", f"{type(exc).__name__}: {exc}"))
                    continue
                try:
                    await asyncio.to_thread(decoder.run, group)
                finally:
                    decoder.close()

    @staticmethod
    def _chunk(job: Job, cid: str, text: str, reason: str | None) -> dict[str, Any]:
        return {"id": cid, "object": "text_completion", "created": int(time.time()), "model": job.model,
                "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": reason}]}

    async def _whole(self, job: Job, send: Send) -> None:
        cid, text = f"cmpl-{uuid.uuid4()}", ""
        while True:
            kind, *rest = await job.out.get()
            if kind == "text":
                text += rest[0]
                continue
            if kind == "gone":
                return
            if kind == "error":
                await _json(send, 500, {"error": {"message": rest[0], "type": "server_error"}})
                return
            await _json(send, 200, {**self._chunk(job, cid, text, rest[0]), "usage": rest[1]})
            return

    async def _stream(self, job: Job, usage: bool, send: Send) -> None:
        cid = f"cmpl-{uuid.uuid4()}"
        kind, *rest = await job.out.get()
        if kind == "gone":
            return
        if kind == "error":
            await _json(send, 500, {"error": {"message": rest[0], "type": "server_error"}})
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]})
        while True:
            if kind == "text":
                await _event(send, self._chunk(job, cid, rest[0], None))
            elif kind == "gone":
                return
            elif kind == "error":  # after text was sent: the stream ends without a finish reason
                break
            else:
                await _event(send, self._chunk(job, cid, "", rest[0]))
                if usage:
                    await _event(send, {**self._chunk(job, cid, "", None), "choices": [], "usage": rest[1]})
                break
            kind, *rest = await job.out.get()
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})


async def _event(send: Send, data: dict[str, Any]) -> None:
    await send({"type": "http.response.body", "body": f"data: {json.dumps(data)}\n\n".encode(), "more_body": True})


async def _json(send: Send, status: int, data: dict[str, Any]) -> None:
    body = json.dumps(data).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _with_sequences(sequences: int) -> None:
    """Make every llama.cpp context take `sequences` sequences sharing one cache: llama-cpp-python's `Llama`
    takes no such parameter (it reads the library's defaults, then sets what it takes), so the default is
    changed where it reads it."""
    from llama_cpp import llama_cpp as library  # where llama-cpp-python's `Llama` looks the default up

    defaults = library.llama_context_default_params

    def params() -> Any:
        value = defaults()
        value.n_seq_max, value.kv_unified = sequences, True
        return value

    library.llama_context_default_params = params


def main(argv: list[str] | None = None) -> int:
    import uvicorn
    from llama_cpp.server import app as server_app
    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.settings import ModelSettings, ServerSettings, Settings

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_args_from_model(parser, Settings)
    parser.add_argument("--parallel", type=int, default=PARALLEL, help="sequences decoded at once")
    parser.add_argument("--kept", type=int, default=KEPT, help="earlier prompts whose cache cells are kept")
    args = parser.parse_args(argv)
    parallel, kept = max(1, args.parallel), max(0, args.kept)
    _with_sequences(parallel + kept)
    server: Any = parse_model_from_args(ServerSettings, args)  # typed as returning its class, returns an instance
    model: Any = parse_model_from_args(ModelSettings, args)
    app = server_app.create_app(server_settings=server, model_settings=[model])
    uvicorn.run(Batching(app, server_app.get_llama_proxy, parallel, kept), host=server.host, port=server.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
