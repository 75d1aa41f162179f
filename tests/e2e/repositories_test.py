"""Odd repositories: each works as documented, or exits 2 with a clear message.

Covered elsewhere, not repeated here: no commits yet, the unmerged index,
outside any repository, a bare repository with --base/--head, a shallow CI
clone without its base (revisions_test); CRLF checkouts of fixtures, for the
hook and for `lock` (fixture_lock_test, lock_command_test); a sha256 server
(pre_receive_test)."""

import hashlib
import json
import subprocess

import pytest

from testing.git import commit, git, init_repo, run_guard, stage, write
from testing.oracle import NOW

CONTRACT = """\
version: 1
fixtures:
  - lock: oracle/fixtures.lock.json
    root: oracle/inputs
    paths: ["oracle/inputs/**"]
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
write_set:
  allow: ["src/**"]
  owners: [alice]
identity_env: GL_USERNAME
"""
FIXTURE = "oracle/inputs/a.txt"
LOCK = "oracle/fixtures.lock.json"
SEEDS = "seeds/a.json"
ALPHA = b"alpha\n"
MISMATCH = f"{FIXTURE}: fixture-mismatch: sha256 "
REORDERED = f"{SEEDS}:2: seed-reordered: element [0] moved"
SHALLOW_HINT = (
    "fetch full history (actions/checkout with 'fetch-depth: 0', or "
    "'git fetch --unshallow origin' / 'git fetch origin main')"
)


def lock_for(**fixtures):
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in fixtures.items()}
    return json.dumps(dict(sorted(digests.items())), indent=2) + "\n"


BASE_FILES = {
    ".oracle-guard.yaml": CONTRACT,
    FIXTURE: ALPHA,
    LOCK: lock_for(**{"a.txt": ALPHA}),
    SEEDS: [1, 2],
    "src/app.py": "print('v1')\n",
}


def make_repo(path, *init_args):
    if init_args:
        subprocess.run(["git", "init", "-q", "-b", "main", *init_args, str(path)], check=True)
    else:
        init_repo(path)
    commit(path, BASE_FILES, "oracle")
    return path


def check(capsys, repo, *args, env=None):
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW, *args, env=env)
    return rc, out, err


def assert_passes(capsys, repo, *args):
    rc, out, err = check(capsys, repo, *args)
    assert (rc, err) == (0, ""), out + err


def assert_finds(capsys, repo, prefix, *args):
    rc, out, err = check(capsys, repo, *args)
    assert (rc, err) == (1, ""), out + err
    assert [line for line in out.splitlines() if line.startswith(prefix)], out


def assert_error(capsys, repo, *args):
    rc, out, err = check(capsys, repo, *args)
    assert (rc, out) == (2, ""), out + err
    assert err.startswith("oracle-guard: error: ") and err.count("\n") == 1, err
    return err[len("oracle-guard: error: ") : -1]


# -- detached HEAD ---------------------------------------------------------------------


def test_detached_head_judges_the_index_against_the_detached_commit(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"src/app.py": "print('v2')\n"}, "second")
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    stage(repo, {"src/app.py": "print('v3')\n"})
    assert_passes(capsys, repo)
    stage(repo, {SEEDS: [2, 1]})
    assert_finds(capsys, repo, REORDERED)


