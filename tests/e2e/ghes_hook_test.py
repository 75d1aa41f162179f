"""The GitHub Enterprise Server hook environment (examples/ghes/): the hook script
run as a real bare repository's pre-receive hook, receiving real pushes, in an
environment like GHES's chroot: nothing in it but the variables GHES sets, a PATH
of git alone (with a python and python3 on it that fail loudly if run), and a
PYTHONPATH that would take over any Python not run with -I.

Docker is not here, so the Dockerfile is not built: its shape is checked, and the
environment it makes stands as a venv at a temporary path into which pip installs
oracle-guard as the Dockerfile does (git+URL@COMMIT, a snapshot of this
checkout); the script's one absolute path is pointed at that venv."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from oracle_guard.commands.install_pre_receive import GHES_PYTHON, hook_command
from testing.checkout import snapshot_checkout
from testing.git import GIT_ENV, commit, git, init_repo
from testing.server import Push, file_url

ROOT = Path(__file__).resolve().parents[2]
GHES = ROOT / "examples" / "ghes"
SCRIPT = ROOT / "examples/ghes/oracle-guard.sh"  # shown in docs/how-to/server-ghes.md
DOCKERFILE = GHES / "Dockerfile"
ENV_PYTHON = GHES_PYTHON  # where the Dockerfile puts it, and install-pre-receive names
FIXTURE = "fixtures/exchange_example.json"
TRAP = "a python from PATH ran"


@pytest.fixture(scope="module")
def environment(tmp_path_factory):
    """The hook environment's Python: a venv with oracle-guard installed by pip
    from git at a commit, as the Dockerfile installs it."""
    base = tmp_path_factory.mktemp("ghes-env")
    snapshot, sha = snapshot_checkout(base / "oracle-guard")
    venv = base / "opt" / "oracle-guard"
    subprocess.run(
        [getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)], check=True
    )
    pip = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            f"git+{file_url(snapshot)}@{sha}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert pip.returncode == 0, pip.stdout
    return venv / "bin" / "python"


@pytest.fixture
def chroot_path(tmp_path):
    """A PATH folder with git alone, and a python and python3 that exit 97 saying so."""
    folder = tmp_path / "bin"
    folder.mkdir()
    git_binary = shutil.which("git")
    assert git_binary is not None
    (folder / "git").symlink_to(git_binary)
    for name in ("python", "python3"):
        trap = folder / name
        trap.write_text(f"#!/bin/sh\necho '{TRAP}' >&2\nexit 97\n")
        trap.chmod(0o755)
    return folder


@pytest.fixture
def hijack(tmp_path):
    """A PYTHONPATH folder whose oracle_guard accepts every push."""
    folder = tmp_path / "pythonpath"
    (folder / "oracle_guard").mkdir(parents=True)
    (folder / "oracle_guard" / "__init__.py").write_text("")
    (folder / "oracle_guard" / "__main__.py").write_text("print('hijacked: accepted')\n")
    return folder


def hook_text(python: Path, script: str = "") -> str:
    text = script or SCRIPT.read_text()
    assert text.count(ENV_PYTHON) == 1
    return text.replace(ENV_PYTHON, str(python))


def ghes_env(tmp_path, path: Path, pythonpath: Path, login: str = "bob"):
    """What GHES gives the hook, and nothing else (env -i): the variables it always
    sets (git sets GIT_DIR and the quarantine ones itself) and a PATH. A hook with
    --host reads the server's clock, never ORACLE_GUARD_NOW."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        **GIT_ENV,
        "PATH": str(path),
        "HOME": str(home),
        "GITHUB_USER_LOGIN": login,
        "GITHUB_REPO_NAME": "octo-org/app",
        "GITHUB_REPO_PUBLIC": "false",
        "GITHUB_USER_IP": "192.0.2.1",
        "GIT_USER_AGENT": "git/2.39.5",
        "PYTHONPATH": str(pythonpath),
    }


