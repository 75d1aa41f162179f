"""Attacks on the lazy snapshots (e36139d, aa24d45): places where reading a
commit in part (diff-tree, folder listings, tree walks) must judge exactly what
the full listing judged before. Each test names what the full listing did."""

from pathlib import Path

from testing.git import git, init_repo, run_guard, write

OLD_TESTDATA = "1" * 40
NEW_TESTDATA = "2" * 40
GITMODULES = '[submodule "td"]\n\tpath = testdata\n\turl = https://example.invalid/td\n'
IGNORE_ALL = GITMODULES + "\tignore = all\n"


def _commit(repo: Path, files: dict, gitlinks: dict, message: str) -> str:
    """Commit ``files`` (written and added by name) and ``gitlinks`` (path -> commit
    id, staged with update-index: there is no submodule checkout behind them)."""
    write(repo, files)
    if files:
        git(repo, "add", "--", *files)
    for path, oid in gitlinks.items():
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{oid},{path}")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def _submodule_repo(tmp_path: Path, base_gitmodules: str) -> Path:
    repo = init_repo(tmp_path / "r")
    contract = 'version: 1\nwrite_set:\n  deny: ["testdata", "testdata/**"]\n'
    _commit(
        repo,
        {".oracle-guard.yaml": contract, "README.md": "hi\n", ".gitmodules": base_gitmodules},
        {"testdata": OLD_TESTDATA},
        "base",
    )
    return repo


def test_a_submodule_bump_at_a_protected_path_is_denied_when_gitmodules_ignores_it(
    tmp_path, capsys
):
    """The project's .gitmodules says 'ignore = all' (to keep git status quiet).
    diff-tree honours it from the working tree's .gitmodules and drops the
    gitlink change; the full listing (before e36139d) denied it."""
    repo = _submodule_repo(tmp_path, IGNORE_ALL)
    base = git(repo, "rev-parse", "HEAD").strip()
    head = _commit(repo, {"README.md": "more\n"}, {"testdata": NEW_TESTDATA}, "bump")
    rc, out, _ = run_guard(
        capsys, repo, "check", "--base", base, "--head", head, "--only", "write-set"
    )
    assert rc == 1, out
    assert "testdata: write-denied: matches deny pattern 'testdata'" in out


def test_a_change_cannot_hide_its_submodule_bump_by_setting_ignore_all_itself(tmp_path, capsys):
    """A push build or pre-push (PRE_COMMIT_FROM_REF/TO_REF, as `pre-commit run
    --from-ref --to-ref` in the plain CI recipe): the checkout is the candidate,
    so its .gitmodules, which the change itself sets to 'ignore = all'
    (.gitmodules is not protected), is the one diff-tree reads."""
    repo = _submodule_repo(tmp_path, GITMODULES)
    base = git(repo, "rev-parse", "HEAD").strip()
    head = _commit(repo, {".gitmodules": IGNORE_ALL}, {"testdata": NEW_TESTDATA}, "bump")
    rc, out, _ = run_guard(
        capsys,
        repo,
        "check",
        "--only",
        "write-set",
        env={"PRE_COMMIT_FROM_REF": base, "PRE_COMMIT_TO_REF": head},
    )
    assert rc == 1, out
    assert "testdata: write-denied" in out


def test_a_submodule_added_over_a_protected_folder_is_denied_when_gitmodules_ignores_it(
    tmp_path, capsys
):
    """Near the same hole: a gitlink added where protected files could lie."""
    repo = init_repo(tmp_path / "r")
    contract = (
        'version: 1\nfreeze:\n  - {paths: ["quarantine/active/*.yaml"], schema: quarantine-entry}\n'
    )
    base = _commit(repo, {".oracle-guard.yaml": contract, "README.md": "hi\n"}, {}, "base")
    sneaky = (
        '[submodule "q"]\n\tpath = quarantine/active\n\turl = https://example.invalid/q\n'
        "\tignore = all\n"
    )
    head = _commit(repo, {".gitmodules": sneaky}, {"quarantine/active": NEW_TESTDATA}, "add")
    rc, out, _ = run_guard(
        capsys, repo, "check", "--base", base, "--head", head, "--only", "write-set"
    )
    assert rc == 1, out
    assert "quarantine/active: write-denied" in out


