"""gitio.Git.sha256_blobs: the streamed batch that fixture-lock hashes with."""

import hashlib
import os
import random

import pytest

from oracle_guard.errors import GitError
from oracle_guard.git.plumbing import Git
from testing.git import commit, git, init_repo


def blob(repo, data: bytes) -> str:
    path = repo / "blob.tmp"
    path.write_bytes(data)
    return git(repo, "hash-object", "-w", str(path)).strip()


@pytest.fixture
def repo(tmp_path):
    return init_repo(tmp_path / "repo")


def test_digests_match_hashlib_across_buffer_boundaries(repo):
    rng = random.Random(5)
    # empty, tiny, one byte short of and past the 1 MiB read buffer, and a newline-only blob
    payloads = [
        b"",
        b"a",
        b"\n",
        rng.randbytes((1 << 20) - 1),
        rng.randbytes((1 << 20) + 7),
        rng.randbytes(3 << 20),
    ] + [rng.randbytes(rng.randrange(5000)) for _ in range(200)]
    oids = [blob(repo, data) for data in payloads]
    digests = Git(str(repo)).sha256_blobs(oids + oids[:3])  # repeats are hashed once
    assert len(digests) == len(set(oids))
    for oid, data in zip(oids, payloads):
        assert digests[oid] == hashlib.sha256(data).hexdigest()


def test_nothing_asked_runs_nothing(repo):
    assert Git(str(repo)).sha256_blobs([]) == {}


def test_a_missing_object_is_an_error_not_a_digest(repo):
    present = blob(repo, b"here\n")
    missing = "0123456789abcdef0123456789abcdef01234567"
    with pytest.raises(GitError, match=f"cannot read object {missing}: {missing} missing"):
        Git(str(repo)).sha256_blobs([present, missing, present])


def test_a_tree_is_not_hashed_as_a_blob(repo):
    (repo / "f").write_text("x\n")
    git(repo, "add", "f")
    tree = git(repo, "write-tree").strip()
    with pytest.raises(GitError, match=f"cannot read object {tree}: {tree} tree"):
        Git(str(repo)).sha256_blobs([tree])


def test_a_truncated_object_file_is_an_error(repo):
    oid = blob(repo, os.urandom(1 << 16))
    path = repo / ".git" / "objects" / oid[:2] / oid[2:]
    data = path.read_bytes()
    path.chmod(0o644)
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(GitError, match=f"cannot read object {oid}"):
        Git(str(repo)).sha256_blobs([oid])


# -- what the caller's environment may not change ------------------------------------


def test_replace_refs_cannot_swap_the_base_contract(tmp_path, capsys):
    """refs/replace/* can be pushed like any ref; git would then read the base's
    contract blob as another one. oracle-guard reads objects as they are."""
    from testing.git import commit, run_guard

    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": "version: 1\nwrite_set:\n  deny: ['oracle/**']\n",
            "oracle/a.json": "1\n",
        },
    )
    strict = git(repo, "rev-parse", "HEAD:.oracle-guard.yaml").strip()
    lax = blob(repo, b"version: 1\n")
    git(repo, "replace", strict, lax)
    assert git(repo, "cat-file", "-p", strict) == "version: 1\n"  # git itself is fooled
    commit(repo, {"oracle/a.json": "2\n"})
    rc, out, _ = run_guard(capsys, repo, "check", "--head", "HEAD")
    assert rc == 1, out
    assert "oracle/a.json: write-denied:" in out


def test_pathspec_variables_do_not_change_a_folder_listing(tmp_path, monkeypatch):
    from oracle_guard.parsing.patterns import PatternSet
    from oracle_guard.snapshot import Snapshot
    from testing.git import commit

    repo = init_repo(tmp_path / "r")
    commit(repo, {"seeds/a.json": "[1]\n", "seeds/b.json": "[2]\n"})
    head = git(repo, "rev-parse", "HEAD").strip()
    for variable in (
        "GIT_LITERAL_PATHSPECS",
        "GIT_GLOB_PATHSPECS",
        "GIT_NOGLOB_PATHSPECS",
        "GIT_ICASE_PATHSPECS",
    ):
        monkeypatch.setenv(variable, "1")
        handle = Git(str(repo))
        try:
            found = Snapshot.of_commit(handle, head, "HEAD").select(PatternSet(["seeds/*.json"]))
        finally:
            handle.close()
        assert found == ["seeds/a.json", "seeds/b.json"], variable


def test_outside_history_names_the_commits_a_tip_does_not_reach(tmp_path):
    # the replay lookup skips commits whose parent only the push makes: one git for all
    repo = init_repo(tmp_path / "r")
    a = commit(repo, {"f": "a\n"})
    b = commit(repo, {"f": "b\n"})
    git(repo, "checkout", "-q", "-b", "side")
    d = commit(repo, {"f": "d\n"})
    e = commit(repo, {"f": "e\n"})
    git(repo, "checkout", "-q", "-")
    c = commit(repo, {"f": "c\n"})
    handle = Git(str(repo))
    try:
        assert handle.outside_history([a, b, c, d, e], c) == {d, e}
        assert handle.outside_history([a, b], c) == set()  # near miss: all reached
        assert handle.outside_history([], c) == set()
    finally:
        handle.close()
