"""pre-receive: real bare repositories, the hook installed by install-pre-receive,
and real `git push` over file://."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from oracle_guard.cli import main
from oracle_guard.hosts.probe import MARKER
from testing.git import commit, git
from testing.server import (
    ZERO,
    fast_commits,
    install_hook,
    make_client,
    make_server,
    push,
    push_env,
    rev,
    run_pre_receive,
    updates,
)

CONTRACT = """\
version: 1
fixtures:
  - lock: oracle/fixtures.lock.json
    root: oracle/inputs
    paths: ["oracle/inputs/**"]
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
freeze:
  - {paths: ["oracle/flake_budget.yaml"], schema: flake-budget}
budget:
  max_frozen: 2
  max_days: 14
write_set:
  allow: ["src/**", "docs/**"]
  owners: [alice]
identity_env: GL_USERNAME
"""
FIXTURE = "oracle/inputs/a.txt"
LOCK = "oracle/fixtures.lock.json"
SEEDS = "seeds/a.json"
BUDGET = "oracle/flake_budget.yaml"
ALPHA = b"alpha\n"


def lock_for(**fixtures: bytes) -> str:
    """The JSON lock `oracle-guard lock` writes for files under oracle/inputs."""
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in fixtures.items()}
    return json.dumps(dict(sorted(digests.items())), indent=2) + "\n"


def budget(*ids: str, expires: str = "2026-10-01", owner: str = "platform") -> str:
    lines = ["max_frozen: 2", "frozen:" if ids else "frozen: []"]
    for ident in ids:
        lines += [
            f"  - id: {ident}",
            f"    owner: {json.dumps(owner)}",
            f"    expires: {json.dumps(expires)}",
            '    reason: "flaky on CI"',
        ]
    return "\n".join(lines) + "\n"


BASE_FILES = {
    ".oracle-guard.yaml": CONTRACT,
    FIXTURE: ALPHA,
    LOCK: lock_for(**{"a.txt": ALPHA}),
    SEEDS: [1, 2],
    BUDGET: budget("retry_budget"),
    "src/app.py": "print('v1')\n",
}


def contract(**keys) -> str:
    """CONTRACT plus top-level keys (JSON is YAML flow style); identity_env replaces its own."""
    text = (
        CONTRACT.replace("identity_env: GL_USERNAME\n", "") if "identity_env" in keys else CONTRACT
    )
    return text + "".join(f"{key}: {json.dumps(value)}\n" for key, value in keys.items())


def as_user(name: str, variable: str = "GL_USERNAME", **more: str):
    return push_env(**{variable: name}, **more)


ALICE = as_user("alice")  # an owner
BOB = as_user("bob")  # not an owner


@dataclass
class Repos:
    client: Path
    server: Path

    def tip(self, ref: str = "refs/heads/main"):
        return rev(self.server, ref)


@pytest.fixture
def repos(tmp_path) -> Repos:
    """srv.git with the hook, and a clone whose first push (the oracle) was accepted."""
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    first = commit(client, BASE_FILES, "oracle")
    accepted(push(client, "main"))
    assert rev(server, "refs/heads/main") == first
    return Repos(client, server)


def accepted(p) -> None:
    assert p.rc == 0, p.stderr
    assert not [line for line in p.guard if "push rejected" in line], p.stderr


def rejected(p, *expected: str) -> None:
    """The push failed because the hook declined it, with these findings (at least)."""
    assert p.rc != 0, p.stderr
    assert "pre-receive hook declined" in p.stderr, p.stderr
    assert [line for line in p.guard if "push rejected" in line], p.stderr
    for finding in expected:
        assert finding in p.findings(), p.stderr


def set_contract(repos: Repos, text: str) -> None:
    """An owner's contract commit, alone, pushed to main."""
    commit(repos.client, {".oracle-guard.yaml": text}, "contract")
    accepted(push(repos.client, "main", env=ALICE))


MAIN = "refs/heads/main"


# -- install-pre-receive ----------------------------------------------------------
def test_install_writes_an_executable_hook_that_runs_this_python(tmp_path):
    server = make_server(tmp_path / "srv.git", hook=False)
    said = install_hook(server)
    hook = server / "hooks" / "pre-receive"
    command = f"{sys.executable} -I -m oracle_guard pre-receive --host plain"
    assert said.splitlines()[:2] == [
        "host: plain (detected: no host's marks in the repository; pass --host to choose)",
        f"wrote {hook} (runs {command})",
    ]
    assert hook.stat().st_mode & stat.S_IXUSR
    text = hook.read_text()
    assert text.startswith("#!/bin/sh\n") and MARKER in text
    assert f"exec {command}\n" in text


def test_installed_hook_needs_no_python_on_the_servers_path(tmp_path):
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    commit(client, BASE_FILES, "oracle")
    # git and sh only: the hook names its interpreter by absolute path
    path = os.pathsep.join([os.path.dirname(shutil.which("git")), "/bin"])
    p = push(client, "main", env=push_env(PATH=path))
    accepted(p)
    commit(client, {"README.md": "x\n"}, "outside")
    rejected(push(client, "main", env=push_env(PATH=path)), f"{MAIN}: README.md: write-outside-set")


def test_reinstall_is_idempotent(tmp_path):
    server = make_server(tmp_path / "srv.git")
    hook = server / "hooks" / "pre-receive"
    first = hook.read_bytes()
    install_hook(server)
    assert hook.read_bytes() == first
    assert hook.stat().st_mode & stat.S_IXUSR


def test_install_refuses_a_foreign_hook_without_force(tmp_path, capsys):
    server = make_server(tmp_path / "srv.git", hook=False)
    hook = server / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nexit 0\n")
    capsys.readouterr()
    assert main(["install-pre-receive", str(server)], env={}) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"oracle-guard: error: {hook} exists and was not written by oracle-guard; "
        "move it into a pre-receive.d folder and use --dir, or pass --force to "
        "replace it (it is kept as a backup)\n"
    )
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"

    install_hook(server, "--force")
    assert MARKER in hook.read_text()
    assert hook.stat().st_mode & stat.S_IXUSR


