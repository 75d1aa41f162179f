"""An agent (bob, not an owner) attacks the real hosts of tests/hosts/, each set up
as docs/how-to/server-*.md say (and as the other host tests set them up, with
sshd's `AcceptEnv *`): plain ssh with one shared git-shell account, gitolite3,
and git http-backend behind lighttpd. bob tries to get an oracle change in, to
become an owner, or to switch the gate off.

A test whose docstring starts with "HOLE:" asserts the secure behaviour and
fails while the hole is open; every other test shows the gate holding.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import struct
import subprocess
import time
from pathlib import Path
from typing import Optional, Sequence

import pytest

from testing import hosts as shared
from testing.git import clean_environment, commit, git, init_repo
from testing.hosts import (
    GITOLITE_CONF,
    SEEDS,
    SIGNERS,
    SharedSshHost,
    Site,
    Templates,
    authorize,
    client_env,
    doctor_verdict,
    gitolite_host,
    gone,
    keygen,
    last_line,
    public,
    sshd,
    system_account,
    world_base,
)
from testing.server import Push

# real accounts and servers (testing/prerequisites.py)
pytestmark = pytest.mark.needs("root", "servers")

numbers = itertools.count()


def server_blob(site: Site, spec: str) -> Optional[str]:
    proc = site.server_git("cat-file", "-p", spec)
    return proc.stdout if proc.returncode == 0 else None


def assert_main_unchanged(site: Site, before: str, pushed: Push) -> None:
    assert site.rev("refs/heads/main") == before, pushed.stderr
    assert server_blob(site, f"refs/heads/main:{SEEDS}") == "[1, 2]\n", pushed.stderr


# ======================================================================================
# plain ssh, one shared account (git-shell, a restricted key per person naming them)
# ======================================================================================
class SshHost(SharedSshHost):
    def create(self, name):
        """docs/how-to/server-ssh.md, steps 4 and 5: the repository, then the hook."""
        repo = super().create(name)
        installed = self.install(repo)
        assert installed.returncode == 0, installed.stdout + installed.stderr
        return repo


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    folder = tmp_path_factory.mktemp("attack-keys")
    return {name: keygen(folder, name) for name in ("alice", "bob")}


@pytest.fixture(scope="module")
def ssh_host(hosts_base, hook_python, keys):
    """docs/how-to/server-ssh.md's recipe: git-shell, `restrict,environment="REMOTE_USER=NAME"`
    on every key, `PermitUserEnvironment REMOTE_USER`, and an AcceptEnv that takes
    the locale and git's protocol only (testing.hosts.ACCEPT_ENV): a setup doctor calls
    guarded. What a wider AcceptEnv lets through is star_host's."""
    with (
        clean_environment(),
        system_account("oga", shell="/usr/bin/git-shell", base=hosts_base) as account,
    ):
        authorize(
            account,
            [
                f'restrict,environment="REMOTE_USER={name}" {public(key)}'
                for name, key in keys.items()
            ],
        )
        with sshd(hosts_base / f"sshd-{account.name}", [account.name]) as server:
            yield SshHost(account, server, keys, hook_python)
            pid = server.process.pid
    assert gone(pid)


@pytest.fixture(scope="module")
def ssh_seeded(ssh_host, tmp_path_factory):
    """One guarded repository, alice's first contract in (judged by the hook),
    copied for each attack."""

    def make(_):
        ssh_host.create("seeded")
        site = ssh_host.site("seeded", tmp_path_factory.mktemp("ssh-seeded"))
        site.seed("REMOTE_USER")
        return site

    return Templates(make)


@pytest.fixture
def ssh_site(ssh_host, ssh_seeded, tmp_path):
    """A fresh guarded repository as it stands after alice's first contract; doctor
    says guarded before the attack (so the attack is against a setup the tool calls
    sound)."""
    name = f"a{next(numbers)}"
    fresh = ssh_host.site(name, tmp_path)
    site = ssh_seeded.site("ssh", fresh.repo, fresh.client, fresh.remote, fresh.server_git)
    repo = site.repo
    proc = ssh_host.doctor(repo)
    assert proc.returncode == 0 and last_line(proc.stdout) == f"guarded: {repo}", proc.stdout
    return site


# -- the client's environment through sshd's AcceptEnv ---------------------------------
def test_ssh_setenv_git_config_count_cannot_switch_the_hook_off(ssh_site):
    """bob sends GIT_CONFIG_COUNT/KEY/VALUE naming core.hooksPath with SetEnv; under
    `AcceptEnv *` git-shell would hand them to git-receive-pack and no hook would
    run (test_accept_env_star_is_a_door_doctor_names); under the AcceptEnv of
    docs/how-to/server-ssh.md they never arrive."""
    before = ssh_site.rev("refs/heads/main")
    ssh_site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    pushed = ssh_site.push(
        "bob",
        "HEAD:refs/heads/main",
        ssh_options=[
            "SetEnv=GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath "
            "GIT_CONFIG_VALUE_0=/nonexistent"
        ],
    )
    assert pushed.rc != 0, pushed.stderr
    assert_main_unchanged(ssh_site, before, pushed)


def test_ssh_setenv_git_config_parameters_cannot_switch_the_hook_off(ssh_site):
    """The same with GIT_CONFIG_PARAMETERS="'core.hookspath'='/nonexistent'"."""
    before = ssh_site.rev("refs/heads/main")
    ssh_site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    pushed = ssh_site.push(
        "bob",
        "HEAD:refs/heads/main",
        ssh_options=["SetEnv=GIT_CONFIG_PARAMETERS=\"'core.hookspath'='/nonexistent'\""],
    )
    assert pushed.rc != 0, pushed.stderr
    assert_main_unchanged(ssh_site, before, pushed)


