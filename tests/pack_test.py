"""git/pack.py: blobs hashed straight from pack files give git's digests, leave
what they cannot read to cat-file, and fail closed on a corrupt pack or index."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
from pathlib import Path
from typing import Dict, Tuple

import pytest

from oracle_guard.errors import GitError
from oracle_guard.git import pack
from oracle_guard.git.objects import READ_PACKS_FROM
from oracle_guard.git.plumbing import Git
from testing.git import commit, git, init_repo, run_guard

CONTRACT = """\
version: 1
fixtures:
  - lock: fixtures/SHA256SUMS
    root: fixtures
    paths: ["fixtures/**"]
"""


def payloads(count: int = 40, seed: int = 7) -> Dict[str, bytes]:
    """Fixtures of every shape the reader meets: random bytes (stored blocks, one
    and many), text (compressed blocks), text variants (deltas once repacked),
    an empty file and one larger than a segment (8 MiB) each way."""
    rng = random.Random(seed)
    files = {
        "fixtures/empty.bin": b"",
        "fixtures/one.bin": b"x",
        "fixtures/big-random.bin": rng.randbytes(9 << 20),
        "fixtures/big-text.txt": b"".join(b"line %d\n" % i for i in range(1_300_000)),
    }
    base = b"".join(b"row %d,%d\n" % (i, rng.randrange(10**6)) for i in range(4000))
    for i in range(count):
        files[f"fixtures/r{i:02d}.bin"] = rng.randbytes(rng.choice([10, 5000, 70_000, 200_000]))
        files[f"fixtures/t{i:02d}.csv"] = base + b"extra %d\n" % i
    return files


def sums(files: Dict[str, bytes]) -> str:
    lines = [
        f"{hashlib.sha256(data).hexdigest()}  {path[len('fixtures/') :]}\n"
        for path, data in sorted(files.items())
    ]
    return "".join(lines)


def fixture_repo(tmp_path: Path, files: Dict[str, bytes], name: str = "repo") -> Path:
    repo = init_repo(tmp_path / name)
    commit(repo, {".oracle-guard.yaml": CONTRACT, **files, "fixtures/SHA256SUMS": sums(files)})
    return repo


def blob_ids(repo: Path) -> Dict[str, str]:
    """path -> blob id of HEAD's files."""
    ids = {}
    for line in git(repo, "ls-tree", "-r", "HEAD").splitlines():
        meta, path = line.split("\t")
        ids[path] = meta.split()[2]
    return ids


def packed_objects(repo: Path) -> Dict[str, Tuple[int, int, bool]]:
    """id -> (offset, size in pack, deltified) of every object in the repository's packs."""
    found = {}
    for idx in (repo / ".git" / "objects" / "pack").glob("*.idx"):
        for line in git(repo, "verify-pack", "-v", str(idx)).splitlines():
            parts = line.split()
            if len(parts) >= 5 and len(parts[0]) == 40 and parts[1] in ("blob", "tree", "commit"):
                found[parts[0]] = (int(parts[4]), int(parts[3]), len(parts) > 5)
    return found


def expected(files: Dict[str, bytes], ids: Dict[str, str]) -> Dict[str, str]:
    return {ids[p]: hashlib.sha256(data).hexdigest() for p, data in files.items()}


def check(capsys, repo: Path) -> Tuple[int, str, str]:
    return run_guard(capsys, repo, "check", "--only", "fixture-lock", "--no-cache")


def only_file(folder: Path, suffix: str) -> Path:
    (found,) = folder.glob(f"*{suffix}")
    found.chmod(0o644)
    return found


def flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


# -- the digests ---------------------------------------------------------------------


@pytest.mark.parametrize("repack", [None, ["repack", "-adq"], ["repack", "-adfq", "--window=50"]])
def test_packed_digests_match_hashlib_and_the_streamed_path(tmp_path, repack):
    files = payloads()
    repo = fixture_repo(tmp_path, files)
    if repack:
        git(repo, *repack)
    ids = blob_ids(repo)
    oids = [ids[p] for p in files]
    handle = Git(str(repo))
    try:
        digests = handle.sha256_blobs(oids)
        assert digests == expected(files, ids)
        assert list(digests) == list(dict.fromkeys(oids))  # the order asked
        assert handle._objects.sha256_streamed(list(dict.fromkeys(oids))) == digests
    finally:
        handle.close()


