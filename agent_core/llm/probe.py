"""Whether a run's model can be reached, found out at the run's start instead of at its first model call.

`check_endpoint(settings)` looks once at what the run's roles would call:
a configured `base_url` gets one `GET {base_url}/models` with a one-second
connect timeout (any HTTP answer, an error status too, means something
listens; a connection that opens but answers slowly is a busy server, not a
dead one); with no `base_url`, a user's own Ollama or LM Studio on its port
(llm/detect.py), a recorded running local model server, or the bundled
model's file and runtime (llama-cpp-python) must be there. `EndpointWatch`
runs that check on a thread beside the run's first steps (the baseline),
tells the front end at once when the model cannot be reached, lets the
search wait (a second at most) so that is said before it starts, and says
in the run's last line that the model was never reached.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from agent_core.llm.base import LLMUnavailable
from agent_core.llm.detect import detect_local_server
from agent_core.local_model.endpoint import not_servable
from agent_core.local_model.registry import model_dir
from agent_core.local_model.serve import pid_alive, read_state
from agent_core.models import ROLES, RunResult
from agent_core.settings import Settings
from agent_core.settings.redact import redact_url

PROBE_TIMEOUT_S = 1.0
SETTLE_WAIT_S = 3.0  # how long the search waits for a probe still running (its own timeouts are shorter)
BUNDLED = "the bundled local model"


@dataclass(frozen=True)
class EndpointCheck:
    """What the probe found for one endpoint."""

    endpoint: str  # the URL (credentials redacted), or BUNDLED
    problem: str | None = None  # why the model cannot be reached; None when it answered or can start
    certain: bool = False  # the problem is sure (refused, unresolved, nothing installed), not a slow connect

    def sentence(self) -> str:
        where = f"model endpoint {self.endpoint}" if self.endpoint != BUNDLED else "no model"
        return f"{where} unreachable: {self.problem}" if self.endpoint != BUNDLED else f"{where}: {self.problem}"


def _probe_url(base_url: str) -> EndpointCheck:
    from agent_core.llm.retrying import _connection_cause  # the retry's words for a failed connection (loads openai)

    shown = redact_url(base_url)
    timeout = httpx.Timeout(PROBE_TIMEOUT_S)
    try:
        with httpx.Client(timeout=timeout) as client:
            client.get(f"{base_url.rstrip('/')}/models")
    except httpx.ConnectTimeout:
        return EndpointCheck(shown, f"no connection within {PROBE_TIMEOUT_S:g} s")
    except httpx.TimeoutException:  # connected, the answer is slow: a busy server (llama.cpp's, generating)
        return EndpointCheck(shown)
    except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        return EndpointCheck(shown, _connection_cause(exc), certain=True)
    except httpx.HTTPError as exc:
        return EndpointCheck(shown, _connection_cause(exc))
    return EndpointCheck(shown)


def _bundled(settings: Settings) -> EndpointCheck:
    """The endpoint of a run with no base_url: a user's local server, the running bundled one, or one to start."""
    if settings.detect_local_servers:
        detected = detect_local_server()
        if detected is not None:
            return EndpointCheck(redact_url(detected.base_url))
    state = read_state(model_dir())
    if state is not None and pid_alive(state.pid):
        return EndpointCheck(state.base_url)
    why = not_servable(settings.local_model)
    return EndpointCheck(BUNDLED, f"base_url is not set and {why}", certain=True) if why else EndpointCheck(BUNDLED)


def check_endpoint(settings: Settings) -> EndpointCheck:
    """The first problem among the endpoints the run's roles would call, or a check without one."""
    urls = list(dict.fromkeys(settings.profile(role).base_url for role in ROLES))
    checks = [_probe_url(url) if url else _bundled(settings) for url in urls]
    return next((c for c in checks if c.problem), checks[0])


class EndpointWatch:
    """The start-of-run check, run beside the run's first steps; `notify` is told at once of a problem."""

    def __init__(self, settings: Settings, notify: Callable[[str], None], going_on: str) -> None:
        self._settings, self._notify, self._going_on = settings, notify, going_on
        self._task: asyncio.Task[EndpointCheck] | None = None
        self.check: EndpointCheck | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(asyncio.to_thread(check_endpoint, self._settings))
        self._task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[EndpointCheck]) -> None:
        if task.cancelled() or task.exception() is not None:
            return  # a probe that broke says nothing: the model call will
        self.check = task.result()
        if self.check.problem:
            self._notify(f"{self.check.sentence()}; {self._going_on}")

    async def settled(self, wait_s: float = SETTLE_WAIT_S) -> EndpointCheck | None:
        """The check, waited for up to `wait_s` seconds (None when it is not done by then or broke)."""
        if self._task is not None and not self._task.done():
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(self._task), wait_s)
        return self.check

    async def refuse_unreachable(self) -> None:
        """Raise LLMUnavailable when the model surely cannot be reached (a run that has nothing to do without it)."""
        check = await self.settled()
        if check is not None and check.problem and check.certain:
            raise LLMUnavailable(check.sentence())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def annotate(self, result: RunResult) -> None:
        """Say in `result`'s last line that the model was never reached, when the probe found it unreachable and
        no model call of the run got an answer."""
        check = self.check
        if check is None or not check.problem or result.usage.tokens:  # a call that failed is counted, no tokens
            return
        note = f"the model was never reached ({check.sentence()})"
        if result.error:
            if check.sentence() not in result.error:  # a run refused for it says so already
                result.error = f"{result.error}; the model was never reached"
        else:
            result.summary = f"{result.summary}; {note}" if result.summary else note