def test_install_dir_writes_into_a_folder_relative_to_the_repository(tmp_path, monkeypatch):
    server = make_server(tmp_path / "srv.git", hook=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # relative to REPO, not to the current folder
    said = install_hook(server, "--dir", "custom_hooks/pre-receive.d")
    target = server / "custom_hooks" / "pre-receive.d" / "oracle-guard"
    assert said.splitlines()[1:3] == [
        f"wrote {target} (runs {sys.executable} -I -m oracle_guard pre-receive --host plain)",
        f"created {target.parent}: make sure your server runs the scripts in it",
    ]
    assert target.stat().st_mode & stat.S_IXUSR
    assert not (server / "hooks" / "pre-receive").exists()
    assert not (elsewhere / "custom_hooks").exists()
    # the folder's own foreign scripts are left alone
    (target.parent / "other").write_text("#!/bin/sh\n")
    install_hook(server, "--dir", "custom_hooks/pre-receive.d")
    assert (target.parent / "other").read_text() == "#!/bin/sh\n"


def test_install_dir_absolute(tmp_path):
    server = make_server(tmp_path / "srv.git", hook=False)
    folder = tmp_path / "global" / "pre-receive.d"
    install_hook(server, "--dir", str(folder))
    assert (folder / "oracle-guard").stat().st_mode & stat.S_IXUSR


def test_install_into_a_folder_that_is_not_a_repository_exits_2(tmp_path, capsys):
    capsys.readouterr()
    assert main(["install-pre-receive", str(tmp_path)], env={}) == 2
    err = capsys.readouterr().err
    assert err == f"oracle-guard: error: not a git repository: {tmp_path}\n"
    assert not (tmp_path / "hooks").exists()


# -- a legitimate push and each hook's rejection ---------------------------------------
def test_legitimate_push_is_accepted(repos):
    new = commit(repos.client, {"src/app.py": "print('v2')\n"}, "feature")
    p = push(repos.client, "main", env=BOB)
    accepted(p)
    # a pass says one line, so the pusher and the admin can see the gate is there
    assert p.guard == ["oracle-guard: push accepted: 1 judged ref passed"]
    assert repos.tip() == new


def test_write_set_outside_the_allowed_paths(repos):
    old = repos.tip()
    commit(repos.client, {"README.md": "hello\n"}, "readme")
    p = push(repos.client, "main", env=BOB)
    rejected(p, f"{MAIN}: README.md: write-outside-set")
    assert repos.tip() == old
    assert "oracle-guard:   fix: drop the change to that path" in "\n".join(p.guard)
    assert p.guard[-1] == (
        "oracle-guard: push rejected: 1 problem in 1 of 1 judged ref; no ref was updated"
    )


def test_write_set_denied_oracle_file(repos):
    old = repos.tip()
    commit(repos.client, {".oracle-guard.yaml": CONTRACT + "timeout_s: 600\n"}, "contract")
    rejected(push(repos.client, "main", env=BOB), f"{MAIN}: .oracle-guard.yaml: write-denied")
    assert repos.tip() == old


def test_fixture_lock_rejects_an_owners_fixture_change_without_the_lock(repos):
    old = repos.tip()
    commit(repos.client, {FIXTURE: b"changed\n"}, "fixture")
    p = push(repos.client, "main", env=ALICE)
    rejected(p, f"{MAIN}: {FIXTURE}: fixture-mismatch")
    assert p.findings() == [f"{MAIN}: {FIXTURE}: fixture-mismatch"]  # write-set not run
    assert "oracle-guard: refs/heads/main: alice is an owner: protected paths may change" in p.guard
    assert repos.tip() == old


def test_fixture_lock_near_miss_fixture_and_lock_together(repos):
    new = commit(
        repos.client,
        {FIXTURE: b"changed\n", LOCK: lock_for(**{"a.txt": b"changed\n"})},
        "fixture and lock",
    )
    accepted(push(repos.client, "main", env=ALICE))
    assert repos.tip() == new


def test_seed_append_only_applies_to_owners(repos):
    old = repos.tip()
    commit(repos.client, {SEEDS: [1, 5]}, "rewrite a seed")
    rejected(push(repos.client, "main", env=ALICE), f"{MAIN}: {SEEDS}: seed-rewritten")
    assert repos.tip() == old


def test_owners_append_seeds(repos):
    new = commit(repos.client, {SEEDS: [1, 2, 3]}, "append a seed")
    accepted(push(repos.client, "main", env=ALICE))
    assert repos.tip() == new


def test_freeze_schema_rejects_an_invalid_budget_file(repos):
    old = repos.tip()
    commit(repos.client, {BUDGET: budget("retry_budget") + "extra: 1\n"}, "budget")
    rejected(push(repos.client, "main", env=ALICE), f"{MAIN}: {BUDGET}: freeze-invalid")
    assert repos.tip() == old


def test_freeze_schema_near_miss_a_valid_second_entry(repos):
    new = commit(repos.client, {BUDGET: budget("retry_budget", "parse_dates")}, "budget")
    accepted(push(repos.client, "main", env=ALICE))
    assert repos.tip() == new


def test_flake_budget_rejects_too_many_frozen(repos):
    old = repos.tip()
    commit(repos.client, {BUDGET: budget("one", "two", "three")}, "budget")
    # the cap is stated by both; the contract's line is reported
    rejected(push(repos.client, "main", env=ALICE), f"{MAIN}: .oracle-guard.yaml: budget-exceeded")
    assert repos.tip() == old


def test_flake_budget_uses_oracle_guard_now_on_the_server(repos):
    # the entry expires 2026-10-01 (through that day, UTC); the push touches only src/
    commit(repos.client, {"src/app.py": "print('v2')\n"}, "feature")
    old = repos.tip()
    p = push(repos.client, "main", env=as_user("bob", ORACLE_GUARD_NOW="2026-10-02"))
    rejected(p, f"{MAIN}: {BUDGET}: budget-expired")
    assert repos.tip() == old
    p = push(repos.client, "main", env=as_user("bob", ORACLE_GUARD_NOW="2026-10-01T23:59:59Z"))
    accepted(p)
    assert repos.tip() != old


# -- several refs, new refs, tags, deletions ------------------------------------------------
def test_one_bad_ref_rejects_the_whole_push_and_nothing_moves(repos):
    old = repos.tip()
    good = commit(repos.client, {"src/app.py": "print('v2')\n"}, "good")
    git(repos.client, "checkout", "-q", "-b", "feature")
    commit(repos.client, {"README.md": "x\n"}, "bad")
    git(repos.client, "checkout", "-q", "main")
    p = push(repos.client, "main", "feature", env=BOB)
    rejected(p)
    assert p.findings() == ["refs/heads/feature: README.md: write-outside-set"]
    assert p.guard[-1] == (
        "oracle-guard: push rejected: 1 problem in 1 of 2 judged refs; no ref was updated"
    )
    assert p.stderr.count("[remote rejected]") == 2
    assert repos.tip() == old
    assert repos.tip("refs/heads/feature") is None
    # near miss: the same two refs, both good
    git(repos.client, "branch", "-f", "feature", "main")
    accepted(push(repos.client, "main", "feature", env=BOB))
    assert repos.tip() == good == repos.tip("refs/heads/feature")


def test_new_branch_is_compared_with_its_merge_base_with_the_default_branch(repos):
    cut = repos.tip()
    git(repos.client, "branch", "feature")
    commit(repos.client, {SEEDS: [1, 2, 3]}, "append a seed on main")
    accepted(push(repos.client, "main", env=ALICE))
    git(repos.client, "checkout", "-q", "feature")
    assert git(repos.client, "rev-parse", "HEAD").strip() == cut
    new = commit(repos.client, {"src/app.py": "print('feature')\n"}, "feature work")
    # main's tip has seed 3, the branch does not: that is not removing it
    accepted(push(repos.client, "feature", env=BOB))
    assert repos.tip("refs/heads/feature") == new


def test_new_branch_that_drops_a_seed_of_its_merge_base_is_rejected(repos):
    git(repos.client, "checkout", "-q", "-b", "feature")
    commit(repos.client, {SEEDS: [1]}, "drop a seed")
    rejected(push(repos.client, "feature", env=ALICE), f"refs/heads/feature: {SEEDS}: seed-removed")
    assert repos.tip("refs/heads/feature") is None


def test_new_branch_rules_come_from_the_default_branch(repos):
    # the branch brings a looser contract; it is judged by main's
    git(repos.client, "checkout", "-q", "-b", "feature")
    loose = CONTRACT.replace("owners: [alice]", "owners: [alice, bob]")
    commit(repos.client, {".oracle-guard.yaml": loose}, "loosen")
    commit(repos.client, {SEEDS: [1, 9]}, "rewrite")
    p = push(repos.client, "feature", env=BOB)
    rejected(
        p,
        "refs/heads/feature: .oracle-guard.yaml: write-denied",
        f"refs/heads/feature: {SEEDS}: write-denied",
        f"refs/heads/feature: {SEEDS}: seed-rewritten",
    )


@pytest.mark.parametrize("annotated", [False, True], ids=["lightweight", "annotated"])
def test_tags_are_judged_like_branches(repos, annotated):
    tag = ["tag", "-a", "-m", "release"] if annotated else ["tag"]
    git(repos.client, *tag, "v1")  # main's tip: nothing changes
    accepted(push(repos.client, "v1", env=BOB))
    assert rev(repos.server, "refs/tags/v1^{commit}") == repos.tip()

    bad = commit(repos.client, {SEEDS: [1, 7]}, "rewrite a seed")
    git(repos.client, *tag, "v2")
    p = push(repos.client, "v2", env=ALICE)
    rejected(p, f"refs/tags/v2: {SEEDS}: seed-rewritten")
    assert f"oracle-guard: refs/tags/v2 ({bad[:12]}): {SEEDS}:" in "\n".join(p.guard)
    # a finding in a commit: the commit is redone, and the output says how
    assert any("(git rebase -i, git commit --amend)" in line for line in p.guard), p.guard
    assert repos.tip("refs/tags/v2") is None


def test_deleting_a_protected_branch_is_rejected(repos):
    git(repos.client, "branch", "release")
    accepted(push(repos.client, "release", env=BOB))
    p = push(repos.client, ":release", env=ALICE)  # owners too
    rejected(p, "refs/heads/release: -: ref-deleted")
    assert (
        "oracle-guard: refs/heads/release: ref-deleted: deleting protected "
        "refs/heads/release is not allowed" in p.guard
    )
    # no commit carries a deletion: no path placeholder, no rebase advice
    assert not any("git rebase -i" in line for line in p.guard), p.guard
    assert repos.tip("refs/heads/release") == repos.tip()


def test_deleting_an_unprotected_branch_is_accepted(repos):
    set_contract(repos, contract(protected_refs=["refs/heads/main"]))
    git(repos.client, "branch", "scratch")
    accepted(push(repos.client, "scratch", env=BOB))
    accepted(push(repos.client, ":scratch", env=BOB))
    assert repos.tip("refs/heads/scratch") is None


def test_deletable_refs_allow_a_deletion(repos):
    set_contract(repos, contract(deletable_refs=["refs/heads/release/*"]))
    git(repos.client, "branch", "release/1")
    git(repos.client, "branch", "release-2")
    accepted(push(repos.client, "release/1", "release-2", env=BOB))
    p = push(repos.client, ":release/1", env=BOB)
    accepted(p)
    assert "oracle-guard: refs/heads/release/1: deletion allowed by deletable_refs" in p.guard
    assert repos.tip("refs/heads/release/1") is None
    rejected(push(repos.client, ":release-2", env=BOB), "refs/heads/release-2: -: ref-deleted")
    assert repos.tip("refs/heads/release-2") is not None


def test_deleting_a_tag_is_rejected(repos):
    git(repos.client, "tag", "v1")
    accepted(push(repos.client, "v1", env=BOB))
    rejected(push(repos.client, ":refs/tags/v1", env=BOB), "refs/tags/v1: -: ref-deleted")
    assert repos.tip("refs/tags/v1") is not None


# -- history: force pushes and commits already on the server ---------------------------------
def test_force_push_that_drops_a_seed_is_rejected(repos):
    start = repos.tip()
    commit(repos.client, {SEEDS: [1, 2, 3]}, "append a seed")
    accepted(push(repos.client, "main", env=ALICE))
    appended = repos.tip()
    git(repos.client, "reset", "-q", "--hard", start)
    commit(repos.client, {"src/app.py": "print('rewritten history')\n"}, "src")
    rejected(push(repos.client, "--force", "main", env=BOB), f"{MAIN}: {SEEDS}: seed-removed")
    assert repos.tip() == appended
    # near miss: a force push that keeps every seed
    git(repos.client, "reset", "-q", "--hard", appended)
    commit(repos.client, {"src/app.py": "print('amended')\n"}, "src")
    git(repos.client, "commit", "-q", "--amend", "-m", "src, reworded")
    new = git(repos.client, "rev-parse", "HEAD").strip()
    accepted(push(repos.client, "--force", "main", env=BOB))
    assert repos.tip() == new


def test_a_commit_from_a_scratch_branch_gets_no_free_pass_into_main(repos):
    set_contract(repos, contract(protected_refs=["refs/heads/main"]))
    old = repos.tip()
    git(repos.client, "checkout", "-q", "-b", "scratch")
    bad = commit(repos.client, {SEEDS: [1, 9]}, "rewrite a seed")
    accepted(push(repos.client, "scratch", env=BOB))  # not protected: not judged
    assert repos.tip("refs/heads/scratch") == bad
    p = push(repos.client, "scratch:main", env=BOB)
    rejected(p, f"{MAIN}: {SEEDS}: seed-rewritten", f"{MAIN}: {SEEDS}: write-denied")
    assert repos.tip() == old


# -- owners and identity ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "variable", ["GL_USERNAME", "GITEA_PUSHER_NAME", "GL_USER", "GITHUB_USER_LOGIN", "REMOTE_USER"]
)
def test_an_owners_contract_commit_is_accepted(repos, variable):
    set_contract(repos, contract(identity_env=variable))
    new = commit(repos.client, {SEEDS: [1, 2, 3]}, "append a seed")
    accepted(push(repos.client, "main", env=as_user("alice", variable)))
    assert repos.tip() == new


