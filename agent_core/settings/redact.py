"""Redaction: the one place that decides what of a secret or a URL may be written anywhere.

`redact_url` hides a URL's userinfo (`user:pass@`) and the values of key-like
query parameters (`api-key`, `key`, `token`, `access_token`, `sig`, ...).
`redact_text` does that to every URL inside a text and removes the given
secrets and anything shaped like an `sk-...` key. Secrets of 8 characters or
more are removed wherever they occur; a shorter one (a placeholder such as
`local` for a local server) only where it stands as a whole value (a quoted
string, a `Bearer` token, a `key=` value), so prose such as "localizing" is
never cut (issue 28 item 8). The journal, the run's summary and report, the
trace, the CLI's stderr and the language server's messages all use these.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlsplit, urlunsplit

REDACTED = "[redacted]"
SHORTEST_SUBSTRING_SECRET = 8

# Query parameter names whose values are credentials (compared lower-case, `-` read as `_`).
_KEY_PARAMS = frozenset({
    "api_key", "apikey", "key", "token", "access_token", "auth", "auth_token", "sig", "signature",
    "secret", "client_secret", "password", "pass", "pwd", "code", "x_api_key", "x_amz_signature",
    "x_goog_signature", "session", "sessionid", "refresh_token", "id_token", "jwt", "private_token",
})
# A URL in free text (JSON included: it stops at quotes, backslashes and whitespace). The parsing itself is
# urllib.parse's; this only finds where a URL starts and ends.
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s\"'<>\\`]+")
_KEY_SHAPES = re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}")


def _key_param(name: str) -> bool:
    return name.strip().lower().replace("-", "_") in _KEY_PARAMS


def redact_url(url: str) -> str:
    """`url` with its userinfo and key-like query values replaced by `[redacted]`; anything else unchanged."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = REDACTED + "@" + netloc.rpartition("@")[2]
    query = parts.query
    if query and any(_key_param(name) for name, _ in parse_qsl(query, keep_blank_values=True)):
        query = "&".join(_redact_pair(pair) for pair in query.split("&"))
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _redact_pair(pair: str) -> str:
    name, sep, _value = pair.partition("=")
    return f"{name}={REDACTED}" if sep and _key_param(name) else pair


def redact_urls(text: str) -> str:
    """Every URL in `text` through `redact_url`."""
    return _URL.sub(lambda m: redact_url(m.group(0)), text)


def _short_secret_pattern(secret: str) -> re.Pattern[str]:
    """Where a short secret stands as a whole value: a quoted string, a `Bearer` token, a `name=` value."""
    s = re.escape(secret)
    return re.compile(rf"(?<=[\"'])({s})(?=[\"'])|(?<=Bearer )({s})(?![\w\-.])|(?<==)({s})(?![\w\-.])")


class Redactor:
    """Removes a run's secrets and every URL's credentials from text; build once, apply to every record."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        found = {s for s in secrets if s and s.strip()}
        variants = found | {json.dumps(s)[1:-1] for s in found}  # as they appear inside a JSON string
        long_ones = [s for s in variants if len(s) >= SHORTEST_SUBSTRING_SECRET]
        self._long = sorted(long_ones, key=len, reverse=True)
        self._short = [_short_secret_pattern(s) for s in sorted(variants - set(long_ones), key=len, reverse=True)]

    def __call__(self, text: str) -> str:
        for secret in self._long:
            text = text.replace(secret, REDACTED)
        for pattern in self._short:
            text = pattern.sub(REDACTED, text)
        return redact_urls(_KEY_SHAPES.sub(REDACTED, text))


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` without `secrets`, `sk-...` shaped keys or URL credentials (see the module docstring)."""
    return Redactor(secrets)(text)
