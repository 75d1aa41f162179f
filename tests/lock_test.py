"""`oracle-guard lock`: writes fixture locks from staged content; `--check` is the hook.

`oracle-guard lock --add PATH`: one new, staged fixture's digest goes into the
lock it belongs to, in the lock's style and order; no other entry is rehashed or
rewritten; what fixture-lock would reject is refused with exit 2."""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess

import pytest

from testing import oracle
from testing.git import commit, git, init_repo, run_guard, stage, write
from testing.oracle import NOW
from testing.samples import EXAMPLES, example_repo

CONTRACT = oracle.LOCKED_FIXTURES
LOCK = "oracle/fixtures.lock.json"
A = b"alpha\n"
C = b"gamma\n"
Z = b"zeta\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_repo(tmp_path, files=None, contract=CONTRACT, lock=None):
    """A repo with one commit: the contract, fixtures z.txt, a.txt, b/c.txt and ``lock``."""
    repo = init_repo(tmp_path / "repo")
    if files is None:
        files = {"oracle/inputs/z.txt": Z, "oracle/inputs/a.txt": A, "oracle/inputs/b/c.txt": C}
    if lock is not None:
        files = {**files, LOCK: lock}
    commit(repo, {".oracle-guard.yaml": contract, **files}, "oracle")
    return repo


def lock(capsys, repo, *args):
    return run_guard(capsys, repo, "lock", *args)


def hook(capsys, repo):
    rc, out, err = run_guard(capsys, repo, "check", "--only", "fixture-lock", "--now", "2024-05-01")
    assert err == "", err
    return rc, out


def lock_bytes(repo, path=LOCK):
    return (repo / path).read_bytes()


def assert_locked(capsys, repo, path=LOCK):
    """Stage the written lock; the hook then passes."""
    git(repo, "add", "--", path)
    rc, out = hook(capsys, repo)
    assert rc == 0, out
    assert "fixture-lock: passed" in out


SORTED_JSON = (
    f'{{\n  "a.txt": "{sha(A)}",\n  "b/c.txt": "{sha(C)}",\n  "z.txt": "{sha(Z)}"\n}}\n'
).encode()


# -- writing ------------------------------------------------------------------------


def test_new_lock_is_sorted_json(tmp_path, capsys):
    repo = make_repo(tmp_path)
    rc, out, err = lock(capsys, repo)
    assert (rc, err) == (0, "")
    assert out == f"wrote {LOCK} (3 files); stage it with: git add {LOCK}\n"
    assert lock_bytes(repo) == SORTED_JSON
    assert_locked(capsys, repo)


SUM_LINES = f"{sha(A)}  a.txt\n{sha(C)}  b/c.txt\n{sha(Z)}  z.txt\n".encode()


@pytest.mark.parametrize(
    "lock_path,expected",
    [
        ("oracle/SHA256SUMS", SUM_LINES),  # what 'oracle-guard init' writes too
        ("oracle/fixtures.sha256sum", SUM_LINES),
        ("oracle/fixtures.sums", SUM_LINES),
        ("oracle/fixtures.sha256", SORTED_JSON),  # one digest locks one file only
        ("oracle/fixtures.lock", SORTED_JSON),
        ("oracle/SHA256SUMS.json", SORTED_JSON),
    ],
)
def test_a_new_lock_takes_the_style_its_name_suggests(tmp_path, capsys, lock_path, expected):
    repo = make_repo(tmp_path, contract=CONTRACT.replace(LOCK, lock_path))
    rc, out, err = lock(capsys, repo)
    assert (rc, err) == (0, "")
    assert lock_bytes(repo, lock_path) == expected
    assert_locked(capsys, repo, lock_path)


def test_a_new_sha256_lock_of_one_file_is_one_digest(tmp_path, capsys):
    contract = (
        "version: 1\nfixtures:\n  - {lock: oracle/corpus.sha256, paths: [oracle/corpus.jsonl]}\n"
    )
    repo = make_repo(tmp_path, files={"oracle/corpus.jsonl": A}, contract=contract)
    rc, out, err = lock(capsys, repo)
    assert (rc, err) == (0, "")
    assert lock_bytes(repo, "oracle/corpus.sha256") == (sha(A) + "\n").encode()
    assert_locked(capsys, repo, "oracle/corpus.sha256")


def test_an_existing_lock_keeps_its_style_whatever_its_name(tmp_path, capsys):
    repo = make_repo(
        tmp_path,
        contract=CONTRACT.replace(LOCK, "oracle/SHA256SUMS"),
        files={"oracle/inputs/a.txt": A, "oracle/SHA256SUMS": "{}\n"},
    )
    rc, _, err = lock(capsys, repo)
    assert rc == 0, err
    assert json.loads(lock_bytes(repo, "oracle/SHA256SUMS")) == {"a.txt": sha(A)}


def test_lock_in_a_repo_with_no_commits(tmp_path, capsys):
    repo = init_repo(tmp_path / "repo")
    stage(repo, {".oracle-guard.yaml": CONTRACT, "oracle/inputs/a.txt": A})
    rc, out, _ = lock(capsys, repo)
    assert rc == 0
    assert out == f"wrote {LOCK} (1 file); stage it with: git add {LOCK}\n"
    assert_locked(capsys, repo)


def test_unsorted_json_lock_is_rewritten_sorted(tmp_path, capsys):
    unsorted = json.dumps({"z.txt": sha(Z), "b/c.txt": sha(C), "a.txt": sha(A)}) + "\n"
    repo = make_repo(tmp_path, lock=unsorted)
    rc, _, _ = lock(capsys, repo)
    assert rc == 0
    assert lock_bytes(repo) == SORTED_JSON


