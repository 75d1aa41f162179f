"""The hint a failed check prints fits the finding and the contract: a file over a
size limit gets a fix about its size, and a fix names the signers file or the
freeze file only when the contract has the section that makes them exist."""

import hashlib
import json
import os

import pytest

from oracle_guard.checks.codes import fix_in
from testing.git import commit, init_repo, run_guard, stage
from testing.oracle import NOW

FIXTURES = """\
version: 1
fixtures:
  - {lock: fixtures/SHA256SUMS, root: fixtures, paths: ["fixtures/**"]}
write_set:
  allow: ["src/**", "tests/**"]
"""
TAMPER = """\
version: 1
write_set:
  allow: ["src/**", "tests/**"]
tamper:
  paths: ["tests/**"]
"""
FREEZE = """\
freeze:
  - {paths: ["/freeze.json"], schema: freeze}
"""
SEEDS = """\
version: 1
seeds:
  - {paths: ["seeds/*.jsonl"], format: jsonl}
write_set:
  allow: ["src/**"]
limits:
  seed_bytes: 1024
"""


@pytest.fixture(autouse=True)
def _no_global_git_config(monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)


def hint(capsys, repo):
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 1, out + err
    (line,) = [ln for ln in out.splitlines() if ln.startswith("hint: ")]
    return line


def test_without_authority_the_fixture_hint_names_no_signers_file(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    data = b'{"a": 1}\n'
    lock = f"{hashlib.sha256(data).hexdigest()}  a.json\n"
    commit(
        repo,
        {
            ".oracle-guard.yaml": FIXTURES,
            "fixtures/a.json": data.decode(),
            "fixtures/SHA256SUMS": lock,
        },
    )
    stage(repo, {"fixtures/a.json": '{"a": 2}\n'})
    line = hint(capsys, repo)
    assert "signers" not in line
    assert (
        "an owner makes it: the fixture and its lock ('oracle-guard lock') in a commit of their own (docs: how-to/edit-the-oracle.md)"
        in line
    )


def test_with_authority_the_fixture_hint_names_the_signers_file():
    # near miss: the same fix, fitted to a contract that has an authority section
    fix = fix_in(
        "fixture-mismatch", "staged", "HEAD", "fixtures/a.json", "", ["authority", "fixtures"]
    )
    assert "in a commit of their own, signed with a key in the authority signers file" in fix
    bare = fix_in("fixture-mismatch", "server", "abc", "fixtures/a.json", "", ["fixtures"])
    assert "signers" not in bare  # and on the server, which fits it the same way


@pytest.mark.parametrize("with_freeze", [False, True])
def test_the_skip_hint_names_the_freeze_file_only_with_a_freeze_section(
    tmp_path, capsys, with_freeze
):
    repo = init_repo(tmp_path / "r")
    files = {
        ".oracle-guard.yaml": TAMPER + (FREEZE if with_freeze else ""),
        "tests/test_a.py": "def test_a():\n    assert True\n",
    }
    if with_freeze:
        files["freeze.json"] = json.dumps({"excluded_property_ids": [], "reason": {}}) + "\n"
    commit(repo, files)
    stage(
        repo,
        {"tests/test_a.py": "import pytest\n\n@pytest.mark.skip\ndef test_a():\n    assert True\n"},
    )
    line = hint(capsys, repo)
    assert ("recorded in the freeze file the scoring harness reads" in line) is with_freeze
    if not with_freeze:
        assert "recorded in a freeze file, which a freeze section of the contract names" in line


def test_a_test_file_over_the_size_limit_gets_a_hint_about_size(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": TAMPER + "limits:\n  test_bytes: 1024\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
        },
    )
    stage(repo, {"tests/test_a.py": "def test_a():\n    pass\n" + "# padding\n" * 200})
    line = hint(capsys, repo)
    assert line.startswith("hint: the file is over limits.test_bytes: shrink it or split it")
    assert "parses" not in line


def test_a_test_file_that_does_not_parse_keeps_the_syntax_hint(tmp_path, capsys):
    # near miss: the same code for a file that is small but no Python
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": TAMPER, "tests/test_a.py": "def test_a():\n    pass\n"})
    stage(repo, {"tests/test_a.py": "def test_a(:\n"})
    assert "commit the test as plain Python source that parses" in hint(capsys, repo)


def test_a_seed_file_over_the_size_limit_gets_a_hint_about_size(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": SEEDS, "seeds/a.jsonl": "1\n"})
    stage(repo, {"seeds/a.jsonl": "1\n" * 600})
    line = hint(capsys, repo)
    assert line.startswith("hint: the seed file is over limits.seed_bytes: start a new seed file")
    assert "syntax" not in line


def test_a_seed_file_that_does_not_parse_keeps_the_syntax_hint(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": SEEDS, "seeds/a.jsonl": "1\n"})
    stage(repo, {"seeds/a.jsonl": "1\n{\n"})
    assert hint(capsys, repo).startswith("hint: fix the syntax")


LOCKED = """\
version: 1
fixtures:
  - {lock: fixtures/SHA256SUMS, root: fixtures, paths: ["fixtures/**"]}
"""


def locked_repo(tmp_path):
    repo = init_repo(tmp_path / "r")
    lock = hashlib.sha256(b"a\n").hexdigest() + "  a.json\n"
    commit(
        repo, {".oracle-guard.yaml": LOCKED, "fixtures/a.json": "a\n", "fixtures/SHA256SUMS": lock}
    )
    return repo


@pytest.mark.parametrize("name", [b"caf\xe9.json", b"-"])
def test_a_fixture_no_lock_can_name_is_told_to_rename_it_not_to_run_lock(tmp_path, capsys, name):
    repo = locked_repo(tmp_path)
    (repo / "fixtures").joinpath(os.fsdecode(name)).write_bytes(b"b\n")
    stage(repo)
    line = hint(capsys, repo)
    assert line.startswith("hint: rename the file"), line
    assert "run 'oracle-guard lock'" not in line
    assert run_guard(capsys, repo, "lock")[0] == 2  # which lock indeed refuses


def test_an_unlocked_fixture_with_a_plain_name_is_told_to_run_lock(tmp_path, capsys):
    # near miss: lock can record this one
    repo = locked_repo(tmp_path)
    stage(repo, {"fixtures/b.json": "b\n"})
    assert "have a human run 'oracle-guard lock' to record it" in hint(capsys, repo)
    assert run_guard(capsys, repo, "lock")[0] == 0
