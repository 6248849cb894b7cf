"""Redaction: URL credentials and key-like query values go, short placeholder keys never cut words (issue 27, 28)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_core.journal.writer import Journal
from agent_core.settings.redact import REDACTED, Redactor, redact_text, redact_url


@pytest.mark.parametrize(
    "url, expected",
    [
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("https://alice:s3cret@llm.example/v1", f"https://{REDACTED}@llm.example/v1"),
        ("https://tok@llm.example/v1", f"https://{REDACTED}@llm.example/v1"),
        ("https://h/v1?api-key=abc&model=m", f"https://h/v1?api-key={REDACTED}&model=m"),
        ("https://h/v1?api_key=abc", f"https://h/v1?api_key={REDACTED}"),
        ("https://h/v1?key=abc#top", f"https://h/v1?key={REDACTED}#top"),
        ("https://h/o?sv=1&sig=ZZZ&se=2", f"https://h/o?sv=1&sig={REDACTED}&se=2"),
        ("https://h/v1?access_token=a&token=b", f"https://h/v1?access_token={REDACTED}&token={REDACTED}"),
        ("https://h/v1?model=m&keyboard=qwerty", "https://h/v1?model=m&keyboard=qwerty"),
        ("https://u:p%40ss@h:1/v1?Api-Key=x", f"https://{REDACTED}@h:1/v1?Api-Key={REDACTED}"),
    ],
)
def test_redact_url(url: str, expected: str):
    assert redact_url(url) == expected


def test_urls_inside_text_and_json_are_redacted():
    text = json.dumps({"base_url": "http://bob:hunter22@10.0.0.1/v1?token=t0k", "note": "see https://docs.example/x"})
    out = redact_text(f"error: endpoint http://bob:hunter22@10.0.0.1/v1 unreachable; {text}")
    assert "hunter22" not in out and "bob" not in out and "t0k" not in out
    assert "https://docs.example/x" in out and out.count(REDACTED) == 3


@pytest.mark.parametrize(
    "text, expected",
    [
        ("localizing the failure in a local function", "localizing the failure in a local function"),
        ('{"api_key": "local"}', f'{{"api_key": "{REDACTED}"}}'),
        ("Authorization: Bearer local", f"Authorization: Bearer {REDACTED}"),
        ("curl -H key=local http://h", f"curl -H key={REDACTED} http://h"),
        ("relocalize local.py", "relocalize local.py"),
    ],
)
def test_a_short_key_is_redacted_only_as_a_whole_value(text: str, expected: str):
    assert Redactor(["local"])(text) == expected


def test_a_long_key_is_redacted_wherever_it_appears():
    secret = 'ab"cd1234efgh'  # also as it is spelt inside a JSON string: ab\"cd1234efgh
    out = Redactor([secret])(f"x{secret}y and {json.dumps({'k': secret})}")
    assert out == f'x{REDACTED}y and {{"k": "{REDACTED}"}}'



def test_the_journal_keeps_words_that_contain_a_short_key_and_hides_the_key(tmp_path: Path):
    journal = Journal(tmp_path, "r-short", secrets=["local", "sk-live-0123456789"])
    journal.write("note", text="localizing the failure", header="Bearer local", url="http://u:pw@h/v1?key=k")
    raw = journal.path.read_text()
    record = json.loads(raw)
    assert record["text"] == "localizing the failure", "a 5-character key never cuts a word"
    assert record["header"] == f"Bearer {REDACTED}"
    assert record["url"] == f"http://{REDACTED}@h/v1?key={REDACTED}"
    assert "pw@" not in raw and "sk-live-0123456789" not in raw