@pytest.mark.parametrize("env", [BOB, push_env()], ids=["not-an-owner", "nobody"])
def test_protected_paths_need_an_owner(repos, env):
    old = repos.tip()
    commit(repos.client, {SEEDS: [1, 2, 3]}, "append a seed")
    rejected(push(repos.client, "main", env=env), f"{MAIN}: {SEEDS}: write-denied")
    assert repos.tip() == old


def test_owners_mixed_commit_is_rejected(repos):
    old = repos.tip()
    mixed = commit(repos.client, {SEEDS: [1, 2, 3], "src/app.py": "print('v2')\n"}, "both")
    p = push(repos.client, "main", env=ALICE)
    rejected(p, f"{MAIN}: {SEEDS}: contract-mixed-commit")
    assert (
        f"oracle-guard: refs/heads/main ({mixed[:12]}): {SEEDS}: contract-mixed-commit: "
        f"commit {mixed[:12]} changes protected '{SEEDS}' and allowed 'src/app.py': an "
        "oracle change rides alone in its own commit"
    ) in p.guard
    assert repos.tip() == old


def test_owners_split_commits_in_one_push_are_accepted(repos):
    commit(repos.client, {SEEDS: [1, 2, 3]}, "seed")
    new = commit(repos.client, {"src/app.py": "print('v2')\n"}, "src")
    accepted(push(repos.client, "main", env=ALICE))
    assert repos.tip() == new


def test_mixed_commit_is_found_even_when_a_later_commit_undoes_half_of_it(repos):
    # the old-to-new tree difference touches only src/: the commit is still mixed
    mixed = commit(repos.client, {FIXTURE: b"tmp\n", "src/app.py": "print('v2')\n"}, "both")
    commit(repos.client, {FIXTURE: ALPHA}, "undo the fixture")
    p = push(repos.client, "main", env=BOB)
    assert p.findings() == [f"{MAIN}: {FIXTURE}: contract-mixed-commit"], p.stderr
    assert f"({mixed[:12]})" in p.guard[0]
    rejected(p)


def test_identity_env_chooses_the_variable(repos):
    set_contract(repos, contract(identity_env="REMOTE_USER"))
    old = repos.tip()
    new = commit(repos.client, {SEEDS: [1, 2, 3]}, "append a seed")
    # GL_USERNAME names an owner, but the contract reads only REMOTE_USER
    rejected(
        push(repos.client, "main", env=as_user("alice", REMOTE_USER="bob")),
        f"{MAIN}: {SEEDS}: write-denied",
    )
    rejected(push(repos.client, "main", env=ALICE), f"{MAIN}: {SEEDS}: write-denied")
    assert repos.tip() == old
    accepted(push(repos.client, "main", env=as_user("alice", "REMOTE_USER", GL_USERNAME="bob")))
    assert repos.tip() == new


@pytest.mark.parametrize("split", [False, True], ids=["one-commit", "two-commits"])
def test_loosening_the_contract_and_editing_the_oracle_together_is_rejected(repos, split):
    old = repos.tip()
    loose = CONTRACT.replace("owners: [alice]", "owners: [alice, bob]").replace(
        '"docs/**"]', '"docs/**", "seeds/**"]'
    )
    if split:
        commit(repos.client, {".oracle-guard.yaml": loose}, "loosen")
        commit(repos.client, {SEEDS: [1, 9]}, "rewrite")
    else:
        commit(repos.client, {".oracle-guard.yaml": loose, SEEDS: [1, 9]}, "loosen and rewrite")
    rejected(
        push(repos.client, "main", env=BOB),
        f"{MAIN}: .oracle-guard.yaml: write-denied",
        f"{MAIN}: {SEEDS}: write-denied",
        f"{MAIN}: {SEEDS}: seed-rewritten",
    )
    assert repos.tip() == old


def test_a_contract_that_does_not_load_is_rejected_before_it_locks_the_repository(repos):
    # an owner's broken contract would be the rules of every later push, the fix included
    old = repos.tip()
    commit(repos.client, {".oracle-guard.yaml": CONTRACT + "version: 2\n"}, "broken")
    p = push(repos.client, "main", env=ALICE)
    assert p.rc != 0, p.stderr
    assert any(
        line.endswith(
            ": .oracle-guard.yaml:17: contract-invalid: duplicate key 'version' (column 1): the "
            "contract in the pushed tip of refs/heads/main would judge every later change, and "
            "it does not load"
        )
        for line in p.guard
    ), p.stderr
    assert p.guard[-1] == (
        "oracle-guard: push rejected: 1 problem in 1 of 1 judged ref; no ref was updated"
    ), p.stderr
    assert repos.tip() == old


def test_a_contract_whose_allow_file_is_missing_is_rejected(repos):
    old = repos.tip()
    text = CONTRACT.replace('  allow: ["src/**", "docs/**"]\n', "  allow_file: oracle/allowed\n")
    commit(repos.client, {".oracle-guard.yaml": text}, "allow file")
    p = push(repos.client, "main", env=ALICE)
    assert p.rc != 0, p.stderr
    assert any(
        line.endswith(
            ": .oracle-guard.yaml: contract-invalid: write_set.allow_file 'oracle/allowed' is "
            "missing from the pushed tip of refs/heads/main: the contract would judge every "
            "later change, and it does not load"
        )
        for line in p.guard
    ), p.stderr
    assert p.guard[-1] == (
        "oracle-guard: push rejected: 1 problem in 1 of 1 judged ref; no ref was updated"
    ), p.stderr
    assert repos.tip() == old
    # near miss: the allow file in the same commit
    new = commit(repos.client, {"oracle/allowed": "src/\n"}, "allow file")
    git(repos.client, "reset", "-q", "--soft", "HEAD~2")
    new = commit(repos.client, message="contract with its allow file")
    accepted(push(repos.client, "main", env=ALICE))
    assert repos.tip() == new
    commit(repos.client, {"src/x.py": "x\n", "README.md": "x\n"}, "src")
    rejected(push(repos.client, "main", env=BOB), f"{MAIN}: README.md: write-outside-set")


def test_a_broken_contract_on_the_server_fails_closed(tmp_path):
    # put there behind the hook's back (an admin, or a hook installed later)
    server = make_server(tmp_path / "srv.git", hook=False)
    client = make_client(tmp_path / "work", server)
    commit(client, {**BASE_FILES, ".oracle-guard.yaml": "version: 1\nbogus: 1\n"}, "oracle")
    accepted(push(client, "main"))
    install_hook(server)
    old = rev(server, MAIN)
    commit(client, {"src/app.py": "print('v2')\n"}, "src")
    p = push(client, "main", env=BOB)
    assert p.rc != 0
    assert len(p.guard) == 1, p.stderr
    assert p.guard[0].startswith(
        "oracle-guard: push rejected: .oracle-guard.yaml:2: invalid contract"
    ), p.stderr
    assert rev(server, MAIN) == old


# -- the first push, quarantine, size, object format ----------------------------------
def test_first_push_to_an_empty_repository_is_judged_by_its_own_contract(tmp_path):
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    commit(client, {**BASE_FILES, FIXTURE: b"not what the lock says\n"}, "oracle")
    rejected(push(client, "main", env=BOB), f"{MAIN}: {FIXTURE}: fixture-mismatch")
    assert rev(server, MAIN) is None
    commit(client, {FIXTURE: ALPHA}, "fixed")
    accepted(push(client, "main", env=BOB))


