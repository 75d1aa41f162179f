"""Signed authority: owners change the oracle with SSH-signed commits, verified
against the allowed signers file at the rules revision. Real keys from
ssh-keygen, real `git commit -S`, each case judged in the CI range, as a
pre-push and by a real push to a bare repository with the hook installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Callable, Dict, Iterator, Optional, Tuple

import pytest

from testing import scenarios, tiers
from testing.git import commit, git, write
from testing.oracle import NOW
from testing.server import (
    file_url,
    make_client,
    make_server,
    push,
    push_env,
    rev,
    run_pre_receive,
    updates,
)
from testing.signatures import SIGNED_CONTRACT, SIGNERS

SEEDS = "seeds/a.json"
CONTRACT = SIGNED_CONTRACT
CONTEXTS = ("ci", "prepush", "push")


def keygen(folder: Path, name: str, kind: str = "ed25519") -> Path:
    key = folder / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", kind, "-N", "", "-C", name, "-f", str(key)], check=True
    )
    return key


def public(key: Path) -> str:
    return " ".join(key.with_suffix(".pub").read_text().split()[:2])


# one seeded server and client per module for each start the tests ask for, each
# seeded by a real push; every test copies it (Repo), so what it pushes is its own
_SEEDS: Dict[str, Path] = {}


@pytest.fixture(scope="module", autouse=True)
def _seed_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    _SEEDS.clear()
    _SEEDS[""] = tmp_path_factory.mktemp("seeded")
    yield
    _SEEDS.clear()


def _module_keys(owner_kind: str) -> Path:
    """The owner's (of ``owner_kind``) and the agent's keys, made once per module."""
    keys = _SEEDS[""] / f"keys-{owner_kind}"
    if not keys.exists():
        keys.mkdir()
        keygen(keys, "owner", owner_kind)
        keygen(keys, "agent")
    return keys


def _seeded(line: str, contract: str, files: Dict[str, str], owner_kind: str) -> Path:
    """A server with the hook, and a client on branch ``change`` whose main, pushed,
    holds the contract, the signers ``line`` and ``files``."""
    key = repr((line, contract, sorted(files.items()), owner_kind))
    if key in _SEEDS:
        return _SEEDS[key]
    root = _SEEDS[""] / f"repo-{len(_SEEDS)}"
    server = make_server(root / "srv.git")
    client = make_client(root / "work", server)
    commit(
        client,
        {
            ".oracle-guard.yaml": contract,
            SIGNERS: line + "\n",
            SEEDS: "[1, 2]\n",
            "src/app.py": "",
            **files,
        },
        "the oracle",
    )
    assert push(client, "main").rc == 0
    git(client, "fetch", "-q", "origin")
    git(client, "remote", "set-head", "origin", "main")
    git(client, "checkout", "-q", "-b", "change")
    _SEEDS[key] = root
    return root


class Repo:
    """A server with the hook, a client whose main holds the contract, and keys."""

    def __init__(
        self,
        tmp_path: Path,
        signers_line: Optional[Callable[[Repo], str]] = None,
        contract: str = CONTRACT,
        files: Optional[Dict[str, str]] = None,
        owner_kind: str = "ed25519",
    ) -> None:
        keys = tmp_path / "keys"
        shutil.copytree(_module_keys(owner_kind), keys)
        self.owner, self.agent = keys / "owner", keys / "agent"
        line = signers_line(self) if signers_line else f"alice {public(self.owner)}"
        seeded = _seeded(line, contract, files or {}, owner_kind)
        for name in ("srv.git", "work"):
            shutil.copytree(seeded / name, tmp_path / name, symlinks=True)
        self.server, self.client = tmp_path / "srv.git", tmp_path / "work"
        git(self.client, "remote", "set-url", "origin", file_url(self.server))

    def signed(
        self, files: Dict[str, str], key: Optional[Path] = None, message: str = "signed"
    ) -> str:
        write(self.client, files)
        git(self.client, "add", "-A")
        git(
            self.client,
            "-c",
            "gpg.format=ssh",
            "-c",
            f"user.signingkey={key or self.owner}",
            "commit",
            "-q",
            "-S",
            "-m",
            message,
        )
        return git(self.client, "rev-parse", "HEAD").strip()

    def unsigned(self, files: Dict[str, str], message: str = "unsigned") -> str:
        return commit(self.client, files, message)

    def judge(self, context: str) -> Tuple[str, frozenset]:
        return scenarios.judge_pushed_or_ranged(self.client, self.server, context)


def owner_appends(r: Repo) -> None:
    r.signed({SEEDS: "[1, 2, 3]\n"})


def unsigned_append(r: Repo) -> None:
    r.unsigned({SEEDS: "[1, 2, 3]\n"})


def signed_by_a_stranger(r: Repo) -> None:
    r.signed({SEEDS: "[1, 2, 3]\n"}, key=r.agent)


def key_added_in_the_same_change(r: Repo) -> None:
    signers = (r.client / SIGNERS).read_text() + f"bot {public(r.agent)}\n"
    r.signed({SIGNERS: signers, SEEDS: "[1, 2, 3]\n"}, key=r.agent)


def agent_seeds_after_an_owner_signers_change(r: Repo) -> None:
    """The agent's commit touches only seeds: it is reported at the seeds, not at the
    signers file the owner's commit before it changed."""
    signers = (r.client / SIGNERS).read_text() + f"bob {public(r.agent)}\n"
    r.signed({SIGNERS: signers})
    r.unsigned({SEEDS: "[1, 2, 3]\n"})


