"""The Docker sandbox against a real engine: the run's uid has an account and a home; /tmp and /dev/shm are sized.

As in bubblewrap (tests/sandbox/test_sandbox_fidelity.py): a generated /etc/passwd and /etc/group are
bound read-only over the image's, and the tmpfs mounts are sized from `memory_mb`, so a 5 GB write to
/tmp stops near the setting.
"""

from __future__ import annotations

import pytest

from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from agent_core.sandbox.docker.run import DockerSandbox
from agent_core.settings import SandboxSettings

pytestmark = pytest.mark.docker

IDENTITY = (
    "import getpass, grp, os, pwd\nfrom pathlib import Path\n"
    "entry = pwd.getpwuid(os.getuid())\n"
    "del os.environ['HOME']\n"
    "print(entry.pw_name, grp.getgrgid(os.getgid()).gr_name, Path('~').expanduser(), getpass.getuser())\n"
    "for folder in ('/tmp', '/dev/shm'):\n"
    "    st = os.statvfs(folder)\n"
    "    print(folder, st.f_blocks * st.f_frsize // 2**20)\n"
)
FILL = (
    "import sys\nwritten = 0\ntry:\n    for i in range(80):\n"
    "        with open('/tmp/fill-%d' % i, 'wb') as handle:\n"
    "            for _ in range(64):\n                handle.write(b'x' * 2**20)\n                written += 2**20\n"
    "except OSError as exc:\n    print('STOPPED', written // 2**20, exc)\n    sys.exit(1)\n"
    "print('WROTE', written // 2**20)\n"
)


@pytest.fixture
def workspace():
    root = make_temp_dir("dockerfidelity")
    yield root
    remove_temp_dir(root)


async def test_the_runs_uid_has_an_account_a_home_and_sized_tmpfs(docker_engine, workspace) -> None:
    sandbox = DockerSandbox(SandboxSettings(docker_image=docker_engine, memory_mb=256, file_size_mb=4096))

    result = await sandbox.run([sandbox.python, "-c", IDENTITY], workspace, timeout_s=60)

    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "sandbox sandbox /tmp sandbox"
    assert lines[1:] == ["/tmp 128", "/dev/shm 64"]


async def test_five_gigabytes_written_to_tmp_stop_near_the_memory_setting(docker_engine, workspace) -> None:
    sandbox = DockerSandbox(SandboxSettings(docker_image=docker_engine, memory_mb=256, file_size_mb=4096))

    result = await sandbox.run([sandbox.python, "-c", FILL], workspace, timeout_s=120)

    assert result.exit_code == 1 and result.stdout.startswith("STOPPED"), result
    assert 0 < int(result.stdout.split()[1]) <= 256
    assert result.limit_hit == "disk"


async def test_a_run_that_fills_its_bound_workspace_is_stopped_near_its_bound(docker_engine, workspace) -> None:
    """The memory cgroup does not count a bind mount's disk: the workspace watch (diskwatch.py) does."""
    sandbox = DockerSandbox(SandboxSettings(docker_image=docker_engine, memory_mb=256, file_size_mb=16))
    fill = ("import os\nfor i in range(128):\n    with open('fill-%d.bin' % i, 'wb') as handle:\n"
            "        for _ in range(8):\n            handle.write(os.urandom(2**20))\n"
            "    print('WROTE', (i + 1) * 8, flush=True)\n")

    result = await sandbox.run([sandbox.python, "-c", fill], workspace, timeout_s=120)

    assert result.limit_hit == "workspace_size" and result.exit_code is None, result
    written = int(result.stdout.split()[-1]) if result.stdout.strip() else 0
    assert written < 1024 and "more than its bound of 16 MiB: stopped" in result.stderr
