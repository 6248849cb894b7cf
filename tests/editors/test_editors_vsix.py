"""The VS Code extension builds, lints and packages into a small, complete .vsix.

Works on a copy of editor_client/ (without node_modules/, out/, dist/ or old
.vsix files) in a temporary directory, removed afterwards, so the run proves
that the committed package.json + package-lock.json are enough: `npm ci`,
`npm run build` (tsc), `npm run lint`, `npm run package` (vsce, whose
prepublish step bundles src/extension.ts with esbuild into dist/extension.js).
A .vsix is a zip: it must hold the bundle (with the runtime dependencies
vscode-languageclient and @vscode/python-extension inside it) and the icon, no
node_modules, and stay under 1 MB. The compiled out/serverCommand.js
(plain Node, no VS Code) chooses the server command in its documented order,
on real directories and files.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

EDITOR_CLIENT = Path(__file__).resolve().parents[2] / "editor_client"
LEFT_OUT = shutil.ignore_patterns("node_modules", "out", "dist", "*.vsix")
MAX_VSIX_BYTES = 1024 * 1024


def _npm(workdir: Path, *args: str, timeout: float = 600) -> None:
    npm = shutil.which("npm")
    assert npm, "npm is not installed: install Node.js 20 and npm (Debian: apt-get install nodejs npm)"
    proc = subprocess.run(
        ["nice", "-n", "19", npm, *args, "--no-fund", "--no-audit"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        hint = " (is the npm registry reachable? npm ci downloads the locked packages)" if args[0] == "ci" else ""
        pytest.fail(f"`npm {' '.join(args)}` failed with exit code {proc.returncode}{hint}:\n"
                    f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


@pytest.fixture(scope="module")
def built() -> Iterator[Path]:
    """A copy of editor_client/ after npm ci, build, lint and package; deleted afterwards."""
    with tempfile.TemporaryDirectory(prefix="agentls-vsix-") as tmp:
        workdir = Path(tmp) / "editor_client"
        shutil.copytree(EDITOR_CLIENT, workdir, ignore=LEFT_OUT)
        _npm(workdir, "ci", "--prefer-offline")
        _npm(workdir, "run", "build")
        _npm(workdir, "run", "lint")
        _npm(workdir, "run", "package")
        yield workdir


def _vsix(workdir: Path) -> Path:
    version = json.loads((workdir / "package.json").read_text())["version"]
    path = workdir / f"agentls-{version}.vsix"
    assert path.is_file(), f"npm run package did not produce {path.name}: {sorted(p.name for p in workdir.iterdir())}"
    return path


def test_tsc_emits_every_module(built: Path) -> None:
    sources = {p.stem for p in (built / "src").glob("*.ts")}
    emitted = {p.stem for p in (built / "out").glob("*.js")}
    assert "extension" in sources and sources == emitted


def test_vsix_is_small(built: Path) -> None:
    size = _vsix(built).stat().st_size
    assert 0 < size < MAX_VSIX_BYTES, f"the .vsix is {size} bytes"


def test_vsix_holds_the_bundle_and_the_icon(built: Path) -> None:
    with zipfile.ZipFile(_vsix(built)) as vsix:
        names = set(vsix.namelist())
        manifest = json.loads(vsix.read("extension/package.json"))
    assert "extension/dist/extension.js" in names and "extension/images/icon.png" in names
    assert manifest["main"] == "./dist/extension.js" and manifest["icon"] == "images/icon.png"


def test_vsix_leaves_out_sources_build_tools_and_node_modules(built: Path) -> None:
    """esbuild bundled the runtime dependencies into dist/extension.js: no node_modules, no tsc output."""
    with zipfile.ZipFile(_vsix(built)) as vsix:
        names = vsix.namelist()
    leaked = [n for n in names if n.startswith(("extension/src/", "extension/node_modules/", "extension/out/"))
              or n.endswith(".ts")]
    assert not leaked, f"the .vsix carries sources, tsc output or node_modules: {leaked[:10]}"


BUILTINS = "console.log(JSON.stringify(require('module').builtinModules))"


def test_the_bundle_needs_nothing_but_vscode_and_node(built: Path) -> None:
    """Every require() left in the bundle is VS Code's own module or a Node built-in; the language client
    (its protocol's method names) and the Python extension's facade (its extension id) are inside."""
    node = shutil.which("node")
    assert node, "node is not installed"
    with zipfile.ZipFile(_vsix(built)) as vsix:
        bundle = vsix.read("extension/dist/extension.js").decode("utf-8")
    builtins = set(json.loads(subprocess.run([node, "-e", BUILTINS], capture_output=True, text=True,
                                             timeout=60).stdout))
    required = set(re.findall(r'require\("([^"]+)"\)', bundle))
    outside = {r for r in required if r != "vscode" and r.removeprefix("node:") not in builtins}
    assert "vscode" in required and not outside, f"the bundle requires modules it does not carry: {outside}"
    assert "workspace/executeCommand" in bundle and "ms-python.python" in bundle


CHOOSE = """
const { chooseServerCommand } = require(process.argv[1]);
const cases = JSON.parse(process.argv[2]);
(async () => {
  const out = [];
  for (const c of cases) {
    out.push(await chooseServerCommand({
      serverCommand: c.serverCommand, pythonIsSet: c.pythonIsSet, searchPath: c.searchPath, platform: "linux",
      interpreter: async () => c.interpreter,
    }));
  }
  console.log(JSON.stringify(out));
})();
"""


def _executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_the_server_command_is_chosen_in_order(built: Path, tmp_path: Path) -> None:
    """The compiled serverCommand.js: agentls.serverCommand, agentls.python, agentls on PATH, the interpreter."""
    node = shutil.which("node")
    assert node, "node is not installed"
    not_executable = tmp_path / "a" / "agentls"
    not_executable.parent.mkdir()
    not_executable.write_text("not a program\n")  # skipped: not executable
    (tmp_path / "b" / "agentls").mkdir(parents=True)  # skipped: a directory
    tool = _executable(tmp_path / "c" / "agentls")
    search = ":".join(str(tmp_path / d) for d in ("a", "b", "c"))
    extension = {"command": "/venv/bin/python", "args": [], "source": "python extension"}
    chosen_python = {"command": "/opt/py/bin/python3", "args": [], "source": "setting"}
    cases = [
        {
            "serverCommand": [" /x/agentls ", "serve", "--stdio"],
            "pythonIsSet": True,
            "searchPath": search,
            "interpreter": chosen_python,
        },
        {"pythonIsSet": True, "searchPath": search, "interpreter": chosen_python},
        {"serverCommand": ["", " "], "pythonIsSet": False, "searchPath": search, "interpreter": extension},
        {"pythonIsSet": False, "searchPath": search.rsplit(":", 1)[0], "interpreter": extension},
        {
            "pythonIsSet": False,
            "searchPath": "",
            "interpreter": {"command": "python3", "args": [], "source": "default"},
        },
    ]
    proc = subprocess.run(
        [node, "-e", CHOOSE, str(built / "out" / "serverCommand.js"), json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    module = ["-m", "agent_core", "serve", "--stdio"]
    assert json.loads(proc.stdout) == [
        {"command": "/x/agentls", "args": ["serve", "--stdio"], "source": "agentls.serverCommand"},
        {"command": "/opt/py/bin/python3", "args": module, "source": "agentls.python"},
        {"command": str(tool), "args": ["serve", "--stdio"], "source": "agentls on PATH"},
        {"command": "/venv/bin/python", "args": module, "source": "python extension"},
        {"command": "python3", "args": module, "source": "default python3"},
    ]


def test_the_agentls_found_on_path_is_the_real_server(built: Path) -> None:
    """On the test interpreter's bin directory, the chosen command is agentls's own entry point."""
    node = shutil.which("node")
    assert node, "node is not installed"
    bin_dir = Path(sys.executable).parent
    cases = [
        {
            "pythonIsSet": False,
            "searchPath": str(bin_dir),
            "interpreter": {"command": "python3", "args": [], "source": "default"},
        }
    ]
    proc = subprocess.run(
        [node, "-e", CHOOSE, str(built / "out" / "serverCommand.js"), json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    (chosen,) = json.loads(proc.stdout)
    assert chosen["source"] == "agentls on PATH", chosen
    version = subprocess.run([chosen["command"], "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout.startswith("agentls "), version.stdout + version.stderr


def test_manifest_follows_current_conventions(built: Path) -> None:
    """Off in untrusted workspaces, no onCommand events VS Code derives itself, LICENSE and CHANGELOG packed."""
    with zipfile.ZipFile(_vsix(built)) as vsix:
        names = {n.lower() for n in vsix.namelist()}
        manifest = json.loads(vsix.read("extension/package.json"))
    assert manifest["capabilities"]["untrustedWorkspaces"]["supported"] is False
    assert manifest["capabilities"]["untrustedWorkspaces"]["description"]
    assert not [e for e in manifest["activationEvents"] if e.startswith("onCommand:")]
    contributed = {c["command"] for c in manifest["contributes"]["commands"]}
    assert {"agentls.showTrace", "agentls.showReport"} <= contributed
    assert {"extension/license.txt", "extension/changelog.md"} <= names or \
        {"extension/license", "extension/changelog.md"} <= names, sorted(names)[:20]


REACT = """
const { reactionTo } = require(process.argv[1]);
const cases = JSON.parse(process.argv[2]);
// VS Code's event.affectsConfiguration(section): a changed key is that section or below it.
console.log(JSON.stringify(cases.map((changed) =>
  reactionTo((section) => changed.some((key) => key === section || key.startsWith(section + "."))))));
"""


def test_a_settings_change_restarts_only_for_the_server_process(built: Path) -> None:
    """The compiled settingsChange.js: engine settings notify the running server; serverCommand/python restart it."""
    node = shutil.which("node")
    assert node, "node is not installed"
    cases = [["agentls.model"], ["agentls.sandbox.timeoutS", "agentls.roles.coder.model"], ["agentls.serverCommand"],
             ["agentls.python"], ["agentls.model", "agentls.python"], ["agentls.pythonPath"], ["editor.fontSize"], []]
    proc = subprocess.run([node, "-e", REACT, str(built / "out" / "settingsChange.js"), json.dumps(cases)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == ["notify", "notify", "restart", "restart", "restart", "notify", "none", "none"]


SCOPES = """
const { chosenValue, userOnlyKeys } = require(process.argv[1]);
const properties = require(process.argv[2]).contributes.configuration.properties;
const cases = JSON.parse(process.argv[3]);
console.log(JSON.stringify({
  userOnly: userOnlyKeys(properties, "agentls.").sort(),
  chosen: cases.map(([info, userOnly]) => chosenValue(info, userOnly)),
}));
"""


def test_user_only_settings_never_come_from_a_workspace(built: Path) -> None:
    """The compiled settingsScope.js: the machine-scoped keys (the engine's TRUSTED_ONLY) are read from the
    user's settings only; a workspace or folder value for one is dropped and reported (issue 27)."""
    from pydantic.alias_generators import to_camel

    from agent_core.settings.trust import TRUSTED_ONLY

    node = shutil.which("node")
    assert node, "node is not installed"
    cases = [
        [{"globalValue": "http://mine/v1", "workspaceValue": "http://repo/v1"}, True],
        [{"workspaceFolderValue": "process"}, True],
        [{"globalValue": 3, "workspaceValue": 4, "workspaceFolderValue": 5}, False],
        [{"globalValue": 3}, False],
    ]
    proc = subprocess.run([node, "-e", SCOPES, str(built / "out" / "settingsScope.js"), str(built / "package.json"),
                           json.dumps(cases)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["chosen"] == [
        {"value": "http://mine/v1", "ignored": ["workspace"]},
        {"ignored": ["folder"]},
        {"value": 5, "ignored": []},
        {"value": 3, "ignored": []},
    ]
    offered = {key.removeprefix("agentls.") for key in json.loads((built / "package.json").read_text())
               ["contributes"]["configuration"]["properties"]}
    trusted = {".".join(to_camel(p) for p in key.split(".")) for key in TRUSTED_ONLY}
    assert set(out["userOnly"]) == trusted & offered and "baseUrl" in out["userOnly"]


SUMMARY = """
const { endSummary } = require(process.argv[1]);
console.log(JSON.stringify(JSON.parse(process.argv[2]).map(endSummary)));
"""


def test_the_status_bar_names_a_finished_runs_outcome_tokens_and_price(built: Path) -> None:
    """The compiled runSummary.js turns the server's end-of-progress message into the status bar's words."""
    node = shutil.which("node")
    assert node, "node is not installed"
    messages = [
        "fixed: 1 passed, 0 failed. add must add"
        " (1,234 tokens (1,000 prompt, 234 completion) in 3 model calls, $0.0004)",
        "unfixed: 1 failed (12 tokens (10 prompt, 2 completion) in 1 model call)",
        "passed: 3 passed, 0 failed",
        "cancelled",
        "",
    ]
    proc = subprocess.run([node, "-e", SUMMARY, str(built / "out" / "runSummary.js"), json.dumps(messages)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [
        "fixed · 1,234 tokens · $0.0004", "unfixed · 12 tokens", "passed", "cancelled", "ended",
    ]