def owner_signed_mixed(r: Repo) -> None:
    r.signed({SEEDS: "[1, 2, 3]\n", "src/app.py": "x = 1\n"})


def unsigned_oracle_edit_after_a_signed_one(r: Repo) -> None:
    r.signed({SEEDS: "[1, 2, 3]\n"})
    r.unsigned({SEEDS: "[1, 2, 3, 4]\n"})


def agent_code_on_top_of_an_owner_branch(r: Repo) -> None:
    r.signed({SEEDS: "[1, 2, 3]\n"})
    r.unsigned({"src/app.py": "x = 1\n"})


def transplanted_signature(r: Repo) -> None:
    """The owner's signature header copied onto another commit's content."""
    signed = r.signed({SEEDS: "[1, 2, 3]\n"})
    raw = git(r.client, "cat-file", "commit", signed)
    write(r.client, {SEEDS: "[1, 2, 3, 9]\n"})
    git(r.client, "add", "-A")
    tree = git(r.client, "write-tree").strip()
    forged = raw.replace(git(r.client, "rev-parse", f"{signed}^{{tree}}").strip(), tree)
    made = git(
        r.client, "hash-object", "-t", "commit", "-w", "--stdin", input=forged.encode()
    ).strip()
    git(r.client, "reset", "-q", "--hard", made)


def evil_merge_in_the_owner_branch(r: Repo) -> None:
    r.signed({SEEDS: "[1, 2, 3]\n"})
    git(r.client, "checkout", "-q", "-b", "side", "refs/remotes/origin/main")
    r.unsigned({"src/side.py": "s\n"})
    git(r.client, "checkout", "-q", "change")
    git(r.client, "merge", "-q", "--no-ff", "--no-commit", "side")
    write(r.client, {SEEDS: "[1, 2, 3, 4]\n"})
    git(r.client, "add", "-A")
    git(
        r.client,
        "-c",
        "gpg.format=ssh",
        "-c",
        f"user.signingkey={r.owner}",
        "commit",
        "-q",
        "-S",
        "-m",
        "evil merge, signed",
    )


def squash_of_an_owner_branch(r: Repo) -> None:
    """What a platform's squash merge records: one new commit, not the owner's."""
    r.signed({SEEDS: "[1, 2, 3]\n"})
    git(r.client, "checkout", "-q", "-B", "squashed", "refs/remotes/origin/main")
    git(r.client, "merge", "-q", "--squash", "change")
    git(r.client, "commit", "-q", "-m", "Squashed (#1)")


def platform_merge_of_an_owner_branch(r: Repo) -> None:
    r.signed({SEEDS: "[1, 2, 3]\n"})
    git(r.client, "checkout", "-q", "-B", "landing", "refs/remotes/origin/main")
    git(r.client, "merge", "-q", "--no-ff", "-m", "Merge pull request #1", "change")


WD, UNSIGNED = f"{SEEDS}: write-denied", f"{SEEDS}: oracle-change-unsigned"
CASES = [
    (owner_appends, set()),
    (platform_merge_of_an_owner_branch, set()),
    (unsigned_append, {WD, UNSIGNED}),
    (signed_by_a_stranger, {WD, UNSIGNED}),
    (
        key_added_in_the_same_change,
        {WD, f"{SIGNERS}: write-denied", f"{SIGNERS}: oracle-change-unsigned"},
    ),
    (agent_seeds_after_an_owner_signers_change, {WD, f"{SIGNERS}: write-denied", UNSIGNED}),
    (owner_signed_mixed, {WD, f"{SEEDS}: contract-mixed-commit"}),
    (unsigned_oracle_edit_after_a_signed_one, {WD, UNSIGNED}),
    (agent_code_on_top_of_an_owner_branch, {WD, UNSIGNED}),
    (transplanted_signature, {WD, UNSIGNED}),
    (evil_merge_in_the_owner_branch, {WD, f"{SEEDS}: merge-edits-oracle", UNSIGNED}),
    (squash_of_an_owner_branch, {WD, UNSIGNED}),
]