def test_refresh_records_a_staged_fixture_change(tmp_path, capsys):
    repo = make_repo(tmp_path, lock=SORTED_JSON)
    new = b"alpha v2\n"
    stage(repo, {"oracle/inputs/a.txt": new, "oracle/inputs/d.txt": b"d\n"})
    git(repo, "rm", "-q", "oracle/inputs/z.txt")
    assert hook(capsys, repo)[0] == 1
    rc, out, _ = lock(capsys, repo)
    assert rc == 0
    assert out.startswith(f"wrote {LOCK} (3 files)")
    assert json.loads(lock_bytes(repo)) == {
        "a.txt": sha(new),
        "b/c.txt": sha(C),
        "d.txt": sha(b"d\n"),
    }
    assert_locked(capsys, repo)


def test_sha256sum_lock_keeps_its_style_and_sha256sum_verifies_it(tmp_path, capsys):
    contract = CONTRACT.replace("fixtures.lock.json", "fixtures.sha256")
    sums = "oracle/fixtures.sha256"
    repo = make_repo(
        tmp_path, contract=contract, files={"oracle/inputs/a.txt": A, sums: f"{'0' * 64}  a.txt\n"}
    )
    stage(repo, {"oracle/inputs/b/c.txt": C, "oracle/inputs/z.txt": Z})
    rc, out, _ = lock(capsys, repo)
    assert rc == 0
    assert out == f"wrote {sums} (3 files); stage it with: git add {sums}\n"
    assert (
        lock_bytes(repo, sums)
        == (f"{sha(A)}  a.txt\n{sha(C)}  b/c.txt\n{sha(Z)}  z.txt\n").encode()
    )
    assert_locked(capsys, repo, sums)
    proc = subprocess.run(
        ["sha256sum", "--check", "--strict", "../fixtures.sha256"],
        cwd=repo / "oracle/inputs",
        stdout=subprocess.PIPE,
    )
    assert proc.returncode == 0
    assert proc.stdout.decode().splitlines() == ["a.txt: OK", "b/c.txt: OK", "z.txt: OK"]


def test_broken_sha256sum_lock_is_refreshed_in_its_style(tmp_path, capsys):
    contract = CONTRACT.replace("fixtures.lock.json", "fixtures.sha256")
    sums = "oracle/fixtures.sha256"
    repo = make_repo(
        tmp_path, contract=contract, files={"oracle/inputs/a.txt": A, sums: "ABC  a.txt\n"}
    )
    assert lock(capsys, repo)[0] == 0
    assert lock_bytes(repo, sums) == f"{sha(A)}  a.txt\n".encode()


def test_single_digest_lock_keeps_its_style(tmp_path, capsys):
    contract = """\
version: 1
fixtures:
  - {lock: oracle/corpus.sha256, paths: [oracle/corpus.jsonl]}
"""
    corpus = b'{"q": 1}\n'
    repo = make_repo(
        tmp_path,
        contract=contract,
        files={"oracle/corpus.jsonl": corpus, "oracle/corpus.sha256": "0" * 64 + "\n"},
    )
    longer = corpus + b'{"q": 2}\n'
    stage(repo, {"oracle/corpus.jsonl": longer})
    rc, out, _ = lock(capsys, repo)
    assert rc == 0
    assert out == (
        "wrote oracle/corpus.sha256 (1 file); stage it with: git add oracle/corpus.sha256\n"
    )
    assert lock_bytes(repo, "oracle/corpus.sha256") == (sha(longer) + "\n").encode()
    assert_locked(capsys, repo, "oracle/corpus.sha256")


def test_every_fixture_entry_is_written(tmp_path, capsys):
    contract = CONTRACT + "  - {lock: oracle/corpus.sha256, paths: [oracle/corpus.jsonl]}\n"
    repo = make_repo(
        tmp_path,
        contract=contract,
        files={
            "oracle/inputs/a.txt": A,
            "oracle/corpus.jsonl": b"1\n",
            "oracle/corpus.sha256": "0" * 64 + "\n",
        },
    )
    rc, out, _ = lock(capsys, repo)
    assert rc == 0
    assert out.splitlines() == [
        f"wrote {LOCK} (1 file); stage it with: git add {LOCK}",
        "wrote oracle/corpus.sha256 (1 file); stage it with: git add oracle/corpus.sha256",
    ]
    git(repo, "add", LOCK)
    assert_locked(capsys, repo, "oracle/corpus.sha256")


def test_running_twice_gives_identical_bytes(tmp_path, capsys):
    repo = make_repo(tmp_path)
    assert lock(capsys, repo)[0] == 0
    first = lock_bytes(repo)
    assert lock(capsys, repo)[0] == 0
    assert lock_bytes(repo) == first
    git(repo, "add", LOCK)
    assert lock(capsys, repo)[0] == 0
    assert lock_bytes(repo) == first
    assert git(repo, "status", "--porcelain", "--", LOCK) == f"A  {LOCK}\n"


