"""Hostile input stays within bounds: each run of oracle-guard here gets 5 s of
CPU time (its own and its gits') and 256 MiB of address space
(testing/bounds.py), and still fails closed with a clear message, or passes
when the input is a legitimate one. CPU time, so a loaded machine, which
stretches wall time, fails no run."""

from __future__ import annotations

import json
import sys

import pytest

from testing.bounds import CPU_LIMIT, MEMORY_LIMIT, guard_command, guard_env, run_bounded
from testing.git import commit, git, init_repo, stage

CONTRACT = """\
version: 1
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
  - {paths: ["corpus/*.jsonl"], format: jsonl}
freeze:
  - {paths: ["quarantine/*.yaml", "quarantine/*.json"], schema: flake-budget}
budget: {max_frozen: 3, max_days: 30}
write_set:
  allow: ["src/**"]
  deny: ["a/**/b/**/c/**/d", "oracle/**"]
"""
BASE_FILES = {
    ".oracle-guard.yaml": CONTRACT,
    "seeds/a.json": [1],
    "corpus/c.jsonl": b"1\n",
    "quarantine/budget.yaml": "max_frozen: 3\nfrozen: []\n",
}


def alias_bomb(first_key: str = "a") -> str:
    """Nine levels of nine aliases: 9**9 strings if an alias were ever expanded."""
    names = "abcdefghi"
    rows = [f'{first_key}: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip(names, names[1:]):
        rows.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(rows) + "\n"


@pytest.fixture
def repo(tmp_path):
    path = init_repo(tmp_path / "r")
    commit(path, BASE_FILES, "base")
    return path


def guard(repo, *args):
    """oracle-guard check on the index, in a bounded child process."""
    return run_bounded(guard_command(repo, "--now", "2024-05-01", *args), env=guard_env())


def finding_lines(run):
    return [
        line
        for line in run.stdout.splitlines()
        if ": " in line
        and not line.startswith(("hint:",))
        and "passed" not in line
        and "failed (" not in line
    ]


def stage_paths(repo, paths, content=b"x\n"):
    """Stage many paths at once, straight into the index (no files on disk)."""
    oid = git(repo, "hash-object", "-w", "--stdin", input=content).strip()
    info = b"".join(b"100644 %s\t%s\n" % (oid.encode(), p.encode()) for p in paths)
    git(repo, "update-index", "--add", "--index-info", input=info)


def test_bounds_break_a_run_that_exceeds_them():
    # the harness itself must be able to fail: a run past the CPU, one past the
    # memory, and one that hangs without using the CPU
    with pytest.raises(AssertionError, match="of CPU, over its 0.5 s"):
        run_bounded([sys.executable, "-c", "while True: pass"], cpu_limit=0.5)
    with pytest.raises(AssertionError, match="address space|died of signal"):
        run_bounded([sys.executable, "-c", "x = bytearray(300 * 2**20)"])
    with pytest.raises(AssertionError, match="hung past 0.5 s"):
        run_bounded(["sleep", "30"], hang_limit=0.5)
    assert MEMORY_LIMIT == 256 * 2**20 and CPU_LIMIT == 5.0


def test_a_child_that_sleeps_uses_no_cpu_time():
    # the near miss: waiting, as a loaded machine makes every run wait, is not CPU
    run = run_bounded(["sleep", "1"], cpu_limit=0.5)
    assert run.returncode == 0 and run.cpu_seconds < 0.5


# -- YAML -------------------------------------------------------------------------


def test_alias_bomb_in_a_freeze_file_is_rejected_unexpanded(repo):
    stage(repo, {"quarantine/budget.yaml": alias_bomb()})
    run = guard(repo, "--only", "freeze-schema")
    assert run.returncode == 1, run
    assert (
        "quarantine/budget.yaml:1: freeze-invalid: does not parse: anchor &a is not "
        "allowed (column 4)"
    ) in run.stdout.splitlines()


def test_alias_bomb_in_the_contract_is_a_broken_contract(repo):
    commit(repo, {".oracle-guard.yaml": CONTRACT + alias_bomb("x_a")})
    run = guard(repo)
    assert run.returncode == 2, run
    assert run.stderr.startswith(
        "oracle-guard: error: .oracle-guard.yaml:11: anchor &a is not "
        "allowed (the contract in HEAD); a commit is judged by the contract in HEAD"
    )


def test_yaml_nested_100000_deep_in_a_freeze_file_is_invalid(repo):
    stage(repo, {"quarantine/deep.yaml": b"[" * 100_000 + b"]" * 100_000})
    run = guard(repo, "--only", "freeze-schema")
    assert run.returncode == 1, run
    assert any(
        line.startswith(
            "quarantine/deep.yaml:1: freeze-invalid: does not parse: nested deeper than"
        )
        for line in run.stdout.splitlines()
    ), run


def test_yaml_nested_100000_deep_in_the_contract_is_a_broken_contract(repo):
    commit(repo, {".oracle-guard.yaml": CONTRACT + "x: " + "[" * 100_000 + "]" * 100_000 + "\n"})
    run = guard(repo)
    assert run.returncode == 2, run
    assert run.stderr.startswith("oracle-guard: error: .oracle-guard.yaml:"), run.stderr
    assert "nested deeper than" in run.stderr, run.stderr


def test_yaml_integer_of_100000_digits_is_invalid(repo):
    stage(repo, {"quarantine/budget.yaml": "max_frozen: 1" + "0" * 100_000 + "\nfrozen: []\n"})
    run = guard(repo, "--only", "freeze-schema")
    assert run.returncode == 1, run
    assert any(
        line.startswith("quarantine/budget.yaml:1: freeze-invalid: ")
        for line in run.stdout.splitlines()
    ), run


def test_very_long_yaml_key_is_invalid(repo):
    stage(repo, {"quarantine/budget.yaml": "k" * 1_000_000 + ": 1\n"})
    run = guard(repo, "--only", "freeze-schema")
    assert run.returncode == 1, run
    assert (
        "quarantine/budget.yaml:1: freeze-invalid: does not parse: mapping values are "
        "not allowed here (column 1000001)"
    ) in run.stdout.splitlines()


def test_very_long_yaml_key_in_the_contract_is_a_broken_contract(repo):
    commit(repo, {".oracle-guard.yaml": CONTRACT + "k" * 1_000_000 + ": 1\n"})
    run = guard(repo)
    assert run.returncode == 2, run
    assert run.stderr.startswith("oracle-guard: error: .oracle-guard.yaml:11: "), run.stderr


# -- JSON -------------------------------------------------------------------------


def test_json_nested_100000_deep_is_invalid(repo):
    stage(
        repo,
        {
            "seeds/deep.json": b"[" * 100_000 + b"]" * 100_000,
            "quarantine/deep.json": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        },
    )
    run = guard(repo, "--only", "seed-append-only,freeze-schema")
    assert run.returncode == 1, run
    lines = run.stdout.splitlines()
    assert "seeds/deep.json:1: seed-invalid: nested deeper than 200 levels" in lines
    assert any(
        line.startswith(
            "quarantine/deep.json:1: freeze-invalid: does not parse: nested deeper than 200 levels"
        )
        for line in lines
    ), run


def test_json_integer_of_100000_digits_is_invalid(repo):
    stage(repo, {"seeds/int.json": b"[1" + b"0" * 100_000 + b"]"})
    run = guard(repo, "--only", "seed-append-only")
    assert run.returncode == 1, run
    assert finding_lines(run) == ["seeds/int.json:1: seed-invalid: integer has too many digits"]


def test_10_mb_string_rewritten_in_a_seed_is_caught_and_clipped(repo):
    big = "x" * 10_000_000
    commit(repo, {"seeds/big.json": [big]})
    stage(repo, {"seeds/big.json": [big + "y"]})
    run = guard(repo, "--only", "seed-append-only")
    assert run.returncode == 1, run
    assert finding_lines(run) == [
        "seeds/big.json:2: seed-rewritten: element [0] changed: …"
        + "x" * 20
        + '" -> …'
        + "x" * 20
        + 'y"'
    ]


def test_10_mb_freeze_file_is_above_its_cap(repo):
    data = json.dumps({"max_frozen": 1, "frozen": [], "pad": "x" * 10_000_000}).encode()
    stage(repo, {"quarantine/big.json": data})
    run = guard(repo, "--only", "freeze-schema")
    assert run.returncode == 1, run
    assert (
        f"quarantine/big.json: freeze-invalid: is {len(data):,} bytes, above the limit of "
        "4,194,304 (limits.freeze_bytes): not loaded"
    ) in run.stdout.splitlines()


# -- big legitimate and near-legitimate changes --------------------------------------


def test_appending_to_a_jsonl_corpus_of_a_million_lines_passes(repo):
    corpus = b"".join(b'{"i":%d}\n' % i for i in range(1_000_000))
    commit(repo, {"corpus/c.jsonl": corpus})
    stage(repo, {"corpus/c.jsonl": corpus + b'{"i":-1}\n'})
    run = guard(repo, "--only", "seed-append-only")
    assert (run.returncode, run.stdout) == (0, "seed-append-only: passed\n"), run


def test_reordering_the_end_of_a_200000_seed_array_is_caught(repo):
    seeds = list(range(200_000))
    commit(repo, {"seeds/a.json": json.dumps(seeds)})
    seeds[-2], seeds[-1] = seeds[-1], seeds[-2]
    stage(repo, {"seeds/a.json": json.dumps(seeds)})
    run = guard(repo, "--only", "seed-append-only")
    assert run.returncode == 1, run
    assert finding_lines(run) == [
        "seeds/a.json:1: seed-reordered: element [199998] moved: the base has 199998 there, "
        "the candidate has 199999"
    ]


def test_20000_changed_paths_inside_the_write_set_pass(repo):
    stage_paths(repo, [f"src/d{i % 100}/f{i}.txt" for i in range(20_000)])
    run = guard(repo, "--only", "write-set")
    assert (run.returncode, run.stdout) == (0, "write-set: passed\n"), run


def test_20000_changed_paths_outside_the_write_set_are_each_reported(repo):
    stage_paths(repo, [f"lib/d{i % 100}/f{i}.txt" for i in range(20_000)])
    run = guard(repo, "--only", "write-set")
    assert run.returncode == 1, run
    found = finding_lines(run)
    assert len(found) == 20_000
    assert (
        found[0] == "lib/d0/f0.txt: write-outside-set: matches no allowed pattern of the write set"
    )


# -- paths --------------------------------------------------------------------------


def test_a_4000_byte_path_under_a_protected_folder_is_denied(repo):
    # 16 folders of 249 bytes (a name's limit is 255); git stores the path as is
    name = ("oracle/" + "/".join(["n" * 249] * 16))[:4000]
    stage_paths(repo, [name])
    run = guard(repo, "--only", "write-set")
    assert run.returncode == 1, run
    assert finding_lines(run) == [f"{name}: write-denied: matches deny pattern 'oracle/**'"]


@pytest.mark.parametrize("depth", [100, 1000])
def test_many_star_pattern_against_a_deep_path(repo, depth):
    # 'b/c/' repeated: every '**' of 'a/**/b/**/c/**/d' finds a place to try
    # again, and the path never ends in 'd'
    deep = "a/" + "b/c/" * depth + "e"
    stage_paths(repo, [deep, "a/x/b/y/c/z/d"])
    run = guard(repo, "--only", "write-set")
    assert run.returncode == 1, run
    assert finding_lines(run) == [
        f"{deep}: write-outside-set: matches no allowed pattern of the write set",
        "a/x/b/y/c/z/d: write-denied: matches deny pattern 'a/**/b/**/c/**/d'",
    ]