@pytest.mark.parametrize("context", tiers.contexts(CONTEXTS))
@pytest.mark.parametrize("build,codes", CASES, ids=[c[0].__name__ for c in CASES])
def test_signed_authority(tmp_path, build, codes, context):
    r = Repo(tmp_path)
    build(r)
    verdict, got = r.judge(context)
    assert (verdict, set(got)) == ("reject" if codes else "pass", codes)


def test_a_key_limited_to_another_namespace_cannot_sign_commits(tmp_path):
    r = Repo(tmp_path, lambda r: f'alice namespaces="file" {public(r.owner)}')
    owner_appends(r)
    for context in CONTEXTS:
        verdict, got = r.judge(context)
        assert (verdict, set(got)) == ("reject", {WD, UNSIGNED}), context


def test_the_same_key_for_git_passes(tmp_path):
    r = Repo(tmp_path, lambda r: f'alice namespaces="file,git" {public(r.owner)}')
    owner_appends(r)
    assert [r.judge(context) for context in CONTEXTS] == [("pass", frozenset())] * 3


def test_a_backdated_commit_by_a_key_removed_at_the_base_does_not_count(tmp_path):
    """The signers file at the rules revision no longer lists the key; the commit
    claims a date from when it did."""
    r = Repo(tmp_path, lambda r: f"alice {public(r.owner)}\nold {public(r.agent)}")
    git(r.client, "checkout", "-q", "main")
    r.signed({SIGNERS: f"alice {public(r.owner)}\n"}, message="owner retires the old key")
    assert push(r.client, "main").rc == 0
    git(r.client, "fetch", "-q", "origin")
    git(r.client, "checkout", "-q", "-B", "change", "main")
    write(r.client, {SEEDS: "[1, 2, 3]\n"})
    git(r.client, "add", "-A")
    subprocess.run(
        [
            "git",
            "-C",
            str(r.client),
            "-c",
            "gpg.format=ssh",
            "-c",
            f"user.signingkey={r.agent}",
            "commit",
            "-q",
            "-S",
            "-m",
            "backdated",
        ],
        env=dict(
            push_env(),
            GIT_COMMITTER_DATE="2020-01-01T00:00:00Z",
            GIT_AUTHOR_DATE="2020-01-01T00:00:00Z",
        ),
        check=True,
    )
    for context in CONTEXTS:
        assert r.judge(context) == ("reject", frozenset({WD, UNSIGNED})), context


def test_a_signers_file_that_does_not_parse_is_a_contract_error(tmp_path, capsys):
    r = Repo(tmp_path)
    # the server refuses such a push (contract-invalid), so main gets it another way
    git(r.client, "checkout", "-q", "main")
    commit(r.client, {SIGNERS: f"alice valid-before=20300101 {public(r.owner)}\n"}, "signers")
    git(r.client, "update-ref", "refs/remotes/origin/main", "HEAD")
    git(r.client, "checkout", "-q", "-B", "change")
    owner_appends(r)
    got = scenarios.guard(r.client, env={"CI": "1", "GITHUB_BASE_REF": "main"})
    assert got.verdict == scenarios.ERROR
    assert (
        f"{SIGNERS}:1: option valid-before is refused" in got.detail or "valid-before" in got.detail
    ), got.detail


def test_the_push_build_of_main_accepts_a_merged_owner_branch_and_not_a_squash(tmp_path):
    (tmp_path / "merged").mkdir()
    r = Repo(tmp_path / "merged")
    platform_merge_of_an_owner_branch(r)
    got = scenarios.guard(r.client, "--head", "HEAD", env={"CI": "1"})
    assert got.verdict == scenarios.PASS, got.detail
    assert "an owner signed every commit of this oracle change" in got.detail
    (tmp_path / "squashed").mkdir()
    r = Repo(tmp_path / "squashed")
    squash_of_an_owner_branch(r)
    got = scenarios.guard(r.client, "--head", "HEAD", env={"CI": "1"})
    assert got.codes == {WD, UNSIGNED}, got.detail
    assert "is not signed; the change edits protected 'seeds/a.json'" in got.detail


def sk_signed_commit(r: Repo, private, flags: int) -> None:
    """A seed append signed by a security key (composed in-process: no hardware)."""
    from testing.signatures import sign_sk_ed25519, with_signature

    write(r.client, {SEEDS: "[1, 2, 3]\n"})
    git(r.client, "add", "-A")
    tree = git(r.client, "write-tree").strip()
    made = git(r.client, "commit-tree", tree, "-p", "HEAD", "-m", "touched", input=b"").strip()
    raw = subprocess.run(
        ["git", "-C", str(r.client), "cat-file", "commit", made], stdout=subprocess.PIPE, check=True
    ).stdout
    signed = with_signature(raw, sign_sk_ed25519(private, raw, flags, 7))
    oid = git(r.client, "hash-object", "-t", "commit", "-w", "--stdin", input=signed).strip()
    git(r.client, "reset", "-q", "--hard", oid)