def test_the_reader_reads_whole_blobs_and_leaves_deltas_and_loose_objects(tmp_path):
    files = payloads()
    repo = fixture_repo(tmp_path, files)
    git(repo, "repack", "-adfq", "--window=50")
    loose = os.urandom(3000)
    (repo / "loose.bin").write_bytes(loose)
    loose_id = git(repo, "hash-object", "-w", "loose.bin").strip()
    ids = blob_ids(repo)
    packed = packed_objects(repo)
    deltas = {oid for oid, (_, _, deltified) in packed.items() if deltified}
    wanted = [ids[p] for p in files] + [loose_id]
    assert deltas & set(wanted), "the repack made no delta: the test proves nothing"
    digests, rest = pack.sha256_packed(str(repo / ".git" / "objects"), wanted)
    assert set(rest) == (deltas & set(wanted)) | {loose_id}
    assert set(digests) == set(wanted) - set(rest)
    want = expected(files, ids)
    assert all(digests[oid] == want[oid] for oid in digests)
    assert Git(str(repo)).sha256_blobs(wanted)[loose_id] == hashlib.sha256(loose).hexdigest()


def test_a_tree_in_a_pack_is_left_to_cat_file_which_refuses_it(tmp_path):
    files = payloads(count=10)
    repo = fixture_repo(tmp_path, files)
    git(repo, "repack", "-adq")
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    oids = list(blob_ids(repo).values())
    with pytest.raises(GitError, match=f"cannot read object {tree}: {tree} tree"):
        Git(str(repo)).sha256_blobs(oids + [tree])


def test_a_missing_object_among_many_is_an_error(tmp_path):
    files = payloads(count=10)
    repo = fixture_repo(tmp_path, files)
    git(repo, "repack", "-adq")
    missing = "0123456789abcdef0123456789abcdef01234567"
    with pytest.raises(GitError, match=f"cannot read object {missing}: {missing} missing"):
        Git(str(repo)).sha256_blobs(list(blob_ids(repo).values()) + [missing])


def test_few_blobs_are_streamed_without_opening_a_pack(tmp_path):
    """The near miss of the threshold: below it the packs are never read, so a
    corrupt index there goes unnoticed by the few blobs cat-file reads."""
    files = payloads(count=2)
    repo = fixture_repo(tmp_path, files)
    git(repo, "repack", "-adq")
    idx = only_file(repo / ".git" / "objects" / "pack", ".idx")
    flip(idx, idx.stat().st_size - 1)  # the index's own checksum
    ids = blob_ids(repo)
    few = [ids["fixtures/r00.bin"], ids["fixtures/t00.csv"]]
    assert len(few) < READ_PACKS_FROM
    assert Git(str(repo)).sha256_blobs(few) == {oid: expected(files, ids)[oid] for oid in few}


def reindexed_repo(tmp_path: Path, files: Dict[str, bytes], version: str) -> Path:
    """One pack of ``files``, its index written again by index-pack --index-version."""
    repo = fixture_repo(tmp_path, files)
    git(repo, "repack", "-adq")
    folder = repo / ".git" / "objects" / "pack"
    packfile = only_file(folder, ".pack")
    only_file(folder, ".idx").unlink()
    git(repo, "index-pack", f"--index-version={version}", str(packfile))
    return repo


def test_large_offsets_of_an_index_are_read(tmp_path):
    """Packs above 2 GiB index their objects by 8-byte offsets; index-pack writes
    them for every object past a given offset."""
    files = payloads(count=10)
    repo = reindexed_repo(tmp_path, files, "2,0x100")
    ids = blob_ids(repo)
    found = pack.open_packs(str(repo / ".git" / "objects"))
    try:
        assert found[0].count > 0 and found[0]._large < len(found[0]._idx) - 40  # type: ignore
    finally:
        for p in found:
            p.close()
    handle = Git(str(repo))
    oids = list(ids.values())
    assert handle.sha256_blobs(oids) == handle._objects.sha256_streamed(oids)
    assert handle.sha256_blobs([ids[p] for p in files]) == expected(files, ids)