def test_push_is_judged_from_quarantined_objects(tmp_path):
    server = make_server(tmp_path / "srv.git", hook=False)
    client = make_client(tmp_path / "work", server)
    commit(client, BASE_FILES, "oracle")
    accepted(push(client, "main"))
    install_hook(server, "--dir", "pre-receive.d")
    probe = tmp_path / "probe.txt"
    # a wrapper that records where the pushed objects are, then runs oracle-guard
    wrapper = server / "hooks" / "pre-receive"
    wrapper.write_text(f"""#!/bin/sh
input=$(cat)
new=$(printf '%s\\n' "$input" | cut -d' ' -f2)
{{
  echo "quarantine=${{GIT_QUARANTINE_PATH:+set}}"
  if env -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES -u GIT_QUARANTINE_PATH \\
      git cat-file -e "$new" 2>/dev/null; then echo main-store=yes; else echo main-store=no; fi
  if git cat-file -e "$new"; then echo visible=yes; else echo visible=no; fi
}} > {probe}
printf '%s\\n' "$input" | exec ./pre-receive.d/oracle-guard
""")
    wrapper.chmod(0o755)

    bad = commit(client, {SEEDS: [1, 5]}, "rewrite a seed")  # new blob, tree and commit
    rejected(push(client, "main", env=ALICE), f"{MAIN}: {SEEDS}: seed-rewritten")
    assert probe.read_text().split() == ["quarantine=set", "main-store=no", "visible=yes"]
    assert subprocess.run(["git", "-C", str(server), "cat-file", "-e", bad]).returncode != 0

    git(client, "reset", "-q", "--hard", "HEAD~1")
    good = commit(client, {SEEDS: [1, 2, 3]}, "append a seed")
    accepted(push(client, "main", env=ALICE))
    assert probe.read_text().split() == ["quarantine=set", "main-store=no", "visible=yes"]
    assert rev(server, MAIN) == good


def children_cpu_seconds() -> float:
    """User and system CPU seconds of every child this process has waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_a_thousand_commit_push(repos):
    old = repos.tip()
    tip = fast_commits(repos.client, 1000)
    before = children_cpu_seconds()
    p = push(repos.client, "main", env=BOB)
    # CPU time of the push, its receive-pack and the hook (all waited for), which
    # a loaded machine barely moves; a quadratic walk of the commits would take minutes
    used = children_cpu_seconds() - before
    accepted(p)
    assert repos.tip() == tip
    assert used < 20, used
    assert int(git(repos.server, "rev-list", "--count", f"{old}..{tip}")) == 1000


def test_a_thousand_commit_push_with_one_mixed_commit(repos):
    old = repos.tip()
    tip = fast_commits(repos.client, 1000, files={500: {SEEDS: b"[1, 2, 3]\n"}})
    mixed = git(repos.client, "rev-list", "--reverse", f"{old}..{tip}").split()[500]
    p = push(repos.client, "main", env=ALICE)
    rejected(p, f"{MAIN}: {SEEDS}: contract-mixed-commit")
    assert len(p.findings()) == 1 and f"({mixed[:12]})" in p.guard[-4], p.stderr
    assert repos.tip() == old


def test_sha256_repository(tmp_path):
    server = make_server(tmp_path / "srv.git", object_format="sha256")
    client = make_client(tmp_path / "work", server, object_format="sha256")
    first = commit(client, BASE_FILES, "oracle")
    assert len(first) == 64
    accepted(push(client, "main", env=BOB))
    new = commit(client, {"src/app.py": "print('v2')\n"}, "src")
    accepted(push(client, "main", env=BOB))
    assert rev(server, MAIN) == new
    bad = commit(client, {SEEDS: [1, 5]}, "rewrite a seed")
    p = push(client, "main", env=ALICE)
    rejected(p, f"{MAIN}: {SEEDS}: seed-rewritten")
    assert f"({bad[:12]})" in "\n".join(p.guard)
    assert rev(server, MAIN) == new


# -- protocol, messages, time-out -----------------------------------------------------------------
@pytest.mark.parametrize(
    "stdin",
    [
        b"garbage\n",
        b"%s %s\n" % (ZERO.encode(), ZERO.encode()),
        b"%s %s main\n" % (ZERO.encode(), b"1" * 40),
        b"%s %s refs/heads/main\n" % (ZERO.encode(), b"G" * 40),
        b"%s  %s refs/heads/main\n" % (ZERO.encode(), b"1" * 40),
    ],
    ids=["one-word", "no-ref", "short-ref", "not-hex", "two-spaces"],
)
def test_malformed_stdin_exits_2_with_one_line(tmp_path, stdin):
    server = make_server(tmp_path / "srv.git")
    proc = run_pre_receive(server, stdin)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and err.startswith(
        "oracle-guard: push rejected: stdin line 1 is not '<old-oid> <new-oid> <ref>' with 40-digit ids: "
    ), err


def test_every_line_of_stdin_is_read(repos):
    # the second line is the bad one
    old = repos.tip()
    stdin = updates((old, old, "refs/heads/other"), (old, old, "refs/heads/main"), ("junk",))
    proc = run_pre_receive(repos.server, stdin)
    assert proc.returncode == 2
    assert "stdin line 3" in proc.stderr.decode()


def test_unknown_new_object_fails_closed(repos):
    old = repos.tip()
    proc = run_pre_receive(repos.server, updates((old, "1" * 40, "refs/heads/main")))
    assert proc.returncode == 2
    assert proc.stderr.decode() == (
        "oracle-guard: push rejected: refs/heads/main: 111111111111 does not point to a commit\n"
    )


def test_gl_id_prefixes_the_lines_gitlab_shows(repos):
    commit(repos.client, {"README.md": "x\n"}, "outside")
    p = push(repos.client, "main", env=as_user("bob", GL_ID="user-2"))
    rejected(p, f"{MAIN}: README.md: write-outside-set")
    hook_lines = [line for line in p.remote if "oracle-guard:" in line]
    assert hook_lines and all(
        line.startswith("GL-HOOK-ERR: oracle-guard: ") for line in hook_lines
    ), p.stderr
    # near miss: no GL_ID, no prefix
    p = push(repos.client, "main", env=BOB)
    assert not [line for line in p.remote if "GL-HOOK-ERR" in line], p.stderr


def test_time_out_rejects_the_push(repos):
    set_contract(repos, contract(timeout_s=0.001))
    old = repos.tip()
    commit(repos.client, {"src/app.py": "print('v2')\n"}, "src")
    p = push(repos.client, "main", env=BOB)
    assert p.rc != 0
    assert p.guard == [
        "oracle-guard: push rejected: the checks took longer than 0.001 s (contract key timeout_s)"
    ], p.stderr
    assert repos.tip() == old


def test_a_generous_time_out_accepts_the_push(repos):
    set_contract(repos, contract(timeout_s=600))
    new = commit(repos.client, {"src/app.py": "print('v2')\n"}, "src")
    accepted(push(repos.client, "main", env=BOB))
    assert repos.tip() == new


def test_unprotected_refs_are_not_judged(repos):
    set_contract(repos, contract(protected_refs=["refs/heads/main", "refs/tags/*"]))
    git(repos.client, "checkout", "-q", "-b", "scratch")
    new = commit(repos.client, {"README.md": "x\n", SEEDS: [0]}, "anything goes here")
    p = push(repos.client, "scratch", env=BOB)
    accepted(p)
    assert p.guard == []
    assert repos.tip("refs/heads/scratch") == new


def test_a_branch_from_before_the_contract_is_judged_by_the_default_branchs(tmp_path):
    # legacy's old tip has no contract: the pushed tip must not bring its own rules
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    commit(client, {"src/app.py": BASE_FILES["src/app.py"]}, "before the contract")
    git(client, "branch", "legacy")
    accepted(push(client, "main", "legacy", env=BOB))
    commit(client, BASE_FILES, "oracle")
    accepted(push(client, "main", env=ALICE))
    legacy = rev(server, "refs/heads/legacy")
    git(client, "checkout", "-q", "legacy")
    own = "version: 1\nwrite_set:\n  owners: [bob]\nidentity_env: GL_USERNAME\n"
    commit(client, {".oracle-guard.yaml": own, "README.md": "x\n"}, "my own rules")
    p = push(client, "legacy", env=BOB)
    rejected(
        p,
        "refs/heads/legacy: .oracle-guard.yaml: write-denied",
        "refs/heads/legacy: README.md: write-outside-set",
    )
    assert rev(server, "refs/heads/legacy") == legacy
    # near miss: an owner brings the oracle in, then the same branch takes allowed changes
    git(client, "reset", "-q", "--hard", "main")
    accepted(push(client, "HEAD:legacy", env=ALICE))
    new = commit(client, {"src/app.py": "v1\n"}, "src")
    accepted(push(client, "HEAD:legacy", env=BOB))
    assert rev(server, "refs/heads/legacy") == new


def test_deleting_a_branch_from_before_the_contract_follows_the_default_branchs_rules(tmp_path):
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    commit(client, {"src/app.py": "v0\n"}, "before the contract")
    git(client, "branch", "legacy")
    git(client, "branch", "old-release")
    accepted(push(client, "main", "legacy", "old-release", env=BOB))
    commit(
        client,
        {
            **BASE_FILES,
            ".oracle-guard.yaml": contract(protected_refs=["refs/heads/main", "refs/heads/old-*"]),
        },
        "oracle",
    )
    accepted(push(client, "main", env=ALICE))
    accepted(push(client, ":legacy", env=BOB))  # not protected by main's contract
    assert rev(server, "refs/heads/legacy") is None
    rejected(push(client, ":old-release", env=BOB), "refs/heads/old-release: -: ref-deleted")


def test_an_unreadable_server_clock_rejects_the_push(repos):
    old = repos.tip()
    commit(repos.client, {"src/app.py": "print('v2')\n"}, "src")
    p = push(repos.client, "main", env=as_user("bob", ORACLE_GUARD_NOW="next tuesday"))
    assert p.rc != 0
    assert "pre-receive hook declined" in p.stderr
    assert [line for line in p.remote if line.startswith("oracle-guard:")] == [
        "oracle-guard: push rejected: --now/ORACLE_GUARD_NOW 'next tuesday' is not a date (YYYY-MM-DD) "
        "or a date-time with offset (YYYY-MM-DDTHH:MM[:SS]Z or +HH:MM) (e.g. 2026-09-25 or "
        "2026-09-25T12:00:00Z)"
    ], p.stderr
    assert repos.tip() == old


def test_reinstalling_the_same_hook_changes_nothing(tmp_path):
    server = make_server(tmp_path / "srv.git", hook=False)
    install_hook(server)
    hook = server / "hooks" / "pre-receive"
    assert (
        install_hook(server).splitlines()[1]
        == f"{hook} is already installed and current; nothing changed"
    )


# -- a default branch that does not resolve -------------------------------------------
def test_head_naming_a_missing_branch_rejects_pushes_once_the_repo_has_refs(tmp_path):
    server = make_server(tmp_path / "srv.git")
    git(server, "symbolic-ref", "HEAD", "refs/heads/master")  # as `git init` may leave it
    client = make_client(tmp_path / "client", server)
    seeds_only = "version: 1\nseeds:\n  - {paths: ['seeds/*.json'], format: json-array}\n"
    commit(client, {".oracle-guard.yaml": seeds_only, SEEDS: [1, 2]}, "contract")
    first = push(client, "main")
    assert first.rc == 0, first.stderr  # an empty repository: the first push sets the rules
    commit(client, {SEEDS: [2, 1]}, "reorder on a new branch")
    p = push(client, "main:evil")
    assert p.rc != 0
    assert (
        "oracle-guard: push rejected: the repository's HEAD names refs/heads/master, "
        "which does not exist"
    ) in p.stderr
    assert rev(server, "refs/heads/evil") is None
    git(server, "symbolic-ref", "HEAD", "refs/heads/main")
    p = push(client, "main:evil")
    assert p.rc != 0
    assert "seed-reordered" in p.stderr  # now judged against main


def test_installer_warns_when_head_names_a_missing_branch(tmp_path):
    server = make_server(tmp_path / "srv.git", hook=False)
    client = make_client(tmp_path / "client", server)
    commit(client, {"a.txt": "x\n"})
    push(client, "main")
    git(server, "symbolic-ref", "HEAD", "refs/heads/master")
    said = install_hook(server)
    assert "warning: the repository's HEAD names refs/heads/master, which does not exist" in said
    git(server, "symbolic-ref", "HEAD", "refs/heads/main")
    (server / "hooks" / "pre-receive").unlink()
    assert "HEAD names" not in install_hook(server)


def test_force_keeps_the_replaced_hook_beside_it(tmp_path):
    server = make_server(tmp_path / "srv.git", hook=False)
    hook = server / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho theirs\n")
    said = install_hook(server, "--force")
    backup = Path(str(hook) + ".before-oracle-guard")
    assert f"moved the hook it replaces to {backup}" in said
    assert backup.read_text() == "#!/bin/sh\necho theirs\n"
    assert MARKER in hook.read_text()


# -- refs/replace/* ------------------------------------------------------------------------
def _replace_main_tip(repos: Repos) -> str:
    """A replace ref in the client that swaps main's tip for a seed-rewriting commit;
    returns the ref's name."""
    tip = repos.tip()
    git(repos.client, "checkout", "-q", "-b", "swap")
    swap = commit(repos.client, {SEEDS: [1, 9]}, "the commit git would show instead")
    git(repos.client, "checkout", "-q", "main")
    git(repos.client, "replace", tip, swap)
    ref = f"refs/replace/{tip}"
    assert git(repos.client, "rev-parse", ref).strip() == swap
    return ref


