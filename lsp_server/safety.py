"""The safety gate's question to the user: `window/showMessageRequest` Approve / Reject.

The run waits on the answer; dismissing the message counts as Reject. A
client that declares no `window.showMessage` capability (Helix) is not asked:
the violation is shown and counts as Reject.
"""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from agent_core.events import SafetyViolation
from lsp_server.preview import answers_questions

APPROVE, REJECT = "Approve", "Reject"


def describe(label: str, violations: list[SafetyViolation]) -> str:
    found = "; ".join(f"{v.file}:{v.line} {v.rule}: {v.message}" for v in violations[:10])
    more = f" (+{len(violations) - 10} more)" if len(violations) > 10 else ""
    return f"{label}: the changed code failed the safety gate: {found}{more}. Test and apply it anyway?"


class Approver:
    """Asks the user about safety violations."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server

    async def ask(self, label: str, violations: list[SafetyViolation]) -> bool:
        if not answers_questions(self._server):  # nobody would answer: the gate's default, Reject, and say why
            message = describe(label, violations).removesuffix(" Test and apply it anyway?")
            self._server.window_show_message(lsp.ShowMessageParams(
                type=lsp.MessageType.Warning, message=f"{message}. Rejected: this editor cannot be asked."))
            return False
        params = lsp.ShowMessageRequestParams(
            type=lsp.MessageType.Warning,
            message=describe(label, violations),
            actions=[lsp.MessageActionItem(title=APPROVE), lsp.MessageActionItem(title=REJECT)],
        )
        answer = await self._server.window_show_message_request_async(params)
        return answer is not None and answer.title == APPROVE