@pytest.mark.parametrize(
    "lock_path, empty",
    [
        (LOCK, b"{}\n"),
        ("oracle/fixtures.sha256", b""),
    ],
)
def test_lock_with_every_fixture_gone_is_empty_and_passes(tmp_path, capsys, lock_path, empty):
    contract = CONTRACT.replace(LOCK, lock_path)
    lock_text = (
        SORTED_JSON.decode()
        if lock_path == LOCK
        else f"{sha(A)}  a.txt\n{sha(C)}  b/c.txt\n{sha(Z)}  z.txt\n"
    )
    repo = make_repo(
        tmp_path,
        contract=contract,
        files={
            "oracle/inputs/z.txt": Z,
            "oracle/inputs/a.txt": A,
            "oracle/inputs/b/c.txt": C,
            lock_path: lock_text,
        },
    )
    git(repo, "rm", "-q", "-r", "oracle/inputs")
    rc, out, _ = lock(capsys, repo)
    assert rc == 0
    assert out.startswith(f"wrote {lock_path} (0 files)")
    assert lock_bytes(repo, lock_path) == empty
    assert_locked(capsys, repo, lock_path)


def test_no_fixtures_section_has_nothing_to_lock(tmp_path, capsys):
    repo = make_repo(tmp_path, contract="version: 1\nwrite_set:\n  deny: ['oracle/**']\n")
    rc, out, err = lock(capsys, repo)
    assert (rc, out, err) == (0, "nothing to lock: the contract has no 'fixtures' section\n", "")
    assert not (repo / LOCK).exists()


def test_no_contract_in_the_index_is_an_error(tmp_path, capsys):
    repo = make_repo(tmp_path)
    git(repo, "rm", "-q", "--cached", ".oracle-guard.yaml")
    rc, out, err = lock(capsys, repo)
    assert (rc, out) == (2, "")
    assert err == (
        "oracle-guard: error: no .oracle-guard.yaml in the index: write and "
        "'git add' the contract first\n"
    )


# -- refusals: the lock hashes what git will commit -----------------------------------------


def unstaged_edit(repo):
    write(repo, {"oracle/inputs/b/c.txt": b"edited, not staged\n"})


def unstaged_delete(repo):
    (repo / "oracle/inputs/b/c.txt").unlink()


def untracked_file(repo):
    write(repo, {"oracle/inputs/b/c.txt.new": b"not added\n"})


@pytest.mark.parametrize(
    "change, path, state",
    [
        (unstaged_edit, "oracle/inputs/b/c.txt", "has changes git has not staged"),
        (unstaged_delete, "oracle/inputs/b/c.txt", "has changes git has not staged"),
        (untracked_file, "oracle/inputs/b/c.txt.new", "is not tracked"),
    ],
)
def test_refuses_when_the_working_tree_differs_from_the_index(
    tmp_path, capsys, change, path, state
):
    repo = make_repo(tmp_path, lock=SORTED_JSON)
    change(repo)
    rc, out, err = lock(capsys, repo)
    assert (rc, out) == (2, "")
    assert err == (
        f"oracle-guard: error: '{path}' {state}; the lock "
        f"hashes what git will commit: run 'git add {path}' first\n"
    )
    assert lock_bytes(repo) == SORTED_JSON
    # Once staged, the same change locks.
    git(repo, "add", "-A")
    assert lock(capsys, repo)[0] == 0
    assert_locked(capsys, repo)


def test_working_tree_changes_outside_fixture_paths_do_not_block(tmp_path, capsys):
    repo = make_repo(tmp_path)
    write(
        repo,
        {
            "README.md": b"draft\n",
            "oracle/inputs.txt": b"not a fixture\n",
            ".oracle-guard.yaml": CONTRACT + "# unstaged comment\n",
        },
    )
    rc, _, err = lock(capsys, repo)
    assert (rc, err) == (0, "")
    assert lock_bytes(repo) == SORTED_JSON


def test_ignored_file_under_fixture_paths_does_not_block(tmp_path, capsys):
    repo = make_repo(tmp_path)
    commit(repo, {".gitignore": "*.tmp\n"})
    write(repo, {"oracle/inputs/scratch.tmp": b"ignored\n"})
    assert lock(capsys, repo)[0] == 0
    assert lock_bytes(repo) == SORTED_JSON


# -- `lock --check` is the hook ------------------------------------------------------------


def stage_mismatch(repo):
    stage(repo, {"oracle/inputs/a.txt": b"rewritten\n"})


def stage_unlocked(repo):
    stage(repo, {"oracle/inputs/new.txt": b"new\n"})


def stage_missing(repo):
    git(repo, "rm", "-q", "oracle/inputs/z.txt")


def stage_invalid_lock(repo):
    stage(repo, {LOCK: "{"})


def stage_symlink(repo):
    (repo / "oracle/inputs/link").symlink_to("a.txt")
    stage(repo)


def unstaged_only(repo):
    write(repo, {"oracle/inputs/a.txt": b"unstaged\n"})


@pytest.mark.parametrize(
    "change",
    [
        unstaged_only,
        stage_mismatch,
        stage_unlocked,
        stage_missing,
        stage_invalid_lock,
        stage_symlink,
    ],
)
def test_lock_check_equals_the_hook(tmp_path, capsys, change):
    repo = make_repo(tmp_path, lock=SORTED_JSON)
    change(repo)
    before = lock_bytes(repo)
    expected = hook(capsys, repo)
    rc, out, err = lock(capsys, repo, "--check", "--now", "2024-05-01")
    assert err == ""
    assert (rc, out) == expected
    assert rc == (0 if change is unstaged_only else 1)
    assert lock_bytes(repo) == before  # --check never writes


def test_lock_check_json_format(tmp_path, capsys):
    repo = make_repo(tmp_path, lock=SORTED_JSON)
    stage_mismatch(repo)
    rc, out, _ = lock(capsys, repo, "--check", "--format", "json", "--now", "2024-05-01")
    assert rc == 1
    doc = json.loads(out)
    assert [(f["code"], f["path"]) for f in doc["findings"]] == [
        ("fixture-mismatch", "oracle/inputs/a.txt")
    ]
    assert list(doc["checks"]) == ["fixture-lock"]


