"""Each layout in examples/: green as shipped, red on a characteristic edit."""

import json
import re
import shutil

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
    # examples/ci holds CI recipes (tests/e2e/ci_recipes_test.py runs them),
    # examples/ghes a hook environment (tests/e2e/ghes_hook_test.py), examples/http
    # the web server's configuration (tests/hosts/http_host_test.py), and
    # examples/tamper tampering patches (below), not layouts
    layouts = sorted(
        p.name
        for p in EXAMPLES.iterdir()
        if p.is_dir() and p.name not in ("ci", "ghes", "http", "tamper")
    )
    assert layouts == sorted(c[0] for c in CASES)


# -- test-tamper: each example's tests, and the tampering patches of examples/tamper ------
TESTS = {
    "harness": "tests/test_harness.py",
    "merge-contract": "tests/test_pricing.py",
    "oracle-dir": "tests/test_invoice_total.py",
    "replay-queue": "tests/test_retry.py",
}


def skip_the_first_test(text):
    return "import pytest\n" + text.replace(
        "\ndef test_", '\n@pytest.mark.skip(reason="x")\ndef test_', 1
    )


@pytest.mark.parametrize("name", sorted(TESTS))
def test_a_skip_marker_in_an_examples_tests_is_rejected(tmp_path, capsys, name):
    repo = example_repo(tmp_path, name)
    path = repo / TESTS[name]
    path.write_text(skip_the_first_test(path.read_text()))
    stage(repo)
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 1
    assert re.search(rf"^{re.escape(TESTS[name])}:\d+: skip-added:", out, re.M), out


@pytest.mark.parametrize("name", sorted(TESTS))
def test_an_honest_test_added_to_an_examples_tests_passes(tmp_path, capsys, name):
    # the near miss: a new plain test in the same file
    repo = example_repo(tmp_path, name)
    path = repo / TESTS[name]
    path.write_text(path.read_text() + "\n\ndef test_one_more():\n    assert 1 + 1 == 2\n")
    stage(repo)
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 0, out + err


TAMPER = EXAMPLES / "tamper"
HERMETIC = 'paths: ["tests/**", "properties/**"]\n  hermetic: ["properties/**"]'
INVARIANTS = "def check(total):\n    return total >= 0\n"
# (file, the example it goes into, what the owners committed there first, the code)
SAMPLES = [
    ("skip_marker.py", "harness", {}, "skip-added"),
    ("deselecting_conftest.py", "harness", {}, "collection-changed"),
    ("passing_report_conftest.py", "harness", {}, "outcome-changed"),
    ("exit_zero.py", "harness", {}, "process-exit"),
    (
        "monkeypatch_oracle.py",
        "merge-contract",
        {"oracle/invariants.py": INVARIANTS},
        "oracle-patched",
    ),
    ("addopts.toml", "harness", {}, "runner-options"),
    (
        "wall_clock_property.py",
        "harness",
        {".oracle-guard.yaml": ("harness", 'paths: ["tests/**"]', HERMETIC)},
        "non-hermetic",
    ),
]


def sample_header(name):
    """Where the sample goes and the code it names, from its first line."""
    first = (TAMPER / name).read_text().splitlines()[0]
    match = re.fullmatch(r"# As (\S+?)[,:] .*; test-tamper reports ([a-z-]+)\.", first)
    assert match, first
    return match.group(1), match.group(2)


def owners_files(files):
    """The files the owners commit first; a tuple edits the example's own file."""
    out = {}
    for path, content in files.items():
        if isinstance(content, tuple):
            example, old, new = content
            text = (EXAMPLES / example / path).read_text()
            assert old in text
            content = text.replace(old, new)
        out[path] = content
    return out


@pytest.mark.parametrize("sample,name,files,code", SAMPLES)
def test_each_tampering_sample_is_rejected_with_the_code_it_names(
    tmp_path, capsys, sample, name, files, code
):
    where, named = sample_header(sample)
    assert named == code
    repo = example_repo(tmp_path, name, owners_files(files))
    target = repo / where
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(TAMPER / sample, target)
    stage(repo)
    rc, out, _ = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 1
    assert re.search(rf"^{re.escape(where)}(:\d+)?: {code}:", out, re.M), (code, out)


def test_every_tampering_sample_is_tested_and_in_its_readme():
    shipped = sorted(p.name for p in TAMPER.iterdir() if p.name != "README.md")
    assert shipped == sorted(s[0] for s in SAMPLES)
    readme = (TAMPER / "README.md").read_text()
    for sample, _, _, code in SAMPLES:
        where, named = sample_header(sample)
        assert f"| `{sample}` | `{where}` |" in readme and readme.count(f"| `{named}` |") >= 1
        assert named == code, sample


# -- every example denies the hook runners' configs, at any depth ---------------------
@pytest.mark.parametrize("name", [c[0] for c in CASES])
@pytest.mark.parametrize(
    ("path", "denied"),
    [
        ("prek.toml", True),
        ("tools/prek.toml", True),
        (".pre-commit-config.yml", True),
        ("tools/.pre-commit-config.yaml", True),
        ("src/prek.toml.md", False),  # only its name contains one
    ],
)
def test_example_denies_the_hook_runners_configs(tmp_path, capsys, name, path, denied):
    repo = example_repo(tmp_path, name)
    stage(repo, {path: "[[repos]]\n"})
    rc, out, _ = run_guard(capsys, repo, "check", "--only", "write-set", "--now", NOW)
    assert (f"{path}: write-denied:" in out) == denied, out
    assert rc == (1 if denied else 0), out