@pytest.mark.parametrize(
    "flags,passes", [(0x01, True), (0x00, False)], ids=["touched", "not-touched"]
)
def test_require_touch_counts_only_signatures_with_user_presence(tmp_path, flags, passes):
    from testing.signatures import SK_ED25519, ed25519_private, pub_line, sk_ed25519_key

    private = ed25519_private()
    key = pub_line(SK_ED25519, sk_ed25519_key(private))
    r = Repo(tmp_path, lambda r: f"alice {key}", contract=CONTRACT + "  require_touch: true\n")
    sk_signed_commit(r, private, flags)
    for context in CONTEXTS:
        got = r.judge(context)
        assert got == (("pass", frozenset()) if passes else ("reject", {WD, UNSIGNED})), context


def test_require_touch_refuses_a_plain_key(tmp_path):
    r = Repo(tmp_path, contract=CONTRACT + "  require_touch: true\n")
    owner_appends(r)
    got = scenarios.guard(r.client, env={"CI": "1", "GITHUB_BASE_REF": "main"})
    assert got.codes == {WD, UNSIGNED}
    assert "is signed by a key that is not a security key" in got.detail


# -- a commit being made: the repository's signing configuration ------------------
def sign_with(r: Repo, key: Path, gpgsign: str = "true") -> None:
    git(r.client, "config", "gpg.format", "ssh")
    git(r.client, "config", "user.signingkey", str(key.with_suffix(".pub")))
    git(r.client, "config", "commit.gpgsign", gpgsign)


def staged(r: Repo, files: Dict[str, str]):
    write(r.client, files)
    git(r.client, "add", "-A")
    return scenarios.guard(r.client, env={})


def test_a_staged_oracle_change_an_owner_will_sign_passes_and_says_so(tmp_path):
    r = Repo(tmp_path)
    sign_with(r, r.owner)
    got = staged(r, {SEEDS: "[1, 2, 3]\n"})
    assert got.verdict == scenarios.PASS, got.detail
    assert "the commit will be signed with alice's key (user.signingkey), an owner" in got.detail


@pytest.mark.parametrize(
    "setup,why",
    [
        (lambda r: None, "git here does not sign with SSH keys (gpg.format)"),
        (
            lambda r: sign_with(r, r.owner, gpgsign="false"),
            "git here does not sign every commit (commit.gpgsign)",
        ),
        (
            lambda r: sign_with(r, r.agent),
            "user.signingkey is not an owner's key in .oracle-guard/allowed_signers",
        ),
    ],
    ids=["no-ssh-signing", "no-gpgsign", "not-an-owner-key"],
)
def test_a_staged_oracle_change_nobody_will_sign_is_denied_with_how_to_sign(tmp_path, setup, why):
    r = Repo(tmp_path)
    setup(r)
    got = staged(r, {SEEDS: "[1, 2, 3]\n"})
    assert got.codes == {WD}, got.detail
    assert (
        why in got.detail and "an owner signs the commit: git config gpg.format ssh" in got.detail
    ), got.detail


def test_a_staged_oracle_change_mixed_with_code_is_denied_to_a_signing_owner(tmp_path):
    r = Repo(tmp_path)
    sign_with(r, r.owner)
    got = staged(r, {SEEDS: "[1, 2, 3]\n", "src/app.py": "x = 1\n"})
    assert got.codes == {WD}, got.detail
    assert "an owner's oracle change rides alone" in got.detail


