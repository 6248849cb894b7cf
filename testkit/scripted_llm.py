"""A scripted OpenAI-compatible HTTP server for tests and bench scripts.

It speaks the real wire protocol (`POST /v1/chat/completions`, the legacy
`POST /v1/completions` of raw prompts (fill-in-the-middle), both streamed as
server-sent events when the request says `stream` (see scripted_stream.py),
`GET /v1/models`, `POST /v1/embeddings`) on 127.0.0.1 and answers chat and
completion requests per role, the role being the `X-Agentls-Role` request
header. A completion answer is a `text_completion` object (the text in each
choice's `text`), cut before the first of the request's `stop` strings as a
real server does; the same answers and faults serve both endpoints.
Answers are queued with `add(role, answer)`; `default(role, answer)` answers
when a role's queue is empty (role "*" is the default of every role). An
answer is a dict (sent as its JSON text), a str (sent as is), a callable
taking the request body and returning one of those, or a `Fault` that makes
the server misbehave on purpose.

    with ScriptedLLM() as llm:
        llm.add("planner", {"subtasks": []})
        ...  # point an OpenAI client at llm.base_url

Every received chat or completion request body is kept in `requests` with a
"role" key added (a completion request is the one with a "prompt");
`requests_for(role)` filters them. With no answer for a role the server
answers HTTP 500 "no scripted answer for role X".

A request with `n` > 1 gets n choices, like OpenAI's endpoint: a queued
`Samples([a, b, c])` gives one choice per answer (the last repeated if n is
larger); any other answer is repeated n times (a deterministic model). With
`honour_n = False` the server answers one choice whatever `n` says
(llama-cpp-python does), and with `reject_n = True` it refuses n > 1 with HTTP
400 (older llama.cpp servers do). Usage counts the completion tokens of every
choice.

Streams: with `stream_usage = False` a stream carries no usage even when asked
(llama-cpp-python's server sends none); `reject_stream` / `reject_stream_options`
refuse those fields with HTTP 400 naming them. The faults `stall`, `drop`,
`slow`, `pings` and `interrupt` misbehave mid-stream; `hang` holds a request before its
headers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import socket
import sys
import threading
import time
import traceback
import uuid
import warnings
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from testkit.scripted_faults import Answer, Fault, Samples
from testkit.scripted_stream import Event, answer_events, dropped, interrupted, malformed_events, pinged, stalled

ROLE_HEADER = "X-Agentls-Role"
STOP_S = 5.0  # seconds stop() waits for the serving loop before it wakes it by force
EMBEDDING_DIM = 64


def estimate_tokens(text: str) -> int:
    """A rough token count: about four characters per token, at least one."""
    return max(1, math.ceil(len(text) / 4))


def _stack_of(thread: threading.Thread | None) -> str:
    frame = sys._current_frames().get(thread.ident) if thread is not None and thread.ident is not None else None
    return "".join(traceback.format_stack(frame)) if frame is not None else "(the thread has ended)"


def embed_text(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """A deterministic unit vector from hashed character trigrams of `text`."""
    vec = [0.0] * dim
    padded = f"  {text.lower()}  "
    for i in range(len(padded) - 2):
        digest = hashlib.blake2b(padded[i : i + 3].encode(), digest_size=8).digest()
        slot = int.from_bytes(digest[:4], "little") % dim
        vec[slot] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def _prompt_text(body: dict[str, Any]) -> str:
    if "prompt" in body:
        return str(body.get("prompt") or "") + str(body.get("suffix") or "")
    parts = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "\n".join(parts)


def completion_body(
    body: dict[str, Any], content: str | list[str], finish_reason: str = "stop"
) -> dict[str, Any]:
    """An OpenAI chat completion object answering `body` with `content` (a list: one choice each); a
    `text_completion` object when `body` is a raw completion request (it has a `prompt`)."""
    contents = [content] if isinstance(content, str) else content
    prompt_tokens = estimate_tokens(_prompt_text(body))
    completion_tokens = sum(estimate_tokens(c) for c in contents)
    raw = "prompt" in body
    return {
        "id": f"{'cmpl' if raw else 'chatcmpl'}-{uuid.uuid4().hex[:24]}",
        "object": "text_completion" if raw else "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or "scripted",
        "choices": [
            {
                "index": i,
                **({"text": text} if raw else {"message": {"role": "assistant", "content": text}}),
                "finish_reason": finish_reason,
                "logprobs": None,
            }
            for i, text in enumerate(contents)
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _stopped(text: str, stop: Any) -> str:
    """`text` cut before the first of the request's `stop` strings (a string or a list), as a server stops."""
    stops = [stop] if isinstance(stop, str) else [s for s in stop or [] if isinstance(s, str) and s]
    cut = min((text.index(s) for s in stops if s in text), default=len(text))
    return text[:cut]


