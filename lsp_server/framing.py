"""The server's JSON-RPC reading loop: a client's framing or protocol mistakes never make it deaf or dead.

pygls' own loop (`pygls.io_.run_async`) loses every later message after a
header without a valid `Content-Length` (the body is read as a header line
and swallows the next real header), allocates whatever `Content-Length`
claims (10^12: MemoryError, the server exits; 10^9: it waits forever) and
answers a request whose params do not parse with nothing but an error
dialog. This loop replaces it, over stdio and TCP:

- header lines are read capped (`LINE_CAP`); a `Content-Length:` header is
  found at the end of any line, so junk (a body sent without a header, the
  rest of a body whose length was understated) is skipped up to the next
  real header: the stream resynchronises;
- a missing or non-numeric length, and a length over `max_bytes` (the
  server's `--max-message-bytes`), are answered with an error whose id is
  null and the message is skipped (its bytes are read as junk, never
  buffered whole);
- a body that is not JSON is answered -32700, one that is not a JSON-RPC
  message -32600, a request whose params fail lsprotocol's parsing -32602
  (with the request's id), all logged; none is shown to the user;
- SIGTERM cancels the server's runs (waiting for their clean-up) before the
  process exits, so a terminated server leaves no copy or sandbox behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import queue
import re
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import BinaryIO, Protocol

from cattrs import transform_error
from cattrs.errors import ClassValidationError
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.protocol import JsonRPCProtocol
from pygls.server import JsonRPCServer

from agent_core.sandbox.proctree import kill_own_runs
from lsp_server.engine_thread import join_engine_threads
from lsp_server.runs import SHUTDOWN_GRACE_S

LINE_CAP = 64 * 1024  # longest header line read at once; longer junk is read in pieces
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
_HEADER = re.compile(rb"content-length:[ \t]*(\S*)[ \t]*\r?\n\Z", re.IGNORECASE)
_CARRY = 64  # bytes of an unfinished line kept, so a header split across two reads is still found

log = logging.getLogger(__name__)
StopRuns = Callable[[], Awaitable[None]]  # the run manager's stop_all: cancel every run, wait for their clean-up


class LineReader(Protocol):
    """What `serve_messages` reads from: capped lines and bodies of a known length."""

    async def readline(self) -> bytes: ...

    async def readexactly(self, n: int) -> bytes: ...


class CappedStdinReader:
    """stdin read on a daemon thread of its own: lines at most `LINE_CAP` bytes, bodies of a known length.

    Not in an executor: `concurrent.futures` joins its threads when the
    interpreter exits, and the read waiting for the client's next message
    never returns while the client keeps stdin open, so a server told to
    `exit` stayed alive (an exit after an awaited clean-up always found that
    read pending). The daemon thread reads an unbuffered duplicate of the
    descriptor: a buffered reader's lock held by a daemon thread aborts the
    interpreter at exit. No library reads a blocking stream on a thread that
    the exit may abandon, hence these few lines.
    """

    def __init__(self, stdin: BinaryIO) -> None:
        try:
            self.stdin: BinaryIO | io.FileIO = os.fdopen(os.dup(stdin.fileno()), "rb", buffering=0)  # not inherited
        except (AttributeError, OSError, io.UnsupportedOperation):  # an in-memory stream: no lock to fear
            self.stdin = stdin
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="agentls-stdin", daemon=True).start()

    def _serve(self) -> None:
        while True:
            read, size, loop, future = self._jobs.get()
            try:
                data = read(size)
            except Exception as exc:  # noqa: BLE001 - handed to the awaiting reader
                loop.call_soon_threadsafe(_settle, future, None, exc)
            else:
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: the server is exiting
                    loop.call_soon_threadsafe(_settle, future, data, None)

    async def _read(self, read: Callable[[int], bytes], size: int) -> bytes:
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._jobs.put((read, size, asyncio.get_running_loop(), future))
        return await future

    async def readline(self) -> bytes:
        return await self._read(self.stdin.readline, LINE_CAP)

    async def readexactly(self, n: int) -> bytes:
        return await self._read(self._read_exactly, n)

    def _read_exactly(self, n: int) -> bytes:
        """`n` bytes, fewer only at the end of input (an unbuffered read returns what the pipe has)."""
        chunks, left = [], n
        while left > 0:
            chunk = self.stdin.read(left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)


_Job = tuple[Callable[[int], bytes], int, asyncio.AbstractEventLoop, "asyncio.Future[bytes]"]  # one read to do


def _settle(future: asyncio.Future[bytes], data: bytes | None, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(data or b"")


class StreamLineReader:
    """An asyncio stream (a TCP client) with the same capped-line interface."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream

    async def readline(self) -> bytes:
        try:
            return await self.stream.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # end of input: what is left, then b""
            return exc.partial
        except asyncio.LimitOverrunError as exc:  # a line longer than the stream's buffer: hand it over in pieces
            return await self.stream.read(max(1, min(exc.consumed, LINE_CAP)))

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self.stream.readexactly(n)
        except asyncio.IncompleteReadError as exc:
            return exc.partial


