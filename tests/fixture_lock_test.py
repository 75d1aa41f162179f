"""fixture-lock: every fixture in the candidate matches its SHA-256 lock entry."""

from __future__ import annotations

import hashlib
import json
import subprocess

import pytest

from oracle_guard.checks import fixture_lock
from oracle_guard.checks.codes import CODES
from testing import oracle
from testing.git import commit, git, init_repo, run_guard, stage, write
from testing.trees import MemoryRepo, executable, gitlink, link, memory

CONTRACT = oracle.LOCKED_FIXTURES
LOCK = "oracle/fixtures.lock.json"
HEAD_ID = "1" * 40  # the commit a submodule records
A = b"alpha\n"
C = b"gamma\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def json_lock(digests: dict) -> str:
    """A JSON lock as `oracle-guard lock` writes it: sorted, two-space indent."""
    return json.dumps(dict(sorted(digests.items())), indent=2) + "\n"


def sum_lock(digests: dict) -> str:
    return "".join(f"{digest}  {path}\n" for path, digest in sorted(digests.items()))


def tree(files=None, contract=CONTRACT):
    """The first commit: the contract, two fixtures and a matching JSON lock."""
    if files is None:
        files = {
            "oracle/inputs/a.txt": A,
            "oracle/inputs/b/c.txt": C,
            LOCK: json_lock({"a.txt": sha(A), "b/c.txt": sha(C)}),
        }
    return {".oracle-guard.yaml": contract, **files}


def make_repo(files=None, contract=CONTRACT):
    """That commit in memory; the index starts as HEAD."""
    repo = MemoryRepo()
    repo.commit(tree(files, contract))
    return repo


def git_repo(tmp_path, files=None, contract=CONTRACT):
    """That commit in a real repository, for what git itself does to the files."""
    repo = init_repo(tmp_path / "repo")
    commit(repo, tree(files, contract), "oracle")
    return repo


def check(repo):
    rc, out, err = repo.check("fixture-lock", now="2024-05-01")
    assert err == "", err
    return rc, out


def check_git(capsys, repo, *args):
    rc, out, err = run_guard(
        capsys, repo, "check", "--only", "fixture-lock", "--now", "2024-05-01", *args
    )
    assert err == "", err
    return rc, out


def findings(out: str):
    """The `where: code` of every finding line, in output order."""
    found = []
    for line in out.splitlines():
        parts = line.split(": ", 2)
        if len(parts) == 3 and parts[1] in CODES:
            found.append(f"{parts[0]}: {parts[1]}")
    return found


def passed(result):
    rc, out = result
    assert (rc, findings(out)) == (0, []), out
    assert "fixture-lock: passed" in out


def assert_passes(repo):
    passed(check(repo))


def assert_passes_git(capsys, repo, *args):
    passed(check_git(capsys, repo, *args))


# -- the lock matches --------------------------------------------------------


def test_matching_json_lock_passes():
    repo = make_repo()
    assert_passes(repo)


def test_rewritten_fixture_is_a_mismatch():
    repo = make_repo()
    repo.stage({"oracle/inputs/a.txt": b"alpha, rewritten by the agent\n"})
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == ["oracle/inputs/a.txt: fixture-mismatch"]
    assert f"does not match {LOCK} ({sha(A)[:12]}" in out


def test_fixture_rewritten_together_with_its_lock_passes():
    # Near miss: the hook checks consistency; who may touch the lock is write-set's job.
    repo = make_repo()
    new = b"alpha v2\n"
    repo.stage(
        {"oracle/inputs/a.txt": new, LOCK: json_lock({"a.txt": sha(new), "b/c.txt": sha(C)})}
    )
    assert_passes(repo)


def test_new_file_under_fixture_paths_is_unlocked():
    repo = make_repo()
    repo.stage({"oracle/inputs/b/new.txt": b"sneaked in\n"})
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == ["oracle/inputs/b/new.txt: fixture-unlocked"]
    assert f"oracle/inputs/b/new.txt: fixture-unlocked: has no entry in {LOCK}" in out


