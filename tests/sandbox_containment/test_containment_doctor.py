"""`agentls sandbox doctor` tells the truth: every limit holds on bubblewrap, and the process backend fails."""

from __future__ import annotations

from agent_core.cli import main as cli_main


def _doctor(tmp_path, backend, capsys) -> tuple[int, dict[str, str]]:
    (tmp_path / ".agentls.toml").write_text("[sandbox]\nmemory_mb = 256\npids = 64\n")
    code = cli_main(["sandbox", "doctor", "--backend", backend, "--workspace", str(tmp_path)])
    out = capsys.readouterr().out
    assert f"backend: {backend}" in out and "why: " in out
    rows = {}
    for line in out.splitlines():
        for limit in ("no network", "writes only in workspace", "memory limit", "tmpfs bounded", "process limit",
                      "timeout kill", "no secrets in env"):
            if line.startswith(limit + " "):
                rows[limit] = line[len(limit):].split()[0]
    assert len(rows) == 7, out
    return code, rows


def test_doctor_bubblewrap_all_hold(tmp_path, capsys):
    code, rows = _doctor(tmp_path, "bubblewrap", capsys)
    assert code == 0 and set(rows.values()) == {"yes"}, rows


def test_doctor_process_reports_what_it_cannot_hold(tmp_path, capsys):
    code, rows = _doctor(tmp_path, "process", capsys)
    assert code == 1
    assert rows["no network"] == "NO" and rows["writes only in workspace"] == "NO"
    assert rows["tmpfs bounded"] == "NO", "the host's /tmp and /dev/shm: nothing sizes them"
    assert rows["timeout kill"] == "yes" and rows["no secrets in env"] == "yes"