def error_body(message: str, code: int) -> dict[str, Any]:
    kind = "rate_limit_error" if code == 429 else "server_error" if code >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": str(code)}}


class _Reply:
    """What the handler writes back: a status and the body bytes, or a stream's events."""

    def __init__(self, status: int, payload: Any, raw: bytes | None = None, events: list[Event] | None = None) -> None:
        self.status = status
        self.raw = raw if raw is not None else json.dumps(payload).encode()
        self.events = events


class ScriptedLLM:
    """The scripted server; thread-safe; start()/stop() or use as a context manager."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._lock = threading.Lock()
        self._queues: dict[str, deque[Answer]] = {}
        self._defaults: dict[str, Answer] = {}
        self._stopping = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self.parallel: str | None = None  # sent as x-agentls-parallel with the model list (a server's word on how
        # many completions of one prompt it writes together)
        self.in_flight = 0  # completion requests being answered now ...
        self.most_in_flight = 0  # ... and the most at once so far
        self.reject_json_schema = False
        self.honour_n = True
        self.honour_max_tokens = False  # True: an answer longer than the request's max_tokens is cut ("length")
        self.reject_n = False
        self.stream_usage = True
        self.reject_stream = False
        self.reject_stream_options = False
        self.models = ["scripted"]
        self._host, self._port = host, port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting API ---------------------------------------------------------------
    def add(self, role: str, answer: Answer) -> None:
        """Queue one answer (or fault) for `role`."""
        with self._lock:
            self._queues.setdefault(role, deque()).append(answer)

    def default(self, role: str, answer: Answer) -> None:
        """Answer `role` with `answer` whenever its queue is empty ("*" = every role)."""
        with self._lock:
            self._defaults[role] = answer

    def requests_for(self, role: str) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if r.get("role") == role]

    def pending(self, role: str) -> int:
        """How many queued answers `role` has not consumed yet."""
        with self._lock:
            return len(self._queues.get(role, ()))

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("ScriptedLLM is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> ScriptedLLM:
        handler = type("_BoundHandler", (_Handler,), {"llm": self})
        self._httpd = ThreadingHTTPServer((self._host, self._port), handler)
        self._httpd.daemon_threads = True
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, in bounded time.

        `ThreadingHTTPServer.shutdown()` waits without a timeout for the serving loop to notice; once in
        some 2,000 tests on CI it never did, and the test hung for its whole timeout. The loop is asked to
        stop from a helper thread; if it has not stopped within STOP_S, its listening socket is shut down
        (which wakes an `accept` that blocks) and the serving thread's stack is reported as a warning, so
        the next occurrence says where it was stuck, and the test goes on."""
        self._stopping.set()  # releases hung requests
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is None:
            return
        asking = threading.Thread(target=httpd.shutdown, name="scripted-llm-stop", daemon=True)
        asking.start()
        asking.join(STOP_S)
        if asking.is_alive():
            stack = _stack_of(thread)
            with contextlib.suppress(OSError):
                httpd.socket.shutdown(socket.SHUT_RDWR)
            asking.join(STOP_S)
            warnings.warn(f"ScriptedLLM's serving thread did not stop within {STOP_S} s; it was at:\n{stack}",
                          RuntimeWarning, stacklevel=2)
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=STOP_S)

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- answering ---------------------------------------------------------------------
    def _next_answer(self, role: str) -> Answer:
        with self._lock:
            queue = self._queues.get(role)
            if queue:
                head = queue[0]
                if isinstance(head, Fault) and head.kind == "status" and head.times > 1:
                    head.times -= 1
                    return Fault.status(head.code)
                return queue.popleft()
            if role in self._defaults:
                return self._defaults[role]
            return self._defaults.get("*")

    def _record(self, body: dict[str, Any], role: str | None, headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append({**body, "role": role})
            self.request_headers.append(headers)

    def chat(self, body: dict[str, Any], role: str | None) -> _Reply:
        """Produce the reply to one chat completion request (or raw completion request: it has a `prompt`)."""
        fmt = body.get("response_format") or {}
        if self.reject_json_schema and isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            message = (  # the shape of llama-cpp-python's server error (a stringified validation error)
                "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]"
            )
            return _Reply(500, error_body(message, 500))
        if self.reject_n and int(body.get("n") or 1) > 1:
            return _Reply(400, error_body("Only one completion choice is allowed", 400))
        if self.reject_stream_options and "stream_options" in body:
            return _Reply(400, error_body("stream_options: Extra inputs are not permitted", 400))
        if self.reject_stream and body.get("stream"):
            return _Reply(400, error_body("stream: streaming is not supported by this server", 400))
        answer = self._next_answer(role or "")
        if answer is None:
            return _Reply(500, error_body(f"no scripted answer for role {role}", 500))
        return self._render(body, answer)

    def _render(self, body: dict[str, Any], answer: Answer) -> _Reply:
        if callable(answer) and not isinstance(answer, Fault):
            answer = answer(body)
        if isinstance(answer, Fault):
            return self._fault(body, answer)
        contents = self._contents(body, answer)
        limit = body.get("max_tokens") if self.honour_max_tokens else None
        if isinstance(limit, int) and any(estimate_tokens(c) > limit for c in contents):
            # As a real server does: the answer stops at max_tokens (estimate_tokens' 4 characters each).
            return self._answer(body, [c[: limit * 4] for c in contents], finish_reason="length")
        return self._answer(body, contents)

    def _contents(self, body: dict[str, Any], answer: Answer) -> list[str]:
        n = max(1, int(body.get("n") or 1)) if self.honour_n else 1
        answers = answer.answers if isinstance(answer, Samples) else [answer] * n
        picked = [answers[min(i, len(answers) - 1)] for i in range(n)]
        return [_stopped(a if isinstance(a, str) else json.dumps(a), body.get("stop")) for a in picked]

    def _answer(self, body: dict[str, Any], contents: list[str], finish_reason: str = "stop",
                every_s: float = 0.0) -> _Reply:
        """The completion of `contents`, streamed when the request asks for it."""
        if not body.get("stream"):
            return _Reply(200, completion_body(body, contents, finish_reason))
        events = answer_events(body, contents, estimate_tokens(_prompt_text(body)), finish_reason=finish_reason,
                               send_usage=self.stream_usage, every_s=every_s)
        return _Reply(200, None, raw=b"", events=events)

    def _fault(self, body: dict[str, Any], fault: Fault) -> _Reply:
        if fault.kind == "status":
            return _Reply(fault.code, error_body(f"scripted HTTP {fault.code}", fault.code))
        if fault.kind == "hang":
            self._stopping.wait(fault.seconds)
            if fault.then is not None:
                return self._render(body, fault.then)
            return _Reply(504, error_body(f"scripted hang of {fault.seconds} s", 504))
        if fault.kind == "malformed":
            if body.get("stream"):
                return _Reply(200, None, raw=b"", events=malformed_events())
            return _Reply(200, None, raw=b'{"id": "chatcmpl-broken", "choices": [{"index": 0, "mess')
        if fault.kind == "truncated":
            text = fault.content or '{"summary": "an answer that stops in the mid'
            cut = text[: max(1, len(text) // 2)] if fault.content else text
            return self._answer(body, [cut], finish_reason="length")
        if fault.kind in ("stall", "drop", "slow", "pings", "interrupt"):
            return self._misstream(body, fault)
        raise ValueError(f"unknown fault {fault.kind}")

    def _misstream(self, body: dict[str, Any], fault: Fault) -> _Reply:
        """A stream that stalls, drops, trickles or pings (a non-streamed request: held, then answered)."""
        contents = self._contents(body, fault.then if fault.then is not None else "a scripted answer")
        every_s = fault.seconds if fault.kind == "slow" else 0.0
        reply = self._answer(body, contents, every_s=every_s)
        if reply.events is None:
            if fault.kind == "drop":
                return _Reply(200, None, raw=b"", events=[Event(0.0, None)])
            if fault.kind not in ("slow", "interrupt"):
                self._stopping.wait(fault.seconds)
            return reply
        if fault.kind == "stall":
            reply.events = stalled(reply.events, fault.code, fault.seconds)
        elif fault.kind == "drop":
            reply.events = dropped(reply.events, fault.code)
        elif fault.kind == "interrupt":
            reply.events = interrupted(reply.events, fault.code)
        elif fault.kind == "pings":
            reply.events = pinged(reply.events, fault.seconds, float(fault.content or 15))
        return reply

    def embeddings(self, body: dict[str, Any]) -> _Reply:
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        if not all(isinstance(t, str) for t in texts):
            return _Reply(400, error_body("input must be a string or a list of strings", 400))
        data = [{"object": "embedding", "index": i, "embedding": embed_text(t)} for i, t in enumerate(texts)]
        tokens = sum(estimate_tokens(t) for t in texts)
        return _Reply(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model") or "scripted-embed",
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def list_models(self) -> _Reply:
        created = int(time.time())
        data = [{"id": m, "object": "model", "created": created, "owned_by": "scripted"} for m in self.models]
        return _Reply(200, {"object": "list", "data": data})


class _Handler(BaseHTTPRequestHandler):
    """HTTP adapter: parses the request, asks the ScriptedLLM, writes the reply."""

    llm: ScriptedLLM
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
        return

    def _read_json(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return None
        return body if isinstance(body, dict) else None

    def _send(self, reply: _Reply, headers: dict[str, str] | None = None) -> None:
        if reply.events is not None:
            self._send_stream(reply.events)
            return
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply.raw)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.raw)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (e.g. its timeout)

    def _send_stream(self, events: list[Event]) -> None:
        """Write `events` as a chunked text/event-stream, each after its delay; None drops the connection."""
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            for event in events:
                if event.delay_s and self.llm._stopping.wait(event.delay_s):
                    break
                if event.data is None:
                    self.close_connection = True
                    return
                if event.data:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(event.data), event.data))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            told = self.llm.parallel
            self._send(self.llm.list_models(), {"x-agentls-parallel": told} if told is not None else {})
        else:
            self._send(_Reply(404, error_body(f"no route GET {self.path}", 404)))

    def do_POST(self) -> None:
        body = self._read_json()
        if body is None:
            self._send(_Reply(400, error_body("request body is not a JSON object", 400)))
            return
        path = self.path.rstrip("/")
        if path == "/v1/completions" and not isinstance(body.get("prompt"), str):
            self._send(_Reply(422, error_body("prompt: a string is required", 422)))
        elif path == "/v1/chat/completions" and "prompt" in body:
            self._send(_Reply(422, error_body("prompt: Extra inputs are not permitted", 422)))
        elif path in ("/v1/chat/completions", "/v1/completions"):
            role = self.headers.get(ROLE_HEADER)
            self.llm._record(body, role, {k.lower(): v for k, v in self.headers.items()})
            with self.llm._lock:
                self.llm.in_flight += 1
                self.llm.most_in_flight = max(self.llm.most_in_flight, self.llm.in_flight)
            try:
                self._send(self.llm.chat(body, role))
            finally:
                with self.llm._lock:
                    self.llm.in_flight -= 1
        elif path == "/v1/embeddings":
            self._send(self.llm.embeddings(body))
        else:
            self._send(_Reply(404, error_body(f"no route POST {self.path}", 404)))

