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

The context also keeps the cache cells of the last KEPT prompts, each in a sequence of its own (`Kept`): a
batch whose prompt shares more with one of them than with the last one starts from a copy of its cells and
reads only the rest. The search comes back to a function after holes elsewhere, and a place's holes share
the code before them, not the line after; llama-cpp-python's RAM cache (`--cache true`) would do the same by
saving the whole context's state after every answer, which cost more than it saved here (docs/local-model.md).

It is a script, not a module of agent_core: it runs in the interpreter that has llama-cpp-python
(`AGENTLS_MODEL_SERVER_PYTHON`, agentls's own by default), which need not have agentls. It takes
llama-cpp-python's server's command-line flags, and `--parallel`.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import contextlib
import ctypes
import json
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

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


@dataclass
class Job:
    """One completion request of a batch: what it asks, and where its text goes."""

    model: str
    prompt: str
    max_tokens: int
    temperature: float
    top_p: float
    top_k: int
    min_p: float
    seed: int | None
    stop: list[str]
    out: asyncio.Queue = field(default_factory=asyncio.Queue)  # ("text", str) ..., then ("done", reason, usage),
    # ("error", message) or ("gone",): the client went away
    cancelled: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return self.model, self.prompt


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


def _held_back(text: str, stops: list[str]) -> int:
    """How many characters at the end of `text` may be the start of a stop string (not sent yet)."""
    return max((n for stop in stops for n in range(min(len(stop) - 1, len(text)), 0, -1)
                if stop.startswith(text[-n:])), default=0)


def _common(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


class Kept:
    """The earlier prompts a context keeps the cache cells of, each in a sequence of its own (after the batch's
    sequences), the latest used first. A batch whose prompt shares more with one of them than with the last
    prompt starts from a copy of that one's cells (a copy tags the cells, it moves no data) and reads only the
    rest: the search comes back to a function after a hole elsewhere, and a place's holes share the code before
    them but not the line after. The cells stay taken while a prompt is kept, so the oldest are let go when a
    batch needs the room (`make_room`), and all of them before llama-cpp-python's own handler uses the
    context: it trims every sequence of the cache to its own prompt (`forget`)."""

    def __init__(self, first: int, count: int) -> None:
        self.free = list(range(first, first + count))
        self.prompts: list[tuple[int, list[int]]] = []  # (sequence, tokens), the latest used first
        self.where: tuple[Any, Any] | None = None  # (library, memory) of the context they are in

    def bind(self, library: Any, memory: Any) -> None:
        """The context a batch decodes in: another one (another model loaded) keeps none of these."""
        if self.where is None or self.where[1] != memory:
            self.cleared()
        self.where = (library, memory)

    def cleared(self) -> None:
        """The context's cache was cleared: none is kept any more."""
        self.free += [seq for seq, _ in self.prompts]
        self.prompts = []

    def _drop(self, index: int) -> None:
        seq, _ = self.prompts.pop(index)
        if self.where is not None:
            self.where[0].llama_memory_seq_rm(self.where[1], seq, -1, -1)
        self.free.append(seq)

    def forget(self) -> None:
        while self.prompts:
            self._drop(-1)

    def make_room(self, cells: int) -> None:
        """Let the oldest go until the kept prompts take at most `cells` cells (counted as if they shared none)."""
        while self.prompts and sum(len(tokens) for _, tokens in self.prompts) > cells:
            self._drop(-1)

    def nearest(self, tokens: list[int]) -> tuple[int, int]:
        """(sequence, tokens shared) of the kept prompt sharing the longest start with `tokens`; (-1, 0) for none."""
        return max(((seq, _common(kept, tokens)) for seq, kept in self.prompts), key=lambda e: e[1], default=(-1, 0))

    def keep(self, tokens: list[int]) -> None:
        """Keep the prompt sequence 0 holds (`tokens`), the latest; the oldest goes when no sequence is free."""
        if self.where is None or not tokens:
            return
        for index, (_, kept) in enumerate(self.prompts):
            if kept == tokens:
                self.prompts.insert(0, self.prompts.pop(index))
                return
        if not self.free and self.prompts:
            self._drop(-1)
        if not self.free:
            return
        seq = self.free.pop()
        self.where[0].llama_memory_seq_cp(self.where[1], 0, seq, 0, len(tokens))
        self.prompts.insert(0, (seq, list(tokens)))


class Decoder:
    """Decodes a batch of jobs of one prompt on a llama-cpp-python `Llama` (runs in a worker thread, with the
    server's model lock held)."""

    def __init__(self, llama: Any, loop: asyncio.AbstractEventLoop, parallel: int = PARALLEL,
                 kept: Kept | None = None) -> None:
        import llama_cpp

        self.c, self.llama, self.loop, self.parallel = llama_cpp, llama, loop, parallel
        self.ctx = llama._ctx.ctx
        self.vocab = llama._model.vocab
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.kept = kept if kept is not None else Kept(parallel, 0)
        self.kept.bind(llama_cpp, self.memory)
        self.read = 0  # prompt tokens the last batch read (the rest came from the cache)
        self.keep = True  # the batch's prompt is kept after it (not while llama-cpp-python's handler may run)
        self.batch = llama_cpp.llama_batch_init(max(llama.n_batch, parallel), 0, 1)
        self.buffer = ctypes.create_string_buffer(256)  # one token's text

    def close(self) -> None:
        self.c.llama_batch_free(self.batch)

    def _put(self, job: Job, *item: Any) -> None:
        self.loop.call_soon_threadsafe(job.out.put_nowait, item)

    def _fill(self, entries: list[tuple[int, int, int, bool]]) -> None:
        self.batch.n_tokens = len(entries)
        for i, (token, pos, seq, logits) in enumerate(entries):
            self.batch.token[i], self.batch.pos[i], self.batch.n_seq_id[i] = token, pos, 1
            self.batch.seq_id[i][0], self.batch.logits[i] = seq, logits

    def _decode(self, entries: list[tuple[int, int, int, bool]]) -> None:
        self._fill(entries)
        if (code := self.c.llama_decode(self.ctx, self.batch)) != 0:
            raise RuntimeError(f"llama_decode returned {code}")

    def _tokens(self, prompt: str) -> list[int]:
        """The prompt's tokens as llama-cpp-python's own completion makes them (so its prompt cache agrees)."""
        bos = [self.llama.token_bos()] if self.llama._model.add_bos_token() and self.llama.token_bos() != -1 else []
        return bos + self.llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)

    def _read_prompt(self, tokens: list[int]) -> int:
        """Evaluate `tokens` into sequence 0 after the prefix the context already holds; the batch index of the
        last token's logits."""
        llama = self.llama
        common = _common(llama.input_ids[: llama.n_tokens].tolist(), tokens)
        seq, shared = self.kept.nearest(tokens)
        # the last token is read again: its logits are the first sample's
        common, shared = min(common, len(tokens) - 1), min(shared, len(tokens) - 1)
        for other in range(1, self.parallel):
            self.c.llama_memory_seq_rm(self.memory, other, -1, -1)
        if shared > common:  # a kept prompt shares more: sequence 0 starts as a copy of its cells
            self.c.llama_memory_seq_rm(self.memory, 0, -1, -1)
            self.c.llama_memory_seq_cp(self.memory, seq, 0, 0, shared)
            llama.input_ids[:shared] = tokens[:shared]
            common = shared
        else:
            self.c.llama_memory_seq_rm(self.memory, 0, common, -1)
        llama.n_tokens, llama._requires_eval = common, True
        self.read = len(tokens) - common
        last = 0
        for start in range(common, len(tokens), llama.n_batch):
            chunk = tokens[start : start + llama.n_batch]
            self._decode([(t, start + i, 0, start + i == len(tokens) - 1) for i, t in enumerate(chunk)])
            llama.input_ids[start : start + len(chunk)] = chunk
            llama.n_tokens = start + len(chunk)
            last = len(chunk) - 1
        return last

    def _sampler(self, job: Job, index: int) -> Any:
        c = self.c
        chain = c.llama_sampler_chain_init(c.llama_sampler_chain_default_params())
        if job.temperature <= 0:
            c.llama_sampler_chain_add(chain, c.llama_sampler_init_greedy())
            return chain
        c.llama_sampler_chain_add(chain, c.llama_sampler_init_top_k(job.top_k))
        c.llama_sampler_chain_add(chain, c.llama_sampler_init_top_p(job.top_p, 1))
        c.llama_sampler_chain_add(chain, c.llama_sampler_init_min_p(job.min_p, 1))
        c.llama_sampler_chain_add(chain, c.llama_sampler_init_temp(job.temperature))
        seed = job.seed if job.seed is not None else (time.time_ns() + index) % (1 << 31)
        c.llama_sampler_chain_add(chain, c.llama_sampler_init_dist(seed))
        return chain

    def _piece(self, token: int) -> bytes:
        size = self.c.llama_token_to_piece(self.vocab, token, self.buffer, len(self.buffer), 0, True)
        return bytes(self.buffer.raw[: max(size, 0)])

    def run(self, jobs: list[Job]) -> None:
        """Decode `jobs` (one prompt) together; each job's queue gets its text and then ("done", reason,
        usage), or ("error", message)."""
        samplers: list[Any] = []
        try:
            tokens = self._tokens(jobs[0].prompt)
            if len(tokens) + max(job.max_tokens for job in jobs) > self.llama.n_ctx():
                raise ValueError(f"the prompt's {len(tokens)} tokens and the answer's cap exceed the context "
                                 f"({self.llama.n_ctx()} tokens)")
            # the cells this batch may take: its prompt, and each sequence's answer up to its cap
            self.kept.make_room(self.llama.n_ctx() - len(tokens) - sum(job.max_tokens for job in jobs))
            row = self._read_prompt(tokens)
            print(f"batched_server prompt: read {self.read} of {len(tokens)} tokens", file=sys.stderr, flush=True)
            for seq in range(1, len(jobs)):
                self.c.llama_memory_seq_cp(self.memory, 0, seq, -1, -1)
            samplers = [self._sampler(job, i) for i, job in enumerate(jobs)]
            self._write(jobs, samplers, len(tokens), row)
        except Exception as exc:  # noqa: BLE001 - the server stays up; each request hears why
            print(f"batched completion failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            for job in jobs:
                self._put(job, "error", f"{type(exc).__name__}: {exc}")
            self.c.llama_memory_clear(self.memory, True)
            self.llama.n_tokens = 0
            self.kept.cleared()
        finally:
            for chain in samplers:
                self.c.llama_sampler_free(chain)
            for seq in range(1, self.parallel):  # the context keeps the prompt, in sequence 0 only
                self.c.llama_memory_seq_rm(self.memory, seq, -1, -1)
            self.c.llama_memory_seq_rm(self.memory, 0, self.llama.n_tokens, -1)
        if self.keep and self.llama.n_tokens:  # and among the kept ones
            self.kept.keep(self.llama.input_ids[: self.llama.n_tokens].tolist())

    def _write(self, jobs: list[Job], samplers: list[Any], start: int, row: int) -> None:
        texts = [""] * len(jobs)
        sent = [0] * len(jobs)
        counts = [0] * len(jobs)
        decoders = [codecs.getincrementaldecoder("utf-8")("replace") for _ in jobs]
        live = [not job.cancelled for job in jobs]
        rows = [row] * len(jobs)  # the batch row each sequence's next token is sampled from
        step = 0
        while any(live):
            following: list[tuple[int, int, int, bool]] = []
            for seq, job in enumerate(jobs):
                if not live[seq]:
                    continue
                if job.cancelled:
                    live[seq] = False
                    continue
                token = self.c.llama_sampler_sample(samplers[seq], self.ctx, rows[seq])
                counts[seq] += 1
                reason = None
                if self.c.llama_vocab_is_eog(self.vocab, token):
                    reason = "stop"
                else:
                    texts[seq] += decoders[seq].decode(self._piece(token))
                    cut = min((i for s in job.stop if (i := texts[seq].find(s, max(0, sent[seq] - len(s)))) >= 0),
                              default=-1)
                    if cut >= 0:
                        texts[seq], reason = texts[seq][:cut], "stop"
                    elif counts[seq] >= job.max_tokens:
                        reason = "length"
                safe = len(texts[seq]) if reason else len(texts[seq]) - _held_back(texts[seq][sent[seq]:], job.stop)
                if safe > sent[seq]:
                    self._put(job, "text", texts[seq][sent[seq] : safe])
                    sent[seq] = safe
                if reason:
                    live[seq] = False
                    self._put(job, "done", reason, {"prompt_tokens": start, "completion_tokens": counts[seq],
                                                    "total_tokens": start + counts[seq]})
                else:
                    following.append((token, start + step, seq, True))
            if not following:
                break
            self._decode(following)
            index = 0
            for seq in range(len(jobs)):
                if live[seq]:
                    rows[seq], index = index, index + 1
            step += 1


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
                    decoder = Decoder(llama, loop, self.parallel, self.kept)
                    decoder.keep = not self.passing
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
