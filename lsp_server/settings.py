"""Settings from the editor: `initializationOptions` and `workspace/configuration`.

Both are dicts of the engine's settings (camelCase or snake_case keys, either
flat or under an "agentls" key) merged in that order over the workspace's
files and the environment by `agent_core.settings.load_settings`. Invalid
settings are reported once with `window/showMessage`, naming the file and line,
the variable or the editor key, with the key probably meant, and the run goes
on with the defaults (files and environment only, or the bare defaults if those
are bad too). Keys a project file may not set (endpoints, key variables, the
sandbox backend, safety: agent_core/settings/trust.py) are ignored and shown
once as a warning naming the file and the key; each run repeats them in its
own message. The editor's settings count as the user's own: the client sends
those keys from user scope only (VS Code: `"scope": "machine"` and
`inspect().globalValue`; docs/editors.md). `workspace/didChangeConfiguration`
is picked up by the next run.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from agent_core.settings import Settings, SettingsError, load_settings
from lsp_server.convert import uri_to_path

SECTION = "agentls"
EDITOR_ORIGIN = "editor settings"  # how the editor's overrides are named in messages (settings/explain.py)
log = logging.getLogger(__name__)


def _section(value: object) -> dict[str, object]:
    """Accept `{"agentls": {...}}` or the settings dict itself; anything else is empty."""
    if not isinstance(value, Mapping):
        return {}
    inner = value.get(SECTION)
    return dict(inner) if isinstance(inner, Mapping) else {k: v for k, v in value.items() if k != SECTION}


def _merge(base: Mapping[str, object], extra: Mapping[str, object]) -> dict[str, object]:
    out = dict(base)
    for key, value in extra.items():
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = _merge(current, value)
        else:
            out[key] = value
    return out


class SettingsStore:
    """The editor's settings overrides, and the effective engine settings built from them."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self.initialization: dict[str, object] = {}  # JSON values from the client
        self.configuration: dict[str, object] = {}
        self._reported: set[str] = set()
        self._refresh: asyncio.Task[None] | None = None

    def root(self) -> Path:
        """The workspace root: rootUri, else the first folder, else the current directory."""
        workspace = self._server.workspace
        if workspace.root_path:
            return Path(workspace.root_path)
        for folder in workspace.folders.values():
            path = uri_to_path(folder.uri)
            if path:
                return path
        return Path(os.getcwd())

    def overrides(self) -> dict[str, object]:
        return _merge(self.initialization, self.configuration)

    async def pull(self) -> None:
        """Ask the client for the `agentls` section (when it supports workspace/configuration)."""
        caps = self._server.client_capabilities.workspace
        if not (caps and caps.configuration):
            return
        try:
            params = lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section=SECTION)])
            values = await asyncio.wait_for(self._server.workspace_configuration_async(params), 10)
        except Exception as exc:  # noqa: BLE001 - a client that fails this request keeps the previous values
            log.warning("workspace/configuration failed: %s", exc)
            return
        self.configuration = _section(values[0]) if values else {}

    def changed(self, pushed: object) -> None:
        """didChangeConfiguration: take pushed values or pull them; the next `load` waits for it."""
        self._reported.clear()
        section = pushed.get(SECTION) if isinstance(pushed, Mapping) else None
        if isinstance(section, Mapping):
            self.configuration = dict(section)
        else:
            self._refresh = asyncio.create_task(self.pull())

    async def load(self) -> Settings:
        """Effective settings for the next run; invalid ones are reported and replaced by defaults."""
        if self._refresh is not None:
            await asyncio.shield(self._refresh)
        root, overrides = self.root(), self.overrides()
        try:
            return self._noticed(await asyncio.to_thread(load_settings, root, overrides, None, EDITOR_ORIGIN))
        except SettingsError as exc:
            self._report(str(exc))
        try:
            return self._noticed(await asyncio.to_thread(load_settings, root, None))
        except SettingsError as exc:
            self._report(str(exc))
            return Settings()

    def _noticed(self, settings: Settings) -> Settings:
        """Show each of the settings' notices (ignored project keys, misspelt variables) once."""
        for notice in settings.notices:
            self._report(notice, lsp.MessageType.Warning, "")
        return settings

    def _report(self, text: str, kind: lsp.MessageType = lsp.MessageType.Error,
                then: str = ". Using the default settings.") -> None:
        if text in self._reported:
            return
        self._reported.add(text)
        message = f"agentls: {text}{then}"
        self._server.window_show_message(lsp.ShowMessageParams(type=kind, message=message))


def register(server: LanguageServer, store: SettingsStore) -> None:

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: LanguageServer, params: lsp.InitializeParams) -> None:
        store.initialization = _section(params.initialization_options)

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: LanguageServer, params: lsp.InitializedParams) -> None:
        store.changed(None)
        await store.load()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: LanguageServer, params: lsp.DidChangeConfigurationParams) -> None:
        store.changed(params.settings)
        await store.load()
