"""``oracle-guard doctor REPO``: a guarded repository is called guarded, and each
broken setup is called broken, with the line that says why and how to fix it.
The real hosts (gitolite, shared ssh, HTTP) are in tests/hosts/."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable, Dict, Iterator, Tuple

import pytest

from testing import oracle
from testing.git import commit, git, run_guard
from testing.server import file_url, install_hook, make_client, make_server, push, push_env

CONTRACT = oracle.OWNERLESS_SEEDS
OWNERS = CONTRACT + "  owners: [alice]\nidentity_env: REMOTE_USER\n"


# one seeded server and client per module for each (contract, host), by a real push;
# every test copies it (server_with)
_SEEDED: Dict[Tuple[str, str], Path] = {}
_SEED_ROOT: Dict[str, Path] = {}


@pytest.fixture(scope="module", autouse=True)
def _seed_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    _SEED_ROOT["root"] = tmp_path_factory.mktemp("seeded")
    yield
    _SEED_ROOT.clear()
    _SEEDED.clear()


def _seeded(contract: str, host: str) -> Path:
    if (contract, host) not in _SEEDED:
        root = _SEED_ROOT["root"] / f"seed-{len(_SEEDED)}"
        server = make_server(root / "srv.git", hook=False)
        install_hook(server, "--host", host)
        git(server, "config", "receive.fsckObjects", "true")
        client = make_client(root / "work", server)
        files = {".oracle-guard.yaml": contract, "seeds/a.json": "[1]\n", "src/app.py": ""}
        commit(client, files)
        assert push(client, "main").rc == 0
        _SEEDED[contract, host] = root
    return _SEEDED[contract, host]


def server_with(tmp_path: Path, contract: str = OWNERS, host: str = "http") -> Path:
    """A copy of the seeded server (``srv.git``, the hook for ``host`` installed, main
    holding ``contract``) and of the client that pushed main (``work``)."""
    seeded = _seeded(contract, host)
    for name in ("srv.git", "work"):
        shutil.copytree(seeded / name, tmp_path / name, symlinks=True)
    server = tmp_path / "srv.git"
    git(tmp_path / "work", "remote", "set-url", "origin", file_url(server))
    return server


def doctor(capsys, repo: Path, *args: str):
    rc, out, err = run_guard(capsys, repo, "doctor", str(repo), *args)
    return rc, out.splitlines(), err


def test_a_guarded_repository_is_called_guarded(tmp_path, capsys):
    server = server_with(tmp_path)
    rc, lines, err = doctor(capsys, server)
    assert (rc, err) == (0, ""), lines
    assert lines[-1] == f"guarded: {server}"
    assert not [line for line in lines if line.startswith("problem:")], lines
    assert any(line.startswith("ok: the hook runs oracle-guard ") for line in lines), lines
    assert "ok: owners by variable: alice in REMOTE_USER" in lines
    assert "ok: receive.fsckObjects is on" in lines


def hook_of(server: Path) -> Path:
    return server / "hooks" / "pre-receive"


def _rewrite_exec(server: Path, python: str) -> None:
    hook = hook_of(server)
    hook.write_text(
        "\n".join(
            f"exec {python} -I -m oracle_guard pre-receive --host http"
            if line.startswith("exec ")
            else line
            for line in hook.read_text().splitlines()
        )
        + "\n"
    )


def _admin_sets_main(files) -> Callable[[Path, Path], None]:
    """An admin moves main on the server itself (no hook runs for a fetch);
    a file given as None is deleted."""

    def broken(server: Path, tmp_path: Path) -> None:
        client = tmp_path / "work"
        for path in [p for p, text in files.items() if text is None]:
            git(client, "rm", "-q", path)
        commit(client, {p: text for p, text in files.items() if text is not None}, "admin")
        git(server, "fetch", "-q", str(client), "+refs/heads/main:refs/heads/main")

    return broken


BROKEN = {
    "no hook": (
        lambda s, t: hook_of(s).unlink(),
        "problem: no hook at {hook}: every push is accepted unjudged",
    ),
    "not executable": (lambda s, t: hook_of(s).chmod(0o644), "problem: {hook} is not executable"),
    "a foreign hook": (
        lambda s, t: hook_of(s).write_text("#!/bin/sh\nexit 0\n"),
        "problem: {hook} is not oracle-guard's hook",
    ),
    "an interpreter that cannot run": (
        lambda s, t: _rewrite_exec(s, "/nonexistent/python3"),
        "problem: /nonexistent/python3 cannot run oracle-guard",
    ),
    "HEAD on a missing branch": (
        lambda s, t: git(s, "symbolic-ref", "HEAD", "refs/heads/master"),
        "problem: the repository's HEAD names refs/heads/master, which does not exist",
    ),
    "fsck off": (
        lambda s, t: git(s, "config", "receive.fsckObjects", "false"),
        "problem: receive.fsckObjects is off",
    ),
    "a shallow repository": (
        lambda s, t: (s / "shallow").write_text(git(s, "rev-parse", "HEAD")),
        "problem: {shallow} exists: the repository is shallow",
    ),
    "no contract": (
        _admin_sets_main({".oracle-guard.yaml": None}),
        "problem: refs/heads/main has no .oracle-guard.yaml",
    ),
    "a contract that does not load": (
        _admin_sets_main({".oracle-guard.yaml": "version: [\n"}),
        "problem: the rules do not load, so every push is rejected",
    ),
    "owners by another host's variable": (
        _admin_sets_main({".oracle-guard.yaml": OWNERS.replace("REMOTE_USER", "GL_USERNAME")}),
        "problem: the contract names identity_env GL_USERNAME, but the hook takes the pusher "
        "from REMOTE_USER (http)",
    ),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_broken_setup_is_called_not_guarded(tmp_path, capsys, name):
    server = server_with(tmp_path)
    assert doctor(capsys, server)[0] == 0  # the near miss: guarded before it broke
    breaks, expected = BROKEN[name]
    breaks(server, tmp_path)
    rc, lines, _ = doctor(capsys, server)
    assert rc == 1, lines
    assert lines[-1] == f"not guarded: {server}: 1 problem", lines
    problem = expected.format(hook=hook_of(server), shallow=server / "shallow")
    assert any(line.startswith(problem) for line in lines), lines


def test_owners_by_variable_on_an_unpinned_hook_are_a_problem(tmp_path, capsys):
    server = server_with(tmp_path, host="plain")
    rc, lines, _ = doctor(capsys, server)
    assert rc == 1
    assert (
        "problem: owners are read from REMOTE_USER, as the contract names it, whoever set "
        "it: reinstall the hook with --host for your server"
    ) in "\n".join(lines)
    # signed owners need no variable: the same plain hook is guarded
    near = server_with(tmp_path / "signed", CONTRACT, host="plain")
    assert doctor(capsys, near)[0] == 0


def test_an_empty_repository_is_not_guarded_yet(tmp_path, capsys):
    server = make_server(tmp_path / "srv.git", hook=False)
    git(server, "symbolic-ref", "HEAD", "refs/heads/master")
    said = install_hook(server, "--host", "http")
    warning = (
        "the repository is empty: its first push brings its own rules, so push the "
        "first contract yourself; the rules then come from the branch HEAD names "
        "(refs/heads/master): if the first push creates another, point HEAD at it "
        f"first: git --git-dir={server} symbolic-ref HEAD refs/heads/main"
    )
    assert f"warning: {warning}" in said.splitlines()
    rc, lines, _ = doctor(capsys, server)
    assert rc == 1
    assert f"problem: {warning}" in lines


def test_doctor_of_a_folder_that_is_no_repository_exits_2(tmp_path, capsys):
    rc, lines, err = doctor(capsys, tmp_path)
    assert (rc, lines) == (2, [])
    assert err == f"oracle-guard: error: not a git repository: {tmp_path}\n"


def test_a_hook_in_a_folder_is_found_with_dir(tmp_path, capsys):
    server = make_server(tmp_path / "srv.git", hook=False)
    install_hook(server, "--host", "plain", "--dir", "hooks/pre-receive.d")
    git(server, "config", "receive.fsckObjects", "true")
    client = make_client(tmp_path / "work", server)
    commit(client, {".oracle-guard.yaml": CONTRACT, "seeds/a.json": "[1]\n"})
    git(client, "push", "-q", "origin", "main")
    assert doctor(capsys, server)[0] == 1  # git runs hooks/pre-receive, which is missing
    rc, lines, _ = doctor(capsys, server, "--dir", "hooks/pre-receive.d")
    assert rc == 0, lines


def test_doctor_writes_nothing(tmp_path, capsys):
    server = server_with(tmp_path)
    before = _tree_state(server)
    doctor(capsys, server)
    assert _tree_state(server) == before


def _tree_state(root: Path):
    return sorted(
        (str(p.relative_to(root)), p.stat().st_mtime_ns, p.stat().st_mode) for p in root.rglob("*")
    )


def test_the_hook_doctor_calls_guarded_rejects_an_oracle_edit(tmp_path, capsys):
    """doctor's verdict is about the real hook: the same repository rejects a push."""
    server = server_with(tmp_path)
    assert doctor(capsys, server)[0] == 0
    client = tmp_path / "work"
    commit(client, {"seeds/a.json": "[2]\n"}, "rewrite")
    p = push(client, "main", env=push_env(REMOTE_USER="bob"))
    assert p.rc != 0 and "seed-rewritten" in p.stderr, p.stderr
    assert os.access(hook_of(server), os.X_OK)
    assert subprocess.run(["git", "-C", str(server), "fsck", "--no-progress"]).returncode == 0


