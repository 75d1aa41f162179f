import os

import pytest

from oracle_guard.checks.registry import HOOKS
from oracle_guard.contract import Contract, literal_pattern, parse
from oracle_guard.parsing.patterns import Pattern
from oracle_guard.snapshot import Snapshot
from testing.git import commit, init_repo, remove, run_guard, stage
from testing.oracle import NOW

VALID = """\
version: 1
base: origin/main
fixtures:
  - lock: oracle/fixtures.lock.json
    root: oracle/inputs
    paths: ["oracle/inputs/**"]
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
  - {paths: ["oracle/corpus.jsonl"], format: jsonl}
  - {paths: ["seeds.lock"], format: json-object}
  - {paths: ["replays/*.json"], format: immutable}
freeze:
  - {paths: ["freeze.json"], schema: freeze}
  - {paths: ["oracle/flake_budget.yaml"], schema: flake-budget}
  - {paths: ["quarantine/active/*.yaml"], schema: quarantine-entry}
  - {paths: ["oracle/quarantine.json"], schema: quarantine-list}
  - {paths: ["custom/*.json"], schema: schemas/custom.json}
budget:
  max_frozen: 3
  max_days: 14
  warn_days: 3
  known_ids: ["seeds/*.json"]
write_set:
  allow: ["src/**", "tests/**", "README.md"]
  allow_file: oracle/write_set.txt
  deny: ["oracle/**", "seeds/**", "freeze.json", ".pre-commit-config.yaml"]
  owners: [alice]
identity_env: GL_USERNAME
"""


def check_staged_contract(tmp_path, capsys, contract):
    """Stage ``contract`` (str or bytes) in a repo with no commits and run every hook."""
    repo = init_repo(tmp_path / "r")
    stage(repo, {".oracle-guard.yaml": contract})
    return run_guard(capsys, repo, "check", "--now", NOW)


def assert_contract_error(result, line, message):
    rc, out, err = result
    assert rc == 2, out
    assert out == ""
    assert err.count("\n") == 1, err
    assert err == (
        f"oracle-guard: error: .oracle-guard.yaml:{line}: {message} (the contract in the index)\n"
    )


def test_valid_contract_loads(tmp_path, capsys):
    data = parse(VALID.encode())
    assert data["write_set"]["owners"] == ["alice"]
    assert data["seeds"][1] == {"paths": ["oracle/corpus.jsonl"], "format": "jsonl"}


def test_minimal_contract_passes_with_notes(tmp_path, capsys):
    rc, out, err = check_staged_contract(tmp_path, capsys, "version: 1\n")
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "fixture-lock: passed (nothing to check: the contract has no 'fixtures' section)",
        "seed-append-only: passed (nothing to check: the contract has no 'seeds' section)",
        "freeze-schema: passed (nothing to check: the contract has no 'freeze' section)",
        "flake-budget: passed (nothing to check: the contract has no 'budget' section)",
        "write-set: passed (nothing to check: the base (no commits yet) has no contract; "
        "this change introduces it)",
        "test-tamper: passed (nothing to check: the contract has no 'tamper' section)",
    ]


def test_repo_without_contract_passes_with_notes(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"src/a.py": ""})
    stage(repo, {"src/a.py": "x = 1\n"})
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert (rc, err) == (0, "")
    note = "(nothing to check: no .oracle-guard.yaml in base or candidate)"
    assert out.splitlines() == [f"{hook}: passed {note}" for hook in HOOKS]


