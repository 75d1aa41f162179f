"""Each layout in examples/: green as shipped, red on a characteristic edit."""

import json
import re

import pytest

from testing.git import run_guard, stage
from testing.oracle import NOW
from testing.samples import EXAMPLES, example_repo


def reorder_header_seeds(repo):
    path = repo / "seeds/header_name.json"
    seeds = json.loads(path.read_text())
    path.write_text(json.dumps(seeds[::-1], indent=2) + "\n")


def rewrite_corpus_line(repo):
    path = repo / "oracle/corpus.jsonl"
    path.write_text(path.read_text().replace('"expect":"fail"', '"expect":"pass"'))


def change_locked_seed(repo):
    path = repo / "seeds.lock"
    path.write_text(path.read_text().replace("1729,", "1730,"))


def edit_locked_input(repo):
    path = repo / "oracle/inputs/pricing.json"
    path.write_text(path.read_text().replace("1999", "1990"))


# (example, edit, [(path, code)] that must be reported)
CASES = [
    ("harness", reorder_header_seeds, [("seeds/header_name.json", "seed-reordered")]),
    (
        "oracle-dir",
        rewrite_corpus_line,
        [("oracle/corpus.jsonl", "seed-rewritten"), ("oracle/corpus.jsonl", "fixture-mismatch")],
    ),
    ("replay-queue", change_locked_seed, [("seeds.lock", "seed-rewritten")]),
    (
        "merge-contract",
        edit_locked_input,
        [
            ("oracle/inputs/pricing.json", "fixture-mismatch"),
            ("oracle/inputs/pricing.json", "write-denied"),
        ],
    ),
]


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_example_is_green_as_shipped(tmp_path, capsys, name):
    repo = example_repo(tmp_path, name)
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 0, out + err
    assert "failed" not in out


@pytest.mark.parametrize("name,edit,expected", CASES)
def test_example_is_red_on_a_characteristic_edit(tmp_path, capsys, name, edit, expected):
    repo = example_repo(tmp_path, name)
    edit(repo)
    stage(repo)
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 1
    for path, code in expected:
        assert re.search(rf"^{re.escape(path)}(:\d+)?: {code}:", out, re.M), (path, code, out)


def test_every_example_is_tested():
    # examples/ci holds CI recipes, not a layout (tests/e2e/ci_recipes_test.py runs them)
    layouts = sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir() and p.name != "ci")
    assert layouts == sorted(c[0] for c in CASES)