def test_ssh_setenv_config_gives_the_agent_no_command_on_the_git_account(
    ssh_host, ssh_site, tmp_path
):
    """git-shell gives bob no command on the account. Under `AcceptEnv *` SetEnv
    would set command-line config for git-upload-pack, whose
    uploadpack.packObjectsHook runs what he names as the account that owns the
    repository (core.hooksPath in its config: every later push unjudged); under
    the AcceptEnv of docs/how-to/server-ssh.md it never arrives."""
    marker = ssh_host.account.home / "pwned"
    evil = "git config core.hooksPath /nonexistent; touch " + str(marker) + "; "
    clone = tmp_path / "fetch"
    init_repo(clone)
    option = (
        f"SetEnv=GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=uploadpack.packObjectsHook "
        f'"GIT_CONFIG_VALUE_0={evil}"'
    )
    proc = subprocess.run(
        ["git", "-C", str(clone), "fetch", "-q", ssh_site.remote, "main"],
        env=client_env(ssh_host.sshd.ssh_command(ssh_host.keys["bob"], option)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    hooks_path = ssh_site.server_git("config", "core.hooksPath").stdout.strip()
    before = ssh_site.rev("refs/heads/main")
    ssh_site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    pushed = ssh_site.push("bob", "HEAD:refs/heads/main")
    assert not marker.exists(), proc.stderr
    assert hooks_path == "", proc.stderr
    assert pushed.rc != 0, pushed.stderr
    assert_main_unchanged(ssh_site, before, pushed)


def test_ssh_setenv_oracle_guard_now_cannot_move_the_hooks_clock(ssh_host, tmp_path):
    """A quarantine entry that has expired rejects every push until an owner renews
    it; bob's SetEnv ORACLE_GUARD_NOW=<past> turns no clock back: sshd does not take
    it, and a hook installed with --host reads the server's clock whatever its
    environment says (tests/e2e/identity_test.py shows the second on its own)."""
    name = f"a{next(numbers)}"
    ssh_host.create(name)
    site = ssh_host.site(name, tmp_path)
    init_repo(site.client)
    git(site.client, "remote", "add", "origin", site.remote)
    ends = time.time() + 15  # the first push must land before it expires, on a loaded machine too
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ends))
    contract = shared.host_contract("REMOTE_USER") + (
        'freeze:\n  - {paths: ["/flake_budget.yaml"], schema: flake-budget}\n'
        "budget:\n  max_frozen: 3\n"
    )
    site.commit(
        {
            ".oracle-guard.yaml": contract,
            SIGNERS: f"alice {public(site.keys['alice'])}\n",
            SEEDS: "[1, 2]\n",
            "src/app.py": "v1\n",
            "flake_budget.yaml": "max_frozen: 3\nfrozen:\n"
            f"  - {{id: t1, owner: alice, expires: '{stamp}', "
            "reason: flaky}\n",
        },
        "the oracle",
    )
    first = site.push("alice", "main")
    assert first.rc == 0, first.stderr
    while time.time() < ends + 1:
        time.sleep(0.2)
    site.commit({"src/app.py": "v2\n"}, "code")
    honest = site.push("bob", "HEAD:refs/heads/main")
    assert honest.rc != 0 and "budget-expired" in honest.stderr, honest.stderr  # the near-miss
    before = site.rev("refs/heads/main")
    pushed = site.push(
        "bob", "HEAD:refs/heads/main", ssh_options=["SetEnv=ORACLE_GUARD_NOW=2026-01-01"]
    )
    assert pushed.rc != 0 and "budget-expired" in pushed.stderr, pushed.stderr
    assert site.rev("refs/heads/main") == before


def test_ssh_setenv_of_every_identity_variable_at_once_names_nobody(ssh_site):
    ssh_site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    every = " ".join(f"{v}=alice" for v in shared.IDENTITY_VARIABLES)
    shared.spoof_rejected(
        ssh_site,
        ssh_site.push(
            "bob",
            "HEAD:refs/heads/main",
            ssh_options=[
                f"SetEnv={every} GIT_PUSH_OPTION_COUNT=1 GIT_PUSH_OPTION_0=REMOTE_USER=alice"
            ],
        ),
    )