def test_new_file_beside_the_fixture_paths_passes():
    repo = make_repo()
    repo.stage({"oracle/notes.txt": b"not a fixture\n", "oracle/inputs.txt": b"nor this\n"})
    assert_passes(repo)


def test_deleted_fixture_is_missing_with_the_lock_line():
    repo = make_repo()
    repo.remove("oracle/inputs/b/c.txt")
    rc, out = check(repo)
    assert rc == 1
    # line 3 of the sorted lock: "{", "a.txt", "b/c.txt"
    assert findings(out) == [f"{LOCK}:3: fixture-missing"]
    assert f"{LOCK}:3: fixture-missing: entry 'b/c.txt' names no fixture file in the index" in out


def test_deleted_fixture_with_its_entry_dropped_passes():
    repo = make_repo()
    repo.remove("oracle/inputs/b/c.txt")
    repo.stage({LOCK: json_lock({"a.txt": sha(A)})})
    assert_passes(repo)


def test_entry_naming_a_file_outside_the_fixture_paths_is_missing():
    contract = CONTRACT.replace('"oracle/inputs/**"', '"oracle/inputs/*.txt"')
    repo = make_repo(
        contract=contract,
        files={
            "oracle/inputs/a.txt": A,
            "oracle/inputs/b/c.txt": C,
            LOCK: json_lock({"a.txt": sha(A), "b/c.txt": sha(C)}),
        },
    )
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == [f"{LOCK}:3: fixture-missing"]


# -- lock-invalid ----------------------------------------------------------------

LOCK_INVALID = {
    "unparsable JSON": ('{\n  "a.txt": "%s",\n' % sha(A), f"{LOCK}:3", ""),
    "duplicate key": (
        '{\n  "a.txt": "%s",\n  "a.txt": "%s",\n  "b/c.txt": "%s"\n}\n' % (sha(A), sha(A), sha(C)),
        f"{LOCK}:3",
        "duplicate key 'a.txt'",
    ),
    "uppercase digest": (
        json_lock({"a.txt": sha(A).upper(), "b/c.txt": sha(C)}),
        f"{LOCK}:2",
        f"'a.txt': digest '{sha(A).upper()}' is not 64 lowercase hex digits",
    ),
    "short digest": (
        json_lock({"a.txt": sha(A)[:40], "b/c.txt": sha(C)}),
        f"{LOCK}:2",
        "is not 64 lowercase hex digits",
    ),
    "digest not a string": (
        '{\n  "a.txt": 7,\n  "b/c.txt": "%s"\n}\n' % sha(C),
        f"{LOCK}:2",
        "'a.txt': 7 is not of type 'string'",
    ),
    "parent key": (
        json_lock({"../x": sha(A), "a.txt": sha(A), "b/c.txt": sha(C)}),
        f"{LOCK}:2",
        "key '../x' is not a normalized path relative to the lock's root",
    ),
    "absolute key": (
        json_lock({"/oracle/inputs/a.txt": sha(A), "a.txt": sha(A), "b/c.txt": sha(C)}),
        f"{LOCK}:2",
        "key '/oracle/inputs/a.txt' is not a normalized path",
    ),
    "dot key": (
        json_lock({"./a.txt": sha(A), "b/c.txt": sha(C)}),
        f"{LOCK}:2",
        "key './a.txt' is not a normalized path",
    ),
    "byte-order mark": (
        b"\xef\xbb\xbf" + json_lock({"a.txt": sha(A)}).encode(),
        f"{LOCK}:1",
        "byte-order mark",
    ),
    "duplicate sha256sum line": (
        f"{sha(A)}  a.txt\n{sha(C)}  b/c.txt\n{sha(A)}  a.txt\n",
        f"{LOCK}:3",
        "duplicate entry for 'a.txt' (first on line 1)",
    ),
    "sha256sum line with one space": (
        f"{sha(A)} a.txt\n{sha(C)}  b/c.txt\n",
        f"{LOCK}:1",
        "not a sha256sum line: '<sha256>  <path>'",
    ),
    "sha256sum uppercase digest": (
        f"{sha(A)}  a.txt\n{sha(C).upper()}  b/c.txt\n",
        f"{LOCK}:2",
        "'b/c.txt': digest",
    ),
    "sha256sum parent path": (
        f"{sha(A)}  ../inputs/a.txt\n{sha(C)}  b/c.txt\n",
        f"{LOCK}:1",
        "key '../inputs/a.txt' is not a normalized path",
    ),
    "lone short digest": (
        sha(A)[:20] + "\n",
        f"{LOCK}:1",
        "not a sha256sum line: '<sha256>  <path>'",
    ),
    "single digest for two files": (
        sha(A) + "\n",
        f"{LOCK}:1",
        "a single-digest lock needs 'paths' to match exactly one "
        "file; they match 2 (oracle/inputs/a.txt, "
        "oracle/inputs/b/c.txt)",
    ),
}