# -- line endings and filters: lock and check agree ------------------------------------------


@pytest.mark.parametrize("setting", ["gitattributes eol=crlf", "core.autocrlf"])
def test_lock_and_check_agree_with_crlf_checkouts(tmp_path, capsys, setting):
    repo = init_repo(tmp_path / "repo")
    if setting == "core.autocrlf":
        git(repo, "config", "core.autocrlf", "true")
    else:
        write(repo, {".gitattributes": "* text eol=crlf\n"})
    text = b"line one\nline two\n"
    commit(repo, {".oracle-guard.yaml": CONTRACT, "oracle/inputs/a.txt": text})
    # Check the fixture out again so the working tree holds CRLF.
    (repo / "oracle/inputs/a.txt").unlink()
    git(repo, "checkout", "--", "oracle/inputs/a.txt")
    assert (repo / "oracle/inputs/a.txt").read_bytes() == b"line one\r\nline two\r\n"

    rc, _, err = lock(capsys, repo)
    assert (rc, err) == (0, "")  # a CRLF checkout is not an unstaged change
    assert json.loads(lock_bytes(repo)) == {"a.txt": sha(text)}
    assert_locked(capsys, repo)
    assert lock(capsys, repo, "--check", "--now", "2024-05-01")[0] == 0
    # The lock file, committed and checked out again, still agrees.
    commit(repo, message="lock")
    (repo / LOCK).unlink()
    git(repo, "checkout", "--", LOCK)
    assert lock(capsys, repo)[0] == 0
    git(repo, "add", LOCK)
    assert git(repo, "status", "--porcelain") == ""
    assert hook(capsys, repo)[0] == 0


def test_lock_and_check_agree_with_a_clean_filter(tmp_path, capsys):
    repo = init_repo(tmp_path / "repo")
    git(repo, "config", "filter.upper.clean", "tr a-z A-Z")
    git(repo, "config", "filter.upper.smudge", "cat")
    write(repo, {".gitattributes": "oracle/inputs/** filter=upper\n"})
    commit(repo, {".oracle-guard.yaml": CONTRACT, "oracle/inputs/a.txt": b"quiet\n"})
    rc, _, err = lock(capsys, repo)
    assert (rc, err) == (0, "")
    assert json.loads(lock_bytes(repo)) == {"a.txt": sha(b"QUIET\n")}
    assert_locked(capsys, repo)


def test_lock_from_a_subfolder_writes_at_the_top(tmp_path, capsys):
    repo = make_repo(tmp_path)
    rc, _, err = lock(capsys, repo / "oracle" / "inputs")
    assert (rc, err) == (0, "")
    assert lock_bytes(repo) == SORTED_JSON


def test_check_from_a_subfolder_sees_the_whole_index(tmp_path, capsys):
    repo = make_repo(tmp_path, lock=SORTED_JSON)
    rc, out, _ = run_guard(capsys, repo / "oracle", "check", "--only", "fixture-lock")
    assert rc == 0, out


def test_lock_inside_its_own_paths_can_run_twice(tmp_path, capsys):
    contract = "version: 1\nfixtures:\n  - lock: fx/lock.json\n    root: fx\n    paths: ['fx/**']\n"
    repo = make_repo(tmp_path, files={"fx/a.txt": A}, contract=contract)
    assert lock(capsys, repo)[0] == 0
    first = lock_bytes(repo, "fx/lock.json")
    rc, _, err = lock(capsys, repo)
    assert (rc, err) == (0, "")
    assert lock_bytes(repo, "fx/lock.json") == first


def test_lock_refuses_what_the_check_would_reject(tmp_path, capsys):
    contract = (
        "version: 1\nfixtures:\n  - lock: fx/lock.json\n    root: fx\n"
        "    paths: ['fx/**', 'extra.txt']\n"
    )
    repo = make_repo(tmp_path, files={"fx/a.txt": A, "extra.txt": C}, contract=contract)
    rc, _, err = lock(capsys, repo)
    assert rc == 2
    assert (
        "cannot lock fx/lock.json: 'extra.txt' matches the fixture paths but lies "
        "outside the lock's root 'fx'" in err
    )
    assert not (repo / "fx/lock.json").exists()


def test_sha256sum_lock_with_crlf_endings_is_invalid(tmp_path, capsys):
    contract = "version: 1\nfixtures:\n  - lock: SUMS\n    root: fx\n    paths: ['fx/**']\n"
    repo = make_repo(tmp_path, files={"fx/a.txt": A}, contract=contract)
    stage(repo, {"SUMS": f"{sha(A)}  a.txt\r\n".encode()})
    rc, out = hook(capsys, repo)
    assert rc == 1
    assert "SUMS:1: lock-invalid: line ends in CR" in out
    stage(repo, {"SUMS": f"{sha(A)}  a.txt\n".encode()})
    assert hook(capsys, repo)[0] == 0


# -- where the lock is written ------------------------------------------------------

LOCKED_ELSEWHERE = """\
version: 1
fixtures:
  - lock: locks/fixtures.lock.json
    root: oracle/inputs
    paths: ["oracle/inputs/**"]
"""