def test_a_non_owners_replace_ref_is_rejected_and_nothing_moves(repos):
    ref = _replace_main_tip(repos)
    old = repos.tip()
    commit(repos.client, {"src/app.py": "print('v2')\n"}, "honest")
    # refs/replace/* is not in the default protected_refs: it is judged anyway
    p = push(repos.client, "main", f"{ref}:{ref}", env=BOB)
    rejected(p, f"{ref}: -: replace-ref")
    assert p.findings() == [f"{ref}: -: replace-ref"], p.stderr
    assert (
        f"oracle-guard: {ref}: replace-ref: {ref}: refs/replace/* changes what git "
        "shows for an object; only an owner may push it"
    ) in p.guard
    assert repos.tip(ref) is None
    assert repos.tip() == old
    # nobody named at all is not an owner either
    rejected(push(repos.client, f"{ref}:{ref}", env=push_env()), f"{ref}: -: replace-ref")
    assert repos.tip(ref) is None


def test_an_owners_replace_ref_is_accepted_and_changes_no_later_verdict(repos):
    ref = _replace_main_tip(repos)
    swap = rev(repos.client, ref)
    p = push(repos.client, f"{ref}:{ref}", env=ALICE)
    accepted(p)
    assert f"oracle-guard: {ref}: alice is an owner: replace refs may change" in p.guard
    assert repos.tip(ref) == swap
    # the server now shows the seed-rewriting commit for main's tip; the hook reads
    # the real objects: an honest push passes, a seed rewrite is still found
    assert git(repos.server, "show", f"{repos.tip()}:{SEEDS}").split() == ["[", "1,", "9", "]"]
    new = commit(repos.client, {"src/app.py": "print('v2')\n"}, "honest")
    accepted(push(repos.client, "main", env=BOB))
    assert repos.tip() == new
    commit(repos.client, {SEEDS: [1, 3]}, "rewrite")
    rejected(push(repos.client, "main", env=ALICE), f"{MAIN}: {SEEDS}: seed-rewritten")
    assert repos.tip() == new


def test_deleting_a_replace_ref_needs_an_owner(repos):
    ref = _replace_main_tip(repos)
    accepted(push(repos.client, f"{ref}:{ref}", env=ALICE))
    kept = repos.tip(ref)
    rejected(push(repos.client, f":{ref}", env=BOB), f"{ref}: -: replace-ref")
    assert repos.tip(ref) == kept
    # moving it is an update too
    other = commit(repos.client, {"src/app.py": "print('other')\n"}, "other")
    rejected(push(repos.client, "--force", f"{other}:{ref}", env=BOB), f"{ref}: -: replace-ref")
    assert repos.tip(ref) == kept
    accepted(push(repos.client, f":{ref}", env=ALICE))
    assert repos.tip(ref) is None


# -- every ref takes its rules from the default branch before the push ------------------------
TIGHTER = {
    # an owner denies a folder the write set allows
    "deny": (
        CONTRACT.replace("  owners: [alice]\n", '  owners: [alice]\n  deny: ["docs/legal/**"]\n'),
        {"docs/legal/terms.md": "anything goes\n"},
        ["docs/legal/terms.md: write-denied"],
    ),
    # an owner makes an allowed file a seed file
    "seeds": (
        CONTRACT.replace(
            "format: json-array}\n",
            'format: json-array}\n  - {paths: ["docs/cases/*.json"], format: json-array}\n',
        ),
        {"docs/cases/a.json": [1, 9]},
        ["docs/cases/a.json: write-denied", "docs/cases/a.json: seed-rewritten"],
    ),
}


@pytest.mark.parametrize("created", [True, False], ids=["new-branch", "existing-branch"])
@pytest.mark.parametrize("tightening", sorted(TIGHTER))
def test_a_branch_at_an_old_commit_is_judged_by_the_default_branchs_current_contract(
    repos, tightening, created
):
    text, forbidden, expected = TIGHTER[tightening]
    commit(repos.client, {"docs/cases/a.json": [1, 2]}, "docs")
    accepted(push(repos.client, "main", env=BOB))
    cut = repos.tip()
    if not created:  # the branch's old tip carries the looser contract
        git(repos.client, "branch", "feature", cut)
        accepted(push(repos.client, "feature", env=BOB))
    set_contract(repos, text)
    assert git(repos.server, "show", f"{cut}:.oracle-guard.yaml") == CONTRACT

    git(repos.client, "checkout", "-q", "-B", "feature", cut)
    commit(repos.client, forbidden, "an edit the looser contract allowed")
    p = push(repos.client, "--force", "feature", env=BOB)
    rejected(p, *[f"refs/heads/feature: {e}" for e in expected])
    assert repos.tip("refs/heads/feature") == (None if created else cut)

    # near miss: an honest edit on the same old-based branch
    git(repos.client, "reset", "-q", "--hard", cut)
    honest = commit(
        repos.client, {"src/app.py": "print('feature')\n", "docs/readme.md": "hello\n"}, "honest"
    )
    accepted(push(repos.client, "--force", "feature", env=BOB))
    assert repos.tip("refs/heads/feature") == honest