@pytest.mark.parametrize(
    "lock_bytes, where, message", LOCK_INVALID.values(), ids=list(LOCK_INVALID)
)
def test_lock_invalid(lock_bytes, where, message):
    repo = make_repo()
    repo.stage({LOCK: lock_bytes})
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == [f"{where}: lock-invalid"], out
    line = next(row for row in out.splitlines() if row.startswith(f"{where}: lock-invalid: "))
    assert message in line


def test_every_bad_entry_is_named():
    repo = make_repo()
    repo.stage({LOCK: json_lock({"../x": sha(A), "/abs": sha(A), "a.txt": "ABC"})})
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == [
        f"{LOCK}:2: lock-invalid",
        f"{LOCK}:3: lock-invalid",
        f"{LOCK}:4: lock-invalid",
    ]


def test_missing_lock_is_invalid():
    repo = make_repo()
    repo.remove(LOCK)
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == [f"{LOCK}: lock-invalid"]
    assert f"{LOCK}: lock-invalid: lock file is missing from the index" in out


def test_symlink_lock_is_invalid():
    repo = make_repo()
    repo.remove(LOCK)
    repo.stage(
        {
            "oracle/real.lock.json": json_lock({"a.txt": sha(A), "b/c.txt": sha(C)}),
            LOCK: link("real.lock.json"),
        }
    )
    rc, out = check(repo)
    assert rc == 1
    assert f"{LOCK}: lock-invalid: lock file is not a regular file" in out


def test_non_utf8_lock_is_invalid():
    repo = make_repo()
    repo.stage({LOCK: f"{sha(A)}  a.txt\n{sha(C)}  b/\xff.txt\n".encode("latin-1")})
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == [f"{LOCK}:2: lock-invalid"]


# -- the three formats -------------------------------------------------------------


def test_sha256sum_lock_passes_and_catches_a_rewrite():
    contract = CONTRACT.replace("fixtures.lock.json", "fixtures.sha256")
    lock = "oracle/fixtures.sha256"
    repo = make_repo(
        contract=contract,
        files={
            "oracle/inputs/a.txt": A,
            "oracle/inputs/b/c.txt": C,
            lock: sum_lock({"a.txt": sha(A), "b/c.txt": sha(C)}),
        },
    )
    assert_passes(repo)

    repo.stage({"oracle/inputs/b/c.txt": b"gamma!\n", "oracle/inputs/d.txt": b"new\n"})
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == [
        "oracle/inputs/b/c.txt: fixture-mismatch",
        "oracle/inputs/d.txt: fixture-unlocked",
    ]

    repo.reset()
    repo.remove("oracle/inputs/a.txt")
    rc, out = check(repo)
    assert findings(out) == [f"{lock}:1: fixture-missing"]


def test_sha256sum_lock_with_binary_marker_and_no_final_newline_passes():
    contract = CONTRACT.replace("fixtures.lock.json", "fixtures.sha256")
    repo = make_repo(
        contract=contract,
        files={
            "oracle/inputs/a.txt": A,
            "oracle/inputs/b/c.txt": C,
            "oracle/fixtures.sha256": f"{sha(A)} *a.txt\n{sha(C)}  b/c.txt",
        },
    )
    assert_passes(repo)


