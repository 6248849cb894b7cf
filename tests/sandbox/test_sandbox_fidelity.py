"""The bubblewrap sandbox looks like a normal machine where tests expect one, and bounds what it costs the host.

A sandboxed test sees a passwd and group entry and a writable HOME for its own uid (Python 3.7's
`Path.expanduser()` raises KeyError without the passwd entry once HOME is gone); its /tmp and /dev/shm are
tmpfs sized from the memory setting, so a test that writes 5 GB there is stopped near it, and the host's
RAM is untouched once the run ends.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from agent_core.sandbox.bubblewrap import BubblewrapSandbox
from agent_core.sandbox.probes import probe_tmpfs
from agent_core.settings import SandboxSettings

IDENTITY_TEST = '''\
import getpass
import grp
import os
import pwd
from pathlib import Path


def test_the_run_has_a_user_and_a_home(monkeypatch):
    entry = pwd.getpwuid(os.getuid())
    assert entry.pw_name == "sandbox" and grp.getgrgid(os.getgid()).gr_name == "sandbox"
    monkeypatch.delenv("HOME")
    monkeypatch.delenv("LOGNAME", raising=False)
    monkeypatch.delenv("USER", raising=False)
    home = Path("~").expanduser()
    assert str(home) == entry.pw_dir and getpass.getuser() == "sandbox"
    (home / "settings.ini").write_text("written in the home")
'''

FILL_TMP = '''\
import os, sys
written = 0
try:
    for i in range(80):  # 80 files of 64 MiB: 5 GiB
        with open("/%s/fill-%d" % (sys.argv[1], i), "wb") as handle:
            for _ in range(64):
                handle.write(b"x" * 2**20)
                written += 2**20
except OSError as exc:
    print("STOPPED", written // 2**20, exc)
    sys.exit(1)
print("WROTE", written // 2**20)
'''


def _available_mib() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no MemAvailable in /proc/meminfo")


async def test_a_sandboxed_test_has_a_passwd_entry_and_a_writable_home(workspace: Path) -> None:
    (workspace / "test_identity.py").write_text(IDENTITY_TEST)
    sandbox = BubblewrapSandbox(SandboxSettings(timeout_s=60))

    result = await sandbox.run([sandbox.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], workspace)

    assert result.exit_code == 0 and "1 passed" in result.stdout, result.stdout + result.stderr


async def test_five_gigabytes_written_to_tmp_stop_near_the_memory_setting(workspace: Path) -> None:
    sandbox = BubblewrapSandbox(SandboxSettings(timeout_s=60, memory_mb=256, file_size_mb=4096))
    before = _available_mib()
    started = time.monotonic()

    for folder, bound in (("tmp", 256), ("dev/shm", 256)):
        result = await sandbox.run([sandbox.python, "-c", FILL_TMP, folder], workspace)

        assert result.exit_code == 1 and result.stdout.startswith("STOPPED"), result
        written = int(result.stdout.split()[1])
        assert 0 < written <= bound, f"/{folder} took {written} MiB with memory_mb = 256"
        assert result.limit_hit == "disk"
    assert time.monotonic() - started < 30
    assert _available_mib() > before - 200, "the tmpfs pages are gone with the run"


async def test_doctor_probes_the_tmpfs_bound(workspace: Path) -> None:
    settings = SandboxSettings(timeout_s=60, memory_mb=256)

    probe = await probe_tmpfs(BubblewrapSandbox(settings), workspace, settings)

    assert probe.held, probe.detail
    assert "/tmp: size 128 MiB" in probe.detail and "/dev/shm: size 64 MiB" in probe.detail

FILL_WORKSPACE = '''\
import os
written = 0
for i in range(128):  # 128 files of 8 MiB: 1 GiB, each file under file_size_mb
    with open("fill-%d.bin" % i, "wb") as handle:
        for _ in range(8):
            handle.write(os.urandom(2**20))
            written += 2**20
    print("WROTE", written // 2**20, flush=True)
'''


async def test_a_run_that_fills_its_workspace_is_stopped_near_its_bound(workspace: Path) -> None:
    """RLIMIT_FSIZE caps each file; the watch (diskwatch.py) caps what the run adds in all: file_size_mb."""
    sandbox = BubblewrapSandbox(SandboxSettings(timeout_s=120, file_size_mb=16))

    result = await sandbox.run([sandbox.python, "-c", FILL_WORKSPACE], workspace)

    assert result.limit_hit == "workspace_size" and result.exit_code is None, result
    counts = re.findall(r"WROTE (\d+)", result.stdout)  # the last whole line the process printed
    written = int(counts[-1]) if counts else 0
    assert 16 <= written < 1024, f"stopped after {written} MiB with a bound of 16 MiB"
    assert "more than its bound of 16 MiB: stopped" in result.stderr


FILL_UNLINKED = '''
import os
written, held = 0, []
for i in range(128):  # 8 MiB files unlinked as soon as they are open: no walk of the workspace sees them
    handle = open("hidden-%d.bin" % i, "wb")
    os.unlink("hidden-%d.bin" % i)
    held.append(handle)
    for _ in range(8):
        handle.write(os.urandom(2**20))
        handle.flush()
        written += 2**20
    print("WROTE", written // 2**20, flush=True)
'''


async def test_files_unlinked_but_held_open_count_toward_the_bound(workspace: Path) -> None:
    """Disk that no walk sees (a file unlinked while open) is the run's too: 1 GiB of it is stopped near 16 MiB."""
    sandbox = BubblewrapSandbox(SandboxSettings(timeout_s=120, file_size_mb=16))

    result = await sandbox.run([sandbox.python, "-c", FILL_UNLINKED], workspace)

    assert result.limit_hit == "workspace_size" and result.exit_code is None, result
    written = int(result.stdout.split()[-1]) if result.stdout.strip() else 0
    assert 16 <= written < 1024, f"stopped after {written} MiB with a bound of 16 MiB"
