"""Git.read_ahead: small blobs asked of the cat-file --batch many ids a request and
kept, so the reads that follow need no round trip; what it does not keep is read
as before, and the batch never falls out of step."""

import random

import pytest

from oracle_guard.errors import GitError
from oracle_guard.git.objects import CACHE_BLOBS_UP_TO, READ_AHEAD, BlobTooLarge
from oracle_guard.git.plumbing import Git
from oracle_guard.snapshot import Snapshot
from testing.git import commit, git, init_repo


def blob(repo, data: bytes) -> str:
    path = repo / "blob.tmp"
    path.write_bytes(data)
    return git(repo, "hash-object", "-w", str(path)).strip()


@pytest.fixture
def repo(tmp_path):
    return init_repo(tmp_path / "repo")


def test_small_blobs_are_kept_and_the_rest_read_as_before(repo):
    rng = random.Random(3)
    small = [rng.randbytes(rng.randrange(3000)) for _ in range(2 * READ_AHEAD + 5)]
    small += [b"", b"\n", b"a\nb\n"]
    oids = [blob(repo, data) for data in small]
    large = rng.randbytes(CACHE_BLOBS_UP_TO + 1)
    large_oid = blob(repo, large)
    over_limit = blob(repo, b"x" * 5000)
    (repo / "f").write_text("x\n")
    git(repo, "add", "f")
    tree = git(repo, "write-tree").strip()
    missing = "0123456789abcdef0123456789abcdef01234567"
    handle = Git(str(repo))
    try:
        asked = [oids[0], large_oid, missing, tree, *oids, over_limit, oids[1]]
        handle.read_ahead(asked, limit=4096)
        objects = repo / ".git" / "objects"
        objects.rename(repo / ".git" / "gone")  # what was kept needs no object now
        for oid, data in zip(oids, small):
            if len(data) <= 4096:
                assert handle.read_blob(oid, 4096) == data
        with pytest.raises(GitError):  # not kept: over the limit it was asked with
            handle.read_blob(over_limit)
        (repo / ".git" / "gone").rename(objects)
        handle.close()  # a batch opened afresh: it met the folder gone
        assert handle.read_blob(large_oid) == large
        with pytest.raises(BlobTooLarge):
            handle.read_blob(over_limit, 4096)
        with pytest.raises(GitError, match=f"cannot read object {missing}: {missing} missing"):
            handle.read_blob(missing)
        with pytest.raises(GitError, match=f"cannot read object {tree}"):
            handle.read_blob(tree)
        assert handle.read_blob(oids[2]) == small[2]  # the batch is still in step
    finally:
        handle.close()


def test_a_commit_snapshot_reads_its_files_ahead(repo):
    files = {f"tests/test_{n}.py": f"def test_{n}():\n    assert {n}\n" for n in range(70)}
    for name, text in files.items():
        (repo / "tests").mkdir(exist_ok=True)
        (repo / name).write_text(text)
    (repo / "tests" / "link.py").symlink_to("test_0.py")
    head = commit(repo)
    handle = Git(str(repo))
    try:
        snapshot = Snapshot.of_commit(handle, head, "head")
        snapshot.read_ahead([*files, "tests/link.py", "tests/absent.py"], limit=1 << 20)
        (repo / ".git" / "objects").rename(repo / ".git" / "gone")
        for name, text in files.items():
            assert snapshot.read(name) == text.encode()
    finally:
        handle.close()