def test_a_version_1_index_is_left_to_cat_file(tmp_path):
    files = payloads(count=10)
    repo = reindexed_repo(tmp_path, files, "1")
    ids = blob_ids(repo)
    oids = [ids[p] for p in files]
    assert pack.sha256_packed(str(repo / ".git" / "objects"), oids) == ({}, oids)
    assert Git(str(repo)).sha256_blobs(oids) == expected(files, ids)


def test_a_sha256_repository_is_left_to_cat_file(tmp_path):
    files = payloads(count=10)
    repo = tmp_path / "repo"
    subprocess.run(
        ["git", "init", "-q", "-b", "main", "--object-format=sha256", str(repo)], check=True
    )
    commit(repo, files)
    git(repo, "repack", "-adq")
    ids = blob_ids(repo)
    oids = [ids[p] for p in files]
    assert pack.sha256_packed(str(repo / ".git" / "objects"), oids) == ({}, oids)
    assert Git(str(repo)).sha256_blobs(oids) == expected(files, ids)


def test_the_objects_directory_is_the_one_git_reads(tmp_path, monkeypatch):
    """A server's quarantine: new objects in GIT_OBJECT_DIRECTORY, the rest
    through GIT_ALTERNATE_OBJECT_DIRECTORIES. The packs read are the
    quarantine's; what lies in the alternate is cat-file's."""
    old = payloads(count=10, seed=1)
    new = payloads(count=10, seed=2)
    repo = fixture_repo(tmp_path, old)
    git(repo, "repack", "-adq")
    old_ids = [blob_ids(repo)[p] for p in old]
    quarantine = tmp_path / "incoming"
    (quarantine / "pack").mkdir(parents=True)
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(quarantine))
    monkeypatch.setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", str(repo / ".git" / "objects"))
    commit(repo, new, "new")
    listed = git(repo, "rev-list", "--objects", "HEAD~1..HEAD").encode()
    # --window=0: no deltas, so every pushed blob is the reader's to read
    git(repo, "pack-objects", "-q", "--window=0", str(quarantine / "pack" / "pack"), input=listed)
    handle = Git(str(repo))
    assert os.path.samefile(handle.objects_directory(), quarantine)
    new_ids = blob_ids(repo)
    wanted = [new_ids[p] for p in new if new_ids[p] not in old_ids]  # the objects pushed
    assert len(wanted) > 20
    digests, rest = pack.sha256_packed(handle.objects_directory(), wanted)
    assert rest == [] and digests == {oid: expected(new, new_ids)[oid] for oid in wanted}
    _, rest = pack.sha256_packed(handle.objects_directory(), old_ids)
    assert rest == old_ids  # in the alternate
    everything = handle.sha256_blobs(wanted + old_ids)
    assert everything == {**expected(new, new_ids), **expected(old, dict(zip(old, old_ids)))}


@pytest.mark.parametrize("unpack_limit", [None, "1"])
def test_a_push_into_a_quarantine_is_judged_with_the_same_digests(tmp_path, unpack_limit):
    """A real pre-receive, through git push: the pushed objects sit in the
    quarantine while the hook hashes its fixtures, loose (a small push, by
    default) or as the pushed pack (receive.unpackLimit)."""
    from testing.server import make_client, make_server, push, push_env

    files = payloads(count=10)
    server = make_server(tmp_path / "server.git")
    if unpack_limit:
        git(server, "config", "receive.unpackLimit", unpack_limit)
    client = make_client(tmp_path / "client", server)
    contract = CONTRACT + "write_set:\n  owners: [alice]\nidentity_env: GL_USERNAME\n"
    commit(client, {".oracle-guard.yaml": contract, **files, "fixtures/SHA256SUMS": sums(files)})
    alice = push_env(GL_USERNAME="alice")  # an owner: fixtures may change, with their lock
    pushed = push(client, "main", env=alice)
    assert pushed.rc == 0, pushed.stderr
    if unpack_limit:
        assert list((server / "objects" / "pack").glob("*.idx"))
    changed = dict(files, **{"fixtures/r03.bin": b"not what the lock says\n"})
    commit(client, {"fixtures/r03.bin": changed["fixtures/r03.bin"]})
    rejected = push(client, "main", env=alice)
    assert rejected.rc != 0
    assert rejected.findings() == ["refs/heads/main: fixtures/r03.bin: fixture-mismatch"]
    # the near miss: the fixture and its lock together
    git(client, "reset", "-q", "--hard", "HEAD~1")
    commit(
        client,
        {"fixtures/r03.bin": changed["fixtures/r03.bin"], "fixtures/SHA256SUMS": sums(changed)},
    )
    accepted = push(client, "main", env=alice)
    assert accepted.rc == 0, accepted.stderr


