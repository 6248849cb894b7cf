"""Decoding a batch: the completions of one prompt written together on a llama-cpp-python `Llama`, and the
earlier prompts whose cache cells the context keeps (local_model/batched_server.py's docstring says why).

A module of its own beside the script that serves it (batched_server.py runs it from this directory, in the
server's Python, which need not have agentls): the HTTP layer there, the model's work here.
"""

from __future__ import annotations

import asyncio
import codecs
import ctypes
import sys
import time
from dataclasses import dataclass, field
from typing import Any


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

    def __init__(self, llama: Any, loop: asyncio.AbstractEventLoop, parallel: int, kept: Kept,
                 keep: bool = True) -> None:
        import llama_cpp

        self.c, self.llama, self.loop, self.parallel = llama_cpp, llama, loop, parallel
        self.ctx = llama._ctx.ctx
        self.vocab = llama._model.vocab
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.kept = kept
        self.kept.bind(llama_cpp, self.memory)
        self.read = 0  # prompt tokens the last batch read (the rest came from the cache)
        self.keep = keep  # the batch's prompt is kept after it (not while llama-cpp-python's handler may run)
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
