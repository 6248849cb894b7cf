"""How agentls runs git: on a copy with no configuration at all, in the user's repository without its programs.

On a copy (a shadow workspace, a tree a diff is applied to) git is only a
diff applier: it runs with `GIT_DIR=/dev/null` (no repository, so a tree
laid out as a git directory is just files, and discovery stops at once),
`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`, `GIT_ATTR_NOSYSTEM`
and `HOME=/dev/null` (no user or system configuration or attributes file),
and nothing else of the environment but PATH and the locale. So no filter,
hook, fsmonitor or other command a configuration names can run.

In the user's own repository (`--apply`'s check for uncommitted changes,
`--commit`), which the user asked agentls to work in, git runs with the
user's configuration and identity (a commit must be the user's, signed if
they sign, with their Git LFS filters) but with the settings that run
programs of the repository's choosing turned off: `core.fsmonitor=false`
and `core.hooksPath=/dev/null`, so no hook runs (`prepare-commit-msg`,
`commit-msg`, `pre-commit`, `post-commit`, ...).
"""

from __future__ import annotations

import os

NO_FILE = "/dev/null"
USER_REPO_OPTIONS = ("-c", "core.quotepath=off", "-c", "core.fsmonitor=false", "-c", f"core.hooksPath={NO_FILE}")


def copy_git_env() -> dict[str, str]:
    """The whole environment of a git command on a copy: no repository, no configuration, no attributes."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "GIT_DIR": NO_FILE,
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": NO_FILE, "GIT_ATTR_NOSYSTEM": "1", "HOME": NO_FILE}