# -- corrupt packs fail closed -------------------------------------------------------


def corrupt_repo(tmp_path: Path) -> Tuple[Path, Dict[str, bytes]]:
    files = payloads(count=20)
    repo = fixture_repo(tmp_path, files)
    git(repo, "repack", "-adq")
    return repo, files


def assert_fails_closed(capsys, repo: Path, files: Dict[str, bytes], pattern: str) -> None:
    rc, out, err = check(capsys, repo)
    assert rc != 0 and rc != 1, out + err  # an error, not a finding
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("oracle-guard: error: "), err
    assert pattern in lines[0], lines[0]
    # `oracle-guard lock` hashes the same blobs: it writes no lock
    lock = repo / "fixtures" / "SHA256SUMS"
    before = lock.read_bytes()
    rc, out, err = run_guard(capsys, repo, "lock", "--no-cache")
    assert rc not in (0, 1), out + err
    assert lock.read_bytes() == before


def test_the_corrupt_fixtures_pass_before_they_are_corrupted(tmp_path, capsys):
    """The near miss of the fault tests below: the same repository, intact."""
    repo, _ = corrupt_repo(tmp_path)
    rc, out, err = check(capsys, repo)
    assert rc == 0 and "fixture-lock: passed" in out, out + err


@pytest.mark.parametrize(
    "path", ["fixtures/r05.bin", "fixtures/big-random.bin", "fixtures/big-text.txt"]
)
def test_a_flipped_byte_inside_a_packed_blob_fails_closed(tmp_path, capsys, path):
    repo, files = corrupt_repo(tmp_path)
    oid = blob_ids(repo)[path]
    offset, size, deltified = packed_objects(repo)[oid]
    assert not deltified, "the repack made this one a delta: the fault would miss it"
    flip(only_file(repo / ".git" / "objects" / "pack", ".pack"), offset + size // 2)
    assert_fails_closed(capsys, repo, files, f"cannot read object {oid}: corrupt in pack-")


def test_a_truncated_pack_fails_closed(tmp_path, capsys):
    repo, files = corrupt_repo(tmp_path)
    oids = list(blob_ids(repo).values())
    packfile = only_file(repo / ".git" / "objects" / "pack", ".pack")
    data = packfile.read_bytes()
    packfile.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(GitError, match="pack pack-[0-9a-f]+.pack does not match its index"):
        pack.sha256_packed(str(repo / ".git" / "objects"), oids)
    # git itself reads the contract and the trees before any fixture is hashed
    assert_fails_closed(capsys, repo, files, "cannot read object")


@pytest.mark.parametrize("where", ["name", "crc", "offset"])
def test_a_bad_index_fails_closed(tmp_path, capsys, where):
    repo, files = corrupt_repo(tmp_path)
    idx = only_file(repo / ".git" / "objects" / "pack", ".idx")
    data = idx.read_bytes()
    count = int.from_bytes(data[8 + 255 * 4 : 8 + 256 * 4], "big")
    names = [data[8 + 1024 + 20 * i : 8 + 1024 + 20 * (i + 1)] for i in range(count)]
    # a fixture's entry: git reads the commit, its trees and the contract first, and
    # the commit's id (its time) would decide whose entry comes first
    i = names.index(bytes.fromhex(blob_ids(repo)["fixtures/r05.bin"]))
    at = {
        "name": 8 + 1024 + 20 * i + 5,
        "crc": 8 + 1024 + 20 * count + 4 * i + 2,
        "offset": 8 + 1024 + 24 * count + 4 * i + 3,
    }
    flip(idx, at[where])
    assert_fails_closed(capsys, repo, files, "is corrupt: its checksum does not match")


@pytest.mark.parametrize("path", ["fixtures/big-random.bin", "fixtures/big-text.txt"])
def test_a_wrong_crc_with_a_good_checksum_is_checked_where_no_digest_is_expected(
    tmp_path, capsys, path
):
    """An index whose CRC32 of one blob is wrong but whose checksum was made to
    match. The check passes: the blob's bytes hash to the lock's digest, which no
    corruption can make, so its CRC32 is not asked (git cat-file reads the same
    bytes). `oracle-guard lock`, which expects no digest, checks the CRC32 of the
    packed bytes, stored or compressed, and fails closed."""
    repo, files = corrupt_repo(tmp_path)
    oid = blob_ids(repo)[path]
    assert not packed_objects(repo)[oid][2], "the repack made this one a delta"
    idx = only_file(repo / ".git" / "objects" / "pack", ".idx")
    data = bytearray(idx.read_bytes())
    count = int.from_bytes(data[8 + 255 * 4 : 8 + 256 * 4], "big")
    names = [bytes(data[8 + 1024 + 20 * i : 8 + 1024 + 20 * (i + 1)]) for i in range(count)]
    data[8 + 1024 + 20 * count + 4 * names.index(bytes.fromhex(oid))] ^= 0x01
    data[-20:] = hashlib.sha1(bytes(data[:-20])).digest()
    idx.write_bytes(bytes(data))
    rc, out, err = check(capsys, repo)
    assert rc == 0 and "fixture-lock: passed" in out, out + err
    lock = repo / "fixtures" / "SHA256SUMS"
    before = lock.read_bytes()
    rc, out, err = run_guard(capsys, repo, "lock", "--no-cache")
    assert rc not in (0, 1), out + err
    assert f"cannot read object {oid}: corrupt in pack-" in err, err
    assert lock.read_bytes() == before


def test_a_flipped_byte_is_corruption_not_a_mismatch_where_a_digest_is_expected(tmp_path):
    """The lock's digest spares a blob its CRC32 only when it is the digest found:
    a blob whose bytes were flipped is checked, and reported corrupt."""
    repo, _ = corrupt_repo(tmp_path)
    oid = blob_ids(repo)["fixtures/big-random.bin"]
    offset, size, _ = packed_objects(repo)[oid]
    right = Git(str(repo)).sha256_blobs([oid])[oid]
    flip(only_file(repo / ".git" / "objects" / "pack", ".pack"), offset + size // 2)
    objects = str(repo / ".git" / "objects")
    with pytest.raises(GitError, match="corrupt in pack-"):
        pack.sha256_packed(objects, [oid], expected={oid: right})
    with pytest.raises(GitError, match="corrupt in pack-"):
        pack.sha256_packed(objects, [oid])


def test_two_packs_and_a_multi_pack_index_give_the_same_digests(tmp_path):
    """A multi-pack-index sits beside the packs' own indexes, which are read."""
    first = payloads(count=10, seed=3)
    repo = fixture_repo(tmp_path, first)
    git(repo, "repack", "-adq")
    second = payloads(count=10, seed=4)
    commit(repo, second)
    git(repo, "repack", "-dq")  # a second pack of what the first lacks
    git(repo, "multi-pack-index", "write")
    folder = repo / ".git" / "objects" / "pack"
    assert len(list(folder.glob("*.idx"))) == 2 and (folder / "multi-pack-index").exists()
    ids = blob_ids(repo)
    old_ids = [git(repo, "rev-parse", f"HEAD~1:{p}").strip() for p in first]
    oids = [ids[p] for p in second] + old_ids
    digests, rest = pack.sha256_packed(str(repo / ".git" / "objects"), oids)
    assert not set(rest) - {oid for oid, (_, _, delta) in packed_objects(repo).items() if delta}
    want = {**expected(second, ids), **expected(first, dict(zip(first, old_ids)))}
    assert Git(str(repo)).sha256_blobs(oids) == {oid: want[oid] for oid in oids}