@pytest.fixture
def repos(tmp_path, environment):
    """(client, server): the harness example under a contract that names the GHES
    pusher variable, pushed to a bare repository whose pre-receive is the script."""
    server = init_repo(tmp_path / "app.git", bare=True)
    hook = server / "hooks" / "pre-receive"
    hook.write_text(hook_text(environment))
    hook.chmod(0o755)
    client = init_repo(tmp_path / "work")
    git(client, "remote", "add", "origin", file_url(server))
    shutil.copytree(ROOT / "examples" / "harness", client, dirs_exist_ok=True)
    contract = (client / ".oracle-guard.yaml").read_text()
    freeze = json.loads((client / "freeze.json").read_text())
    # the server's clock judges: the sample's freeze expires a week from today
    soon = (datetime.now(timezone.utc) + timedelta(days=7)).date().isoformat()
    freeze["expires"] = {ident: soon for ident in freeze["expires"]}
    commit(
        client,
        {
            ".oracle-guard.yaml": contract.replace("REMOTE_USER", "GITHUB_USER_LOGIN"),
            "freeze.json": freeze,
        },
        "guard the oracle",
    )
    return client, server


def push(client: Path, env) -> Push:
    proc = subprocess.run(
        ["git", "-C", str(client), "push", "origin", "main"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        timeout=120,
    )
    return Push(proc.returncode, proc.stderr.decode("utf-8", "replace"))


def test_the_first_push_of_the_contract_is_accepted(tmp_path, repos, chroot_path, hijack):
    client, server = repos
    done = push(client, ghes_env(tmp_path, chroot_path, hijack))
    assert done.rc == 0, done.stderr
    assert any(line.startswith("oracle-guard: push accepted") for line in done.guard)
    assert TRAP not in done.stderr and "hijacked" not in done.stderr


def test_a_fixture_rewrite_is_rejected(tmp_path, repos, chroot_path, hijack):
    client, server = repos
    env = ghes_env(tmp_path, chroot_path, hijack)
    assert push(client, env).rc == 0
    before = git(server, "rev-parse", "main").strip()
    commit(client, {FIXTURE: '{"rewritten": true}\n'}, "rewrite a fixture")
    done = push(client, env)
    assert done.rc != 0
    assert "refs/heads/main: fixtures/exchange_example.json: fixture-mismatch" in done.findings()
    assert TRAP not in done.stderr and "hijacked" not in done.stderr
    assert git(server, "rev-parse", "main").strip() == before


def test_an_honest_push_is_accepted(tmp_path, repos, chroot_path, hijack):
    client, server = repos
    env = ghes_env(tmp_path, chroot_path, hijack)
    assert push(client, env).rc == 0
    tip = commit(client, {"src/harness.py": "def parse_header(raw):\n    return raw\n"}, "honest")
    done = push(client, env)
    assert done.rc == 0, done.stderr
    assert any(line.startswith("oracle-guard: push accepted") for line in done.guard)
    assert git(server, "rev-parse", "main").strip() == tip


def test_an_owner_named_by_the_ghes_variable_may_change_the_write_set(
    tmp_path, repos, chroot_path, hijack
):
    """GITHUB_USER_LOGIN is the pusher: alice, an owner, may edit a denied path
    that no lock guards; bob may not (the near-miss)."""
    client, server = repos
    assert push(client, ghes_env(tmp_path, chroot_path, hijack)).rc == 0
    commit(client, {".pre-commit-config.yaml": "repos: []\n"}, "owner's config")
    bob = push(client, ghes_env(tmp_path, chroot_path, hijack, login="bob"))
    assert "refs/heads/main: .pre-commit-config.yaml: write-denied" in bob.findings()
    alice = push(client, ghes_env(tmp_path, chroot_path, hijack, login="alice"))
    assert alice.rc == 0, alice.stderr


def test_a_python_from_path_is_not_the_environments(tmp_path, repos, chroot_path, hijack):
    """The near-miss: a hook that runs 'python3' from PATH runs whatever PATH has
    (here the trap), not the environment's oracle-guard; every push fails."""
    client, server = repos
    hook = server / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nexec python3 -I -m oracle_guard pre-receive --host ghes\n")
    done = push(client, ghes_env(tmp_path, chroot_path, hijack))
    assert done.rc != 0 and f"remote: {TRAP}" in done.stderr


def test_without_dash_i_a_pythonpath_takes_over_the_hook(tmp_path, repos, chroot_path, hijack):
    """The near-miss for -I: the same script without it imports the PYTHONPATH's
    oracle_guard, which accepts a fixture rewrite."""
    client, server = repos
    env = ghes_env(tmp_path, chroot_path, hijack)
    assert push(client, env).rc == 0
    hook = server / "hooks" / "pre-receive"
    hook.write_text(hook.read_text().replace(" -I ", " "))
    commit(client, {FIXTURE: '{"rewritten": true}\n'}, "rewrite a fixture")
    done = push(client, env)
    assert done.rc == 0 and "remote: hijacked: accepted" in done.stderr


# -- the files' shape ----------------------------------------------------------
def test_the_script_runs_the_environments_python_as_the_host_expects():
    text = SCRIPT.read_text()
    assert text.startswith("#!/bin/sh\n")
    assert os.access(SCRIPT, os.X_OK)
    assert subprocess.run(["sh", "-n", str(SCRIPT)]).returncode == 0
    commands = [line for line in text.splitlines() if line and not line.startswith("#")]
    # the line install-pre-receive writes for ghes, with the environment's python
    assert commands == [f"exec {hook_command('ghes', None, ENV_PYTHON)}"]
    assert not re.search(r"\b(curl|wget|pip|https?:)", "\n".join(commands))


def dockerfile_runs() -> str:
    """The Dockerfile's instructions, continuation lines joined, comments dropped."""
    lines = [line for line in DOCKERFILE.read_text().splitlines() if not line.startswith("#")]
    return re.sub(r"\\\n", " ", "\n".join(lines))


def test_the_dockerfile_installs_a_pinned_commit_at_the_scripts_path():
    text = dockerfile_runs()
    (base,) = re.findall(r"^ARG BASE=(\S+)$", text, re.M)
    assert re.match(r"python:3\.\d+-slim-bookworm", base)  # git 2.39: 2.38 or later
    assert re.search(r"^FROM --platform=linux/amd64 \$\{BASE\}$", text, re.M)
    assert "apt-get install -y --no-install-recommends git" in text
    venv = ENV_PYTHON[: -len("/bin/python")]
    assert f"python -m venv {venv} " in text
    assert f"{ENV_PYTHON} -m pip install --no-cache-dir" in text
    assert '"git+${ORACLE_GUARD_REPO}@${ORACLE_GUARD_REV}"' in text
    assert f"{ENV_PYTHON} -I -m oracle_guard --version" in text
    # nothing runs when the chroot is used: no entry point, no service
    assert not re.search(r"^(CMD|ENTRYPOINT|EXPOSE|HEALTHCHECK)\b", text, re.M)


@pytest.mark.parametrize(
    "rev, accepted",
    [
        ("0123456789abcdef0123456789abcdef01234567", True),
        ("0123456789abcdef" * 4, True),  # SHA-256
        ("v1.2.0", False),
        ("main", False),
        ("0123456", False),
        ("", False),
        ("0123456789abcdef0123456789abcdef01234567\nmain", False),
    ],
)
def test_the_dockerfile_takes_only_a_full_commit_id(rev, accepted):
    """The build's own check of ORACLE_GUARD_REV, run as the build's sh runs it."""
    pattern = r"(printf '%s' \"\$ORACLE_GUARD_REV\" \| grep -Ezqx '[^']+')"
    (check,) = re.findall(pattern, dockerfile_runs())
    done = subprocess.run(
        ["sh", "-c", check], env={"ORACLE_GUARD_REV": rev, "PATH": "/usr/bin:/bin"}
    )
    assert (done.returncode == 0) == accepted