def test_a_relative_repo_path_reads_the_repositorys_own_fsck_setting(tmp_path, capsys, monkeypatch):
    """The config is read from /, so a relative REPO must be made absolute first."""
    server = server_with(tmp_path)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_guard(capsys, tmp_path, "doctor", server.name)
    assert (rc, err) == (0, ""), out
    assert "ok: receive.fsckObjects is on" in out.splitlines()
    assert out.splitlines()[-1] == f"guarded: {server.name}"
    # near miss: the same relative path with the setting off is still a problem
    git(server, "config", "receive.fsckObjects", "false")
    rc, out, _ = run_guard(capsys, tmp_path, "doctor", server.name)
    assert rc == 1 and "problem: receive.fsckObjects is off" in out, out


@pytest.mark.parametrize(
    "line, program",
    [
        ('command="git-shell -c \\"$SSH_ORIGINAL_COMMAND\\"" ssh-ed25519 AAAA', "git-shell"),
        ('restrict,command="/usr/bin/git-shell -c x" ssh-ed25519 AAAA', "/usr/bin/git-shell"),
        (
            'command="/usr/share/gitolite3/gitolite-shell alice",no-pty ssh-ed25519 AAAA',
            "/usr/share/gitolite3/gitolite-shell",
        ),
        ('command="eval \\"$SSH_ORIGINAL_COMMAND\\"" ssh-ed25519 AAAA', None),
        ('command="sh -c \\"$SSH_ORIGINAL_COMMAND\\"" ssh-ed25519 AAAA', None),
        ('command="env REMOTE_USER=x git-shell" ssh-ed25519 AAAA', None),
        ('environment="REMOTE_USER=alice" ssh-ed25519 AAAA', None),
        ("ssh-ed25519 AAAA", None),
    ],
)
def test_a_forced_command_counts_only_when_it_runs_git_shell_or_gitolite_shell(line, program):
    from oracle_guard.hosts.accounts import _forced_command

    assert _forced_command(line) == program


@pytest.mark.parametrize(
    "pattern, allowed",
    [
        ("LANG", True),
        ("LC_*", True),
        ("LC_ALL", True),
        ("GIT_PROTOCOL", True),
        ("*", False),
        ("L*", False),
        ("GIT_*", False),
        ("GIT_CONFIG_GLOBAL", False),
        ("REMOTE_USER", False),
        ("LC_[A]", False),
    ],
)
def test_accept_env_is_read_as_an_allow_list(pattern, allowed):
    from oracle_guard.hosts.accounts import _allowed_client_variable

    assert _allowed_client_variable(pattern) is allowed