@pytest.mark.parametrize(
    ("contract", "line", "message"),
    [
        # a typo must not silently disable a hook
        (
            'version: 1\nseed:\n  - {paths: ["s/*.json"], format: json-array}\n',
            2,
            "invalid contract at $: Additional properties are not allowed ('seed' was unexpected); did you mean 'seeds'?",
        ),
        (
            "version: 1\nbudget: {max_frozen: 3, max_day: 3}\n",
            2,
            "invalid contract at $.budget: Additional properties are not allowed "
            "('max_day' was unexpected); did you mean 'max_days'?",
        ),
        (
            "version: 1\nwrite_set:\n  allow: [src/**]\n  denied: [oracle/**]\n",
            4,
            "invalid contract at $.write_set: Additional properties are not allowed "
            "('denied' was unexpected); did you mean 'deny'?",
        ),
        # wrong types
        (
            "version: 1\nwrite_set:\n  allow: src/**\n",
            3,
            "invalid contract at $.write_set.allow: 'src/**' is not of type 'array'",
        ),
        (
            "version: 1\nbudget:\n  max_frozen: '3'\n",
            3,
            "invalid contract at $.budget.max_frozen: '3' is not of type 'integer'",
        ),
        (
            "version: 1\nseeds: {paths: [a], format: jsonl}\n",
            2,
            "invalid contract at $.seeds: {'paths': ['a'], 'format': 'jsonl'} is not of type 'array'",
        ),
        (
            "version: 1\nwrite_set:\n  deny: []\n",
            3,
            "invalid contract at $.write_set.deny: [] should be non-empty",
        ),
        ("version: 2\n", 1, "invalid contract at $.version: 1 was expected"),
        ("base: main\n", 1, "invalid contract at $: 'version' is a required property"),
        ("- version: 1\n", 1, "invalid contract at $: [{'version': 1}] is not of type 'object'"),
        # unknown names
        (
            'version: 1\nseeds:\n  - {paths: ["s/*.json"], format: json-arry}\n',
            3,
            "invalid contract at $.seeds[0].format: 'json-arry' is not one of "
            "['json-array', 'jsonl', 'json-object', 'immutable']",
        ),
        (
            'version: 1\nfreeze:\n  - {paths: ["f.json"], schema: freez}\n',
            3,
            "invalid contract at $.freeze[0].schema: 'freez' is not one of "
            "['freeze', 'flake-budget', 'quarantine-entry', 'quarantine-list']",
        ),
        # negation
        (
            'version: 1\nwrite_set:\n  deny: ["oracle/**", "!oracle/ok"]\n',
            3,
            "invalid contract at $.write_set.deny[1]: '!oracle/ok' is not a pattern: "
            "negation ('!') and '.' or '..' parts are not supported",
        ),
        (
            'version: 1\nseeds:\n  - format: immutable\n    paths: ["!r/*.json"]\n',
            4,
            "invalid contract at $.seeds[0].paths[0]: '!r/*.json' is not a pattern: "
            "negation ('!') and '.' or '..' parts are not supported",
        ),
        # patterns with '.' or '..' parts would silently protect nothing
        (
            'version: 1\nwrite_set:\n  deny: ["./oracle/**"]\n',
            3,
            "invalid contract at $.write_set.deny[0]: './oracle/**' is not a pattern: "
            "negation ('!') and '.' or '..' parts are not supported",
        ),
        (
            'version: 1\nwrite_set:\n  allow: ["src/../oracle/**"]\n',
            3,
            "invalid contract at $.write_set.allow[0]: 'src/../oracle/**' is not a pattern: "
            "negation ('!') and '.' or '..' parts are not supported",
        ),
        # paths that leave the repository or are not normalized
        (
            'version: 1\nfixtures:\n  - {lock: ../x.lock, paths: ["a/**"]}\n',
            3,
            "invalid contract at $.fixtures[0].lock: '../x.lock' is not a normalized repo-relative "
            "file path (no leading '/', no '.' or '..' parts, no '//', '\\' or trailing '/')",
        ),
        (
            'version: 1\nfixtures:\n  - {lock: /etc/x.lock, paths: ["a/**"]}\n',
            3,
            "invalid contract at $.fixtures[0].lock: '/etc/x.lock' is not a normalized repo-relative "
            "file path (no leading '/', no '.' or '..' parts, no '//', '\\' or trailing '/')",
        ),
        (
            'version: 1\nfixtures:\n  - lock: x.lock\n    root: a/../../b\n    paths: ["a/**"]\n',
            4,
            "invalid contract at $.fixtures[0].root: 'a/../../b' is not a normalized repo-relative "
            "folder path (no leading '/', no '.' or '..' parts, no '//' or '\\')",
        ),
        (
            "version: 1\nwrite_set:\n  allow_file: ./write_set.txt\n",
            3,
            "invalid contract at $.write_set.allow_file: './write_set.txt' is not a normalized "
            "repo-relative file path (no leading '/', no '.' or '..' parts, no '//', '\\' or "
            "trailing '/')",
        ),
        # not YAML, or YAML the strict loader refuses
        ("version: 1\nversion: 1\n", 2, "duplicate key 'version'"),
        ("version: 1\nwrite_set:\n  deny: [a]\n  deny: [b]\n", 4, "duplicate key 'deny'"),
        ('{"version": 1,,}\n', 1, "the YAML needs a value at line 1, column 15, but has ',' there"),
        (
            "version: 1\nwrite_set:\n\tdeny: [a]\n",
            3,
            "a tab at line 3, column 1: YAML indents with spaces, never tabs",
        ),
        ("", 1, "empty document"),
        (
            'version: 1\nwrite_set:\n  deny: ["a\x1bb"]\n',
            3,
            "control character U+001B is not allowed in YAML",
        ),
    ],
)
def test_broken_contract_is_one_clear_error(tmp_path, capsys, contract, line, message):
    assert_contract_error(check_staged_contract(tmp_path, capsys, contract), line, message)