class _Headers:
    """One header block as it is read: the length it declares, or why it has none usable."""

    def __init__(self) -> None:
        self.length: int | None = None
        self.problem: str | None = None
        self.seen = False
        self.carry = b""

    def feed(self, line: bytes) -> None:
        text = self.carry + line
        self.carry = b"" if line.endswith(b"\n") else text[-_CARRY:]
        match = _HEADER.search(text)
        if match is None:
            self.seen = self.seen or bool(line.strip())
            return
        if match.start() > 0:
            log.warning("skipped %d bytes of junk before a Content-Length header", match.start())
        self.seen, self.length, self.problem = True, None, None
        value = match.group(1)
        if value.isdigit() and len(value) <= 18:
            self.length = int(value)
        elif value.isdigit():  # int() refuses over 4300 digits; nothing real is over 10^18 bytes
            self.problem = f"a message with a Content-Length of {len(value)} digits"
        else:
            self.problem = f"a message with a non-numeric Content-Length ({value[:40].decode('ascii', 'replace')!r})"


async def serve_messages(
    stop_event: threading.Event, reader: LineReader, protocol: JsonRPCProtocol,
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> None:
    """Read, frame and hand messages to `protocol` until end of input or `stop_event`."""
    headers = _Headers()
    while not stop_event.is_set():
        line = await reader.readline()
        if not line:
            return
        if line.strip() or headers.carry:
            headers.feed(line)
            continue
        length, problem, seen = headers.length, headers.problem, headers.seen
        headers = _Headers()
        if length is None:
            if seen:
                _refuse(protocol, None, INVALID_REQUEST, f"skipped {problem or 'a message without a Content-Length'}")
            continue
        if length > max_bytes:
            _refuse(protocol, None, INVALID_REQUEST,
                    f"skipped a message of {length} bytes: the limit is {max_bytes} (--max-message-bytes)")
            continue
        body = await reader.readexactly(length)
        if len(body) < length:
            return  # end of input inside a body
        dispatch(protocol, body)


def dispatch(protocol: JsonRPCProtocol, body: bytes) -> None:
    """Parse one message body and hand it to pygls; answer what pygls would drop."""
    try:
        data = json.loads(body)
    except ValueError as exc:  # also UnicodeDecodeError
        _refuse(protocol, None, PARSE_ERROR, f"the message is not JSON: {exc}")
        return
    if not isinstance(data, dict) or data.get("jsonrpc") != JsonRPCProtocol.VERSION:
        _refuse(protocol, _request_id(data), INVALID_REQUEST, "not a JSON-RPC 2.0 message")
        return
    try:
        message = protocol.structure_message(data)
    except JsonRpcException as exc:
        method = data.get("method")
        if method is None or "id" not in data:  # a notification or a response: nothing to answer
            log.warning("dropped a %s that does not parse: %s", method or "response", _why(exc))
            return
        _refuse(protocol, _request_id(data), INVALID_PARAMS, f"invalid params for {method}: {_why(exc)}")
        return
    try:
        protocol.handle_message(message)
    except Exception:
        log.exception("could not handle a %s message", data.get("method", "response"))


def _request_id(data: object) -> int | str | None:
    value = data.get("id") if isinstance(data, dict) else None
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


def _why(exc: JsonRpcException) -> str:
    cause = exc.__cause__
    if isinstance(cause, ClassValidationError):
        return "; ".join(transform_error(cause, path="params")[:5])
    return str(cause or exc)


def _refuse(protocol: JsonRPCProtocol, msg_id: int | str | None, code: int, message: str) -> None:
    """Answer an error the client caused (logged; never shown to the user)."""
    log.warning("JSON-RPC error %d answered (id %r): %s", code, msg_id, message)
    protocol._send_data({"jsonrpc": JsonRPCProtocol.VERSION, "id": msg_id, "error": {"code": code, "message": message}})


async def until_terminated(stop_runs: StopRuns | None, serving: Coroutine[object, object, None]) -> None:
    """Run `serving`; on SIGTERM cancel the server's runs (their copies and sandboxes go), then exit 143.

    The exit is immediate (`os._exit`): the thread reading stdin cannot be
    interrupted, and waiting for it would keep a terminated server alive.
    """
    loop = asyncio.get_running_loop()
    terminated = asyncio.Event()
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread: no signals
        loop.add_signal_handler(signal.SIGTERM, terminated.set)
    reading, waiting = asyncio.ensure_future(serving), asyncio.ensure_future(terminated.wait())
    await asyncio.wait({reading, waiting}, return_when=asyncio.FIRST_COMPLETED)
    if terminated.is_set():
        log.warning("SIGTERM: cancelling the runs and exiting")
        if stop_runs is not None:
            await stop_runs()
        kill_own_runs()  # what a run's clean-up cut short by the grace left; os._exit skips atexit's turn
        logging.shutdown()
        os._exit(128 + signal.SIGTERM)
    waiting.cancel()
    await reading


def start_tcp(server: JsonRPCServer, max_bytes: int, stop_runs: StopRuns | None, host: str, port: int) -> None:
    """Serve `server` to one TCP client at a time with this loop (pygls' `start_tcp`, our reader)."""
    server._stop_event = stop_event = threading.Event()

    async def connection(stream: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server.protocol.set_writer(writer)
        await serve_messages(stop_event, StreamLineReader(stream), server.protocol, max_bytes)
        server.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated

    async def listen() -> None:
        server._server = await asyncio.start_server(connection, host, port)
        async with server._server:
            await server._server.serve_forever()

    try:
        asyncio.run(until_terminated(stop_runs, listen()))
    except asyncio.CancelledError:
        log.debug("the TCP server was cancelled")


def start_io(server: JsonRPCServer, max_bytes: int, stop_runs: StopRuns | None = None, stdin: BinaryIO | None = None,
             stdout: BinaryIO | None = None) -> int:
    """Serve `server` (a pygls server) over stdin/stdout with this loop, then shut it down.

    The exit code: 0, or 1 for an `exit` that came without a `shutdown` (the protocol's rule; pygls raises it).
    """
    server._stop_event = stop_event = threading.Event()
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    reader = CappedStdinReader(stdin or sys.stdin.buffer)
    code = 0
    try:
        asyncio.run(until_terminated(stop_runs, serve_messages(stop_event, reader, server.protocol, max_bytes)))
    except BrokenPipeError:
        log.error("the connection to the client is lost; shutting down")
    except KeyboardInterrupt:
        pass
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated
        _wait_for_engines()
    return code


def _wait_for_engines() -> None:
    """Let the cancelled runs' threads finish their clean-up (bounded) before the interpreter exits."""
    still = join_engine_threads(SHUTDOWN_GRACE_S)
    if still:
        log.warning("exiting with engine threads still running: %s", ", ".join(still))