LOOSER = CONTRACT.replace('seeds:\n  - {paths: ["seeds/*.json"], format: json-array}\n', "")


def test_a_push_that_loosens_the_contract_is_judged_by_the_contract_before_it(repos):
    old = repos.tip()
    commit(repos.client, {".oracle-guard.yaml": LOOSER}, "seeds are no longer append-only")
    commit(repos.client, {SEEDS: [2, 1]}, "reorder the seeds")
    p = push(repos.client, "main", env=ALICE)
    rejected(p, f"{MAIN}: {SEEDS}: seed-reordered")
    assert repos.tip() == old
    # near miss: the loosening lands alone; the next push is judged by it
    git(repos.client, "reset", "-q", "--hard", "HEAD~1")
    accepted(push(repos.client, "main", env=ALICE))
    new = commit(repos.client, {SEEDS: [2, 1]}, "reorder the seeds")
    accepted(push(repos.client, "main", env=ALICE))
    assert repos.tip() == new


def test_another_ref_in_the_push_that_loosens_main_is_judged_by_mains_old_contract(repos):
    old = repos.tip()
    commit(repos.client, {".oracle-guard.yaml": LOOSER}, "seeds are no longer append-only")
    git(repos.client, "checkout", "-q", "-b", "feature")
    commit(repos.client, {SEEDS: [2, 1]}, "reorder the seeds")
    p = push(repos.client, "main", "feature", env=ALICE)
    rejected(p, f"refs/heads/feature: {SEEDS}: seed-reordered")
    assert p.findings() == [f"refs/heads/feature: {SEEDS}: seed-reordered"], p.stderr
    assert repos.tip() == old and repos.tip("refs/heads/feature") is None
    # near miss: main's loosening first, then the branch
    accepted(push(repos.client, "main", env=ALICE))
    accepted(push(repos.client, "feature", env=ALICE))
    assert repos.tip("refs/heads/feature") == rev(repos.client, "feature")


# -- merge commits ------------------------------------------------------------------------------
BETA = b"beta\n"


def _agent_branch_and_a_newer_fixture(repos: Repos) -> str:
    """An agent's branch cut before an owner updated the fixture and its lock on
    main; returns the commit main is at on the server."""
    cut = repos.tip()
    git(repos.client, "checkout", "-q", "-b", "agent")
    commit(repos.client, {"src/app.py": "print('agent')\n"}, "agent work")
    accepted(push(repos.client, "agent", env=BOB))
    git(repos.client, "checkout", "-q", "main")
    commit(repos.client, {FIXTURE: BETA, LOCK: lock_for(**{"a.txt": BETA})}, "newer fixture")
    accepted(push(repos.client, "main", env=ALICE))
    assert repos.tip() != cut
    return repos.tip()


def test_an_owners_merge_that_reverts_the_fixture_and_its_lock_is_rejected(repos):
    main_tip = _agent_branch_and_a_newer_fixture(repos)
    git(repos.client, "merge", "-q", "--no-ff", "--no-commit", "agent")
    # the agent's (older) copies: consistent with each other, so fixture-lock passes
    git(repos.client, "checkout", "agent", "--", FIXTURE, LOCK)
    git(repos.client, "commit", "-q", "-m", "merge agent")
    merge = git(repos.client, "rev-parse", "HEAD").strip()
    assert (repos.client / FIXTURE).read_bytes() == ALPHA
    p = push(repos.client, "main", env=ALICE)
    rejected(p, f"{MAIN}: {FIXTURE}: merge-edits-oracle", f"{MAIN}: {LOCK}: merge-edits-oracle")
    assert sorted(p.findings()) == sorted(
        [f"{MAIN}: {FIXTURE}: merge-edits-oracle", f"{MAIN}: {LOCK}: merge-edits-oracle"]
    ), p.stderr
    assert (
        f"oracle-guard: {MAIN} ({merge[:12]}): {FIXTURE}: merge-edits-oracle: merge commit "
        f"{merge[:12]} records protected '{FIXTURE}' as its parents do not merge to that"
        in "\n".join(p.guard)
    ), p.stderr
    assert repos.tip() == main_tip


def test_an_owners_clean_merge_of_the_agent_branch_is_accepted(repos):
    _agent_branch_and_a_newer_fixture(repos)
    git(repos.client, "merge", "-q", "--no-ff", "-m", "merge agent", "agent")
    merge = git(repos.client, "rev-parse", "HEAD").strip()
    assert (repos.client / FIXTURE).read_bytes() == BETA
    accepted(push(repos.client, "main", env=ALICE))
    assert repos.tip() == merge


def test_commits_already_on_the_default_branch_are_not_judged_again(tmp_path):
    # main took a mixed commit before the hook was installed
    server = make_server(tmp_path / "srv.git", hook=False)
    client = make_client(tmp_path / "work", server)
    commit(client, BASE_FILES, "oracle")
    git(client, "branch", "feature")
    accepted(push(client, "main", "feature"))
    mixed = commit(client, {SEEDS: [1, 2, 3], "src/app.py": "print('v2')\n"}, "both")
    accepted(push(client, "main"))
    install_hook(server)
    # a branch that takes main (the mixed commit with it) and adds honest work
    git(client, "checkout", "-q", "feature")
    git(client, "merge", "-q", "--ff-only", "main")
    new = commit(client, {"src/feature.py": "x = 1\n"}, "feature work")
    accepted(push(client, "feature", env=BOB))
    assert rev(server, "refs/heads/feature") == new
    # near miss: the same mixed commit, new to the server, is judged
    git(client, "checkout", "-q", "-b", "again", "main~1")
    again = commit(client, {SEEDS: [1, 2, 3], "src/app.py": "print('v2')\n"}, "both, again")
    assert again != mixed
    rejected(push(client, "again", env=ALICE), f"refs/heads/again: {SEEDS}: contract-mixed-commit")


def _criss_cross(repos: Repos, keep_old_seed: bool) -> str:
    """x and y merge each other, then y merges x again after x appended a seed;
    returns y's final merge. ``keep_old_seed``: that merge keeps y's older seeds."""
    base = repos.tip()
    git(repos.client, "checkout", "-q", "-b", "x", base)
    x1 = commit(repos.client, {"src/x.py": "x = 1\n"}, "x1")
    git(repos.client, "checkout", "-q", "-b", "y", base)
    y1 = commit(repos.client, {SEEDS: [1, 2, 3]}, "y1: append a seed")
    git(repos.client, "checkout", "-q", "x")
    git(repos.client, "merge", "-q", "--no-ff", "-m", "x merges y", y1)
    git(repos.client, "checkout", "-q", "y")
    git(repos.client, "merge", "-q", "--no-ff", "-m", "y merges x", x1)
    bases = git(repos.client, "merge-base", "--all", "x", "y").split()
    assert sorted(bases) == sorted([x1, y1])  # criss-cross: two merge-bases
    accepted(push(repos.client, "x", "y", env=ALICE))
    git(repos.client, "checkout", "-q", "x")
    commit(repos.client, {SEEDS: [1, 2, 3, 4]}, "x2: append a seed")
    accepted(push(repos.client, "x", env=ALICE))
    git(repos.client, "checkout", "-q", "y")
    assert len(git(repos.client, "merge-base", "--all", "x", "y").split()) == 2
    if keep_old_seed:
        git(repos.client, "merge", "-q", "--no-ff", "--no-commit", "x")
        git(repos.client, "checkout", "HEAD", "--", SEEDS)  # y's [1, 2, 3]
        git(repos.client, "commit", "-q", "-m", "y merges x")
    else:
        git(repos.client, "merge", "-q", "--no-ff", "-m", "y merges x", "x")
    return git(repos.client, "rev-parse", "HEAD").strip()


def test_an_evil_merge_in_a_criss_cross_history_is_rejected(repos):
    merge = _criss_cross(repos, keep_old_seed=True)
    old = repos.tip("refs/heads/y")
    assert json.loads((repos.client / SEEDS).read_text()) == [1, 2, 3]
    # the old tip of y had [1, 2, 3] too: only the merge itself shows the lost seed
    p = push(repos.client, "y", env=ALICE)
    rejected(p, f"refs/heads/y: {SEEDS}: merge-edits-oracle")
    assert f"refs/heads/y ({merge[:12]}): {SEEDS}: merge-edits-oracle" in "\n".join(p.guard)
    assert repos.tip("refs/heads/y") == old
    # into main (a new ref's view of it: compared with main) the lost seed is found too
    p = push(repos.client, "y:main", env=ALICE)
    rejected(p, f"{MAIN}: {SEEDS}: merge-edits-oracle")


def test_an_honest_merge_in_a_criss_cross_history_is_accepted(repos):
    merge = _criss_cross(repos, keep_old_seed=False)
    assert json.loads((repos.client / SEEDS).read_text()) == [1, 2, 3, 4]
    accepted(push(repos.client, "y", env=ALICE))
    assert repos.tip("refs/heads/y") == merge
    accepted(push(repos.client, "y:main", env=ALICE))
    assert repos.tip() == merge