EXPIRED_ENTRY = """id: q1
seed: 1
command: pytest -k q1
runs: 2
pass_count: 1
fail_count: 1
expires_at: 2026-01-01
owner: alice
repro: run it
"""


def test_an_expired_entry_fails_whatever_git_pathspec_variables_say(tmp_path, capsys, monkeypatch):
    """GIT_LITERAL_PATHSPECS=1 in the environment turns ':(literal)quarantine/active'
    into a literal path that names nothing: the folder listing comes back empty,
    so freeze-schema and flake-budget judge no file and pass. The full listing
    used no pathspec and failed the expired entry."""
    repo = init_repo(tmp_path / "r")
    contract = (
        'version: 1\nfreeze:\n  - {paths: ["quarantine/active/*.yaml"], '
        "schema: quarantine-entry}\nbudget:\n  max_frozen: 5\n"
    )
    _commit(
        repo,
        {
            ".oracle-guard.yaml": contract,
            "quarantine/active/q1.yaml": EXPIRED_ENTRY,
            "src/app.py": "1\n",
        },
        {},
        "base",
    )
    head = _commit(repo, {"src/app.py": "2\n"}, {}, "honest change")
    monkeypatch.setenv("GIT_LITERAL_PATHSPECS", "1")
    rc, out, _ = run_guard(
        capsys, repo, "check", "--head", head, "--now", "2026-09-25", "--only", "flake-budget"
    )
    assert rc == 1, out
    assert "budget-expired" in out


def test_a_lock_git_reads_as_a_submodule_is_not_a_regular_file(tmp_path, capsys):
    """A tree entry of mode 10644 is a gitlink to git (canon_mode: every type that
    is not a file, link or folder), so ls-tree printed 160000 and fixture-lock
    said 'lock file is not a regular file'; _canonical_mode calls it 100644, and a
    checkout has no lock file at all. (write-set sees the mode change in a full
    check; this is what `--only fixture-lock`, an owner's check, sees.)"""
    import hashlib
    import json

    repo = init_repo(tmp_path / "r")
    fixture = b'{"a": 1}\n'
    lock = json.dumps({"a.json": hashlib.sha256(fixture).hexdigest()}) + "\n"
    contract = (
        "version: 1\nfixtures:\n  - lock: oracle/fixtures.lock.json\n"
        '    root: oracle/inputs\n    paths: ["oracle/inputs/**"]\n'
    )
    _commit(
        repo,
        {
            ".oracle-guard.yaml": contract,
            "oracle/inputs/a.json": fixture,
            "oracle/fixtures.lock.json": lock,
        },
        {},
        "base",
    )

    def raw_tree(entries):
        data = b"".join(
            mode + b" " + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries
        )
        return git(
            repo, "hash-object", "-t", "tree", "--literally", "-w", "--stdin", input=data
        ).strip()

    def oid(path):
        return git(repo, "rev-parse", f"HEAD:{path}").strip()

    oracle = raw_tree(
        [
            (b"10644", b"fixtures.lock.json", oid("oracle/fixtures.lock.json")),
            (b"40000", b"inputs", oid("oracle/inputs")),
        ]
    )
    root = raw_tree(
        [
            (b"100644", b".oracle-guard.yaml", oid(".oracle-guard.yaml")),
            (b"40000", b"oracle", oracle),
        ]
    )
    head = git(repo, "commit-tree", root, "-p", "HEAD", "-m", "odd mode").strip()
    assert "160000 commit" in git(repo, "ls-tree", head, "oracle/fixtures.lock.json")
    rc, out, _ = run_guard(capsys, repo, "check", "--head", head, "--only", "fixture-lock")
    assert rc == 1, out
    assert "lock-invalid" in out