def test_lock_never_writes_through_a_symlinked_folder(tmp_path, capsys):
    repo = make_repo(tmp_path, contract=LOCKED_ELSEWHERE)
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "locks").symlink_to(outside)
    rc, out, err = lock(capsys, repo)
    assert rc == 2, out
    assert err == (
        "oracle-guard: error: locks/fixtures.lock.json in the working tree lies "
        "in locks, which is a symlink; oracle-guard writes only regular files "
        "inside the repository\n"
    )
    assert list(outside.iterdir()) == []


def test_lock_writes_a_lock_in_a_new_folder(tmp_path, capsys):
    # the near-miss: a folder that does not exist yet is created, not refused
    repo = make_repo(tmp_path, contract=LOCKED_ELSEWHERE)
    rc, out, _ = lock(capsys, repo)
    assert rc == 0, out
    assert json.loads((repo / "locks/fixtures.lock.json").read_text()) == {
        "a.txt": sha(A),
        "b/c.txt": sha(C),
        "z.txt": sha(Z),
    }
    assert [p.name for p in (repo / "locks").iterdir()] == ["fixtures.lock.json"]


# -- names GNU sha256sum escapes, and names no lock can hold --------------------------

AWKWARD = {
    "a.txt": A,
    "back\\slash": b"1",
    "new\nline": b"2",
    "car\rriage": b"3",
    "ends in cr\r": b"4",
    "p)q": b"5",
    " lead": b"6",
    "*star": b"7",
    "\\": b"8",
    "b/\\n/x": b"9",
    "é.txt": b"10",
    "b/-": b"11",
}


def awkward_repo(tmp_path, lock_path, lock=None):
    contract = CONTRACT.replace(LOCK, lock_path)
    return make_repo(
        tmp_path,
        contract=contract,
        lock=None,
        files={
            **{f"oracle/inputs/{p}": d for p, d in AWKWARD.items()},
            **({lock_path: lock} if lock is not None else {}),
        },
    )


def gnu(root, *options):
    """GNU sha256sum's own output for AWKWARD's names, in the order lock sorts them."""
    return subprocess.run(
        ["sha256sum", *options, "--", *sorted(AWKWARD)],
        cwd=root,
        stdout=subprocess.PIPE,
        check=True,
    ).stdout