# -- ref names with line separators ---------------------------------------------------------------
@pytest.mark.parametrize(
    "separator, escaped",
    [
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
        ("\u0085", "\\x85"),
        ("\udcff", "\\xff"),  # the byte 0xff: not UTF-8, yet a valid ref name
    ],
    ids=["U+2028", "U+2029", "U+0085", "byte-ff"],
)
def test_a_ref_name_holding_a_unicode_line_separator_is_one_line(repos, separator, escaped):
    name = f"refs/heads/a{separator}b"
    assert subprocess.run(["git", "check-ref-format", name]).returncode == 0
    shown = f"refs/heads/a{escaped}b"
    honest = commit(repos.client, {"src/app.py": "print('v2')\n"}, "honest")
    p = push(repos.client, f"HEAD:{name}", env=BOB)
    accepted(p)
    assert p.guard == ["oracle-guard: push accepted: 1 judged ref passed"], p.stderr
    assert repos.tip(name) == honest
    # the same ref with an oracle edit: rejected, and named escaped
    commit(repos.client, {SEEDS: [1, 9]}, "rewrite a seed")
    p = push(repos.client, f"HEAD:{name}", env=BOB)
    rejected(p, f"{shown}: {SEEDS}: write-denied", f"{shown}: {SEEDS}: seed-rewritten")
    assert not [line for line in p.guard if separator in line], p.stderr
    assert repos.tip(name) == honest


# -- objects that are not commits --------------------------------------------------------------------
def test_a_blob_or_tree_on_an_unprotected_ref_does_not_reject_the_push(repos):
    (repos.client / "loose.txt").write_text("not a commit\n")
    blob = git(repos.client, "hash-object", "-w", "loose.txt").strip()
    (repos.client / "loose.txt").unlink()
    new = commit(repos.client, {"src/app.py": "print('v2')\n"}, "honest")
    tree = git(repos.client, "rev-parse", "HEAD^{tree}").strip()
    p = push(repos.client, "main", f"{blob}:refs/scratch/blob", f"{tree}:refs/notes/x", env=BOB)
    accepted(p)
    assert p.guard == ["oracle-guard: push accepted: 1 judged ref passed"], p.stderr
    assert repos.tip() == new
    assert repos.tip("refs/scratch/blob") == blob
    assert repos.tip("refs/notes/x") == tree
    # moving and deleting them is not judged either
    p = push(repos.client, "--force", f"{tree}:refs/scratch/blob", ":refs/notes/x", env=BOB)
    accepted(p)
    assert p.guard == [], p.stderr
    assert repos.tip("refs/scratch/blob") == tree and repos.tip("refs/notes/x") is None


def test_a_blob_on_an_unprotected_ref_before_the_first_contract(tmp_path):
    # the default branch has no contract yet: the old tip of a moved ref is read
    # for one, and a blob there is no commit to read it from
    server = make_server(tmp_path / "srv.git")
    client = make_client(tmp_path / "work", server)
    commit(client, {"src/app.py": "v1\n"}, "no contract yet")
    accepted(push(client, "main", env=BOB))
    blobs = []
    for name in ("a.txt", "b.txt"):
        (client / name).write_text(f"{name}\n")
        blobs.append(git(client, "hash-object", "-w", name).strip())
    for refspec in (
        f"{blobs[0]}:refs/scratch/blob",
        f"{blobs[1]}:refs/scratch/blob",
        ":refs/scratch/blob",
    ):
        p = push(client, "--force", refspec, env=BOB)
        accepted(p)
        assert p.guard == [], p.stderr
    assert rev(server, "refs/scratch/blob") is None
    # near miss: a tag is protected by default, with or without a contract
    p = push(client, f"{blobs[0]}:refs/tags/x", env=BOB)
    assert p.rc != 0
    assert p.guard == [
        f"oracle-guard: push rejected: refs/tags/x: {blobs[0][:12]} does not point to a commit"
    ], p.stderr


def test_a_blob_on_a_protected_tag_rejects_the_push_with_one_line(repos):
    old = repos.tip()
    (repos.client / "loose.txt").write_text("not a commit\n")
    blob = git(repos.client, "hash-object", "-w", "loose.txt").strip()
    (repos.client / "loose.txt").unlink()
    commit(repos.client, {"src/app.py": "print('v2')\n"}, "honest")
    p = push(repos.client, "main", f"{blob}:refs/tags/x", env=BOB)
    assert p.rc != 0 and "pre-receive hook declined" in p.stderr, p.stderr
    assert p.guard == [
        f"oracle-guard: push rejected: refs/tags/x: {blob[:12]} does not point to a commit"
    ], p.stderr
    assert repos.tip("refs/tags/x") is None
    assert repos.tip() == old


# -- object id length ---------------------------------------------------------------------------------
@pytest.fixture
def sha256_server(tmp_path) -> Repos:
    server = make_server(tmp_path / "srv.git", object_format="sha256")
    client = make_client(tmp_path / "work", server, object_format="sha256")
    commit(client, BASE_FILES, "oracle")
    accepted(push(client, "main", env=BOB))
    return Repos(client, server)


def _one_protocol_line(proc, digits: int) -> None:
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.decode()
    assert err.count("\n") == 1, err
    assert err.startswith(
        "oracle-guard: push rejected: stdin line 1 is not '<old-oid> "
        f"<new-oid> <ref>' with {digits}-digit ids: "
    ), err


@pytest.mark.parametrize(
    "line",
    [
        ("0" * 40, "1" * 40, "refs/heads/main"),
        ("0" * 40, "TIP", "refs/heads/feature"),
        ("TIP", "TIP40", "refs/heads/main"),
    ],
    ids=["sha1-ids", "forty-zeros", "truncated-new"],
)
def test_a_sha256_repository_requires_64_digit_ids(sha256_server, line):
    tip = sha256_server.tip()
    assert len(tip) == 64
    words = [tip if w == "TIP" else tip[:40] if w == "TIP40" else w for w in line]
    proc = run_pre_receive(sha256_server.server, updates(words))
    _one_protocol_line(proc, 64)