def test_ssh_upload_pack_and_receive_pack_options_give_no_shell(ssh_site):
    """git-shell refuses anything but its commands: a --receive-pack wrapper or an
    --upload-pack wrapper that sets the pusher fails, main does not move."""
    before = ssh_site.rev("refs/heads/main")
    ssh_site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    for wrapper in (
        "env REMOTE_USER=alice git-receive-pack",
        "git-receive-pack --help;",
        "sh -c 'REMOTE_USER=alice git-receive-pack \"$@\"' x",
    ):
        pushed = ssh_site.push("bob", f"--receive-pack={wrapper}", "HEAD:refs/heads/main")
        assert pushed.rc != 0, pushed.stderr
    proc = subprocess.run(
        [
            "git",
            "ls-remote",
            "--upload-pack=env REMOTE_USER=alice git-upload-pack",
            ssh_site.remote,
        ],
        env=ssh_site.env_for("bob"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert ssh_site.rev("refs/heads/main") == before


# -- refs --------------------------------------------------------------------------
def test_case_variants_of_main_are_judged_as_new_branches(ssh_site):
    before = ssh_site.rev("refs/heads/main")
    ssh_site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    for ref in (
        "refs/heads/MAIN",
        "refs/heads/Main",
        "refs/tags/main",
        "refs/heads/main.",
        "refs/heads/scratch/../main",
    ):
        pushed = ssh_site.push("bob", f"HEAD:{ref}")
        assert pushed.rc != 0, (ref, pushed.stderr)
        if ".." not in ref and not ref.endswith("."):
            assert "seed-rewritten" in pushed.stderr, (ref, pushed.stderr)
        assert ssh_site.rev(ref) is None
    assert ssh_site.rev("refs/heads/main") == before


def test_replace_ref_for_mains_tip_is_rejected_and_case_variants_replace_nothing(ssh_site):
    """A replace ref would make the server show bob's tree for main's commit."""
    main = ssh_site.rev("refs/heads/main")
    git(ssh_site.client, "checkout", "-q", "--detach")
    ssh_site.commit({SEEDS: "[1, 9]\n"}, "fake")
    fake = git(ssh_site.client, "rev-parse", "HEAD").strip()
    pushed = ssh_site.push("bob", f"{fake}:refs/replace/{main}")
    assert pushed.rc != 0 and "replace-ref" in pushed.stderr, pushed.stderr
    assert ssh_site.rev(f"refs/replace/{main}") is None
    for ref in (f"refs/REPLACE/{main}", f"refs/Replace/{main}", f"refs/heads/replace/{main}"):
        ssh_site.push("bob", f"{fake}:{ref}")  # accepted or not: it replaces nothing
    assert server_blob(ssh_site, f"{main}:{SEEDS}") == "[1, 2]\n"
    assert server_blob(ssh_site, f"refs/heads/main:{SEEDS}") == "[1, 2]\n"


def test_tags_pointing_at_trees_blobs_and_tag_chains_are_judged(ssh_site):
    before = ssh_site.rev("refs/heads/main")
    ssh_site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    bad = git(ssh_site.client, "rev-parse", "HEAD").strip()
    tree = git(ssh_site.client, "rev-parse", "HEAD^{tree}").strip()
    blob = git(ssh_site.client, "rev-parse", f"HEAD:{SEEDS}").strip()
    git(ssh_site.client, "tag", "-a", "-m", "inner", "inner", bad)
    git(ssh_site.client, "tag", "-a", "-m", "outer", "outer", "inner")
    git(ssh_site.client, "tag", "-a", "-m", "tree", "treetag", tree)
    for spec in (
        f"{tree}:refs/tags/t-tree",
        f"{blob}:refs/tags/t-blob",
        "refs/tags/treetag:refs/tags/treetag",
        "refs/tags/outer:refs/tags/outer",
        f"{bad}:refs/tags/light",
    ):
        pushed = ssh_site.push("bob", spec)
        assert pushed.rc != 0, (spec, pushed.stderr)
        assert ssh_site.rev(spec.split(":")[1]) is None
    assert ssh_site.rev("refs/heads/main") == before


def test_unprotected_refs_take_anything_and_change_nothing_the_server_shows(ssh_site):
    """docs/how-to/server-install.md: refs outside protected_refs are not judged; notes and a blob on a
    scratch namespace do not change main's seeds."""
    git(ssh_site.client, "notes", "add", "-m", "seeds are [9]", "HEAD")
    ssh_site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    blob = git(ssh_site.client, "rev-parse", f"HEAD:{SEEDS}").strip()
    pushed = ssh_site.push(
        "bob",
        "refs/notes/commits:refs/notes/commits",
        f"{blob}:refs/scratch/blob",
        "HEAD:refs/other/main",
    )
    assert pushed.rc == 0, pushed.stderr
    assert server_blob(ssh_site, f"refs/heads/main:{SEEDS}") == "[1, 2]\n"


@pytest.mark.parametrize("atomic", ["--atomic", "--no-atomic"])
def test_one_good_ref_and_one_bad_ref_reject_the_whole_push(ssh_site, atomic):
    before = ssh_site.rev("refs/heads/main")
    ssh_site.commit({"src/app.py": "v2\n"}, "code")
    good = git(ssh_site.client, "rev-parse", "HEAD").strip()
    ssh_site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    pushed = ssh_site.push("bob", atomic, f"{good}:refs/heads/feature", "HEAD:refs/heads/main")
    assert pushed.rc != 0, pushed.stderr
    assert ssh_site.rev("refs/heads/feature") is None, pushed.stderr
    assert_main_unchanged(ssh_site, before, pushed)
    # the bad ref first, the good one last, and a deletion of a deletable ref
    pushed = ssh_site.push(
        "bob", atomic, "HEAD:refs/heads/main", ":refs/heads/scratch/x", f"{good}:refs/heads/feature"
    )
    assert pushed.rc != 0, pushed.stderr
    assert ssh_site.rev("refs/heads/feature") is None and ssh_site.rev("refs/heads/scratch/x")
    assert_main_unchanged(ssh_site, before, pushed)


def test_many_refs_with_one_bad_one_are_all_rejected(ssh_site):
    before = ssh_site.rev("refs/heads/main")
    ssh_site.commit({"src/app.py": "v2\n"}, "code")
    good = git(ssh_site.client, "rev-parse", "HEAD").strip()
    ssh_site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    specs = [f"{good}:refs/heads/f{i}" for i in range(60)] + ["HEAD:refs/heads/f60"]
    pushed = ssh_site.push("bob", "--no-atomic", *specs)
    assert pushed.rc != 0, pushed.stderr
    assert "refs/heads/f60" in pushed.stderr and "seed-rewritten" in pushed.stderr
    assert ssh_site.rev("refs/heads/f0") is None and ssh_site.rev("refs/heads/f60") is None
    assert ssh_site.rev("refs/heads/main") == before


def test_deleting_main_and_recreating_it_elsewhere_is_rejected(ssh_site):
    before = ssh_site.rev("refs/heads/main")
    ssh_site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    pushed = ssh_site.push("bob", ":refs/heads/main", "HEAD:refs/heads/main2")
    assert pushed.rc != 0 and "ref-deleted" in pushed.stderr, pushed.stderr
    assert ssh_site.rev("refs/heads/main2") is None
    assert ssh_site.rev("refs/heads/main") == before


def test_force_push_back_to_before_an_owners_seed_append_is_rejected(ssh_site):
    ssh_site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    assert ssh_site.push("alice", "HEAD:refs/heads/main").rc == 0
    appended = ssh_site.rev("refs/heads/main")
    pushed = ssh_site.push("bob", "+HEAD~1:refs/heads/main")
    assert pushed.rc != 0 and "seed-removed" in pushed.stderr, pushed.stderr
    assert ssh_site.rev("refs/heads/main") == appended


@pytest.mark.parametrize("ref", ["refs/tags/v1", "refs/heads/release"])
def test_a_rewrite_undone_in_the_next_commit_gives_no_protected_ref_at_it(ssh_site, ref):
    """bob pushes two commits to main: one rewrites seeds/a.json, the next undoes
    it. Net, main's seeds do not change, and an edit a later commit of the range
    undoes passes (what is recorded is the tip). The rewriting commit is in main's
    history then, and a new ref there is compared with its merge-base, itself: so
    a non-owner may not create one there (ref-at-old-commit)."""
    before = ssh_site.rev("refs/heads/main")
    ssh_site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    middle = git(ssh_site.client, "rev-parse", "HEAD").strip()
    ssh_site.commit({SEEDS: "[1, 2]\n"}, "and undo it")
    pushed = ssh_site.push("bob", "HEAD:refs/heads/main")
    tagged = ssh_site.push("bob", f"{middle}:{ref}")
    assert pushed.rc != 0 or tagged.rc != 0, pushed.stderr + tagged.stderr
    assert pushed.rc == 0 or ssh_site.rev("refs/heads/main") == before
    assert server_blob(ssh_site, f"{ref}:{SEEDS}") in (None, "[1, 2]\n"), tagged.stderr


def test_an_orphan_branch_with_other_seeds_is_rejected(ssh_site):
    git(ssh_site.client, "checkout", "-q", "--orphan", "evil")
    git(ssh_site.client, "rm", "-q", "-rf", ".")
    ssh_site.commit(
        {".oracle-guard.yaml": "version: 1\n", SEEDS: "[9]\n", "src/app.py": "x\n"}, "my own oracle"
    )
    pushed = ssh_site.push("bob", "HEAD:refs/heads/evil")
    assert pushed.rc != 0 and "write-denied" in pushed.stderr, pushed.stderr
    assert ssh_site.rev("refs/heads/evil") is None


def test_a_push_from_a_shallow_clone_is_judged(ssh_site, tmp_path):
    for _ in range(3):
        ssh_site.commit({"src/app.py": f"v{_}\n"}, "code")
    assert ssh_site.push("bob", "HEAD:refs/heads/main").rc == 0
    before = ssh_site.rev("refs/heads/main")
    shallow = tmp_path / "shallow"
    proc = subprocess.run(
        ["git", "clone", "-q", "--depth", "1", ssh_site.remote, str(shallow)],
        env=ssh_site.env_for("bob"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    commit(shallow, {SEEDS: "[1, 9]\n"}, "rewrite from a shallow clone")
    for args in (["HEAD:refs/heads/main"], ["HEAD:refs/heads/shallow-new"]):
        p = subprocess.run(
            ["git", "-C", str(shallow), "push", "origin", *args],
            env=ssh_site.env_for("bob"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
        assert p.returncode != 0, p.stderr
    assert ssh_site.rev("refs/heads/main") == before
    assert ssh_site.rev("refs/heads/shallow-new") is None
    assert not (ssh_site.repo / "shallow").exists()


# -- git's protocol by hand: what a client can claim -----------------------------------
def pkt(data: bytes) -> bytes:
    return b"%04x" % (len(data) + 4) + data


def empty_pack() -> bytes:
    body = b"PACK" + struct.pack(">II", 2, 0)
    return body + hashlib.sha1(body).digest()


def raw_receive_pack(argv: Sequence[str], commands: Sequence[str], pack: bytes) -> str:
    """Speak receive-pack by hand over ``argv`` (ssh ... git-receive-pack 'R'): read
    the advertisement, send ``commands`` ('old new ref') with report-status, then
    ``pack``; returns everything the server said."""
    proc = subprocess.Popen(
        list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        out = b""
        while not out.endswith(b"0000"):  # the advertisement ends with a flush packet
            chunk = proc.stdout.read1(65536)
            if not chunk:
                break
            out += chunk
        lines = b""
        for i, command in enumerate(commands):
            line = command.encode("utf-8", "surrogateescape")
            if i == 0:
                line += b"\0report-status side-band-64k"
            lines += pkt(line + b"\n")
        stdout, stderr = proc.communicate(lines + b"0000" + pack, timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return (stdout + stderr).decode("utf-8", "replace")


def pack_of(client: Path, new: str, *exclude: str) -> bytes:
    revs = "\n".join([new] + [f"^{e}" for e in exclude]) + "\n"
    return subprocess.run(
        ["git", "-C", str(client), "pack-objects", "--revs", "--stdout", "-q"],
        input=revs.encode(),
        stdout=subprocess.PIPE,
        check=True,
    ).stdout


def test_a_lying_old_id_is_caught_by_gits_own_compare_and_swap(ssh_host, ssh_site):
    """bob claims main's old tip is his own commit with rewritten seeds, so the hook's
    old-to-new difference is only a code change: the hook accepts, git's ref
    transaction (old value checked under the lock) refuses, main does not move."""
    before = ssh_site.rev("refs/heads/main")
    ssh_site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    fake_old = git(ssh_site.client, "rev-parse", "HEAD").strip()
    ssh_site.commit({"src/app.py": "v2\n"}, "code on top")
    new = git(ssh_site.client, "rev-parse", "HEAD").strip()
    argv = ssh_host.sshd.argv(ssh_host.keys["bob"]) + [
        f"{ssh_host.account.name}@127.0.0.1",
        f"git-receive-pack '{ssh_site.repo.name}'",
    ]
    said = raw_receive_pack(
        argv, [f"{fake_old} {new} refs/heads/main"], pack_of(ssh_site.client, new, before)
    )
    assert ssh_site.rev("refs/heads/main") == before, said
    # the same lie for a create: 'main does not exist yet'
    said = raw_receive_pack(
        argv, [f"{'0' * 40} {new} refs/heads/main"], pack_of(ssh_site.client, new, before)
    )
    assert ssh_site.rev("refs/heads/main") == before, said


def test_duplicate_commands_and_objects_the_server_lacks_are_refused(ssh_host, ssh_site):
    before = ssh_site.rev("refs/heads/main")
    ssh_site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    bad = git(ssh_site.client, "rev-parse", "HEAD").strip()
    git(ssh_site.client, "reset", "-q", "--hard", "HEAD~1")
    ssh_site.commit({"src/app.py": "v2\n"}, "code")
    good = git(ssh_site.client, "rev-parse", "HEAD").strip()
    argv = ssh_host.sshd.argv(ssh_host.keys["bob"]) + [
        f"{ssh_host.account.name}@127.0.0.1",
        f"git-receive-pack '{ssh_site.repo.name}'",
    ]
    # main twice: the good update first, the bad one second
    said = raw_receive_pack(
        argv,
        [f"{before} {good} refs/heads/main", f"{before} {bad} refs/heads/main"],
        pack_of(ssh_site.client, f"{good}\n{bad}", before),
    )
    assert ssh_site.rev("refs/heads/main") == before, said
    # a commit id the pack does not carry
    said = raw_receive_pack(argv, [f"{before} {'1' * 40} refs/heads/main"], empty_pack())
    assert ssh_site.rev("refs/heads/main") == before, said


# ======================================================================================
# gitolite3 (common hook and repo-specific route), identity_env: GL_USER
# ======================================================================================


@pytest.fixture(scope="module")
def gitolite(hosts_base, hook_python, tmp_path_factory):
    """docs/how-to/server-gitolite.md's recipe: fsckObjects, install-pre-receive --host gitolite as
    the gitolite account, repo-specific-hooks on, a compile after install."""
    with (
        clean_environment(),
        gitolite_host(hosts_base, tmp_path_factory.mktemp("agl"), conf=GITOLITE_CONF) as host,
    ):
        host.edit_rc("# 'repo-specific-hooks',", "'repo-specific-hooks',")
        installed = host.run(
            hook_python,
            "-m",
            "oracle_guard",
            "install-pre-receive",
            host.repositories,
            "--host",
            "gitolite",
            check=False,
        )
        assert installed.returncode == 0, installed.stdout + installed.stderr
        host.configure(GITOLITE_CONF)
        yield host
        pid = host.sshd.process.pid
    assert gone(pid)


def gl_env(host, user, *options, **variables):
    return client_env(host.sshd.ssh_command(host.keys[user], *options), **variables)


def gl_site_for(host, name, client):
    repo = host.repo(name)
    return Site(
        client,
        host.url(name),
        repo,
        host.keys,
        lambda user, *o, **v: gl_env(host, user, *o, **v),
        lambda *a: host.run("git", "--git-dir", repo, *a, check=False),
    )


@pytest.fixture(scope="module")
def gl_seeded(gitolite, tmp_path_factory):
    """Per route, one wild repository gitolite created (HEAD set to main) and
    alice's first contract in (judged by the hook), copied for each attack."""
    host = gitolite

    def make(route):
        name = f"{route}/seeded"
        proc = subprocess.run(
            ["git", "ls-remote", host.url(name)],
            env=gl_env(host, "alice"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        host.run("git", "--git-dir", host.repo(name), "symbolic-ref", "HEAD", "refs/heads/main")
        site = gl_site_for(host, name, tmp_path_factory.mktemp(f"gl-seeded-{route}") / "work")
        site.seed("GL_USER")
        return site

    return Templates(make)


@pytest.fixture(params=["t", "rs"], ids=["common-hook", "repo-specific-hook"])
def gl_site(request, gitolite, gl_seeded, hook_python, tmp_path):
    host = gitolite
    name = f"{request.param}/a{next(numbers)}"
    fresh = gl_site_for(host, name, tmp_path / "work")
    site = gl_seeded.site(request.param, fresh.repo, fresh.client, fresh.remote, fresh.server_git)
    repo = site.repo
    site.name = name
    proc = subprocess.run(
        [
            str(hook_python),
            "-m",
            "oracle_guard",
            "doctor",
            str(repo),
            "--sshd-config",
            str(host.sshd.config),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",
        timeout=120,
    )
    assert proc.returncode == 0 and last_line(proc.stdout) == f"guarded: {repo}", proc.stdout
    return site


def test_gitolite_setenv_git_config_cannot_switch_every_hook_off(gitolite, gl_site):
    """gitolite-shell passes sshd's AcceptEnv variables on to git-receive-pack: under
    `AcceptEnv *`, GIT_CONFIG_COUNT naming core.hooksPath switches off every hook,
    gitolite's own update hook too (bob, RW, would force-push main). The AcceptEnv
    of docs/how-to/server-ssh.md takes none of git's variables."""
    before = gl_site.rev("refs/heads/main")
    gl_site.reset_to_root()
    git(gl_site.client, "reset", "-q", "--soft", "HEAD")
    git(gl_site.client, "commit", "-q", "--amend", "-m", "history rewritten")
    gl_site.commit({SEEDS: "[9]\n"}, "rewrite the seeds")
    pushed = gl_site.push(
        "bob",
        "+HEAD:refs/heads/main",
        ssh_options=[
            "SetEnv=GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath "
            "GIT_CONFIG_VALUE_0=/nonexistent"
        ],
    )
    assert pushed.rc != 0, pushed.stderr
    assert_main_unchanged(gl_site, before, pushed)


@pytest.mark.parametrize("gl_site", ["t"], indirect=True, ids=["common-hook"])
def test_gitolite_setenv_perl_variables_give_the_agent_no_command(gitolite, gl_site):
    """gitolite's forced command is a Perl script; PERL5OPT=-d with PERL5DB, sent
    by SetEnv under `AcceptEnv *`, would run bob's Perl as the gitolite account.
    The AcceptEnv of docs/how-to/server-ssh.md takes no PERL* variable."""
    marker = gitolite.account.home / "pwned-by-perl"
    option = 'SetEnv=PERL5OPT=-d "PERL5DB=BEGIN{open(F,q(>),q(' + str(marker) + '));close(F)}"'
    proc = subprocess.run(
        gitolite.sshd.argv(gitolite.keys["bob"], option)
        + [f"{gitolite.account.name}@127.0.0.1", "info"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert not marker.exists(), proc.stdout + proc.stderr


@pytest.mark.parametrize("gl_site", ["t"], indirect=True, ids=["common-hook"])
def test_gitolite_commands_give_the_agent_no_say_over_head_or_perms(gitolite, gl_site):
    """bob may not create a wild repository of his own (C is alice's), nor use perms,
    desc, symbolic-ref, D, config, writable or create on alice's: HEAD, and so the
    rules' branch, stays main."""
    host = gitolite
    name = gl_site.name
    for command in (
        f"perms {name} + WRITERS bob",
        f"perms {name} + OWNERS bob",
        f"perms -l {name}",
        f"desc {name} mine",
        f"symbolic-ref {name} HEAD refs/heads/bob",
        f"D unlock {name}",
        f"D rm {name}",
        f"config {name} --add gitolite-options.hook.pre-receive notify",
        f"writable {name} off",
        "create t/bobs",
        "fork t/x t/bobs",
    ):
        proc = subprocess.run(
            host.sshd.argv(host.keys["bob"]) + [f"{host.account.name}@127.0.0.1", command],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert proc.returncode != 0, (command, proc.stdout, proc.stderr)
    head = host.run("git", "--git-dir", gl_site.repo, "symbolic-ref", "HEAD").stdout.strip()
    assert head == "refs/heads/main"
    proc = subprocess.run(
        ["git", "ls-remote", host.url("t/bobs-own")],
        env=gl_env(host, "bob"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0, proc.stderr
    assert not host.repo("t/bobs-own").exists()


def test_gitolite_admin_is_out_of_the_agents_reach(gitolite, tmp_path):
    host = gitolite
    clone = tmp_path / "admin"
    proc = subprocess.run(
        ["git", "clone", "-q", host.url("gitolite-admin"), str(clone)],
        env=gl_env(host, "bob"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0, proc.stderr
    init_repo(clone)
    commit(clone, {"conf/gitolite.conf": "repo @all\n    RW+ = bob\n"}, "mine")
    proc = subprocess.run(
        ["git", "-C", str(clone), "push", host.url("gitolite-admin"), "+HEAD:refs/heads/master"],
        env=gl_env(host, "bob"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0, proc.stderr


def test_gitolite_spoofed_gl_user_in_every_channel_names_nobody(gitolite, gl_site):
    gl_site.commit({SEEDS: "[1, 2, 3]\n"}, "append")
    pushed = gl_site.push(
        "bob",
        "-o",
        "GL_USER=alice",
        "HEAD:refs/heads/main",
        ssh_options=[
            "SetEnv=GL_USER=alice GL_USERNAME=alice REMOTE_USER=alice GL_REPO=gitolite-admin "
            "GL_BYPASS_ACCESS_CHECKS=1 GIT_PUSH_OPTION_COUNT=1 GIT_PUSH_OPTION_0=GL_USER=alice"
        ],
    )
    shared.spoof_rejected(gl_site, pushed)


def test_gitolite_odd_refnames_through_the_multi_hook_driver_are_judged(gitolite, gl_site):
    """The driver does `echo "$stdin" | hook` in /bin/sh (dash's echo reads
    backslashes): git refuses a refname with a backslash before any hook, and refs
    named like echo's options do not hide the bad update of main."""
    host = gitolite
    before = gl_site.rev("refs/heads/main")
    gl_site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    bad = git(gl_site.client, "rev-parse", "HEAD").strip()
    argv = host.sshd.argv(host.keys["bob"]) + [
        f"{host.account.name}@127.0.0.1",
        f"git-receive-pack '{gl_site.name}'",
    ]
    pack = pack_of(gl_site.client, bad, before)
    for commands in (
        [f"{'0' * 40} {bad} refs/heads/x\\c", f"{before} {bad} refs/heads/main"],
        [
            f"{'0' * 40} {before} refs/heads/-n",
            f"{'0' * 40} {before} refs/heads/-e",
            f"{before} {bad} refs/heads/main",
        ],
    ):
        said = raw_receive_pack(argv, commands, pack)
        assert gl_site.rev("refs/heads/main") == before, said
    assert gl_site.rev("refs/heads/-n") is None


# ======================================================================================
# git http-backend behind lighttpd with basic auth, identity_env: REMOTE_USER
# ======================================================================================
from testing import http_host  # noqa: E402

HTTP_CONTRACT = shared.host_contract("REMOTE_USER")
HEADERS = [
    "Remote_User: alice",
    "REMOTE-USER: alice",
    "remote-user: alice",
    "X-Remote-User: alice",
    "X-Forwarded-User: alice",
    "Proxy-Authorization: Basic YWxpY2U6YWxpY2Utc2VjcmV0",
    "GIT_CONFIG_PARAMETERS: 'core.hookspath'='/nonexistent'",
    "Git-Config-Count: 1",
    "Git-Protocol: version=0:REMOTE_USER=alice",
    "Remote-User-: alice",
    "Auth-Type: none",
]


@pytest.fixture(scope="module")
def web():
    with system_account("ogaw", "/usr/sbin/nologin") as account:
        folder = world_base("og-http-attack-")
        try:
            with http_host.lighttpd(account, folder) as host:
                yield host
            assert gone(host.process.pid)
            assert http_host.processes_of(account) == []
        finally:
            shutil.rmtree(folder, ignore_errors=True)


class WebSite:
    def __init__(self, web, python, tmp_path, signer, hook=True):
        self.web, self.python = web, python
        self.name = f"attack-{next(numbers)}.git"
        self.repo = http_host.make_repo(web, self.name, python if hook else None)
        self.client = init_repo(tmp_path / "work")
        for user in http_host.USERS:
            git(self.client, "remote", "add", user, web.url(self.name, user))
        commit(
            self.client,
            {
                ".oracle-guard.yaml": HTTP_CONTRACT,
                SEEDS: "[1, 2]\n",
                SIGNERS: f"alice {public(signer)}\n",
                "src/app.py": "v1\n",
            },
            "the oracle",
        )

    def push(self, user, *args, **kw) -> Push:
        return http_host.http_push(self.client, user, *args, **kw)

    def tip(self, ref="refs/heads/main"):
        proc = subprocess.run(
            ["git", "--git-dir", str(self.repo), "rev-parse", "--verify", "--quiet", ref],
            env=http_host.root_git_env(self.repo),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        return proc.stdout.strip() or None

    def seeds(self):
        proc = subprocess.run(
            ["git", "--git-dir", str(self.repo), "cat-file", "-p", f"refs/heads/main:{SEEDS}"],
            env=http_host.root_git_env(self.repo),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        return proc.stdout


@pytest.fixture
def web_site(web, hook_python, tmp_path, keys):
    """Makes sites: docs/how-to/server-http.md's recipe, alice's first contract in, doctor's
    'guarded' before the attack."""
    made = []

    def make(hook=True):
        s = WebSite(web, hook_python, tmp_path / f"s{len(made)}", keys["alice"], hook)
        made.append(s)
        if hook:
            first = s.push("alice", "main")
            assert first.rc == 0, first.stderr
            d = http_host.doctor(s.repo, hook_python)
            assert d.returncode == 0 and last_line(d.stdout) == f"guarded: {s.repo}", d.stdout
        return s

    yield make
    for s in made:
        http_host.remove_repo(s.repo)


ENV_PROBE = """\
#!/bin/sh
env | sed 's/^/probe: /'
cat >/dev/null
exit 1
"""


def test_http_odd_headers_reach_the_hook_only_as_http_variables(web_site):
    """A probe in place of the hook: whatever bob's headers are called (underscores,
    odd casing, Proxy-Authorization, a header named like a git variable), the hook's
    REMOTE_USER is bob, no GIT_CONFIG* variable is set, and the password is gone."""
    s = web_site(hook=False)
    probe = s.repo / "hooks" / "pre-receive"
    probe.write_text(ENV_PROBE)
    probe.chmod(0o755)
    p = s.push(
        "bob", "-o", "REMOTE_USER=alice", "main", config=[f"http.extraHeader={h}" for h in HEADERS]
    )
    env = dict(
        line[len("probe: ") :].split("=", 1)
        for line in p.remote
        if line.startswith("probe: ") and "=" in line
    )
    assert env.get("REMOTE_USER") == "bob", p.stderr
    assert not [k for k in env if k.startswith("GIT_CONFIG")], env
    assert "HTTP_AUTHORIZATION" not in env and "HTTP_PROXY_AUTHORIZATION" in env, env
    assert not [
        k
        for k, v in env.items()
        if "alice" in v and not k.startswith(("HTTP_", "GIT_PUSH_OPTION_", "GIT_PROTOCOL"))
    ], env
    assert env.get("AUTH_TYPE") == "Basic", env


def test_http_odd_headers_do_not_make_the_agent_an_owner(web_site):
    s = web_site()
    before = s.tip()
    commit(s.client, {SEEDS: "[1, 2, 3]\n"}, "append")
    p = s.push(
        "bob", "-o", "REMOTE_USER=alice", "main", config=[f"http.extraHeader={h}" for h in HEADERS]
    )
    assert p.rc != 0 and "write-denied" in p.stderr, p.stderr
    assert s.tip() == before


@pytest.mark.parametrize("path", ["%67it", "/git", "git/.", "./git", "GIT", "git%2F", "git/"])
def test_http_paths_around_the_auth_rule_do_not_push_unauthenticated(web, web_site, path):
    s = web_site()
    before = s.tip()
    commit(s.client, {"src/app.py": "v2\n"}, "code")
    p = s.push(f"http://127.0.0.1:{web.port}/{path}/{s.name}", "main")
    assert p.rc != 0, p.stderr
    assert s.tip() == before


def test_http_chunked_push_is_judged(web_site):
    """http.postBuffer below the pack's size: git sends the body chunked."""
    s = web_site()
    before = s.tip()
    commit(s.client, {"src/big.bin": os.urandom(300_000).hex(), SEEDS: "[1, 9]\n"}, "big")
    p = s.push("bob", "main", config=["http.postBuffer=1024"])
    assert p.rc != 0 and "seed-rewritten" in p.stderr, p.stderr
    assert s.tip() == before and s.seeds() == "[1, 2]\n"


def test_http_1_0_hand_made_push_is_judged_as_the_authenticated_user(web, web_site, tmp_path):
    """A receive-pack request by curl, HTTP/1.0, no info/refs first, with bob's
    password and alice's name in every header lighttpd might map."""
    s = web_site()
    before = s.tip()
    bad = commit(s.client, {SEEDS: "[1, 2, 3]\n"}, "append")
    command = f"{before} {bad} refs/heads/main\0report-status side-band-64k\n"
    body = pkt(command.encode()) + b"0000" + pack_of(s.client, bad, before)
    (tmp_path / "body").write_bytes(body)
    headers = sum((["-H", h] for h in HEADERS), [])
    proc = subprocess.run(
        [
            "curl",
            "-s",
            "--http1.0",
            "-u",
            "bob:bob-secret",
            *headers,
            "-H",
            "Content-Type: application/x-git-receive-pack-request",
            "--data-binary",
            f"@{tmp_path / 'body'}",
            f"http://127.0.0.1:{web.port}/git/{s.name}/git-receive-pack",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        timeout=60,
    )
    said = proc.stdout.decode("utf-8", "replace")
    assert "write-denied" in said, said + proc.stderr.decode()
    assert s.tip() == before


# -- time-outs and concurrency (plain ssh; the same hook on every host) ----------------
def test_a_push_that_outlasts_timeout_s_is_rejected(ssh_host, tmp_path):
    name = f"a{next(numbers)}"
    ssh_host.create(name)
    site = ssh_host.site(name, tmp_path)
    init_repo(site.client)
    git(site.client, "remote", "add", "origin", site.remote)
    site.commit(
        {
            ".oracle-guard.yaml": shared.host_contract("REMOTE_USER") + "timeout_s: 0.001\n",
            SIGNERS: f"alice {public(site.keys['alice'])}\n",
            SEEDS: "[1, 2]\n",
            "src/app.py": "v1\n",
        },
        "the oracle",
    )
    assert site.push("alice", "main").rc == 0  # an empty repository: the default budget
    before = site.rev("refs/heads/main")
    site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    pushed = site.push("bob", "HEAD:refs/heads/main")
    assert pushed.rc != 0 and "took longer than 0.001 s" in pushed.stderr, pushed.stderr
    assert site.rev("refs/heads/main") == before


def test_concurrent_pushes_leave_no_rewrite_on_main(ssh_site):
    """Five pushes at once, four rewriting seeds in different ways, one honest; each
    is judged against the tip it read, and git's compare-and-swap takes at most one."""
    before = ssh_site.rev("refs/heads/main")
    specs = []
    for i, seeds in enumerate(["[9]", "[2, 1]", "[1]", "[1, 9, 3]", "[1, 2]"]):
        git(ssh_site.client, "checkout", "-q", "--detach", before)
        ssh_site.commit(
            {SEEDS: seeds + "\n", "src/app.py": f"c{i}\n"}
            if seeds == "[1, 2]"
            else {SEEDS: seeds + "\n"},
            f"attempt {i}",
        )
        specs.append(git(ssh_site.client, "rev-parse", "HEAD").strip())
    procs = [
        subprocess.Popen(
            ["git", "-C", str(ssh_site.client), "push", "origin", f"{oid}:refs/heads/main"],
            env=ssh_site.env_for("bob"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for oid in specs
    ]
    for proc in procs:
        proc.communicate(timeout=120)
    after = ssh_site.rev("refs/heads/main")
    assert after in (before, specs[-1])
    assert server_blob(ssh_site, f"refs/heads/main:{SEEDS}") == "[1, 2]\n"


# -- AcceptEnv *: a door no hook can close, which doctor names ---------------------------
@pytest.fixture
def star_host(hosts_base, hook_python, keys):
    """The plain-ssh recipe with sshd's `AcceptEnv *`."""
    with system_account("ogz", shell="/usr/bin/git-shell", base=hosts_base) as account:
        authorize(
            account,
            [
                f'restrict,environment="REMOTE_USER={name}" {public(key)}'
                for name, key in keys.items()
            ],
        )
        with sshd(hosts_base / f"sshd-{account.name}", [account.name], accept_env="*") as server:
            yield SshHost(account, server, keys, hook_python)
            pid = server.process.pid
    assert gone(pid)


def test_accept_env_star_is_a_door_doctor_names(star_host, tmp_path):
    name = f"z{next(numbers)}"
    repo = star_host.create(name)
    site = star_host.site(name, tmp_path)
    site.seed("REMOTE_USER")
    said = doctor_verdict(
        star_host.doctor(repo), repo, False, "accepts the client's variables * (AcceptEnv)"
    )
    assert any(
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath switches every hook off" in line
        for line in said
    ), said
    # what it names is real: the client's git configuration switches the hook off
    site.commit({SEEDS: "[1, 9]\n"}, "rewrite a seed")
    pushed = site.push(
        "bob",
        "HEAD:refs/heads/main",
        ssh_options=[
            "SetEnv=GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath "
            "GIT_CONFIG_VALUE_0=/nonexistent"
        ],
    )
    assert pushed.rc == 0 and "oracle-guard" not in pushed.stderr, pushed.stderr