def gnu_check(root, lock):
    return subprocess.run(
        ["sha256sum", "--check", "--strict", lock],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.parametrize("options", [(), ("-b",), ("--tag",)], ids=["text", "binary", "tag"])
def test_lock_writes_what_gnu_sha256sum_writes(tmp_path, capsys, options):
    """A new SHA256SUMS is GNU's text-mode output byte for byte, escapes included; an
    existing one written with -b or --tag keeps its form."""
    sums = "oracle/SHA256SUMS"
    first = (
        None
        if not options
        else f"{'0' * 64} *a.txt\n"
        if options == ("-b",)
        else f"SHA256 (a.txt) = {'0' * 64}\n"
    )
    repo = awkward_repo(tmp_path, sums, first)
    rc, out, err = lock(capsys, repo)
    assert (rc, err) == (0, ""), out
    root = repo / "oracle" / "inputs"
    assert lock_bytes(repo, sums) == gnu(root, *options)
    assert_locked(capsys, repo, sums)
    proc = gnu_check(root, "../SHA256SUMS")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(b": OK\n") == len(AWKWARD)


def test_a_json_lock_holds_backslash_newline_and_cr_names(tmp_path, capsys):
    repo = awkward_repo(tmp_path, LOCK)
    rc, out, err = lock(capsys, repo)
    assert (rc, err) == (0, ""), out
    assert json.loads(lock_bytes(repo)) == {p: sha(d) for p, d in AWKWARD.items()}
    assert_locked(capsys, repo)


def test_a_broken_lock_of_an_escaped_name_is_fixed_as_the_hint_says(tmp_path, capsys):
    """The line an older lock wrote for a newline name is invalid; the hint's
    'oracle-guard lock' now writes one that both checks verify."""
    sums = "oracle/SHA256SUMS"
    repo = make_repo(
        tmp_path,
        contract=CONTRACT.replace(LOCK, sums),
        files={"oracle/inputs/new\nline": A, sums: f"{sha(A)}  new\nline\n"},
    )
    rc, out = hook(capsys, repo)
    assert rc == 1 and f"{sums}:2: lock-invalid: not a sha256sum line" in out, out
    assert "hint: regenerate it with 'oracle-guard lock'" in out
    assert lock(capsys, repo)[0] == 0
    assert lock_bytes(repo, sums) == f"\\{sha(A)}  new\\nline\n".encode()
    assert_locked(capsys, repo, sums)
    assert gnu_check(repo / "oracle" / "inputs", "../SHA256SUMS").returncode == 0


def test_lock_refuses_a_dash_at_the_root_of_a_sha256sum_lock(tmp_path, capsys):
    sums = "oracle/SHA256SUMS"
    repo = make_repo(
        tmp_path,
        contract=CONTRACT.replace(LOCK, sums),
        files={"oracle/inputs/-": A, "oracle/inputs/b/-": C},
    )
    rc, out, err = lock(capsys, repo)
    assert (rc, out) == (2, "")
    assert err == (
        "oracle-guard: error: cannot lock oracle/SHA256SUMS: oracle/inputs/- is "
        "named '-' at the lock's root, which 'sha256sum -c' reads as standard "
        "input: a sha256sum lock cannot name it; rename the file, or use a JSON "
        "lock\n"
    )
    assert not (repo / sums).exists()
    stage(repo, {sums: f"{sha(C)}  b/-\n"})  # by hand: the finding says why lock cannot
    rc, out = hook(capsys, repo)
    assert (
        "oracle/inputs/-: fixture-unlocked: has no entry in oracle/SHA256SUMS; it is "
        "named '-'" in out
    )
    git(repo, "mv", "oracle/inputs/-", "oracle/inputs/dash")
    assert lock(capsys, repo)[0] == 0
    assert_locked(capsys, repo, sums)
    assert gnu_check(repo / "oracle" / "inputs", "../SHA256SUMS").returncode == 0


def test_a_json_lock_takes_a_dash(tmp_path, capsys):
    repo = make_repo(tmp_path, files={"oracle/inputs/-": A})
    assert lock(capsys, repo)[0] == 0
    assert json.loads(lock_bytes(repo)) == {"-": sha(A)}
    assert_locked(capsys, repo)


def test_a_non_utf8_fixture_is_unlocked_and_says_why_lock_cannot_help(tmp_path, capsys):
    import os

    repo = make_repo(tmp_path, lock=json.dumps({"a.txt": sha(A)}))
    with open(os.path.join(os.fsencode(repo), b"oracle/inputs/bad\xff"), "wb") as f:
        f.write(A)
    git(repo, "add", "-A")
    rc, out = hook(capsys, repo)
    assert rc == 1
    assert (
        "oracle/inputs/bad\\xff: fixture-unlocked: has no entry in "
        "oracle/fixtures.lock.json; it is not a valid UTF-8 file name: a lock (UTF-8 "
        "text) cannot name it; rename the file"
    ) in out, out


def test_an_invalid_lock_says_when_lock_cannot_rewrite_it(tmp_path, capsys):
    """The lock-invalid hint says to run 'oracle-guard lock': where that would refuse
    (a fixture named '-' at a sha256sum lock's root), the finding says why and what to do."""
    sums = "oracle/SHA256SUMS"
    repo = make_repo(
        tmp_path,
        contract=CONTRACT.replace(LOCK, sums),
        files={"oracle/inputs/-": A, sums: "not a line\n"},
    )
    rc, out = hook(capsys, repo)
    assert rc == 1
    assert (
        f"{sums}:1: lock-invalid: not a sha256sum line: '<sha256>  <path>', '<sha256> "
        "*<path>' or 'SHA256 (<path>) = <sha256>', with a leading '\\' when the path is "
        "escaped ('oracle-guard lock' cannot rewrite it: oracle/inputs/- is named '-' at "
        "the lock's root, which 'sha256sum -c' reads as standard input: a sha256sum lock "
        "cannot name it; rename the file, or use a JSON lock)"
    ) in out.splitlines(), out
    rc, _, err = lock(capsys, repo)
    assert rc == 2 and "oracle/inputs/- is named '-'" in err


# -- lock --add ------------------------------------------------------------------------
SUMS = "fixtures/SHA256SUMS"
NEW = b'{"sku": "new", "cents": 250}\n'


def lock_add(capsys, repo, path, *more):
    return run_guard(capsys, repo, "lock", "--add", path, *more)


def assert_every_hook_passes(capsys, repo, lock):
    git(repo, "add", "--", lock)
    rc, out, err = run_guard(
        capsys,
        repo,
        "check",
        "--only",
        oracle.all_but_write_set(),
        "--now",
        NOW,
    )
    assert rc == 0, out + err
    commit(repo, message="owner adds a fixture")
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 0, out + err
    assert "failed" not in out


def assert_refused(capsys, repo, path, *expected, more=()):
    locks = {
        p: (repo / p).read_bytes()
        for p in (LOCK, SUMS, "oracle/corpus.sha256")
        if (repo / p).exists()
    }
    rc, out, err = lock_add(capsys, repo, path, *more)
    assert rc == 2, out + err
    assert out == ""
    assert err.startswith("oracle-guard: error: ") and err.count("\n") == 1, err
    for text in expected:
        assert text in err, (text, err)
    assert {p: (repo / p).read_bytes() for p in locks} == locks


def test_json_lock_gets_the_new_key_in_sorted_place(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    stage(repo, {"oracle/inputs/discounts.json": NEW})
    rc, out, err = lock_add(capsys, repo, "oracle/inputs/discounts.json")
    assert (rc, err) == (0, "")
    assert out == (
        f"added oracle/inputs/discounts.json to {LOCK} (sha256 {sha(NEW)[:12]}…); "
        f"stage it with: git add {LOCK}\n"
    )
    shipped = (EXAMPLES / "merge-contract" / LOCK).read_text()
    assert (repo / LOCK).read_text() == shipped.replace(
        "{\n", '{\n  "discounts.json": "' + sha(NEW) + '",\n'
    )
    assert_every_hook_passes(capsys, repo, LOCK)


def test_sha256sum_lock_gets_a_line_that_sha256sum_checks(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    stage(repo, {"fixtures/zz_new.json": NEW, "fixtures/aa_new.json": b"[]\n"})
    for path in ("fixtures/zz_new.json", "./fixtures/aa_new.json"):
        rc, out, err = lock_add(capsys, repo, path)
        assert (rc, err) == (0, ""), out
    shipped = (EXAMPLES / "harness" / SUMS).read_text()
    assert (repo / SUMS).read_text() == (
        f"{sha(b'[]' + bytes([10]))}  aa_new.json\n" + shipped + f"{sha(NEW)}  zz_new.json\n"
    )
    proc = subprocess.run(
        ["sha256sum", "--check", "--strict", "SHA256SUMS"],
        cwd=repo / "fixtures",
        stdout=subprocess.PIPE,
    )
    assert proc.returncode == 0, proc.stdout
    assert_every_hook_passes(capsys, repo, SUMS)


def test_an_unsorted_lock_gets_the_key_at_the_end_and_nothing_else_changes(tmp_path, capsys):
    stale = "0" * 64  # a wrong digest for pricing.json: not rehashed, not rewritten
    lock = '{"zeta.json": "%s",\n "pricing.json": "%s"}' % (sha(b"z\n"), stale)
    repo = example_repo(tmp_path, "merge-contract", {LOCK: lock, "oracle/inputs/zeta.json": b"z\n"})
    stage(repo, {"oracle/inputs/a.json": NEW})
    rc, out, err = lock_add(capsys, repo, "oracle/inputs/a.json")
    assert (rc, err) == (0, ""), out
    assert (repo / LOCK).read_text() == lock[:-1] + ',\n "a.json": "%s"}' % sha(NEW)
    git(repo, "add", LOCK)
    rc, check_out, _ = run_guard(capsys, repo, "check", "--only", "fixture-lock")
    assert rc == 1  # the stale entry still fails, as it did before
    assert "oracle/inputs/pricing.json: fixture-mismatch" in check_out
    assert "a.json" not in check_out


def test_a_fixture_that_is_not_staged_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    write(repo, {"oracle/inputs/new.json": NEW})
    assert_refused(
        capsys,
        repo,
        "oracle/inputs/new.json",
        "'oracle/inputs/new.json' is not tracked",
        "run 'git add oracle/inputs/new.json' first",
    )
    git(repo, "add", "oracle/inputs/new.json")
    write(repo, {"oracle/inputs/new.json": NEW + b"more\n"})
    assert_refused(capsys, repo, "oracle/inputs/new.json", "has changes git has not staged")


def test_a_path_outside_every_fixtures_entry_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    stage(repo, {"src/new.py": b"x = 1\n"})
    assert_refused(
        capsys,
        repo,
        "src/new.py",
        "src/new.py matches no fixtures entry of the contract (oracle/inputs/**)",
    )
    assert_refused(capsys, repo, LOCK, "matches no fixtures entry")  # the lock itself


def test_an_already_locked_fixture_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    assert_refused(
        capsys,
        repo,
        "oracle/inputs/pricing.json",
        f"oracle/inputs/pricing.json is already locked in {LOCK} (key 'pricing.json')",
        "run 'oracle-guard lock'",
    )


def test_a_single_digest_lock_is_refused(tmp_path, capsys):
    contract = (
        (EXAMPLES / "oracle-dir/.oracle-guard.yaml")
        .read_text()
        .replace('paths: ["oracle/corpus.jsonl"]', 'paths: ["oracle/corpus*.jsonl"]')
    )
    repo = example_repo(tmp_path, "oracle-dir", {".oracle-guard.yaml": contract})
    stage(repo, {"oracle/corpus2.jsonl": b"1\n"})
    assert_refused(
        capsys, repo, "oracle/corpus2.jsonl", "oracle/corpus.sha256 is a single-digest lock"
    )


def test_a_fixture_outside_the_root_is_refused(tmp_path, capsys):
    contract = (
        (EXAMPLES / "merge-contract/.oracle-guard.yaml")
        .read_text()
        .replace('paths: ["oracle/inputs/**"]', 'paths: ["oracle/inputs/**", "oracle/extra.json"]')
    )
    repo = example_repo(tmp_path, "merge-contract", {".oracle-guard.yaml": contract})
    stage(repo, {"oracle/extra.json": NEW})
    assert_refused(
        capsys, repo, "oracle/extra.json", "lies outside the lock's root 'oracle/inputs'"
    )


def test_a_missing_or_broken_lock_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    stage(repo, {"oracle/inputs/new.json": NEW})
    (repo / LOCK).write_text('{"pricing.json": "abc"}\n')
    assert_refused(
        capsys,
        repo,
        "oracle/inputs/new.json",
        f"{LOCK}:1:",
        "is not 64 lowercase hex digits",
        "rewrite it with 'oracle-guard lock'",
    )
    (repo / LOCK).unlink()
    assert_refused(
        capsys,
        repo,
        "oracle/inputs/new.json",
        f"{LOCK} does not exist yet: run 'oracle-guard lock'",
    )


def test_add_and_check_together_are_an_error(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    stage(repo, {"oracle/inputs/new.json": NEW})
    assert_refused(capsys, repo, "oracle/inputs/new.json", "use one of them", more=["--check"])


def test_lock_json_key_order_is_kept_for_one_entry(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    stage(repo, {"oracle/inputs/zz.json": NEW})
    assert lock_add(capsys, repo, "oracle/inputs/zz.json")[0] == 0
    assert list(json.loads((repo / LOCK).read_text())) == ["pricing.json", "zz.json"]


# -- all locks or none; names a lock cannot hold; where the git add works -----------------
def _limit_file_size():  # runs in the child: writes beyond 1 KiB fail with EFBIG
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, resource.RLIM_INFINITY))


def test_two_locks_are_written_both_or_neither(tmp_path):
    """The second lock's write fails (EFBIG): the first, already prepared, is left
    as it was too, and no temporary file stays behind."""
    import os
    import sys

    second = "oracle/more.lock.json"
    contract = (
        (EXAMPLES / "merge-contract/.oracle-guard.yaml")
        .read_text()
        .replace(
            "freeze:",
            f"  - lock: {second}\n    root: oracle/inputs\n"
            '    paths: ["oracle/inputs/**"]\nfreeze:',
        )
    )
    padded = "{\n" + " " * 1100 + (EXAMPLES / "merge-contract" / LOCK).read_text()[2:]
    repo = example_repo(
        tmp_path, "merge-contract", {".oracle-guard.yaml": contract, second: padded}
    )
    stage(repo, {"oracle/inputs/new.json": NEW})
    before = {p: (repo / p).read_bytes() for p in (LOCK, second)}
    listing = sorted(os.listdir(repo / "oracle"))
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "ORACLE_GUARD_NOW")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "oracle_guard",
            "lock",
            "--add",
            "oracle/inputs/new.json",
            "-C",
            str(repo),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=_limit_file_size,
    )
    assert proc.returncode == 2, proc.stderr
    assert b"cannot write oracle/more.lock.json: File too large" in proc.stderr
    assert {p: (repo / p).read_bytes() for p in (LOCK, second)} == before
    assert sorted(os.listdir(repo / "oracle")) == listing
    proc = subprocess.run(  # near miss: without the limit, both locks get the key
        [
            sys.executable,
            "-m",
            "oracle_guard",
            "lock",
            "--add",
            "oracle/inputs/new.json",
            "-C",
            str(repo),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert all(b'"new.json"' in (repo / p).read_bytes() for p in (LOCK, second))


def test_plain_lock_refuses_a_fixture_name_that_is_not_utf8(tmp_path, capsys):
    import os

    repo = example_repo(tmp_path, "merge-contract")
    with open(os.path.join(os.fsencode(repo), b"oracle/inputs/bad\xff.json"), "wb") as f:
        f.write(b"{}\n")
    stage(repo)
    before = (repo / LOCK).read_bytes()
    rc, out, err = run_guard(capsys, repo, "lock")
    assert rc == 2, out + err
    assert err == (
        "oracle-guard: error: cannot lock oracle/fixtures.lock.json: "
        "oracle/inputs/bad\\xff.json is not a valid UTF-8 file name: a lock "
        "(UTF-8 text) cannot name it; rename the file\n"
    )
    assert (repo / LOCK).read_bytes() == before


def test_the_printed_git_add_works_from_a_subfolder(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    stage(repo, {"oracle/inputs/new.json": NEW})
    rc, out, err = lock_add(capsys, repo / "oracle" / "inputs", "oracle/inputs/new.json")
    assert rc == 0, out + err
    assert out.endswith("stage it with: git add ../fixtures.lock.json\n")
    git(repo / "oracle" / "inputs", *shlex.split(out.split("stage it with: ")[1])[1:])
    assert git(repo, "diff", "--name-only") == ""
    stage(repo, {"oracle/inputs/newer.json": NEW + b"\n"})
    rc, out, err = run_guard(capsys, repo / "src", "lock")
    assert rc == 0, out + err
    assert out == f"wrote {LOCK} (3 files); stage it with: git add ../{LOCK}\n"


# -- names GNU sha256sum escapes -----------------------------------------------------


def test_an_escaped_name_gets_gnus_escaped_line(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    names = ["fixtures/new\nline.json", "fixtures/back\\slash.json", "fixtures/cr\r.json"]
    stage(repo, {name: NEW for name in names})
    for name in names:
        rc, out, err = lock_add(capsys, repo, name)
        assert (rc, err) == (0, ""), out
    text = (repo / SUMS).read_text()
    for line in (
        f"\\{sha(NEW)}  new\\nline.json\n",
        f"\\{sha(NEW)}  back\\\\slash.json\n",
        f"\\{sha(NEW)}  cr\\r.json\n",
    ):
        assert line in text, text
    proc = gnu_check(repo / "fixtures", "SHA256SUMS")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_every_hook_passes(capsys, repo, SUMS)


def test_a_tagged_lock_gets_a_tagged_line(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    root = repo / "fixtures"
    tagged = subprocess.run(
        ["sha256sum", "--tag", "exchange_example.json"],
        cwd=root,
        stdout=subprocess.PIPE,
        check=True,
    ).stdout
    write(repo, {SUMS: tagged})
    stage(repo, {"fixtures/a\\b.json": NEW})
    rc, out, err = lock_add(capsys, repo, "fixtures/a\\b.json")
    assert (rc, err) == (0, ""), out
    assert (repo / SUMS).read_bytes() == f"\\SHA256 (a\\\\b.json) = {sha(NEW)}\n".encode() + tagged
    assert gnu_check(root, "SHA256SUMS").returncode == 0
    assert_every_hook_passes(capsys, repo, SUMS)


def test_a_json_lock_gets_a_backslash_key(tmp_path, capsys):
    repo = example_repo(tmp_path, "merge-contract")
    stage(repo, {"oracle/inputs/a\\b\n.json": NEW})
    rc, out, err = lock_add(capsys, repo, "oracle/inputs/a\\b\n.json")
    assert (rc, err) == (0, ""), out
    assert json.loads((repo / LOCK).read_text())["a\\b\n.json"] == sha(NEW)
    assert_every_hook_passes(capsys, repo, LOCK)


def test_a_dash_at_the_root_of_a_sha256sum_lock_is_refused(tmp_path, capsys):
    repo = example_repo(tmp_path, "harness")
    stage(repo, {"fixtures/-": NEW})
    assert_refused(
        capsys,
        repo,
        "fixtures/-",
        "fixtures/- is named '-' at the lock's root, which 'sha256sum -c' reads "
        "as standard input: a sha256sum lock cannot name it; rename the file, or "
        "use a JSON lock",
    )