def test_binary_contract_is_an_error(tmp_path, capsys):
    rc, out, err = check_staged_contract(tmp_path, capsys, b"\x89PNG\r\n\x1a\n\x00\xff")
    assert (rc, out) == (2, "")
    assert err == (
        "oracle-guard: error: .oracle-guard.yaml:1: invalid UTF-8 (byte 0x89) "
        "(the contract in the index)\n"
    )


def test_every_problem_is_listed(tmp_path, capsys):
    result = check_staged_contract(tmp_path, capsys, "version: 1\nseed: []\nfreez: []\n")
    # the line of the first unknown key, and the closest known key for each
    assert_contract_error(
        result,
        2,
        "invalid contract at $: Additional properties are not "
        "allowed ('freez', 'seed' were unexpected); did you mean 'freeze' for 'freez', "
        "'seeds' for 'seed'?",
    )
    result = check_staged_contract(
        tmp_path / "2", capsys, "version: 1\nbudget: {max_frozen: -1}\nwrite_set: {deny: x}\n"
    )
    assert_contract_error(
        result,
        2,
        "invalid contract at $.budget.max_frozen: -1 is less than the minimum of 0; "
        "line 3: invalid contract at $.write_set.deny: 'x' is not of type 'array'",
    )


def test_yaml_anchor_in_contract_is_an_error(tmp_path, capsys):
    contract = 'version: 1\nwrite_set:\n  allow: &a ["src/**"]\n  deny: *a\n'
    rc, out, err = check_staged_contract(tmp_path, capsys, contract)
    assert (rc, out) == (2, "")
    assert err.startswith("oracle-guard: error: .oracle-guard.yaml:3: ")
    assert "anchor" in err and err.count("\n") == 1