def test_sha256sum_lock_verifies_with_sha256sum_from_the_root(tmp_path, capsys):
    contract = CONTRACT.replace("fixtures.lock.json", "fixtures.sha256")
    repo = git_repo(
        tmp_path,
        contract=contract,
        files={
            "oracle/inputs/a.txt": A,
            "oracle/inputs/b/c.txt": C,
            "oracle/inputs/sp ace.txt": b"s\n",
            "oracle/fixtures.sha256": sum_lock(
                {"a.txt": sha(A), "b/c.txt": sha(C), "sp ace.txt": sha(b"s\n")}
            ),
        },
    )
    assert_passes_git(capsys, repo)
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", str(repo), str(checkout))
    root = checkout / "oracle" / "inputs"

    def sha256sum_c():
        return subprocess.run(
            ["sha256sum", "--check", "--strict", "../fixtures.sha256"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    proc = sha256sum_c()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.decode().splitlines() == ["a.txt: OK", "b/c.txt: OK", "sp ace.txt: OK"]
    (root / "a.txt").write_bytes(b"tampered\n")
    assert sha256sum_c().returncode == 1


def test_single_digest_lock_beside_its_file():
    contract = """\
version: 1
fixtures:
  - lock: oracle/corpus.sha256
    paths: ["oracle/corpus.jsonl"]
  - lock: oracle/fixtures.lock.json
    root: oracle/inputs
    paths: ["oracle/inputs/**"]
"""
    corpus = b'{"q": 1}\n{"q": 2}\n'
    repo = make_repo(
        contract=contract,
        files={
            "oracle/corpus.jsonl": corpus,
            "oracle/corpus.sha256": sha(corpus) + "\n",
            "oracle/inputs/a.txt": A,
            LOCK: json_lock({"a.txt": sha(A)}),
        },
    )
    assert_passes(repo)

    repo.stage({"oracle/corpus.jsonl": corpus + b'{"q": 3}\n'})
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == ["oracle/corpus.jsonl: fixture-mismatch"]
    assert f"does not match oracle/corpus.sha256 ({sha(corpus)[:12]}" in out

    repo.remove("oracle/corpus.jsonl")
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == ["oracle/corpus.sha256:1: fixture-missing"]
    assert (
        "oracle/corpus.sha256:1: fixture-missing: the digest locks no file: the fixture "
        "paths match nothing in the index"
    ) in out

    repo.stage({"oracle/corpus.jsonl": corpus, "oracle/corpus.sha256": sha(corpus).upper()})
    rc, out = check(repo)
    assert findings(out) == ["oracle/corpus.sha256:1: lock-invalid"]
    assert "is not 64 lowercase hex digits" in out


def test_single_digest_lock_without_final_newline_passes():
    contract = "version: 1\nfixtures:\n  - {lock: c.sha256, paths: [c.jsonl]}\n"
    repo = make_repo(contract=contract, files={"c.jsonl": b"1\n", "c.sha256": sha(b"1\n")})
    assert_passes(repo)


# -- root --------------------------------------------------------------------------


def test_keys_relative_to_the_repo_root_are_wrong_when_root_is_set():
    repo = make_repo()
    repo.stage({LOCK: json_lock({"oracle/inputs/a.txt": sha(A), "oracle/inputs/b/c.txt": sha(C)})})
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == [
        f"{LOCK}:2: fixture-missing",
        f"{LOCK}:3: fixture-missing",
        "oracle/inputs/a.txt: fixture-unlocked",
        "oracle/inputs/b/c.txt: fixture-unlocked",
    ]


def test_without_root_keys_are_repo_relative():
    contract = CONTRACT.replace("    root: oracle/inputs\n", "")
    repo = make_repo(
        contract=contract,
        files={"oracle/inputs/a.txt": A, LOCK: json_lock({"oracle/inputs/a.txt": sha(A)})},
    )
    assert_passes(repo)


def test_file_matching_paths_outside_the_root_is_unlocked():
    contract = CONTRACT.replace('["oracle/inputs/**"]', '["oracle/inputs/**", "oracle/extra.txt"]')
    repo = make_repo(
        contract=contract,
        files={"oracle/inputs/a.txt": A, "oracle/extra.txt": C, LOCK: json_lock({"a.txt": sha(A)})},
    )
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == ["oracle/extra.txt: fixture-unlocked"]
    assert (
        "oracle/extra.txt: fixture-unlocked: matches the fixture paths but lies outside "
        "the lock's root 'oracle/inputs'"
    ) in out


def test_lock_inside_its_own_fixture_paths_is_not_a_fixture():
    contract = "version: 1\nfixtures:\n  - {lock: fx/lock.json, root: fx, paths: ['fx/**']}\n"
    repo = make_repo(
        contract=contract, files={"fx/a.txt": A, "fx/lock.json": json_lock({"a.txt": sha(A)})}
    )
    assert_passes(repo)


# -- fixture-not-regular -------------------------------------------------------------


def test_symlink_under_fixture_paths_is_not_regular():
    repo = make_repo()
    repo.stage({"oracle/inputs/link.txt": link("a.txt")})
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == ["oracle/inputs/link.txt: fixture-not-regular"]
    assert (
        "oracle/inputs/link.txt: fixture-not-regular: is a symlink (mode 120000), "
        "not a regular file"
    ) in out


def test_symlink_that_replaces_a_locked_fixture_is_not_regular():
    # The link's target blob is "a.txt"; its lock entry must not make it look fine.
    repo = make_repo()
    repo.remove("oracle/inputs/b/c.txt")
    repo.stage({"oracle/inputs/b/c.txt": link("../a.txt")})
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == ["oracle/inputs/b/c.txt: fixture-not-regular"]


def test_symlink_outside_fixture_paths_passes():
    repo = make_repo()
    repo.stage({"oracle/link.txt": link("inputs/a.txt")})
    assert_passes(repo)


def test_executable_fixture_is_regular():
    repo = make_repo()
    repo.stage({"oracle/inputs/a.txt": executable(A)})
    assert_passes(repo)


def test_submodule_under_fixture_paths_is_not_regular():
    repo = make_repo()
    repo.stage({"oracle/inputs/sub": gitlink(HEAD_ID)})
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == ["oracle/inputs/sub: fixture-not-regular"]
    assert "oracle/inputs/sub: fixture-not-regular: is a submodule (mode 160000)" in out


def test_submodule_outside_fixture_paths_passes():
    repo = make_repo()
    repo.stage({"vendor/sub": gitlink(HEAD_ID)})
    assert_passes(repo)


# -- which revision is judged ------------------------------------------------------------


def test_unstaged_edit_does_not_count_but_a_staged_one_does(tmp_path, capsys):
    repo = git_repo(tmp_path)
    write(repo, {"oracle/inputs/a.txt": b"edited, not staged\n"})
    (repo / "oracle/inputs/b/c.txt").unlink()
    write(repo, {"oracle/inputs/untracked.txt": b"not in the index\n"})
    assert_passes_git(capsys, repo)

    git(repo, "add", "oracle/inputs/a.txt")
    rc, out = check_git(capsys, repo)
    assert rc == 1
    assert findings(out) == ["oracle/inputs/a.txt: fixture-mismatch"]


def test_head_judges_that_commit_not_the_index(tmp_path, capsys):
    repo = git_repo(tmp_path)
    good = git(repo, "rev-parse", "HEAD").strip()
    commit(repo, {"oracle/inputs/a.txt": b"rewritten\n"}, "agent")
    # The index is restored to the locked content; only the commit is bad.
    stage(repo, {"oracle/inputs/a.txt": A})
    assert_passes_git(capsys, repo)
    rc, out = check_git(capsys, repo, "--head", "HEAD")
    assert rc == 1
    assert findings(out) == ["oracle/inputs/a.txt: fixture-mismatch"]
    assert_passes_git(capsys, repo, "--head", good)


def test_candidate_contract_is_used_when_there_are_no_commits(tmp_path, capsys):
    repo = init_repo(tmp_path / "repo")
    stage(
        repo,
        {
            ".oracle-guard.yaml": CONTRACT,
            "oracle/inputs/a.txt": A,
            LOCK: json_lock({"a.txt": sha(A)}),
        },
    )
    assert_passes_git(capsys, repo)
    stage(repo, {"oracle/inputs/a.txt": C})
    rc, out = check_git(capsys, repo)
    assert findings(out) == ["oracle/inputs/a.txt: fixture-mismatch"]


# -- line endings: the lock hashes git's bytes, never the checkout's ------------------------


def crlf_checkout(repo, path):
    """Delete ``path`` from the working tree and check it out again (attributes apply)."""
    (repo / path).unlink()
    git(repo, "checkout", "--", path)
    return (repo / path).read_bytes()


@pytest.mark.parametrize("setting", ["gitattributes eol=crlf", "core.autocrlf"])
def test_crlf_working_tree_does_not_fool_the_hook(tmp_path, capsys, setting):
    repo = init_repo(tmp_path / "repo")
    if setting == "core.autocrlf":
        git(repo, "config", "core.autocrlf", "true")
    else:
        write(repo, {".gitattributes": "* text eol=crlf\n"})
    text = b"line one\nline two\n"
    commit(
        repo,
        {
            ".oracle-guard.yaml": CONTRACT,
            "oracle/inputs/a.txt": text,
            LOCK: json_lock({"a.txt": sha(text)}),
        },
    )
    worktree = crlf_checkout(repo, "oracle/inputs/a.txt")
    assert worktree == b"line one\r\nline two\r\n"
    staged = git(repo, "cat-file", "blob", ":oracle/inputs/a.txt").encode()
    assert staged == text
    assert_passes_git(capsys, repo)

    # A lock hashed from the CRLF checkout does not describe what git stores.
    stage(repo, {LOCK: json_lock({"a.txt": sha(worktree)})})
    rc, out = check_git(capsys, repo)
    assert rc == 1
    assert findings(out) == ["oracle/inputs/a.txt: fixture-mismatch"]


def test_clean_filter_output_is_what_is_hashed(tmp_path, capsys):
    repo = init_repo(tmp_path / "repo")
    git(repo, "config", "filter.upper.clean", "tr a-z A-Z")
    git(repo, "config", "filter.upper.smudge", "cat")
    write(repo, {".gitattributes": "*.txt filter=upper\n"})
    commit(
        repo,
        {
            ".oracle-guard.yaml": CONTRACT,
            "oracle/inputs/a.txt": b"quiet\n",
            LOCK: json_lock({"a.txt": sha(b"QUIET\n")}),
        },
    )
    assert (repo / "oracle/inputs/a.txt").read_bytes() == b"quiet\n"
    assert_passes_git(capsys, repo)


# -- what `oracle-guard lock` needs from this module ------------------------------------------

ENTRY = {"lock": "fx/lock.json", "root": "fx", "paths": ["fx/**", "extra.txt"]}


def test_pending_fixtures_leave_out_the_lock_itself():
    changed = ["fx/lock.json", "fx/a.txt", "extra.txt", "src/x.py"]
    assert fixture_lock.pending_fixtures(ENTRY, changed) == ["extra.txt", "fx/a.txt"]


def test_unlockable_names_files_outside_the_root_and_links():
    index = memory({"fx/a.txt": A, "extra.txt": C, "fx/lock.json": "{}", "fx/link": link("a.txt")})
    assert fixture_lock.unlockable(ENTRY, index) == [
        "'extra.txt' matches the fixture paths but lies outside the lock's root 'fx': "
        "move it or fix the contract",
        "'fx/link' is a symlink, not a regular file: replace or remove it",
    ]
    assert fixture_lock.unlockable(dict(ENTRY, paths=["fx/*.txt"]), index) == []


LFS_POINTER = (
    b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"4" * 64 + b"\nsize 1073741824\n"
)


def test_lfs_pointer_is_hashed_as_the_pointer_git_stores():
    # what is committed is the pointer; the lock locks those bytes
    # (docs/explanation/security.md, What is not)
    repo = make_repo(
        {"oracle/inputs/big.bin": LFS_POINTER, LOCK: json_lock({"big.bin": sha(LFS_POINTER)})}
    )
    assert_passes(repo)


def test_lfs_pointer_to_another_object_is_a_mismatch():
    repo = make_repo(
        {"oracle/inputs/big.bin": LFS_POINTER, LOCK: json_lock({"big.bin": sha(LFS_POINTER)})}
    )
    repo.stage({"oracle/inputs/big.bin": LFS_POINTER.replace(b"4" * 64, b"5" * 64)})
    rc, out = check(repo)
    assert rc == 1
    assert findings(out) == ["oracle/inputs/big.bin: fixture-mismatch"]


# -- GNU sha256sum's own lines: escaped names, -b, --tag ----------------------------

# Names GNU writes plainly and names it escapes ('\\', LF, CR: the line starts '\').
AWKWARD = {
    "a.txt": A,
    "b/c.txt": C,
    "back\\slash": b"1",
    "new\nline": b"2",
    "car\rriage": b"3",
    "ends in cr\r": b"4",
    "p)q) = x": b"5",
    " lead": b"6",
    "*star": b"7",
    "tab\there": b"8",
    "\\": b"9",
    "é/ü.txt": b"10",
    "(x": b"11",
    "trail ": b"12",
    "b/\\n": b"13",
}
SUMS_CONTRACT = CONTRACT.replace("fixtures.lock.json", "SHA256SUMS")
SUMS = "oracle/SHA256SUMS"


def gnu_sums(root, names, *options) -> bytes:
    """What GNU sha256sum writes for ``names``, run from ``root``."""
    proc = subprocess.run(
        ["sha256sum", *options, "--", *names],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        check=True,
    )
    return proc.stdout


def gnu_check(root, lock="../SHA256SUMS"):
    return subprocess.run(
        ["sha256sum", "--check", "--strict", lock],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.parametrize("options", [(), ("-b",), ("--tag",)], ids=["text", "binary", "tag"])
def test_gnu_sha256sum_locks_pass_for_awkward_names(tmp_path, capsys, options):
    repo = git_repo(
        tmp_path,
        contract=SUMS_CONTRACT,
        files={f"oracle/inputs/{p}": d for p, d in AWKWARD.items()},
    )
    root = repo / "oracle" / "inputs"
    lock = gnu_sums(root, sorted(AWKWARD), *options)
    assert lock.count(b"\n\\") >= 5  # GNU escaped the names that need it
    stage(repo, {SUMS: lock})
    assert_passes_git(capsys, repo)
    assert gnu_check(root).returncode == 0
    stage(repo, {"oracle/inputs/new\nline": b"changed"})
    rc, out = check_git(capsys, repo)
    assert rc == 1 and findings(out) == ["oracle/inputs/new\\nline: fixture-mismatch"], out


def test_text_binary_and_tagged_lines_may_mix_as_gnu_reads_them(tmp_path, capsys):
    files = {"a.txt": A, "b/c.txt": C, "back\\slash": b"1", "new\nline": b"2"}
    repo = git_repo(
        tmp_path, contract=SUMS_CONTRACT, files={f"oracle/inputs/{p}": d for p, d in files.items()}
    )
    root = repo / "oracle" / "inputs"
    lock = (
        gnu_sums(root, ["a.txt"])
        + gnu_sums(root, ["b/c.txt"], "-b")
        + gnu_sums(root, ["back\\slash"], "--tag")
        + gnu_sums(root, ["new\nline"], "-b")
    )
    stage(repo, {SUMS: lock})
    assert_passes_git(capsys, repo)
    assert gnu_check(root).returncode == 0


def test_an_unescaped_backslash_is_read_literally_as_gnu_reads_it(tmp_path, capsys):
    repo = git_repo(
        tmp_path, contract=SUMS_CONTRACT, files={"oracle/inputs/a\\b": A, SUMS: f"{sha(A)}  a\\b\n"}
    )
    assert_passes_git(capsys, repo)
    assert gnu_check(repo / "oracle" / "inputs").returncode == 0
    stage(repo, {SUMS: f"{sha(A)}  a\\b\n\\{sha(A)}  a\\\\b\n"})  # the same name twice
    rc, out = check_git(capsys, repo)
    assert (
        rc == 1 and f"{SUMS}:2: lock-invalid: duplicate entry for 'a\\\\b' (first on line 1)" in out
    ), out


@pytest.mark.parametrize(
    "line, message",
    [
        (
            f"\\{sha(A)}  a\\tb",
            "'\\t' in an escaped path: sha256sum escapes only '\\\\', '\\n' and '\\r'",
        ),
        (f"\\{sha(A)}  ab\\", "the escaped path ends in a lone '\\'"),
        (f"MD5 (a.txt) = {sha(A)[:32]}", "a tagged MD5 line: a lock holds SHA-256 digests"),
        (f"SHA512 (a.txt) = {sha(A)}{sha(A)}", "a tagged SHA512 line"),
        (f"SHA256(a.txt)= {sha(A)}", "not a sha256sum line"),  # OpenSSL's form: not written
        (f"SHA256 () = {sha(A)}", "not a sha256sum line"),
        (f" {sha(A)}  a.txt", "not a sha256sum line"),  # GNU skips leading blanks; not written
        ("", "not a sha256sum line"),  # GNU skips blank lines and '#' comments: a lock has none
        ("# a comment", "not a sha256sum line"),
        (f"{sha(A)}\ta.txt", "not a sha256sum line"),
    ],
)
def test_sha256sum_lines_gnu_does_not_write_are_invalid(line, message):
    repo = make_repo(
        contract=SUMS_CONTRACT,
        files={
            "oracle/inputs/a.txt": A,
            "oracle/inputs/b/c.txt": C,
            SUMS: f"{sha(C)}  b/c.txt\n{sha(A)}  a.txt\n",
        },
    )
    assert_passes(repo)
    repo.stage({SUMS: f"{sha(C)}  b/c.txt\n{line}\n{sha(A)}  a.txt\n"})
    rc, out = check(repo)
    assert rc == 1 and findings(out) == [f"{SUMS}:2: lock-invalid"], out
    assert message in out, out


@pytest.mark.parametrize("key", ["a\\b", "new\nline", "cr\r", "\\", "x/\\n", "..\n", "-"])
def test_a_json_lock_holds_any_name_git_can_store(key):
    repo = make_repo(files={f"oracle/inputs/{key}": A, LOCK: json_lock({key: sha(A)})})
    assert_passes(repo)


@pytest.mark.parametrize("key", ["x\n/../y", "x\n//y", "a/\n/..", "a\n/", "..", "a/./b"])
def test_keys_with_a_newline_are_still_normalized_paths(key):
    repo = make_repo()
    repo.stage({LOCK: json_lock({"a.txt": sha(A), "b/c.txt": sha(C), key: sha(A)})})
    rc, out = check(repo)
    assert rc == 1 and "is not a normalized path relative to the lock's root" in out, out


def test_a_file_named_dash_at_the_root_cannot_be_in_a_sha256sum_lock():
    """`sha256sum -c` reads '-' as standard input: the check still reads such a lock,
    but a fixture '-' left out says why 'oracle-guard lock' cannot add it."""
    repo = make_repo(
        contract=SUMS_CONTRACT,
        files={"oracle/inputs/-": A, "oracle/inputs/b/-": C, SUMS: f"{sha(A)}  -\n{sha(C)}  b/-\n"},
    )
    assert_passes(repo)
    repo.stage({SUMS: f"{sha(C)}  b/-\n"})
    rc, out = check(repo)
    assert rc == 1 and findings(out) == ["oracle/inputs/-: fixture-unlocked"], out
    assert (
        "oracle/inputs/-: fixture-unlocked: has no entry in oracle/SHA256SUMS; it is "
        "named '-' at the lock's root, which 'sha256sum -c' reads as standard input: a "
        "sha256sum lock cannot name it; rename the file, or use a JSON lock"
    ) in out, out


def test_sum_lines_round_trip():
    for key in AWKWARD:
        for form in ("text", "binary", "tag"):
            line = fixture_lock.sum_line(key, sha(A), form)
            assert "\n" not in line and not line.endswith("\r")
            assert fixture_lock.parse_sum_line(line) == (sha(A), key, form)