def test_detached_head_with_head_option(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo")
    git(repo, "checkout", "-q", "--detach")
    commit(repo, {FIXTURE: b"rewritten\n"}, "rewrite a fixture")
    assert_finds(capsys, repo, MISMATCH, "--head", "HEAD")
    commit(repo, {FIXTURE: ALPHA}, "restore it")
    assert_passes(capsys, repo, "--head", "HEAD", "--base", "HEAD~2")


# -- shallow clones ----------------------------------------------------------------------


def shallow(tmp_path, origin, depth):
    clone = tmp_path / f"depth{depth}"
    subprocess.run(
        ["git", "clone", "-q", "--depth", str(depth), f"file://{origin}", str(clone)], check=True
    )
    return clone


@pytest.fixture
def origin(tmp_path):
    """main: the base, then a commit that rewrites a seed."""
    repo = make_repo(tmp_path / "origin")
    commit(repo, {SEEDS: [2, 1]}, "reorder the seeds")
    return repo


def test_shallow_clone_judges_the_index_against_head_it_has(tmp_path, capsys, origin):
    clone = shallow(tmp_path, origin, 1)
    assert git(clone, "rev-parse", "--is-shallow-repository").strip() == "true"
    stage(clone, {"src/app.py": "print('v2')\n"})
    assert_passes(capsys, clone)
    stage(clone, {FIXTURE: b"rewritten\n"})
    assert_finds(capsys, clone, MISMATCH)


def test_shallow_clone_judges_a_commit_whose_parent_it_has(tmp_path, capsys, origin):
    clone = shallow(tmp_path, origin, 2)
    assert_finds(capsys, clone, REORDERED, "--head", "HEAD")


def test_shallow_clone_commit_whose_parent_was_cut_off_is_an_error(tmp_path, capsys, origin):
    """The shallow boundary looks like a root commit to git; judging it against the
    empty tree would let its seed rewrite through."""
    clone = shallow(tmp_path, origin, 1)
    message = assert_error(capsys, clone, "--head", "HEAD")
    assert message.endswith(SHALLOW_HINT), message


# -- git worktree ----------------------------------------------------------------------------


@pytest.fixture
def worktree(tmp_path):
    """A linked worktree on branch 'feature', whose contract also denies docs/**
    (main's contract only allows src/**)."""
    repo = make_repo(tmp_path / "repo")
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    commit(
        linked,
        {
            ".oracle-guard.yaml": CONTRACT.replace(
                "  owners: [alice]\n", '  owners: [alice]\n  deny: ["docs/**"]\n'
            )
        },
        "tighten",
    )
    return repo, linked


def test_worktree_uses_its_own_index_and_contract(capsys, worktree):
    repo, linked = worktree
    stage(linked, {"docs/x.md": "x\n"})
    rc, out, _ = check(capsys, linked, "--only", "write-set")
    assert rc == 1
    assert out.splitlines()[0] == "docs/x.md: write-denied: matches deny pattern 'docs/**'"
    # the main worktree's index and contract are another matter
    assert_passes(capsys, repo)
    stage(repo, {"docs/x.md": "x\n"})
    rc, out, _ = check(capsys, repo, "--only", "write-set")
    assert rc == 1
    assert (
        out.splitlines()[0] == "docs/x.md: write-outside-set: matches no allowed pattern "
        "of the write set"
    )


def test_worktree_from_a_subfolder(capsys, worktree, monkeypatch):
    _, linked = worktree
    stage(linked, {"src/deep/b.py": "", FIXTURE: b"rewritten\n"})
    monkeypatch.chdir(linked / "src" / "deep")
    assert_finds(capsys, ".", MISMATCH)


def test_worktree_lock_writes_into_the_worktree(capsys, worktree):
    repo, linked = worktree
    stage(linked, {"oracle/inputs/b.txt": b"beta\n"})
    assert_finds(capsys, linked, "oracle/inputs/b.txt: fixture-unlocked")
    rc, out, _ = run_guard(capsys, linked, "lock")
    assert rc == 0, out
    assert (linked / LOCK).read_text() == lock_for(**{"a.txt": ALPHA, "b.txt": b"beta\n"})
    assert (repo / LOCK).read_text() == lock_for(**{"a.txt": ALPHA})
    stage(linked)
    rc, out, _ = check(capsys, linked, "--only", "fixture-lock")
    assert rc == 0, out


# -- bare repositories (with --base/--head: revisions_test) -------------------------------------


def test_bare_repository_without_head_is_an_error(tmp_path, capsys):
    """A bare repository has no index: there is no candidate to judge unless
    --head names one (an empty "index" would read as every file deleted)."""
    origin = make_repo(tmp_path / "origin")
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(origin), str(bare)], check=True)
    message = assert_error(capsys, bare)
    assert "--head" in message, message
    assert_passes(capsys, bare, "--head", "main")


def test_bare_repository_lock_is_an_error(tmp_path, capsys):
    origin = make_repo(tmp_path / "origin")
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(origin), str(bare)], check=True)
    rc, out, err = run_guard(capsys, bare, "lock")
    assert (rc, out) == (2, "")
    assert err == (
        "oracle-guard: error: 'oracle-guard lock' needs a working tree (not a bare repository)\n"
    )