@pytest.mark.parametrize(
    "build,passes",
    [(owner_appends, True), (signed_by_a_stranger, False)],
    ids=["owner-signed", "stranger-signed"],
)
def test_the_pull_request_target_gate_passes_an_owner_branch(tmp_path, build, passes):
    """The gate recipe's steps in a clone laid out as pull_request_target lays it
    (the head checked out detached, full history): no administrator override."""
    import os
    import sys

    import yaml

    r = Repo(tmp_path)
    build(r)
    head = git(r.client, "rev-parse", "HEAD").strip()
    clone = tmp_path / "runner"  # the pull request's head lives in a fork: clone the client
    git(tmp_path, "clone", "-q", str(r.client), str(clone))
    git(clone, "checkout", "-q", "--detach", head)
    recipe = Path(__file__).resolve().parents[1] / "examples/ci/github-actions-base-branch.yml"
    (job,) = yaml.safe_load(recipe.read_text())["jobs"].values()
    steps = [s["run"] for s in job["steps"] if "run" in s and "pip install" not in s["run"]]
    env = dict(
        os.environ,
        CI="true",
        GITHUB_BASE_REF="main",
        ORACLE_GUARD_NOW=NOW,
        PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"],
    )
    for step in steps:
        done = subprocess.run(
            ["bash", "-euc", step],
            cwd=clone,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        assert (done.returncode == 0) == passes, done.stdout
        if not passes:
            assert "oracle-change-unsigned" in done.stdout


# -- an owner's three oracle changes, each one signed commit -------------------------
FULL = CONTRACT.replace(
    "write_set:",
    """fixtures:
  - lock: oracle/fixtures.lock.json
    root: oracle/inputs
    paths: ["oracle/inputs/**"]
freeze:
  - {paths: ["oracle/flake_budget.yaml"], schema: flake-budget}
budget:
  max_frozen: 2
  max_days: 14
write_set:""",
    1,
)


def lock_of(data: bytes) -> str:
    import hashlib
    import json

    return json.dumps({"a.txt": hashlib.sha256(data).hexdigest()}, indent=2) + "\n"


def budget(expires: str) -> str:
    return (
        f"max_frozen: 2\nfrozen:\n  - id: retry\n    owner: platform\n"
        f'    expires: "{expires}"\n    reason: "flaky on CI"\n'
    )


def full_repo(tmp_path: Path, owner_kind: str = "ed25519") -> Repo:
    return Repo(
        tmp_path,
        owner_kind=owner_kind,
        contract=FULL,
        files={
            "oracle/inputs/a.txt": "1\n",
            "oracle/fixtures.lock.json": lock_of(b"1\n"),
            "oracle/flake_budget.yaml": budget("2026-09-30"),
        },
    )


@pytest.mark.parametrize("context", tiers.contexts(CONTEXTS))
@pytest.mark.parametrize(
    "files",
    [
        {SEEDS: "[1, 2, 3]\n"},
        {"oracle/inputs/a.txt": "2\n", "oracle/fixtures.lock.json": lock_of(b"2\n")},
        {"oracle/flake_budget.yaml": budget("2026-10-05")},
    ],
    ids=["seed-appended", "lock-refreshed", "entry-renewed"],
)
def test_an_owner_changes_the_oracle_with_one_signed_commit(tmp_path, files, context):
    r = full_repo(tmp_path)
    r.signed(files)
    assert r.judge(context) == ("pass", frozenset())


@pytest.mark.parametrize("context", tiers.contexts(CONTEXTS))
def test_an_owner_still_needs_the_lock_for_a_fixture(tmp_path, context):
    r = full_repo(tmp_path)
    r.signed({"oracle/inputs/a.txt": "2\n"})
    assert r.judge(context) == ("reject", frozenset({"oracle/inputs/a.txt: fixture-mismatch"}))


@pytest.mark.parametrize("context", tiers.contexts(CONTEXTS))
def test_a_fixtures_only_agent_commit_is_reported_at_its_fixtures(tmp_path, context):
    # the owner's signed commit changes the signers file first; the agent's, fixtures only
    r = full_repo(tmp_path)
    signers = (r.client / SIGNERS).read_text() + f"bob {public(r.agent)}\n"
    r.signed({SIGNERS: signers})
    r.unsigned({"oracle/inputs/a.txt": "2\n", "oracle/fixtures.lock.json": lock_of(b"2\n")})
    verdict, got = r.judge(context)
    assert verdict == "reject"
    unsigned = {f for f in got if f.endswith(": oracle-change-unsigned")}
    assert unsigned == {"oracle/fixtures.lock.json: oracle-change-unsigned"}, got


# -- what the attack pass found ---------------------------------------------------
def test_a_push_that_rewinds_a_protected_branch_is_not_authorized(tmp_path):
    """Signatures vouch for commits on top of the old tip; a force push back to an
    older commit reverts main's oracle change, and no commit signs for that."""
    r = Repo(tmp_path)
    first = git(r.client, "rev-parse", "HEAD").strip()
    git(r.client, "checkout", "-q", "main")
    r.signed({SEEDS: "[1, 2, 3]\n"}, message="owner appends")
    assert push(r.client, "main").rc == 0
    p = push(r.client, f"+{first}:refs/heads/main", env=push_env(GL_USERNAME="bob"))
    assert p.rc != 0 and "refs/heads/main: seeds/a.json: oracle-change-unsigned" in p.findings(), (
        p.stderr
    )
    assert "the push replaces history" in p.stderr
    git(r.client, "fetch", "-q", "origin")
    env = {
        "PRE_COMMIT_FROM_REF": "refs/remotes/origin/main",
        "PRE_COMMIT_TO_REF": first,
        "PRE_COMMIT_REMOTE_NAME": "origin",
        "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main",
    }
    got = scenarios.guard(r.client, env=env)
    assert got.codes >= {UNSIGNED, WD}, got.detail


def test_a_conflicted_merge_committed_as_is_is_no_clean_merge(tmp_path):
    """git's conflicted merge tree, markers and all, committed as a merge nobody
    signed: the remerge conflicts, so the merge has a change of its own."""
    r = Repo(tmp_path)
    r.signed({SEEDS: "[1, 2, 9]\n"}, message="owner: one change")
    git(r.client, "checkout", "-q", "-b", "other", "refs/remotes/origin/main")
    other = r.signed({SEEDS: "[1, 2, 8]\n"}, message="owner: another")
    git(r.client, "checkout", "-q", "change")
    conflicted = subprocess.run(  # exits 1: it conflicts
        ["git", "-C", str(r.client), "merge-tree", "--write-tree", "--no-messages", "HEAD", other],
        stdout=subprocess.PIPE,
    )
    assert conflicted.returncode == 1
    tree = conflicted.stdout.split()[0].decode()
    made = git(
        r.client, "commit-tree", tree, "-p", "HEAD", "-p", other, "-m", "as is", input=b""
    ).strip()
    git(r.client, "reset", "-q", "--hard", made)
    for context in CONTEXTS:
        verdict, got = r.judge(context)
        assert verdict == "reject" and {UNSIGNED, f"{SEEDS}: merge-edits-oracle"} <= got, (
            context,
            got,
        )


def test_a_header_between_the_parent_lines_voids_a_signature(tmp_path):
    """gpgsig* lines are not signed, and one between two parent lines ends git's
    list of parents: the signed merge would hide its second parent's commits."""
    r = Repo(tmp_path)
    git(r.client, "checkout", "-q", "-b", "agent", "refs/remotes/origin/main")
    agent = r.unsigned({SEEDS: "[1, 2, 3]\n"}, "the agent's oracle edit")
    git(r.client, "checkout", "-q", "change")
    git(r.client, "merge", "-q", "--no-ff", "--no-commit", agent)
    git(
        r.client,
        "-c",
        "gpg.format=ssh",
        "-c",
        f"user.signingkey={r.owner}",
        "commit",
        "-q",
        "-S",
        "-m",
        "owner merges",
    )
    raw = subprocess.run(
        ["git", "-C", str(r.client), "cat-file", "commit", "HEAD"],
        stdout=subprocess.PIPE,
        check=True,
    ).stdout
    head, body = raw.split(b"\n", 2)[:2], raw.split(b"\n", 2)[2]
    forged = b"\n".join(head) + b"\ngpgsig-sha256 x\n" + body
    made = git(
        r.client, "hash-object", "-t", "commit", "-w", "--literally", "--stdin", input=forged
    ).strip()
    git(r.client, "reset", "-q", "--hard", made)
    assert git(r.client, "rev-list", "--parents", "-1", "HEAD").split()[1:] == [
        git(r.client, "rev-parse", "refs/remotes/origin/main").strip()
    ]  # one parent to git
    for context in ("ci", "prepush"):
        verdict, got = r.judge(context)
        assert verdict == "reject" and UNSIGNED in got, (context, got)
    got = scenarios.guard(r.client, env={"CI": "1", "GITHUB_BASE_REF": "main"})
    assert "lists parents in a way git does not read as the commit's parents" in got.detail


def test_a_push_that_leaves_a_signers_file_that_does_not_parse_is_rejected(tmp_path):
    """The owners' keys judge every later push, the fix included."""
    r = Repo(tmp_path)
    git(r.client, "checkout", "-q", "main")
    r.signed({SIGNERS: "\ufeff" + (r.client / SIGNERS).read_text()}, message="a BOM")
    p = push(r.client, "main", env=push_env(GL_USERNAME="bob"))
    assert p.rc != 0 and f"{SIGNERS}:" in p.stderr, p.stderr


# -- replayed signatures ------------------------------------------------------------
FIXTURE, LOCK = "oracle/inputs/a.txt", "oracle/fixtures.lock.json"


def write_commit(r: Repo, raw: bytes) -> str:
    return git(r.client, "hash-object", "-t", "commit", "-w", "--stdin", input=raw).strip()


def landed_and_reverted(r: Repo) -> str:
    """main gets an owner's signed fixture change and then its signed revert;
    returns the change's commit id. The client's branch 'change' starts at main."""
    git(r.client, "checkout", "-q", "main")
    change = r.signed({FIXTURE: "2\n", LOCK: lock_of(b"2\n")}, message="owner: fixture 2")
    r.signed({FIXTURE: "1\n", LOCK: lock_of(b"1\n")}, message="owner: back to fixture 1")
    assert push(r.client, "main").rc == 0
    git(r.client, "fetch", "-q", "origin")
    git(r.client, "checkout", "-q", "-B", "change", "refs/remotes/origin/main")
    return change


def twin_of(r: Repo, commit_id: str) -> str:
    """The commit with its ECDSA signature's twin: the same signed payload, a
    canonical armor, one header, and a new commit id."""
    from oracle_guard.authority import sshsig
    from testing.signatures import ecdsa_twin, resigned

    raw = subprocess.run(
        ["git", "-C", str(r.client), "cat-file", "commit", commit_id],
        stdout=subprocess.PIPE,
        check=True,
    ).stdout
    _, armored = sshsig.split_commit(raw)
    assert armored is not None
    twin = write_commit(r, resigned(raw, ecdsa_twin(armored)))
    assert twin != commit_id
    allowed = r.client.parent / "allowed_for_git"
    allowed.write_text(f"alice {public(r.owner)}\n")
    verified = subprocess.run(
        [
            "git",
            "-C",
            str(r.client),
            "-c",
            f"gpg.ssh.allowedSignersFile={allowed}",
            "verify-commit",
            twin,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert verified.returncode == 0, verified.stderr  # git calls the twin good
    return twin


@pytest.mark.parametrize("context", tiers.contexts(CONTEXTS))
def test_a_reverted_owner_change_minted_again_is_a_replay(tmp_path, context):
    """The issue's attack: the owner's signed fixture change, reverted on main,
    minted again on its old parent with a twin signature and merged."""
    r = full_repo(tmp_path, owner_kind="ecdsa")
    twin = twin_of(r, landed_and_reverted(r))
    git(r.client, "merge", "-q", "--no-ff", "-m", "merge the replay", twin)
    verdict, got = r.judge(context)
    assert (verdict, got) == (
        "reject",
        {f"{LOCK}: signature-replayed", f"{FIXTURE}: write-denied", f"{LOCK}: write-denied"},
    ), context


@pytest.mark.parametrize("context", tiers.contexts(CONTEXTS))
def test_a_twin_signature_of_a_change_main_never_had_is_no_replay(tmp_path, context):
    """Near miss: the twin of an owner's change that is in no history of main is
    that change, signed by the owner; what makes a replay is main's history."""
    r = full_repo(tmp_path, owner_kind="ecdsa")
    change = r.signed({FIXTURE: "2\n", LOCK: lock_of(b"2\n")}, message="owner: fixture 2")
    git(r.client, "reset", "-q", "--hard", twin_of(r, change))
    assert r.judge(context) == ("pass", frozenset())


@pytest.mark.parametrize("context", tiers.contexts(CONTEXTS))
def test_the_owner_making_the_reverted_change_again_is_no_replay(tmp_path, context):
    """Near miss: the owner signs the same fixture change anew, on main's tip."""
    r = full_repo(tmp_path, owner_kind="ecdsa")
    landed_and_reverted(r)
    r.signed({FIXTURE: "2\n", LOCK: lock_of(b"2\n")}, message="owner: fixture 2 again")
    assert r.judge(context) == ("pass", frozenset())


@pytest.mark.parametrize("context", tiers.contexts(CONTEXTS))
def test_a_tag_at_the_replay_is_a_replay_though_nothing_was_reverted(tmp_path, context):
    """Reverted or not: the owner's change still on main, its twin pushed alone."""
    r = full_repo(tmp_path, owner_kind="ecdsa")
    git(r.client, "checkout", "-q", "main")
    change = r.signed({FIXTURE: "2\n", LOCK: lock_of(b"2\n")}, message="owner: fixture 2")
    assert push(r.client, "main").rc == 0
    git(r.client, "fetch", "-q", "origin")
    git(r.client, "checkout", "-q", "-B", "change", twin_of(r, change))
    if context == "push":
        p = push(r.client, "HEAD:refs/heads/replayed", env=push_env(GL_USERNAME="bob"))
        assert p.rc != 0 and f"refs/heads/replayed: {LOCK}: signature-replayed" in p.findings()
        return
    verdict, got = r.judge(context)
    # CI merges the twin into main, which has the change: nothing changes
    assert verdict == "pass" if context == "ci" else f"{LOCK}: signature-replayed" in got


def extra_header(raw: bytes) -> bytes:
    head, _, message = raw.partition(b"\n\n")
    return head + b"\ngpgsig-x y\n\n" + message


def rewrapped_armor(raw: bytes) -> bytes:
    from oracle_guard.authority import sshsig
    from testing.signatures import resigned

    _, armored = sshsig.split_commit(raw)
    assert armored is not None
    body = b"".join(armored.splitlines()[1:-1])
    lines = b"\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return resigned(raw, armored.splitlines()[0] + b"\n" + lines + b"\n" + armored.splitlines()[-1])


@pytest.mark.parametrize("context", tiers.contexts(CONTEXTS))
@pytest.mark.parametrize("reencode", [extra_header, rewrapped_armor])
def test_a_reencoded_signature_header_does_not_sign(tmp_path, context, reencode):
    """A second gpgsig* header, or armor wrapped at 64: git verifies both, and
    each gives the owner's change a new commit id. Neither signs here."""
    r = full_repo(tmp_path)
    change = r.signed({FIXTURE: "2\n", LOCK: lock_of(b"2\n")}, message="owner: fixture 2")
    raw = subprocess.run(
        ["git", "-C", str(r.client), "cat-file", "commit", change],
        stdout=subprocess.PIPE,
        check=True,
    ).stdout
    git(r.client, "reset", "-q", "--hard", write_commit(r, reencode(raw)))
    verdict, got = r.judge(context)
    assert verdict == "reject" and f"{LOCK}: oracle-change-unsigned" in got, (context, got)
    # near miss: the commit as git wrote it
    git(r.client, "reset", "-q", "--hard", change)
    assert r.judge(context) == ("pass", frozenset())


# -- deletable: owners clean up an abandoned signed branch ----------------------------
DELETABLE = CONTRACT + (
    'deletable:\n  owners: ["refs/heads/oracle/*"]\n  everyone: ["refs/heads/tmp/*"]\n'
)


def signed_push(r: Repo, key: Optional[Path], *args: str):
    """``git push [--signed] origin ARGS`` as bob (no owner by variable), the push
    certificate signed with ``key`` when it is given."""
    from testing.server import Push

    signing = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={key}"] if key else []
    proc = subprocess.run(
        [
            "git",
            "-C",
            str(r.client),
            *signing,
            "push",
            *(["--signed"] if key else []),
            "origin",
            *args,
        ],
        env=push_env(GL_USERNAME="bob"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    return Push(proc.returncode, proc.stderr.decode("utf-8", "replace"))


def test_an_owner_deletes_an_abandoned_signed_branch_with_a_signed_push(tmp_path):
    r = Repo(tmp_path, contract=DELETABLE)
    git(r.server, "config", "receive.certNonceSeed", "a secret of the server's")
    r.signed({SEEDS: "[1, 2, 3]\n"}, message="owner: an oracle change, then abandoned")
    assert push(r.client, "change:refs/heads/oracle/x", env=push_env(GL_USERNAME="bob")).rc == 0
    gone = ":refs/heads/oracle/x"
    unsigned = signed_push(r, None, gone)
    assert unsigned.rc != 0 and "refs/heads/oracle/x: -: ref-deleted" in unsigned.findings()
    assert "only an owner may (deletable.owners), and the push is not signed" in unsigned.stderr
    by_agent = signed_push(r, r.agent, gone)
    assert by_agent.rc != 0 and "signed by a key that is not in" in by_agent.stderr, by_agent.stderr
    assert rev(r.server, "refs/heads/oracle/x") is not None
    by_owner = signed_push(r, r.owner, gone)
    assert by_owner.rc == 0, by_owner.stderr
    assert "the push is signed by alice, an owner: deletion allowed by deletable.owners" in (
        by_owner.stderr
    )
    assert rev(r.server, "refs/heads/oracle/x") is None


def test_a_push_certificate_git_did_not_vouch_for_signs_for_nothing(tmp_path):
    """Without receive.certNonceSeed git gives no nonce: an owner's signed push of
    the deletion is not an owner's (a certificate could be replayed)."""
    r = Repo(tmp_path, contract=DELETABLE)
    assert push(r.client, "change:refs/heads/oracle/x", env=push_env(GL_USERNAME="bob")).rc == 0
    tip = rev(r.server, "refs/heads/oracle/x")
    cert = git(
        r.server, "hash-object", "-w", "--stdin", input=f"certificate\n\n{tip} {'0' * 40}".encode()
    ).strip()
    proc = run_pre_receive(
        r.server,
        updates((tip, "0" * 40, "refs/heads/oracle/x")),
        env=push_env(GIT_PUSH_CERT=cert, GIT_PUSH_CERT_NONCE_STATUS="BAD"),
    )
    assert proc.returncode == 1 and b"its certificate's nonce is not the one" in proc.stderr


def test_everyone_deletes_what_deletable_everyone_lists_but_never_the_default_branch(tmp_path):
    r = Repo(tmp_path, contract=DELETABLE.replace('"refs/heads/tmp/*"', '"refs/heads/*"'))
    assert push(r.client, "change:refs/heads/tmp/x", env=push_env(GL_USERNAME="bob")).rc == 0
    assert signed_push(r, None, ":refs/heads/tmp/x").rc == 0
    main = signed_push(r, None, ":refs/heads/main")
    assert main.rc != 0 and "it is the branch every push takes its rules from" in main.stderr
    assert rev(r.server, "refs/heads/main") is not None
