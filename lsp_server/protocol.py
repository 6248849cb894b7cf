"""pygls' LSP protocol with one leak closed: finished handlers no longer stay in `_request_futures`.

pygls 2.1.1 records the future of every handler it runs in
`_request_futures` (so a `$/cancelRequest` can find it), but removes the
entry only when it answers a request. A notification handler that is a
coroutine or a generator (pygls' own `didOpen`/`didChange`/`didClose`/
`didSave` are generators that then run ours, each step under a fresh uuid)
stays there for good: about 1.5 KB per notification, measured in the soak
(bench/soak.py, bench/soak_memtrace.py) as the only Python-level growth.
Here each future recorded by a handler is removed once it is done, if the
entry still holds that future. pygls has no hook for this, hence the override.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Future

from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import MsgId


class AgentProtocol(LanguageServerProtocol):
    """LanguageServerProtocol whose handler bookkeeping does not grow with every notification."""

    def _execute_handler(self, msg_id: MsgId, handler: Callable[..., object],
                         callback: Callable[[Future[object]], None], args: tuple[object, ...] | None = None,
                         kwargs: dict[str, object] | None = None) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is None:  # a request already answered, or a plain function (pygls records none)
            return

        try:
            loop = asyncio.get_running_loop()  # handlers are started on the server's loop
        except RuntimeError:  # not on a loop (no server running): nothing to keep tidy
            return

        def pop(done: Future[object]) -> None:
            if self._request_futures.get(msg_id) is done:
                self._request_futures.pop(msg_id, None)

        def forget(done: Future[object]) -> None:
            # Deferred to the loop: a thread handler's future calls this on a worker thread, or inside
            # `cancel()` while pygls' shutdown iterates over the entries; the loop runs it after either.
            try:
                loop.call_soon_threadsafe(pop, done)
            except RuntimeError:  # the loop is closed: the server is gone, and its bookkeeping with it
                pass

        future.add_done_callback(forget)  # a future already done calls it at once