# -- sparse checkout ----------------------------------------------------------------------


def stage_blob(repo, path, data):
    """Put ``data`` at ``path`` in the index only, keeping the entry outside the
    sparse checkout (as a tool that edits the index directly would)."""
    oid = git(repo, "hash-object", "-w", "--stdin", input=data).strip()
    git(repo, "update-index", "--cacheinfo", f"100644,{oid},{path}")
    git(repo, "update-index", "--skip-worktree", path)


@pytest.fixture
def sparse(tmp_path):
    repo = make_repo(tmp_path / "repo")
    git(repo, "sparse-checkout", "set", "src")
    assert not (repo / FIXTURE).exists() and not (repo / SEEDS).exists()
    assert FIXTURE in git(repo, "ls-files", "--", FIXTURE)
    return repo


def test_sparse_checkout_honest_change_passes(capsys, sparse):
    stage(sparse, {"src/app.py": "print('v2')\n"})
    assert_passes(capsys, sparse)
    assert_passes(capsys, sparse, "--head", "HEAD")


def test_sparse_checkout_judges_oracle_files_outside_the_working_tree(capsys, sparse):
    stage_blob(sparse, FIXTURE, b"rewritten\n")
    assert not (sparse / FIXTURE).exists()
    assert_finds(capsys, sparse, MISMATCH)
    rc, out, _ = run_guard(capsys, sparse, "lock", "--check", "--now", NOW)
    assert rc == 1 and out.startswith(MISMATCH), out


def test_sparse_checkout_seed_rewrite_outside_the_working_tree(capsys, sparse):
    stage_blob(sparse, SEEDS, b"[2, 1]\n")
    assert_finds(capsys, sparse, f"{SEEDS}:1: seed-reordered")


# -- sha256 repositories --------------------------------------------------------------------


def test_sha256_repository_check(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo", "--object-format=sha256")
    assert len(git(repo, "rev-parse", "HEAD").strip()) == 64
    stage(repo, {"src/app.py": "print('v2')\n"})
    assert_passes(capsys, repo)
    stage(repo, {SEEDS: [2, 1]})
    assert_finds(capsys, repo, REORDERED)
    commit(repo, message="reorder")
    assert_finds(capsys, repo, REORDERED, "--head", "HEAD")


def test_sha256_repository_lock(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo", "--object-format=sha256")
    stage(repo, {FIXTURE: b"rewritten\n"})
    assert_finds(capsys, repo, MISMATCH)
    rc, out, _ = run_guard(capsys, repo, "lock")
    assert rc == 0, out
    assert (repo / LOCK).read_text() == lock_for(**{"a.txt": b"rewritten\n"})
    stage(repo)
    rc, out, _ = run_guard(capsys, repo, "lock", "--check", "--now", NOW)
    assert rc == 0, out


# -- core.autocrlf=true (fixtures and `lock`: fixture_lock_test, lock_command_test) -------------


def test_autocrlf_seeds_are_judged_on_the_bytes_git_stores(tmp_path, capsys):
    repo = init_repo(tmp_path / "repo")
    git(repo, "config", "core.autocrlf", "true")
    commit(repo, {**BASE_FILES, SEEDS: "[\n  1,\n  2\n]\n"}, "oracle")
    (repo / SEEDS).unlink()
    git(repo, "checkout", "--", SEEDS)
    assert (repo / SEEDS).read_bytes() == b"[\r\n  1,\r\n  2\r\n]\r\n"
    # an append made in the CRLF checkout
    write(repo, {SEEDS: b"[\r\n  1,\r\n  2,\r\n  3\r\n]\r\n"})
    stage(repo)
    assert git(repo, "cat-file", "blob", f":{SEEDS}") == "[\n  1,\n  2,\n  3\n]\n"
    rc, out, err = check(capsys, repo, "--only", "seed-append-only")
    assert (rc, err) == (0, ""), out
    write(repo, {SEEDS: b"[\r\n  2,\r\n  1\r\n]\r\n"})
    stage(repo)
    assert_finds(capsys, repo, f"{SEEDS}:2: seed-reordered", "--only", "seed-append-only")