def test_a_sha256_repository_parses_64_digit_ids(sha256_server):
    tip = sha256_server.tip()
    proc = run_pre_receive(
        sha256_server.server,
        updates((tip, tip, "refs/heads/main"), ("0" * 64, tip, "refs/heads/feature")),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.decode() == "oracle-guard: push accepted: 2 judged refs passed\n"


def test_a_sha1_repository_requires_40_digit_ids(repos):
    tip = repos.tip()
    _one_protocol_line(
        run_pre_receive(repos.server, updates(("0" * 64, "1" * 64, "refs/heads/main"))), 40
    )
    _one_protocol_line(
        run_pre_receive(repos.server, updates((tip, tip + "0" * 24, "refs/heads/main"))), 40
    )
    # near miss: the same line with 40-digit ids
    proc = run_pre_receive(
        repos.server, updates((tip, tip, "refs/heads/main"), (ZERO, tip, "refs/heads/feature"))
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.decode() == "oracle-guard: push accepted: 2 judged refs passed\n"


# -- grafts on the server ----------------------------------------------------------------------------
def _grafts(server: Path, *lines: str) -> None:
    (server / "info").mkdir(exist_ok=True)
    (server / "info" / "grafts").write_text("".join(line + "\n" for line in lines))


def _honoured(server: Path, *args: str, env=None) -> str:
    """What plain git (grafts honoured) answers in the server."""
    return subprocess.run(
        ["git", "-C", str(server), *args],
        env=env,
        check=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ).stdout.decode()


def test_info_grafts_that_rewrite_the_pushed_commits_parent_change_no_verdict(repos):
    old = repos.tip()
    # a seeds-only commit lands on an unprotected ref, where nothing is judged
    git(repos.client, "checkout", "-q", "-b", "scratch")
    seeds_only = commit(repos.client, {SEEDS: [1, 2, 3]}, "append a seed")
    accepted(push(repos.client, "scratch:refs/scratch/s", env=BOB))
    git(repos.client, "checkout", "-q", "main")
    mixed = commit(repos.client, {SEEDS: [1, 2, 3], "src/app.py": "print('v2')\n"}, "both")
    # the grafts give the owner's mixed commit that seeds-only parent: it would
    # then change src/ alone
    _grafts(repos.server, f"{mixed} {seeds_only}")
    p = push(repos.client, "main", env=ALICE)
    rejected(p, f"{MAIN}: {SEEDS}: contract-mixed-commit")
    assert p.findings() == [f"{MAIN}: {SEEDS}: contract-mixed-commit"], p.stderr
    assert repos.tip() == old
    # the graft was live: plain git on the server sees the rewritten parent
    accepted(push(repos.client, "main:refs/scratch/mixed", env=BOB))
    assert _honoured(repos.server, "rev-list", "--parents", "-1", mixed).split() == [
        mixed,
        seeds_only,
    ]
    # near miss: with the grafts still there, the owner's split commits pass
    git(repos.client, "reset", "-q", "--hard", old)
    commit(repos.client, {SEEDS: [1, 2, 3]}, "append a seed")
    new = commit(repos.client, {"src/app.py": "print('v2')\n"}, "src")
    accepted(push(repos.client, "main", env=ALICE))
    assert repos.tip() == new


def _seed_rewrite_cut_before_main_moved(repos: Repos):
    """A branch cut at main's tip, main moved on (pushed), and a seed rewrite on
    the branch (not pushed): (cut, main's tip, the rewrite). A graft that gives
    main's tip the rewrite as its parent makes no cycle."""
    cut = repos.tip()
    git(repos.client, "branch", "-f", "feature")
    main_tip = commit(repos.client, {"src/app.py": "print('v2')\n"}, "main moves on")
    accepted(push(repos.client, "main", env=BOB))
    git(repos.client, "checkout", "-q", "feature")
    bad = commit(repos.client, {SEEDS: [1, 9]}, "rewrite a seed")
    return cut, main_tip, bad


def test_info_grafts_do_not_move_a_new_branchs_merge_base(repos):
    cut, main_tip, bad = _seed_rewrite_cut_before_main_moved(repos)
    # the grafts say main's tip descends from the new commit: its merge-base with
    # main would be itself, and the branch would change nothing
    _grafts(repos.server, f"{main_tip} {bad}")
    p = push(repos.client, "feature", env=BOB)
    rejected(
        p,
        f"refs/heads/feature: {SEEDS}: write-denied",
        f"refs/heads/feature: {SEEDS}: seed-rewritten",
    )
    assert repos.tip("refs/heads/feature") is None
    accepted(push(repos.client, "feature:refs/scratch/bad", env=BOB))
    assert _honoured(repos.server, "merge-base", "main", bad).strip() == bad
    # near miss: an honest new branch passes with the grafts there
    git(repos.client, "reset", "-q", "--hard", cut)
    honest = commit(repos.client, {"src/app.py": "print('feature')\n"}, "honest")
    accepted(push(repos.client, "feature", env=BOB))
    assert repos.tip("refs/heads/feature") == honest


def test_info_grafts_do_not_make_a_branch_update_look_taken_from_main(repos):
    git(repos.client, "branch", "feature")
    accepted(push(repos.client, "feature", env=BOB))  # the update's old tip
    cut, main_tip, bad = _seed_rewrite_cut_before_main_moved(repos)
    # the grafts put the pushed commit under main's tip: all of it would look
    # like what the branch took from the default branch
    _grafts(repos.server, f"{main_tip} {bad}")
    p = push(repos.client, "feature", env=BOB)
    rejected(
        p,
        f"refs/heads/feature: {SEEDS}: write-denied",
        f"refs/heads/feature: {SEEDS}: seed-rewritten",
    )
    assert repos.tip("refs/heads/feature") == cut
    assert repos.tip() == main_tip


def test_git_graft_file_in_the_hooks_environment_changes_nothing(repos, tmp_path):
    cut, main_tip, bad = _seed_rewrite_cut_before_main_moved(repos)
    accepted(push(repos.client, "feature:refs/scratch/x", env=BOB))  # not judged: objects land
    grafts = tmp_path / "grafts"
    grafts.write_text(f"{main_tip} {bad}\n")
    env = push_env(GL_USERNAME="bob", GIT_GRAFT_FILE=str(grafts))
    assert _honoured(repos.server, "merge-base", "main", bad, env=env).strip() == bad
    proc = run_pre_receive(repos.server, updates((ZERO, bad, "refs/heads/feature")), env=env)
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr.decode()
    assert f"oracle-guard: refs/heads/feature ({bad[:12]}): {SEEDS}: write-denied: " in err, err
    assert f"oracle-guard: refs/heads/feature ({bad[:12]}): {SEEDS}:3: seed-rewritten: " in err, err
    # near miss: the same environment, main's own tip
    proc = run_pre_receive(repos.server, updates((main_tip, main_tip, MAIN)), env=env)
    assert proc.returncode == 0, proc.stderr


# -- a new protected ref at an older commit of the default branch -----------------------
def _rewrite_then_undo(repos) -> str:
    """Two commits on main, a seed rewrite and its undoing, pushed by an owner
    (for anyone else it is oracle-edit-undone): the rewrite is in main's history.
    Returns the rewriting commit."""
    middle = commit(repos.client, {SEEDS: [1, 9]}, "rewrite a seed")
    commit(repos.client, {SEEDS: [1, 2]}, "undo it")
    accepted(push(repos.client, "main", env=ALICE))
    return middle


def test_an_oracle_edit_a_later_pushed_commit_undoes_is_rejected(repos):
    old = repos.tip()
    middle = commit(repos.client, {SEEDS: [1, 9]}, "rewrite a seed")
    commit(repos.client, {SEEDS: [1, 2]}, "undo it")
    p = push(repos.client, "main", env=BOB)
    rejected(p, f"{MAIN}: {SEEDS}: oracle-edit-undone")
    assert (
        f"oracle-guard: {MAIN} ({middle[:12]}): {SEEDS}: oracle-edit-undone: commit "
        f"{middle[:12]} changes protected '{SEEDS}' and a later commit undoes it"
    ) in "\n".join(p.guard)
    assert repos.tip() == old
    # the near miss: the same tree with the edit dropped from the history
    git(repos.client, "reset", "-q", "--hard", old)
    commit(repos.client, {"src/app.py": "print('v2')\n"}, "honest")
    accepted(push(repos.client, "main", env=BOB))


@pytest.mark.parametrize("ref", ["refs/tags/v1", "refs/heads/release"])
def test_a_new_protected_ref_at_an_older_commit_of_main_is_an_owners(repos, ref):
    middle = _rewrite_then_undo(repos)
    p = push(repos.client, f"{middle}:{ref}", env=BOB)
    rejected(p, f"{ref}: -: ref-at-old-commit")
    assert (
        f"oracle-guard: {ref} ({middle[:12]}): ref-at-old-commit: {middle[:12]} is an "
        "older commit of refs/heads/main; its tree was never judged on its own"
    ) in p.guard
    assert repos.tip(ref) is None
    accepted(push(repos.client, f"{middle}:{ref}", env=ALICE))  # an owner may


def test_a_new_ref_at_mains_tip_or_on_new_commits_is_judged_as_usual(repos):
    _rewrite_then_undo(repos)
    accepted(push(repos.client, "main:refs/tags/v2", env=BOB))  # the tip: its tree was judged
    commit(repos.client, {"src/app.py": "print('v3')\n"}, "new work")
    accepted(push(repos.client, "HEAD:refs/heads/topic", env=BOB))  # new commits: judged


# -- every check's finding undone later in the same push -----------------------------
TESTS_FILE = "tests/test_app.py"
TESTS_TEXT = "def test_app():\n    assert True\n"
SKIPPED = "import pytest\n\n\n@pytest.mark.skip(reason='flaky')\n" + TESTS_TEXT


def _with_tamper(repos) -> str:
    set_contract(
        repos,
        contract(tamper={"paths": ["tests/**"]}).replace(
            '"src/**", "docs/**"', '"src/**", "docs/**", "tests/**"'
        ),
    )
    commit(repos.client, {TESTS_FILE: TESTS_TEXT}, "the owners' test")
    accepted(push(repos.client, "main", env=ALICE))
    return repos.tip()


def _pre_push(repos, old: str):
    from testing.scenarios import guard

    return guard(
        repos.client,
        env={
            "PRE_COMMIT_FROM_REF": old,
            "PRE_COMMIT_TO_REF": "HEAD",
            "PRE_COMMIT_REMOTE_NAME": "origin",
            "PRE_COMMIT_REMOTE_BRANCH": MAIN,
        },
    )


def test_a_skip_a_later_pushed_commit_removes_is_rejected(repos):
    """A test-tamper finding, not an oracle file: the push's first commit skips the
    owners' test and the second unskips it. Pre-push and the server both judge
    each commit of the push as a change from where it starts."""
    old = _with_tamper(repos)
    skipping = commit(repos.client, {TESTS_FILE: SKIPPED}, "skip")
    commit(repos.client, {TESTS_FILE: TESTS_TEXT}, "unskip")
    assert f"{TESTS_FILE}: oracle-edit-undone" in _pre_push(repos, old).codes
    p = push(repos.client, "main", env=BOB)
    rejected(p, f"{MAIN}: {TESTS_FILE}: oracle-edit-undone")
    assert any(
        line.startswith(
            f"oracle-guard: {MAIN} ({skipping[:12]}): {TESTS_FILE}:4: oracle-edit-undone: "
            f"commit {skipping[:12]} is skip-added ("
        )
        for line in p.guard
    ), p.stderr
    assert repos.tip() == old
    # near miss: a test added and dropped again tampers with nothing
    git(repos.client, "reset", "-q", "--hard", old)
    commit(repos.client, {TESTS_FILE: TESTS_TEXT + "\n\ndef test_more():\n    pass\n"}, "more")
    commit(repos.client, {TESTS_FILE: TESTS_TEXT}, "less")
    assert _pre_push(repos, old).verdict == "pass"
    accepted(push(repos.client, "main", env=BOB))


def test_an_owners_push_of_a_skip_and_its_removal_is_accepted(repos):
    """An owner by variable: the rules of the push are the owner's, as for oracle files."""
    old = _with_tamper(repos)
    commit(repos.client, {TESTS_FILE: SKIPPED}, "skip")
    commit(repos.client, {TESTS_FILE: TESTS_TEXT}, "unskip")
    accepted(push(repos.client, "main", env=ALICE))
    assert repos.tip() != old