def test_contract_must_be_a_regular_file(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    stage(repo, {"real.yaml": "version: 1\n"})
    os.symlink("real.yaml", repo / ".oracle-guard.yaml")
    stage(repo)
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert (rc, out) == (2, "")
    assert err == "oracle-guard: error: .oracle-guard.yaml in the index is not a regular file\n"


def test_error_in_the_base_contract_names_the_base(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {".oracle-guard.yaml": "version: 1\nseed: []\n"})
    # fixing the contract does not help: the change is judged by the base's rules
    stage(repo, {".oracle-guard.yaml": "version: 1\n"})
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert (rc, out) == (2, "")
    assert err.startswith(
        "oracle-guard: error: .oracle-guard.yaml:2: invalid contract at $: "
        "Additional properties are not allowed ('seed' was unexpected); did you mean "
        "'seeds'? (the contract in HEAD); a commit is judged by the contract in HEAD, so "
        "no staged fix passes: undo the commit that broke it"
    )


def test_contract_is_read_from_the_base(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(
        repo,
        {
            ".oracle-guard.yaml": "version: 1\nwrite_set:\n  deny: [oracle/**]\n",
            "oracle/a.json": "1\n",
        },
    )
    # deleting the contract in the same change neither disables nor escapes it
    remove(repo, ".oracle-guard.yaml")
    stage(repo, {"oracle/a.json": "2\n"})
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "write-set", "--now", NOW)
    assert rc == 1
    assert out.splitlines()[:2] == [
        ".oracle-guard.yaml: write-denied: is oracle file '.oracle-guard.yaml' named by "
        "the contract",
        "oracle/a.json: write-denied: matches deny pattern 'oracle/**'",
    ]


def test_candidate_contract_is_used_when_the_base_has_none(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"README.md": ""})
    stage(
        repo,
        {
            ".oracle-guard.yaml": "version: 1\nbudget: {max_frozen: 0}\n"
            "freeze:\n  - {paths: [freeze.json], schema: freeze}\n",
            "freeze.json": {"excluded_property_ids": ["p"], "reason": {"p": "flaky"}},
        },
    )
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "flake-budget", "--now", NOW)
    assert rc == 1
    assert "flake-budget: failed" in out
    stage(repo, {"freeze.json": {"excluded_property_ids": [], "reason": {}}})
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "flake-budget", "--now", NOW)
    assert rc == 0, out


def test_oracle_files_and_globs():
    contract = Contract(parse(VALID.encode()), Snapshot.empty(), from_base=True)
    assert contract.oracle_files() == [
        ".oracle-guard.yaml",
        "oracle/fixtures.lock.json",
        "schemas/custom.json",
        "oracle/write_set.txt",
    ]
    assert contract.oracle_globs() == [
        "oracle/inputs/**",
        "seeds/*.json",
        "oracle/corpus.jsonl",
        "seeds.lock",
        "replays/*.json",
        "freeze.json",
        "oracle/flake_budget.yaml",
        "quarantine/active/*.yaml",
        "oracle/quarantine.json",
        "custom/*.json",
        "seeds/*.json",
        ".gitattributes",
    ]
    assert contract.owners == ["alice"]


@pytest.mark.parametrize("name", ["a[1]*.lock", "odd?name", "back\\slash", "!bang", "#hash"])
def test_literal_pattern_matches_only_that_path(name):
    pattern = Pattern(literal_pattern("dir/" + name))
    assert pattern.matches("dir/" + name)
    assert not pattern.matches("x/dir/" + name)
    assert not pattern.matches("dir/" + name + "x")
    assert not pattern.matches("dir/a1.lock")


def test_a_contract_is_handed_out_as_a_copy_deepcopy_would_make():
    import copy

    from oracle_guard.contract import _copied

    class Marked(dict):
        pass

    shared = [1, 2]
    parsed = {
        "version": 1,
        "fixtures": [{"lock": "a.lock", "paths": ["fx/**"], "size": 1.5, "on": True}],
        "none": None,
        "pair": (shared, "x"),  # not what YAML or JSON makes: deepcopy's to copy
        "marked": Marked(a=[1]),
    }
    made = _copied(parsed)
    assert made == copy.deepcopy(parsed)
    made["fixtures"][0]["paths"].append("more/**")
    assert parsed["fixtures"][0]["paths"] == ["fx/**"]  # the original untouched
    assert made["pair"][0] is not shared and type(made["marked"]) is Marked
    assert made["marked"]["a"] is not parsed["marked"]["a"]
