"""`oracle-guard init` on the four example layouts and on repositories it must refuse."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from oracle_guard.commands.init import files as init_files
from oracle_guard.commands.init import layouts as init_layouts
from testing.git import commit, git, init_repo, run_guard, stage, write
from testing.oracle import NOW

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# What each example ships that init writes itself.
WRITTEN_BY_INIT = {
    "harness": [".oracle-guard.yaml", "fixtures/SHA256SUMS"],
    "merge-contract": [".oracle-guard.yaml", "oracle/fixtures.lock.json"],
    "oracle-dir": [".oracle-guard.yaml", "oracle/corpus.sha256"],
    "replay-queue": [".oracle-guard.yaml"],
}


@pytest.fixture(autouse=True)
def _no_global_git_config(monkeypatch):
    """init reads git's signing configuration: the machine's own is never read."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)


def stripped_example(tmp_path, name):
    """The example copied into a new repository without its contract and lock, staged."""
    repo = init_repo(tmp_path / name)
    shutil.copytree(EXAMPLES / name, repo, dirs_exist_ok=True)
    for path in WRITTEN_BY_INIT[name]:
        (repo / path).unlink()
    stage(repo)
    return repo


def init(capsys, repo, *args):
    return run_guard(capsys, repo, "init", "--now", NOW, *args)


def git_add_line(out):
    """The `git add ...` step init printed, as arguments."""
    match = re.search(r"^\s+\d+\. (git add .*)$", out, re.M)
    assert match, out
    return shlex.split(match.group(1))[2:]


def follow_init(capsys, repo, *args):
    """Run init, stage exactly what it says, commit; returns init's output."""
    rc, out, err = init(capsys, repo, *args)
    assert rc == 0, out + err
    git(repo, "add", "--", *git_add_line(out))
    unstaged = git(repo, "diff", "--name-only") + git(
        repo, "ls-files", "--others", "--exclude-standard"
    )
    assert unstaged == "", "init names every file it wrote in its git add"
    commit(repo, message="guard the oracle")
    return out


def edit_and_check(capsys, repo, path, content):
    """Commit an edit of ``path``; the check of that commit against its parent."""
    write(repo, {path: content})
    commit(repo, message=f"edit {path}")
    return run_guard(capsys, repo, "check", "--head", "HEAD", "--now", NOW)


def modified(repo, path):
    text = (repo / path).read_text(encoding="utf-8")
    return (
        text.replace("1729", "1730")
        .replace("1999", "1990")
        .replace('"fail"', '"pass"')
        .replace("Name", "Nom")
        .replace("http-platform", "nobody")
    )


# (example, files the example's own contract protects, an edit and the codes it must raise)
CASES = [
    (
        "harness",
        ["fixtures/exchange_example.json", "seeds/header_name.json", "freeze.json"],
        ("seeds/header_name.json", "seed-rewritten"),
    ),
    (
        "merge-contract",
        ["oracle/inputs/pricing.json", "oracle/flake_budget.yaml", "oracle/write_set.txt"],
        ("oracle/inputs/pricing.json", "fixture-mismatch"),
    ),
    (
        "oracle-dir",
        ["oracle/corpus.jsonl", "oracle/quarantine.json", "oracle/seeds.toml"],
        ("oracle/corpus.jsonl", "seed-rewritten"),
    ),
    (
        "replay-queue",
        [
            "seeds.lock",
            "replays/2026-09-23T14-02Z_parse_header.json",
            "quarantine/active/retry_budget.yaml",
        ],
        ("seeds.lock", "seed-rewritten"),
    ),
]


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_init_on_a_stripped_example_recognises_it_and_the_commit_passes(tmp_path, capsys, name):
    repo = stripped_example(tmp_path, name)
    out = follow_init(capsys, repo)
    assert f"layout '{name}', recognised from" in out
    rc, out, err = run_guard(capsys, repo, "check", "--head", "HEAD", "--now", NOW)
    assert rc == 0, out + err
    assert "failed" not in out
    # an honest change after it passes too
    rc, out, err = edit_and_check(capsys, repo, "src/new_module.py", "x = 1\n")
    assert rc == 0, out + err


@pytest.mark.parametrize("name,protected,characteristic", CASES)
def test_init_protects_what_the_example_contract_protects(
    tmp_path, capsys, name, protected, characteristic
):
    repo = stripped_example(tmp_path, name)
    follow_init(capsys, repo)
    baseline = git(repo, "rev-parse", "HEAD").strip()
    for path in protected + [
        ".oracle-guard.yaml",
        ".oracle-guard/contract.schema.json",
        ".pre-commit-config.yaml",
    ]:
        rc, out, _ = edit_and_check(capsys, repo, path, modified(repo, path) + "\n")
        assert rc == 1, (path, out)
        assert re.search(rf"^{re.escape(path)}: write-denied:", out, re.M), (path, out)
        git(repo, "reset", "-q", "--hard", baseline)
    path, code = characteristic
    rc, out, _ = edit_and_check(capsys, repo, path, modified(repo, path))
    assert rc == 1
    assert re.search(rf"^{re.escape(path)}(:\d+)?: {code}:", out, re.M), out


def test_the_proposal_matches_the_example_contracts_sections(tmp_path, capsys):
    for name in WRITTEN_BY_INIT:
        repo = stripped_example(tmp_path, name)
        init(capsys, repo)
        ours = yaml.safe_load((repo / ".oracle-guard.yaml").read_text())
        theirs = yaml.safe_load((EXAMPLES / name / ".oracle-guard.yaml").read_text())
        for section in ("fixtures", "seeds", "freeze", "tamper"):
            assert ours.get(section) == theirs.get(section), (name, section)
        assert set(theirs["write_set"]["deny"]) <= set(ours["write_set"]["deny"])
        assert ours["budget"]["max_frozen"] >= 3
        for lock in WRITTEN_BY_INIT[name][1:]:  # byte for byte the lock the example ships
            assert (repo / lock).read_bytes() == (EXAMPLES / name / lock).read_bytes()


def test_the_contract_names_its_editor_schema_and_comments_every_key(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    init(capsys, repo)
    lines = (repo / ".oracle-guard.yaml").read_text().splitlines()
    assert lines[0] == "# yaml-language-server: $schema=.oracle-guard/contract.schema.json"
    keys = [ln for ln in lines if re.match(r"\s*(- )?[a-z_]+:", ln)]
    assert keys and all(" # " in ln for ln in keys), [ln for ln in keys if " # " not in ln]


def test_a_second_run_changes_nothing_and_says_so(tmp_path, capsys):
    repo = stripped_example(tmp_path, "merge-contract")
    follow_init(capsys, repo, "--repo", URL, "--rev", "v1")
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert "nothing changed: every file init writes is already in place" in out
    assert "git add" not in out and "git commit" not in out
    after = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert after == before


def test_a_second_run_with_the_placeholders_still_there_stages_what_you_set(tmp_path, capsys):
    repo = stripped_example(tmp_path, "merge-contract")
    follow_init(capsys, repo)
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert "nothing changed" in out
    assert printed_step(out, "in .pre-commit-config.yaml, set repo:")
    assert git_add_line(out) == [".pre-commit-config.yaml"]


def test_an_existing_different_file_is_refused_without_force(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    (repo / ".oracle-guard.yaml").write_text("version: 1\n")
    rc, out, err = init(capsys, repo)
    assert rc == 2
    assert err.startswith("oracle-guard: error: .oracle-guard.yaml exists and differs")
    assert "--force" in err
    assert (repo / ".oracle-guard.yaml").read_text() == "version: 1\n"
    assert not (repo / "fixtures/SHA256SUMS").exists(), "nothing is written on refusal"
    assert not (repo / ".pre-commit-config.yaml").exists()

    rc, out, err = init(capsys, repo, "--force")
    assert rc == 0, err
    assert "overwrote .oracle-guard.yaml" in out
    assert (repo / ".oracle-guard.yaml").read_text().startswith("# yaml-language-server:")
    assert (repo / "fixtures/SHA256SUMS").exists()


def test_dry_run_writes_nothing_and_shows_the_proposal(tmp_path, capsys):
    repo = stripped_example(tmp_path, "oracle-dir")
    rc, out, err = init(capsys, repo, "--dry-run")
    assert rc == 0, err
    assert "would write .oracle-guard.yaml" in out
    assert "would create .pre-commit-config.yaml" in out
    assert "format: jsonl" in out
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == "".join(
        f"A  {p}\n" for p in git(repo, "ls-files").split()
    )


def test_layout_option_overrides_recognition(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"src/app.py": "x = 1\n"})
    rc, out, err = init(capsys, repo, "--layout", "replay-queue")
    assert rc == 0, err
    assert "layout 'replay-queue', as asked (--layout): none of its files yet" in out
    data = yaml.safe_load((repo / ".oracle-guard.yaml").read_text())
    assert data["write_set"]["deny"] == [
        "quarantine/active/**",
        ".github/workflows/**",
        "/.gitlab-ci.yml",
        ".oracle-guard/**",
        ".pre-commit-config.yaml",
        ".pre-commit-config.yml",
        "prek.toml",
    ]


def test_an_unknown_layout_exits_2_listing_the_names(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    rc, out, err = init(capsys, repo, "--layout", "monorepo")
    assert rc == 2
    assert err == (
        "oracle-guard: error: unknown layout 'monorepo'; choose one of harness, "
        "merge-contract, oracle-dir, pytest, replay-queue\n"
    )
    assert not (repo / ".oracle-guard.yaml").exists()


def test_an_unrecognised_repository_exits_2_with_the_hint(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"src/app.py": "x = 1\n", "scripts/run.sh": "true\n"})
    rc, out, err = init(capsys, repo)
    assert rc == 2
    assert err.startswith("oracle-guard: error: no known layout recognised")
    assert (
        "pass --layout NAME, one of harness, merge-contract, oracle-dir, pytest, replay-queue"
        in err
    )
    assert not (repo / ".oracle-guard.yaml").exists()


def test_src_and_tests_alone_are_an_ordinary_pytest_project(tmp_path, capsys):
    # near miss of the refusal: a test makes it the pytest layout
    repo = init_repo(tmp_path / "r")
    commit(repo, {"src/app.py": "x = 1\n", "tests/test_app.py": "def test(): pass\n"})
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert "layout 'pytest', recognised from: tests/**/test_*.py (1 file)" in out


def test_two_layouts_equally_likely_exit_2(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    stage(repo, {"seeds/a.json": [1], "replays/r.json": {"id": 1}})
    rc, _, err = init(capsys, repo)
    assert rc == 2
    assert "matches several layouts equally" in err and "--layout" in err


def test_bare_repository_and_not_a_repository_exit_2(tmp_path, capsys):
    bare = init_repo(tmp_path / "bare.git", bare=True)
    rc, _, err = init(capsys, bare, "--layout", "harness")
    assert rc == 2 and "needs a working tree" in err
    (tmp_path / "plain").mkdir()
    rc, _, err = init(capsys, tmp_path / "plain", "--layout", "harness")
    assert rc == 2 and "not a git repository" in err


def test_unstaged_fixtures_are_not_locked_and_the_exact_commands_are_printed(tmp_path, capsys):
    repo = stripped_example(tmp_path, "merge-contract")
    git(repo, "rm", "-q", "--cached", "oracle/inputs/pricing.json")  # now untracked
    write(repo, {"oracle/inputs/extra.json": "[]\n"})
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert not (repo / "oracle/fixtures.lock.json").exists()
    assert "not written: oracle/fixtures.lock.json" in out
    add = git_add_line(out)
    assert "oracle/inputs/pricing.json" in add and "oracle/inputs/extra.json" in add
    assert ".oracle-guard.yaml" in add
    assert "oracle-guard lock && git add oracle/fixtures.lock.json" in out
    # following the printed steps works
    git(repo, "add", "--", *add)
    rc, out, err = run_guard(capsys, repo, "lock")
    assert rc == 0, err
    git(repo, "add", "oracle/fixtures.lock.json")
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 0, out + err


def test_init_stages_nothing(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    staged = git(repo, "ls-files", "--stage")
    init(capsys, repo)
    assert git(repo, "ls-files", "--stage") == staged


def test_staged_freeze_problems_are_reported_before_the_first_commit(tmp_path, capsys):
    repo = stripped_example(tmp_path, "oracle-dir")
    rc, out, err = run_guard(capsys, repo, "init", "--now", "2026-11-01")
    assert rc == 0, err
    assert "What the hooks will report today on the oracle as the git add step stages it:" in out
    assert "oracle/quarantine.json:2: budget-expired:" in out


def test_the_budget_cap_is_no_lower_than_what_is_frozen_today(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    entries = [{"test": f"t{n}", "owner": "o", "expires": "2026-10-01"} for n in range(5)]
    stage(repo, {"oracle/quarantine.json": entries})
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert yaml.safe_load((repo / ".oracle-guard.yaml").read_text())["budget"]["max_frozen"] == 5
    assert "5 entries are frozen today" in out


def test_known_ids_is_left_out_when_frozen_ids_are_not_seed_stems(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    freeze = json.loads((repo / "freeze.json").read_text())
    freeze["excluded_property_ids"].append("tests/test_x.py::test_y")
    for key in ("reason", "owner", "expires"):
        freeze[key]["tests/test_x.py::test_y"] = freeze[key]["prop.http.retry_after_parse"]
    stage(repo, {"freeze.json": freeze})
    out = follow_init(capsys, repo)
    assert "known_ids is not set" in out
    assert "known_ids" not in yaml.safe_load((repo / ".oracle-guard.yaml").read_text())["budget"]
    rc, out, err = run_guard(capsys, repo, "check", "--head", "HEAD", "--now", NOW)
    assert rc == 0, out + err


# -- .pre-commit-config.yaml -------------------------------------------------
def validate_config(repo):
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", ".pre-commit-config.yaml"],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.slow("runs pre-commit validate-config")
def test_a_new_pre_commit_config_is_valid_for_pre_commit(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    init(capsys, repo)
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    assert config["default_install_hook_types"] == ["pre-commit", "pre-push"]
    assert config["fail_fast"] is True
    assert config["repos"] == [
        {
            "repo": init_files.REPO_PLACEHOLDER,
            "rev": init_files.REV_PLACEHOLDER,
            "hooks": [{"id": "oracle-guard"}],
        }
    ]
    checked = validate_config(repo)
    assert checked.returncode == 0, checked.stdout


EXISTING = """\
# our hooks
fail_fast: false
repos:
-   repo: local   # project checks
    hooks:
    -   id: lint
        name: lint
        entry: "true"
        language: system
"""


@pytest.mark.slow("runs pre-commit validate-config")
def test_an_existing_simple_config_gets_the_entry_first_and_keeps_the_rest(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    stage(repo, {".pre-commit-config.yaml": EXISTING})
    rc, out, err = init(
        capsys, repo, "--repo", "https://git.example.test/oracle-guard", "--rev", "v0.2.0"
    )
    assert rc == 0, err
    assert "added the oracle-guard hooks, first in repos: to .pre-commit-config.yaml" in out
    text = (repo / ".pre-commit-config.yaml").read_text()
    assert text.startswith("# our hooks\nfail_fast: false\nrepos:\n- repo: https://git.")
    assert text.endswith(EXISTING.split("repos:\n", 1)[1]), "the old entries, byte for byte"
    config = yaml.safe_load(text)
    assert config["fail_fast"] is False
    assert [r["repo"] for r in config["repos"]] == [
        "https://git.example.test/oracle-guard",
        "local",
    ]
    assert config["repos"][0]["rev"] == "v0.2.0"
    assert validate_config(repo).returncode == 0
    # idempotent: the entry is there now
    rc, out, err = init(
        capsys, repo, "--repo", "https://git.example.test/oracle-guard", "--rev", "v0.2.0"
    )
    assert "unchanged .pre-commit-config.yaml" in out
    assert (repo / ".pre-commit-config.yaml").read_text() == text


@pytest.mark.parametrize(
    "config",
    [
        "repos: [{repo: local, hooks: [{id: lint, name: lint, entry: 'true', "
        "language: system}]}]\n",  # a flow list
        '{"repos": [{"repo": "local", "hooks": [{"id": "lint", "name": "lint", '
        '"entry": "true", "language": "system"}]}]}\n',  # JSON
        "repos:\n",  # no list at all
    ],
)
def test_a_config_it_cannot_edit_safely_is_left_alone_and_the_snippet_printed(
    tmp_path, capsys, config
):
    repo = stripped_example(tmp_path, "harness")
    stage(repo, {".pre-commit-config.yaml": config})
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert (repo / ".pre-commit-config.yaml").read_text() == config
    assert "not edited: .pre-commit-config.yaml" in out
    assert f"- repo: {init_files.REPO_PLACEHOLDER}" in out and "- id: oracle-guard" in out
    assert "add the oracle-guard entry above to .pre-commit-config.yaml" in out


def test_a_config_that_already_runs_the_hooks_is_unchanged(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    config = "repos:\n  - repo: /somewhere\n    rev: abc\n    hooks:\n      - id: fixture-lock\n"
    stage(repo, {".pre-commit-config.yaml": config})
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert "unchanged .pre-commit-config.yaml" in out
    assert (repo / ".pre-commit-config.yaml").read_text() == config


def test_a_local_clone_as_repo_pins_its_head(tmp_path, capsys):
    hooks = init_repo(tmp_path / "og")
    sha = commit(hooks, {"README.md": "x\n"})
    repo = stripped_example(tmp_path, "harness")
    rc, out, err = init(capsys, repo, "--repo", str(hooks))
    assert rc == 0, err
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    assert config["repos"][0] == {"repo": str(hooks), "rev": sha, "hooks": [{"id": "oracle-guard"}]}
    assert "set repo: to where you host" not in out
    (tmp_path / "empty").mkdir()
    rc, _, err = init(
        capsys, stripped_example(tmp_path / "2", "harness"), "--repo", str(tmp_path / "empty")
    )
    assert rc == 2 and "not a git clone" in err


def test_a_rev_the_local_clone_lacks_is_refused_naming_its_head(tmp_path, capsys):
    hooks = init_repo(tmp_path / "og")
    sha = commit(hooks, {"README.md": "x\n"})  # a clone without tags
    repo = stripped_example(tmp_path, "harness")
    rc, out, err = init(capsys, repo, "--repo", str(hooks), "--rev", "v0.2.0")
    assert rc == 2
    assert (
        f"--rev 'v0.2.0' names no commit in --repo {str(hooks)!r} (it has no tags; its HEAD is {sha})"
        in err
    )
    assert not (repo / ".pre-commit-config.yaml").exists()  # nothing written


def test_a_rev_the_local_clone_lacks_is_refused_naming_its_tags(tmp_path, capsys):
    hooks = init_repo(tmp_path / "og")
    commit(hooks, {"README.md": "x\n"})
    git(hooks, "tag", "v0.1.0")
    repo = stripped_example(tmp_path, "harness")
    rc, _, err = init(capsys, repo, "--repo", str(hooks), "--rev", "v0.2.0")
    assert rc == 2 and "its tags include v0.1.0;" in err


def test_a_rev_the_local_clone_holds_is_pinned_as_given(tmp_path, capsys):
    hooks = init_repo(tmp_path / "og")
    commit(hooks, {"README.md": "x\n"})
    git(hooks, "tag", "v0.2.0")
    repo = stripped_example(tmp_path, "harness")
    rc, _, err = init(capsys, repo, "--repo", str(hooks), "--rev", "v0.2.0")
    assert rc == 0, err
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    assert config["repos"][0]["rev"] == "v0.2.0"


# -- editor schemas ------------------------------------------------------------
def editor_validator(repo, name):
    from jsonschema import Draft7Validator

    schema = json.loads((repo / ".oracle-guard" / f"{name}.schema.json").read_text())
    Draft7Validator.check_schema(schema)
    assert "urn:" not in json.dumps(schema) and "$defs" not in json.dumps(schema)
    return Draft7Validator(schema)


def test_editor_schemas_are_self_contained_draft_07_and_judge_like_the_built_ins(tmp_path, capsys):
    repo = stripped_example(tmp_path, "merge-contract")
    _, out, _ = init(capsys, repo)
    assert (
        "oracle/flake_budget.yaml: # yaml-language-server: "
        "$schema=../.oracle-guard/flake-budget.schema.json"
    ) in out
    contract = editor_validator(repo, "contract")
    for name in WRITTEN_BY_INIT:
        doc = yaml.safe_load((EXAMPLES / name / ".oracle-guard.yaml").read_text())
        assert not list(contract.iter_errors(doc)), name
    for bad in (
        {"version": 2},
        {"version": 1, "fixture": []},
        {"version": 1, "seeds": [{"paths": ["!x"], "format": "jsonl"}]},
        {"version": 1, "base": "HEAD~1"},
        # a pointer inside a definition: tamper.allow's path is one of the patterns
        {"version": 1, "tamper": {"paths": ["tests/**"], "allow": [{"rule": "x", "path": "a"}]}},
        {
            "version": 1,
            "tamper": {"paths": ["t/**"], "allow": [{"rule": "skip-added", "path": "!a"}]},
        },
    ):
        assert list(contract.iter_errors(bad)), bad
    allowed = {"rule": "process-exit", "path": "tests/cli/test_exit_codes.py"}
    assert not list(
        contract.iter_errors({"version": 1, "tamper": {"paths": ["t/**"], "allow": [allowed]}})
    )
    budget = editor_validator(repo, "flake-budget")
    good = yaml.safe_load((EXAMPLES / "merge-contract/oracle/flake_budget.yaml").read_text())
    assert not list(budget.iter_errors(good))
    good["frozen"][0]["expires"] = "next week"
    assert list(budget.iter_errors(good))


def test_the_modeline_is_put_first_in_each_yaml_freeze_file(tmp_path, capsys):
    repo = stripped_example(tmp_path, "replay-queue")
    rc, out, _ = init(capsys, repo)
    assert (
        "added the editor schema line to quarantine/active/retry_budget.yaml: "
        "# yaml-language-server: $schema=../../.oracle-guard/quarantine-entry.schema.json"
    ) in out
    editor_validator(repo, "quarantine-entry")
    path = repo / "quarantine/active/retry_budget.yaml"
    entry = yaml.safe_load(path.read_text())
    entry["expires_at"] = "2026-10-07T00:00:00Z"  # YAML 1.1 would read a timestamp
    assert not list(editor_validator(repo, "quarantine-entry").iter_errors(entry))


# -- the whole path, with the real pre-commit ------------------------------------
@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    from testing.checkout import snapshot_checkout

    return snapshot_checkout(tmp_path_factory.mktemp("hook-repo") / "oracle-guard")


@pytest.mark.slow("pre-commit installs the hook and its environment, and runs it")
def test_init_then_pre_commit_install_guards_the_next_commit(tmp_path, capsys, hook_repo):
    hook_path, sha = hook_repo
    repo = stripped_example(tmp_path, "merge-contract")
    out = follow_init(capsys, repo, "--repo", str(hook_path))
    assert f"rev: {sha}" in (repo / ".pre-commit-config.yaml").read_text()
    env = dict(
        os.environ,
        PRE_COMMIT_HOME=str(tmp_path / "home"),
        PRE_COMMIT_COLOR="never",
        ORACLE_GUARD_NOW=NOW,
    )
    subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"],
        cwd=repo,
        env=env,
        check=True,
        stdout=subprocess.PIPE,
    )
    assert (repo / ".git/hooks/pre-push").exists(), "default_install_hook_types: pre-push too"
    write(repo, {"oracle/inputs/pricing.json": "[]\n"})
    git(repo, "add", "-A")
    blocked = subprocess.run(
        ["git", "commit", "-q", "-m", "rewrite a fixture"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert blocked.returncode != 0, blocked.stdout
    assert "oracle/inputs/pricing.json: fixture-mismatch:" in blocked.stdout
    git(repo, "reset", "-q", "--hard")
    write(repo, {"src/pricing.py": "def price(c, r):\n    return c\n"})
    git(repo, "add", "-A")
    honest = subprocess.run(
        ["git", "commit", "-q", "-m", "honest"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert honest.returncode == 0, honest.stdout
    assert out


def test_an_untracked_oracle_file_is_named_in_the_git_add(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    write(repo, {"seeds/new_property.json": "[1]\n", "src/untracked.py": "y = 2\n"})
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    add = git_add_line(out)
    assert "seeds/new_property.json" in add and "src/untracked.py" not in add


def test_several_corpora_share_one_sha256sum_lock(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    stage(repo, {"oracle/a.jsonl": '{"x": 1}\n', "oracle/b.jsonl": '{"x": 2}\n'})
    follow_init(capsys, repo)
    data = yaml.safe_load((repo / ".oracle-guard.yaml").read_text())
    assert data["fixtures"] == [
        {"lock": "oracle/SHA256SUMS", "root": "oracle", "paths": ["oracle/*.jsonl"]}
    ]
    assert re.fullmatch(
        r"([0-9a-f]{64}  [ab]\.jsonl\n){2}", (repo / "oracle/SHA256SUMS").read_text()
    )
    rc, out, err = run_guard(capsys, repo, "check", "--head", "HEAD", "--now", NOW)
    assert rc == 0, out + err


def test_a_proposal_that_does_not_load_is_never_written(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    stage(repo, {"oracle/a\\b.jsonl": '{"x": 1}\n'})  # a backslash: not a contract path
    rc, out, err = init(capsys, repo)
    assert rc == 2
    assert err.startswith(
        "oracle-guard: error: the proposed contract does not load: .oracle-guard.yaml:"
    )
    assert not (repo / ".oracle-guard.yaml").exists()


def test_a_stale_lock_is_refused_with_the_lock_command_named(tmp_path, capsys):
    repo = stripped_example(tmp_path, "merge-contract")
    follow_init(capsys, repo)
    stage(repo, {"oracle/inputs/pricing.json": "[]\n"})
    rc, _, err = init(capsys, repo)
    assert rc == 2
    assert err.startswith("oracle-guard: error: oracle/fixtures.lock.json exists and differs")
    assert "run 'oracle-guard lock'" in err


# -- --repo and --rev on a config that already runs oracle-guard -------------------
URL = "https://git.example.test/oracle-guard"


@pytest.mark.parametrize("force", [[], ["--force"]])
@pytest.mark.slow("runs pre-commit validate-config")
def test_rerun_with_repo_and_rev_replaces_the_placeholders_in_place(tmp_path, capsys, force):
    repo = stripped_example(tmp_path, "harness")
    init(capsys, repo)
    before = (repo / ".pre-commit-config.yaml").read_text()
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v0.2.0", *force)
    assert rc == 0, err
    assert "set the oracle-guard entry's repo: and rev: in .pre-commit-config.yaml" in out
    assert "nothing changed" not in out and "set repo: to where you host" not in out
    text = (repo / ".pre-commit-config.yaml").read_text()
    assert yaml.safe_load(text)["repos"] == [
        {"repo": URL, "rev": "v0.2.0", "hooks": [{"id": "oracle-guard"}]}
    ]
    # only the two values changed: every other line, comments included, as before
    changed = [(a, b) for a, b in zip(before.splitlines(), text.splitlines()) if a != b]
    assert len(changed) == 2 and len(before.splitlines()) == len(text.splitlines())
    assert all("# " in b for _, b in changed), "the comments stay"
    checked = validate_config(repo)
    assert checked.returncode == 0, checked.stdout
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v0.2.0")
    assert rc == 0 and "nothing changed" in out


@pytest.mark.slow("runs pre-commit validate-config")
def test_replacing_values_someone_chose_needs_force(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    init(capsys, repo, "--repo", URL, "--rev", "v0.2.0")
    text = (repo / ".pre-commit-config.yaml").read_text()
    rc, out, err = init(capsys, repo, "--rev", "v0.3.0")
    assert rc == 2
    assert err.startswith(
        "oracle-guard: error: .pre-commit-config.yaml exists and differs "
        "from what init would write (its oracle-guard entry has rev: v0.2.0)"
    )
    assert "--force" in err
    assert (repo / ".pre-commit-config.yaml").read_text() == text
    rc, out, err = init(capsys, repo, "--rev", "v0.3.0", "--dry-run")
    assert (
        rc == 0
        and "would set the oracle-guard entry's rev: in .pre-commit-config.yaml (needs --force)"
        in out
    )
    rc, out, err = init(capsys, repo, "--rev", "v0.3.0", "--force")
    assert rc == 0, err
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    assert config["repos"][0]["repo"] == URL and config["repos"][0]["rev"] == "v0.3.0"
    assert validate_config(repo).returncode == 0


@pytest.mark.slow("runs pre-commit validate-config")
def test_a_users_entry_is_retargeted_line_by_line_and_the_rest_kept(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    local = EXISTING.split("repos:\n", 1)[1]
    config = (
        "repos:\n-   repo: /somewhere   # our mirror\n    rev: abc\n    hooks:\n"
        "    -   id: fixture-lock\n" + local
    )
    stage(repo, {".pre-commit-config.yaml": config})
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v1")
    assert rc == 2 and "its oracle-guard entry has repo: /somewhere, rev: abc" in err
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v1", "--force")
    assert rc == 0, err
    text = (repo / ".pre-commit-config.yaml").read_text()
    assert text == config.replace("/somewhere   #", URL + " #").replace("rev: abc", "rev: v1")
    assert validate_config(repo).returncode == 0


@pytest.mark.parametrize(
    "config,why",
    [
        (
            "repos:\n  - {repo: /somewhere, rev: abc, hooks: [{id: oracle-guard}]}\n",
            "its oracle-guard entry's 'repo:' is not a plain key on a line of its own",
        ),
        (
            "repos:\n  - repo: /a\n    rev: abc\n    hooks: [{id: oracle-guard}]\n"
            "  - repo: /b\n    rev: abc\n    hooks: [{id: write-set}]\n",
            "2 of its 'repos:' entries run oracle-guard hooks",
        ),
    ],
)
def test_an_entry_it_cannot_retarget_is_left_alone_and_the_step_printed(
    tmp_path, capsys, config, why
):
    repo = stripped_example(tmp_path, "harness")
    stage(repo, {".pre-commit-config.yaml": config})
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v1", "--force")
    assert rc == 0, err
    assert (repo / ".pre-commit-config.yaml").read_text() == config
    assert (
        f"in .pre-commit-config.yaml, set the oracle-guard entry's repo: {URL} and "
        f"rev: v1 yourself ({why})" in out
    )


def test_a_local_entry_is_not_retargeted(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    config = (
        "repos:\n  - repo: local\n    hooks:\n      - id: oracle-guard\n"
        "        name: oracle-guard\n        entry: oracle-guard check\n"
        "        language: system\n"
    )
    stage(repo, {".pre-commit-config.yaml": config})
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v1")
    assert rc == 0, err
    assert (repo / ".pre-commit-config.yaml").read_text() == config
    assert (
        "its oracle-guard hooks run from 'repo: local', so --repo and --rev are not applied" in out
    )


# -- the pre-commit install step --------------------------------------------------
def printed_step(out, start):
    match = re.search(rf"^\s+\d+\. ({re.escape(start)}.*)$", out, re.M)
    assert match, out
    return match.group(1)


@pytest.mark.slow("runs pre-commit install")
def test_an_edited_config_gets_the_install_command_for_both_hook_types(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    stage(repo, {".pre-commit-config.yaml": EXISTING})
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    step = printed_step(out, "pre-commit install")
    assert step == "pre-commit install --hook-type pre-commit --hook-type pre-push"
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "home"))
    subprocess.run(
        [sys.executable, "-m", "pre_commit"] + shlex.split(step)[1:],
        cwd=repo,
        env=env,
        check=True,
        stdout=subprocess.PIPE,
    )
    assert (repo / ".git/hooks/pre-commit").exists() and (repo / ".git/hooks/pre-push").exists()


@pytest.mark.parametrize(
    "types,both",
    [
        ("[pre-commit, pre-push]", True),
        ("[pre-push, commit-msg, pre-commit]", True),
        ("[pre-commit]", False),
    ],
)
def test_the_plain_install_command_only_when_the_config_installs_both(
    tmp_path, capsys, types, both
):
    repo = stripped_example(tmp_path, "harness")
    stage(repo, {".pre-commit-config.yaml": f"default_install_hook_types: {types}\n" + EXISTING})
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    step = printed_step(out, "pre-commit install")
    assert step.startswith("pre-commit install   # the pre-commit and pre-push hooks") == both
    assert ("--hook-type pre-push" in step) != both


def test_a_new_config_gets_the_plain_install_command(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    rc, out, err = init(capsys, repo)
    assert printed_step(out, "pre-commit install") == (
        "pre-commit install   # the pre-commit and pre-push hooks (default_install_hook_types)"
    )


# -- the lock init asks for is the lock 'oracle-guard lock' writes ---------------------
def test_following_the_lock_step_writes_sha256sum_lines(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    git(repo, "rm", "-q", "--cached", "fixtures/exchange_example.json")  # now untracked
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert not (repo / "fixtures/SHA256SUMS").exists()
    assert printed_step(out, "oracle-guard lock") == (
        "oracle-guard lock && git add fixtures/SHA256SUMS"
    )
    git(repo, "add", "--", *git_add_line(out))
    rc, out, err = run_guard(capsys, repo, "lock")
    assert rc == 0, err
    assert (repo / "fixtures/SHA256SUMS").read_bytes() == (
        EXAMPLES / "harness/fixtures/SHA256SUMS"
    ).read_bytes(), "sha256sum lines, not JSON"
    git(repo, "add", "fixtures/SHA256SUMS")
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 0, out + err


# -- the write set's allow ----------------------------------------------------------
def contract_of(repo):
    return yaml.safe_load((repo / ".oracle-guard.yaml").read_text())


@pytest.mark.parametrize(
    "name,extra,allow",
    [
        ("harness", {}, ["src/**", "tests/**"]),
        (
            "harness",
            {"README.md": "# app\n", "tests/test_app.py": "def test(): pass\n"},
            ["src/**", "tests/**", "README.md"],
        ),
        ("oracle-dir", {"tests/test_invoice.py": "def test(): pass\n"}, ["src/**", "tests/**"]),
        ("replay-queue", {}, ["src/**", "tests/**", "quarantine/proposed/**"]),
    ],
)
def test_allow_proposes_the_examples_patterns_that_match_a_path(
    tmp_path, capsys, name, extra, allow
):
    repo = stripped_example(tmp_path, name)
    stage(repo, extra)
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert contract_of(repo)["write_set"]["allow"] == allow
    assert f"The write set allows: {', '.join(allow)} (nothing else)" in out
    left_out = [p for p in init_layouts.EXAMPLE_ALLOW[name] if p not in allow]
    assert (f"write_set.allow leaves out {', '.join(left_out)}" in out) == bool(left_out)


def test_a_change_outside_the_proposed_allow_is_outside_the_write_set(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    follow_init(capsys, repo)
    rc, out, _ = edit_and_check(capsys, repo, "docs/notes.md", "x\n")
    assert rc == 1
    assert "docs/notes.md: write-outside-set:" in out
    rc, out, _ = edit_and_check(capsys, repo, "src/harness.py", "x = 2\n")  # the near miss
    assert rc == 0, out


def test_allow_option_replaces_the_proposal_and_merge_contract_keeps_its_allow_file(
    tmp_path, capsys
):
    repo = stripped_example(tmp_path, "harness")
    rc, out, err = init(capsys, repo, "--allow", "lib/**", "--allow", "docs/", "--allow", "lib/**")
    assert rc == 0, err
    assert contract_of(repo)["write_set"]["allow"] == ["lib/**", "docs/"]
    assert "The write set allows: lib/**, docs/ (nothing else)" in out
    assert "leaves out" not in out
    repo = stripped_example(tmp_path / "2", "merge-contract")
    rc, out, err = init(capsys, repo, "--allow", "src/**")
    assert rc == 0, err
    write_set = contract_of(repo)["write_set"]
    assert write_set["allow"] == ["src/**"]
    assert write_set["allow_file"] == "oracle/write_set.txt"
    assert "The write set allows: src/** and what oracle/write_set.txt lists" in out


def test_merge_contract_proposes_its_allow_file_only(tmp_path, capsys):
    repo = stripped_example(tmp_path, "merge-contract")
    rc, out, err = init(capsys, repo)
    assert "allow" not in contract_of(repo)["write_set"]
    assert "The write set allows: what oracle/write_set.txt lists (nothing else)" in out


@pytest.mark.parametrize("line", ["src/**/*.py", "./app/", "src//x"])
def test_init_refuses_an_allow_file_check_would_refuse(tmp_path, capsys, line):
    repo = stripped_example(tmp_path, "merge-contract")
    (repo / "oracle/write_set.txt").write_text(f"src/\n{line}\n")  # what git add stages
    rc, out, err = init(capsys, repo)
    assert rc == 2
    assert out == ""
    assert err.startswith(f"oracle-guard: error: oracle/write_set.txt:2: {line!r} ")
    assert err.endswith("; nothing was written\n") and err.count("\n") == 1
    if "*" in line:
        assert "use write_set.allow for patterns" in err
    assert not (repo / ".oracle-guard.yaml").exists()
    assert not (repo / ".pre-commit-config.yaml").exists()


def test_init_keeps_an_allow_file_of_root_prefixes_and_it_is_anchored(tmp_path, capsys):
    # near miss: prefixes, one with a leading '/', pass; and they admit the root folders only
    repo = stripped_example(tmp_path, "merge-contract")
    (repo / "oracle/write_set.txt").write_text("# agents\nsrc/\n/app/\nREADME.md\n")
    follow_init(capsys, repo)
    assert re.search(
        r"^  allow_file: oracle/write_set\.txt +# one path prefix from the root "
        r"a line, no globs$",
        (repo / ".oracle-guard.yaml").read_text(),
        re.M,
    )
    rc, out, _ = edit_and_check(capsys, repo, "tests/src/conftest.py", "x = 1\n")
    assert rc == 1
    assert "tests/src/conftest.py: write-outside-set:" in out
    for path in ("src/conftest.py", "app/main.py", "README.md"):
        rc, out, _ = edit_and_check(capsys, repo, path, "x = 1\n")
        assert rc == 0, out


def test_no_allow_when_no_example_pattern_matches_and_the_step_says_so(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    stage(repo, {"oracle/quarantine.json": [], "lib/app.py": "x = 1\n"})
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    text = (repo / ".oracle-guard.yaml").read_text()
    assert "allow" not in yaml.safe_load(text)["write_set"]
    assert '  # allow: ["src/**", "tests/**"]' in text
    assert "The write set allows: every path the contract does not protect" in out
    assert "narrow the write set: rerun init with --allow PATTERN" in printed_step(
        out, "narrow the write set"
    )


def test_a_bad_allow_pattern_exits_2_and_writes_nothing(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    rc, out, err = init(capsys, repo, "--allow", "!src/**")
    assert rc == 2
    assert err.startswith("oracle-guard: error: the proposed contract does not load: ")
    assert "write_set.allow" in err
    assert not (repo / ".oracle-guard.yaml").exists()


# -- CI configuration is denied --------------------------------------------------------
def test_ci_configuration_that_exists_is_denied(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    stage(
        repo,
        {
            ".github/workflows/ci.yml": "on: push\n",
            ".github/dependabot.yml": "x: 1\n",
            ".gitlab-ci.yml": "test:\n  script: [pytest]\n",
        },
    )
    follow_init(capsys, repo)
    deny = contract_of(repo)["write_set"]["deny"]
    assert deny[-6:-4] == [".github/workflows/**", "/.gitlab-ci.yml"]
    text = (repo / ".oracle-guard.yaml").read_text()
    assert re.search(
        r"- \.github/workflows/\*\* +# CI: a patch that edits the workflow can "
        r"skip the check",
        text,
    )
    baseline = git(repo, "rev-parse", "HEAD").strip()
    for path in (".github/workflows/ci.yml", ".gitlab-ci.yml"):
        rc, out, _ = edit_and_check(capsys, repo, path, "on: pull_request\n")
        assert rc == 1 and f"{path}: write-denied:" in out, out
        git(repo, "reset", "-q", "--hard", baseline)
    out = edit_and_check(capsys, repo, ".github/dependabot.yml", "x: 2\n")[1]
    assert "write-denied" not in out  # outside the allow, but not denied


@pytest.mark.parametrize(
    "path",
    ["prek.toml", "pkg/prek.toml", ".pre-commit-config.yml", "pkg/.pre-commit-config.yaml"],
)
def test_a_hook_runners_config_is_denied_at_any_depth(tmp_path, capsys, path):
    # prek's workspaces read nested configs: a nested one that drops the hooks skips them
    repo = stripped_example(tmp_path, "harness")
    stage(repo, {"docs/prek.toml.md": "notes\n", "src/prek.toml.bak": "x\n"})
    follow_init(capsys, repo)
    rc, out, _ = edit_and_check(capsys, repo, path, "[[repos]]\n")
    assert rc == 1 and f"{path}: write-denied: matches deny pattern" in out, out


@pytest.mark.parametrize("path", ["docs/prek.toml.md", "src/prek.toml.bak", "src/prek.tom"])
def test_a_name_that_only_contains_a_runners_config_name_is_not_denied(tmp_path, capsys, path):
    repo = stripped_example(tmp_path, "harness")
    stage(repo, {"docs/prek.toml.md": "notes\n", "src/prek.toml.bak": "x\n"})
    follow_init(capsys, repo)
    rc, out, _ = edit_and_check(capsys, repo, path, "edited\n")
    assert "write-denied" not in out, out


def test_ci_configuration_is_denied_before_it_exists(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    stage(repo, {".github/dependabot.yml": "x: 1\n", "ci/.gitlab-ci.yml": "x: 1\n"})
    follow_init(capsys, repo)
    assert contract_of(repo)["write_set"]["deny"] == [
        ".github/workflows/**",
        "/.gitlab-ci.yml",
        ".oracle-guard/**",
        ".pre-commit-config.yaml",
        ".pre-commit-config.yml",
        "prek.toml",
    ]
    text = (repo / ".oracle-guard.yaml").read_text()
    assert re.search(r"- \.github/workflows/\*\* +# CI: a patch that edits the workflow", text)
    assert re.search(r"- /\.gitlab-ci\.yml +# CI: a patch that edits the pipeline", text)
    baseline = git(repo, "rev-parse", "HEAD").strip()
    for path in (".github/workflows/added-later.yml", ".gitlab-ci.yml"):  # new after init
        rc, out, _ = edit_and_check(capsys, repo, path, "on: pull_request\n")
        assert rc == 1 and f"{path}: write-denied:" in out, out
        git(repo, "reset", "-q", "--hard", baseline)
    for path in (".github/dependabot.yml", "ci/.gitlab-ci.yml"):  # the near misses
        out = edit_and_check(capsys, repo, path, "x: 2\n")[1]
        assert "write-denied" not in out, out  # outside the allow, but not denied
        git(repo, "reset", "-q", "--hard", baseline)


# -- the editor schema line in YAML freeze files -----------------------------------------
def records(n):
    base = (EXAMPLES / "replay-queue/quarantine/active/retry_budget.yaml").read_text()
    return {
        f"quarantine/active/case_{k}.yaml": base.replace("retry_budget_9c2", f"case_{k}")
        for k in range(n)
    }


def test_the_schema_line_goes_first_in_every_record_and_changes_no_data(tmp_path, capsys):
    from oracle_guard.parsing.strict_yaml import load_yaml

    repo = stripped_example(tmp_path, "replay-queue")
    files = records(7)
    files["quarantine/active/crlf.yaml"] = (
        files.pop("quarantine/active/case_6.yaml")
        .replace("case_6", "crlf")
        .replace("\n", "\r\n")
        .encode()
    )
    modeline = "# yaml-language-server: $schema=../../.oracle-guard/quarantine-entry.schema.json"
    has_one = "# yaml-language-server: $schema=elsewhere.json\n" + files.pop(
        "quarantine/active/case_5.yaml"
    ).replace("case_5", "has_one")
    files["quarantine/active/has_one.yaml"] = has_one
    stage(repo, files)
    before = {p: (repo / p).read_bytes() for p in git(repo, "ls-files").split()}
    out = follow_init(capsys, repo)
    assert "... and to 2 more YAML freeze files" in out  # 7 edited, 5 named
    add = git_add_line(out)
    for path in [p for p in before if p.startswith("quarantine/active/") and "has_one" not in p]:
        after = (repo / path).read_bytes()
        newline = b"\r\n" if path.endswith("crlf.yaml") else b"\n"
        assert after == modeline.encode() + newline + before[path], path
        assert load_yaml(after).value == load_yaml(before[path]).value
        assert path in add
    assert (repo / "quarantine/active/has_one.yaml").read_bytes() == before[
        "quarantine/active/has_one.yaml"
    ]
    assert "quarantine/active/has_one.yaml" not in add
    for path in ("quarantine/proposed/parse_header_a3f1.yaml", "seeds.lock"):
        assert (repo / path).read_bytes() == before[path], "not a YAML freeze file"
    rc, out, err = run_guard(capsys, repo, "check", "--head", "HEAD", "--now", NOW)
    assert rc == 0, out + err
    rc, out, err = init(capsys, repo)
    assert "nothing changed" in out


@pytest.mark.parametrize("name", ["harness", "oracle-dir"])
def test_json_freeze_files_are_never_touched(tmp_path, capsys, name):
    repo = stripped_example(tmp_path, name)
    follow_init(capsys, repo)
    for path in ("freeze.json", "oracle/quarantine.json"):
        if (EXAMPLES / name / path).exists():
            assert (repo / path).read_bytes() == (EXAMPLES / name / path).read_bytes()


def test_the_schema_line_respects_dry_run_and_a_refusal(tmp_path, capsys):
    repo = stripped_example(tmp_path, "merge-contract")
    budget = repo / "oracle/flake_budget.yaml"
    original = budget.read_bytes()
    rc, out, err = init(capsys, repo, "--dry-run")
    assert rc == 0, err
    assert "would add the editor schema line to oracle/flake_budget.yaml" in out
    assert budget.read_bytes() == original
    (repo / ".oracle-guard.yaml").write_text("version: 1\n")
    rc, out, err = init(capsys, repo)
    assert rc == 2 and budget.read_bytes() == original
    rc, out, err = init(capsys, repo, "--force")
    assert rc == 0, err
    assert budget.read_bytes() == (
        b"# yaml-language-server: $schema=../.oracle-guard/flake-budget.schema.json\n" + original
    )
    assert "oracle/flake_budget.yaml" in git_add_line(out)


def test_a_yaml_freeze_file_that_does_not_load_is_left_alone(tmp_path, capsys):
    repo = stripped_example(tmp_path, "replay-queue")
    stage(repo, {"quarantine/active/broken.yaml": "id: [unclosed\n"})
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert (repo / "quarantine/active/broken.yaml").read_text() == "id: [unclosed\n"
    assert "note: quarantine/active/broken.yaml does not load" in out


# -- expired entries: the command that fixes each --------------------------------------
def test_each_expired_entry_names_its_freeze_command_and_following_it_passes(tmp_path, capsys):
    repo = stripped_example(tmp_path, "merge-contract")
    later = "2026-11-01"
    rc, out, err = run_guard(capsys, repo, "init", "--now", later)
    assert rc == 0, err
    assert "one human-made commit of what the steps above staged, nothing else" in out
    assert "holding only these files" not in out
    fixes = re.findall(
        r"^    fix: (oracle-guard freeze renew (\S+) --days N --now "
        rf"{later} \(N at most 14\), or oracle-guard freeze remove \2 "
        rf"--now {later})$",
        out,
        re.M,
    )
    assert [ident for _, ident in fixes] == [
        "canonicalize_unicode_hyphen",
        "discount_inverse_leap_promo",
    ]
    git(repo, "add", "--", *git_add_line(out))
    renew = shlex.split(fixes[0][0].split(" (N at most")[0].replace("--days N", "--days 7"))
    remove = shlex.split(fixes[1][0].split(", or ")[1])
    from oracle_guard.cli import main

    for command in (renew, remove):
        capsys.readouterr()
        assert main([*command[1:], "-C", str(repo)], env={}) == 0, capsys.readouterr()
    git(repo, "add", "oracle/flake_budget.yaml")
    rc, out, err = run_guard(capsys, repo, "check", "--now", later)
    assert rc == 0, out + err


def test_a_budget_over_its_own_cap_names_freeze_remove(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    stage(
        repo,
        {
            "oracle/flake_budget.yaml": "max_frozen: 1\nfrozen:\n"
            "  - {id: a, owner: o, expires: '2026-09-30', reason: r}\n"
            "  - {id: b, owner: o, expires: '2026-09-30', reason: r}\n"
        },
    )
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert re.search(
        r"budget-exceeded: .*\n    fix: oracle-guard freeze remove ID --now "
        rf"{NOW} for each entry to drop",
        out,
    ), out


# -- every file a step asks you to edit is in the git add ------------------------------
def printed_snippet(out, header):
    """The indented block init printed under the line that ends with ``header``."""
    lines = out.split(header, 1)[1].splitlines()[1:]
    block = []
    for ln in lines:
        if not ln.startswith("    "):
            break
        block.append(ln[4:])
    return "\n".join(block) + "\n"


@pytest.mark.slow("runs pre-commit validate-config")
def test_a_config_it_cannot_edit_is_staged_after_the_pasted_entry(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    lint = "{repo: local, hooks: [{id: lint, name: lint, entry: 'true', language: system}]}"
    stage(repo, {".pre-commit-config.yaml": f"repos: [{lint}]\n"})
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v1")
    assert rc == 0, err
    paste = printed_step(out, "add the oracle-guard entry above")
    add = printed_step(out, "git add")
    assert out.index(paste) < out.index(add), "paste first, then stage"
    assert ".pre-commit-config.yaml" in git_add_line(out)
    # follow the steps exactly: paste the entry, then the printed git add
    snippet = printed_snippet(out, "add this entry first under its 'repos:' yourself:")
    write(repo, {".pre-commit-config.yaml": snippet + f"  - {lint}\n"})
    assert validate_config(repo).returncode == 0
    git(repo, "add", "--", *git_add_line(out))
    # pre-commit refuses to run while its config has unstaged changes
    assert git(repo, "diff", "--name-only") == ""
    rc, out, err = run_guard(capsys, repo, "check", "--now", NOW)
    assert rc == 0, out + err


def test_a_config_entry_to_retarget_by_hand_is_in_the_git_add(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    stage(
        repo,
        {
            ".pre-commit-config.yaml": "repos:\n  - {repo: /somewhere, rev: abc, hooks: [{id: oracle-guard}]}\n"
        },
    )
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v1", "--force")
    assert rc == 0, err
    assert "set the oracle-guard entry's repo:" in out
    assert ".pre-commit-config.yaml" in git_add_line(out)


def test_the_narrow_step_stages_the_contract_it_asks_you_to_edit(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    stage(repo, {"oracle/quarantine.json": [], "lib/app.py": "x = 1\n"})
    follow_init(capsys, repo, "--repo", URL, "--rev", "v1")
    rc, out, err = init(capsys, repo)  # a rerun: everything is committed, no allow yet
    assert rc == 0, err
    assert "narrow the write set" in out
    assert git_add_line(out) == [".oracle-guard.yaml"]


# -- the oracle is judged as the printed git add will stage it -------------------------
def test_untracked_freeze_files_are_judged_as_the_git_add_stages_them(tmp_path, capsys):
    repo = stripped_example(tmp_path, "merge-contract")
    git(repo, "rm", "-q", "--cached", "oracle/flake_budget.yaml")  # now untracked
    later = "2026-11-01"
    rc, out, err = run_guard(capsys, repo, "init", "--now", later)
    assert rc == 0, err
    assert "oracle/flake_budget.yaml" in git_add_line(out)
    reported = re.findall(r"^  (oracle/flake_budget\.yaml:\d+: budget-expired: .*)$", out, re.M)
    assert len(reported) == 2, out
    git(repo, "add", "--", *git_add_line(out))
    rc, checked, err = run_guard(capsys, repo, "check", "--now", later)
    assert rc == 1
    assert reported == re.findall(
        r"^(oracle/flake_budget\.yaml:\d+: budget-expired: .*)$", checked, re.M
    ), "what init reports is what check reports"


def test_untracked_freeze_files_that_pass_are_not_reported(tmp_path, capsys):
    repo = stripped_example(tmp_path, "merge-contract")
    git(repo, "rm", "-q", "--cached", "oracle/flake_budget.yaml")
    out = follow_init(capsys, repo)
    assert "What the hooks will report" not in out
    rc, out, err = run_guard(capsys, repo, "check", "--head", "HEAD", "--now", NOW)
    assert rc == 0, out + err


def test_a_staged_freeze_file_edited_since_is_judged_as_it_stands(tmp_path, capsys):
    repo = stripped_example(tmp_path, "oracle-dir")
    entries = json.loads((repo / "oracle/quarantine.json").read_text())
    for entry in entries:
        entry["expires"] = "2026-12-31"  # renewed by hand, not staged yet
    write(repo, {"oracle/quarantine.json": entries})
    rc, out, err = run_guard(capsys, repo, "init", "--now", "2026-11-01")
    assert rc == 0, err
    assert "oracle/quarantine.json" in git_add_line(out)
    assert "budget-expired" not in out  # the staged copy has expired entries; git add fixes it


# -- a rerun keeps the human's choices in the contract -------------------------------
def test_a_rerun_for_repo_and_rev_leaves_the_contract_alone(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    rc, out, err = init(capsys, repo, "--allow", "docs/**")
    assert rc == 0, err
    contract = repo / ".oracle-guard.yaml"
    edited = contract.read_text().replace(
        "# Review it, then commit it", "# Reviewed by alice; commit it"
    )
    contract.write_text(edited)  # a comment of the human's own
    for force in ([], ["--force"]):
        rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v1", *force)
        assert rc == 0, err
        assert contract.read_text() == edited, "not touched"
        assert "unchanged .oracle-guard.yaml" in out
        assert "The write set allows: docs/** (nothing else)" in out
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    assert config["repos"][0]["repo"] == URL and config["repos"][0]["rev"] == "v1"
    rc, out, err = init(capsys, repo, "--allow", "lib/**", "--force")  # asked: replaced
    assert rc == 0, err
    assert contract_of(repo)["write_set"]["allow"] == ["lib/**"]


def test_a_section_init_must_add_keeps_every_choice_it_did_not_propose(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    git(repo, "rm", "-q", "--cached", "freeze.json")
    freeze = (repo / "freeze.json").read_bytes()
    (repo / "freeze.json").unlink()
    rc, out, err = init(capsys, repo, "--allow", "docs/**")
    assert rc == 0, err
    contract = repo / ".oracle-guard.yaml"
    chosen = contract.read_text().replace(
        "version: 1 ",
        "version: 1\nbase: origin/develop\n"
        "protected_refs: [refs/heads/main]\ntimeout_s: 2.5\n"
        "limits: {seed_bytes: 4096}\n#",
        1,
    )
    chosen = chosen.replace(
        "    - prek.toml",
        "    - prek.toml\n    - vendor/**\n  owners: [alice]\nidentity_env: GL_USER",
        1,
    )
    contract.write_text(chosen)
    kept = contract_of(repo)
    assert kept["write_set"]["owners"] == ["alice"] and kept["base"] == "origin/develop"
    stage(repo, {"freeze.json": freeze})  # a freeze file appears: init adds its section
    rc, out, err = init(capsys, repo)
    assert rc == 2
    assert err.startswith(
        "oracle-guard: error: .oracle-guard.yaml exists and differs from "
        "what init would write (init would add freeze; budget"
    )
    assert contract.read_text() == chosen
    rc, out, err = init(capsys, repo, "--force")
    assert rc == 0, err
    data = contract_of(repo)
    assert data["freeze"] == [{"paths": ["/freeze.json"], "schema": "freeze"}]
    assert data["budget"]["max_frozen"] >= 3
    for key in ("base", "protected_refs", "timeout_s", "limits", "fixtures", "seeds"):
        assert data[key] == kept[key], key
    assert data["write_set"] == kept["write_set"]
    lines = contract.read_text().splitlines()
    keys = [ln for ln in lines if re.match(r"\s*(- )?[a-z_]+:", ln)]
    assert all(" # " in ln for ln in keys), [ln for ln in keys if " # " not in ln]
    rc, out, err = init(capsys, repo)
    assert rc == 0 and "unchanged .oracle-guard.yaml" in out


def test_an_older_contract_gets_the_missing_deny_patterns_with_force(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    init(capsys, repo, "--allow", "docs/**")
    contract = repo / ".oracle-guard.yaml"
    text = contract.read_text()
    contract.write_text(re.sub(r"    - \.github/workflows/\*\*.*\n", "", text))
    rc, out, err = init(capsys, repo)
    assert rc == 2 and "init would add write_set.deny .github/workflows/**" in err
    rc, out, err = init(capsys, repo, "--force")
    assert rc == 0, err
    write_set = contract_of(repo)["write_set"]
    assert ".github/workflows/**" in write_set["deny"] and write_set["allow"] == ["docs/**"]


# -- test-tamper's section --------------------------------------------------------------
TAMPER_LINE = (
    "test-tamper judges the tests in: {}, and every conftest.py and pytest configuration file"
)


def test_init_proposes_the_tests_folder_as_tamper_paths_and_a_rerun_keeps_it(tmp_path, capsys):
    from oracle_guard import contract as contract_mod

    repo = init_repo(tmp_path / "r")
    stage(repo, {"oracle/quarantine.json": [], "tests/test_app.py": "def test(): pass\n"})
    out = follow_init(capsys, repo, "--repo", URL, "--rev", "v1")
    text = (repo / ".oracle-guard.yaml").read_text()
    assert contract_mod.parse(text.encode("utf-8"))["tamper"] == {
        "paths": ["tests/**"],
        "frozen_tests": ["tests/**"],  # the test folder found: its tests are oracle
    }
    assert re.search(r'^  paths: \["tests/\*\*"\] +# the tests judged \(every conftest', text, re.M)
    assert TAMPER_LINE.format("tests/**") + "\n" in out
    assert "tamper.paths is" not in out
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert "nothing changed" in out and (repo / ".oracle-guard.yaml").read_text() == text


def test_without_a_test_folder_init_proposes_tests_and_notes_it(tmp_path, capsys):
    # near miss: nothing in tests/, test/ or properties/, and the conftest.py is not the root's
    repo = init_repo(tmp_path / "r")
    stage(repo, {"oracle/quarantine.json": [], "lib/conftest.py": "x = 1\n"})
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert contract_of(repo)["tamper"] == {"paths": ["tests/**"]}
    assert "  note: tamper.paths is tests/**, though no test is there yet" in out
    assert TAMPER_LINE.format("tests/**") + "\n" in out


def test_property_tests_are_hermetic_and_the_root_conftest_judged(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    stage(
        repo,
        {
            "seeds/a.json": [],
            "properties/test_a.py": "def test(): pass\n",
            "conftest.py": "",
        },
    )
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert contract_of(repo)["tamper"] == {
        "paths": ["properties/**", "/conftest.py"],
        "hermetic": ["properties/**"],
        "frozen_tests": ["properties/**"],
    }
    assert (
        TAMPER_LINE.format("properties/**, /conftest.py")
        + "; no wall clock, entropy or network in properties/**\n"
    ) in out


def test_a_contract_without_tamper_gets_it_only_with_force_and_keeps_the_rest(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    rc, out, err = init(capsys, repo, "--allow", "docs/**")
    assert rc == 0, err
    contract = repo / ".oracle-guard.yaml"
    older = re.sub(r"^tamper:.*\n(  .*\n)*", "", contract.read_text(), flags=re.M)
    assert "tamper" not in older
    contract.write_text(older)  # a contract from before test-tamper
    rc, out, err = init(capsys, repo)
    assert rc == 2 and "init would add tamper; it keeps the rest" in err
    assert contract.read_text() == older
    rc, out, err = init(capsys, repo, "--force")
    assert rc == 0, err
    assert "the contract, adding tamper; the rest kept" in out
    data = contract_of(repo)
    assert data["tamper"] == {"paths": ["tests/**"], "frozen_tests": ["tests/**"]}
    assert data["write_set"]["allow"] == ["docs/**"]
    rc, out, err = init(capsys, repo)
    assert rc == 0 and "unchanged .oracle-guard.yaml" in out
    # near miss: a tamper section of the owners' own is theirs
    contract.write_text(contract.read_text().replace('["tests/**"]', '["spec/**"]'))
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert "unchanged .oracle-guard.yaml" in out
    assert contract_of(repo)["tamper"] == {"paths": ["spec/**"], "frozen_tests": ["spec/**"]}


# -- freeze add copies the neighbours' schema line -------------------------------------
RECORD = [
    "--seed",
    "7",
    "--command",
    "pytest -q",
    "--pass-count",
    "3",
    "--fail-count",
    "1",
    "--repro",
    "python harness/replay.py",
]


def freeze_add(capsys, repo, ident):
    from oracle_guard.cli import main

    capsys.readouterr()
    rc = main(
        [
            "freeze",
            "add",
            ident,
            "--owner",
            "qa",
            "--reason",
            "flaky",
            "--days",
            "7",
            "--now",
            NOW,
            *RECORD,
            "-C",
            str(repo),
        ],
        env={},
    )
    out, err = capsys.readouterr()
    return rc, out, err


def test_freeze_add_gives_a_new_record_its_neighbours_schema_line(tmp_path, capsys):
    repo = stripped_example(tmp_path, "replay-queue")
    follow_init(capsys, repo)
    rc, out, err = freeze_add(capsys, repo, "new_case")
    assert rc == 0, out + err
    path = repo / "quarantine/active/new_case.yaml"
    modeline = "# yaml-language-server: $schema=../../.oracle-guard/quarantine-entry.schema.json"
    assert path.read_text().splitlines()[0] == modeline
    git(repo, "add", "quarantine/active/new_case.yaml")
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert "schema line" not in out, "init edits no oracle file"
    rc, out, err = run_guard(
        capsys, repo, "check", "--only", "freeze-schema,flake-budget", "--now", NOW
    )
    assert rc == 0, out + err


def test_freeze_add_writes_no_schema_line_when_the_neighbours_have_none(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    shutil.copytree(EXAMPLES / "replay-queue", repo, dirs_exist_ok=True)  # no schema lines
    commit(repo)
    rc, out, err = freeze_add(capsys, repo, "new_case")
    assert rc == 0, out + err
    assert not (repo / "quarantine/active/new_case.yaml").read_text().startswith("#")


# -- --ci: the CI recipe, filled in ----------------------------------------------------
RECIPES = Path(init_files.__file__).resolve().parents[2] / "recipes"
GATE = ".github/workflows/oracle-guard-gate.yml"


@pytest.mark.parametrize("name", ["github-actions-base-branch.yml", "gitlab-ci.yml"])
def test_the_shipped_recipes_are_the_examples_byte_for_byte(name):
    assert (RECIPES / name).read_bytes() == (EXAMPLES / "ci" / name).read_bytes()


def check_jsonschema(schema, path):
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_ci_github_writes_the_gate_with_the_install_source_filled_in(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    out = follow_init(capsys, repo, "--ci", "github", "--repo", URL, "--rev", "v1.2.0")
    assert f"wrote {GATE} (the CI gate" in out
    text = (repo / GATE).read_text()
    template = (EXAMPLES / "ci/github-actions-base-branch.yml").read_text()
    assert text == template.replace(
        '"git+https://your.git.server/mirrors/oracle-guard@0123abc"', f'"git+{URL}@v1.2.0"'
    )
    assert yaml.safe_load(text)["env"]["ORACLE_GUARD"] == f"git+{URL}@v1.2.0"
    checked = check_jsonschema("vendor.github-workflows", repo / GATE)
    assert checked.returncode == 0, checked.stdout
    assert re.search(r"git commit .*the workflow too", out), out
    assert "oracle-guard-gate job a required status check" in out
    rc, out, err = run_guard(capsys, repo, "check", "--head", "HEAD", "--now", NOW)
    assert rc == 0, out + err
    baseline = git(repo, "rev-parse", "HEAD").strip()
    rc, out, _ = edit_and_check(capsys, repo, GATE, text.replace("3.12", "3.11"))
    assert rc == 1 and f"{GATE}: write-denied:" in out
    git(repo, "reset", "-q", "--hard", baseline)
    rc, out, err = init(capsys, repo, "--ci", "github", "--repo", URL, "--rev", "v1.2.0")
    assert rc == 0 and "nothing changed" in out, out + err


def test_the_built_package_ships_the_recipes_and_init_ci_runs_from_it(tmp_path):
    """An installed oracle-guard has no examples/: the recipes are package data. What a
    wheel holds is what setuptools' build_py collects, run here offline on a copy."""
    root = EXAMPLES.parent
    src = tmp_path / "src"
    src.mkdir()
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy2(root / name, src / name)
    for folder in ("hooks", "schemas"):
        shutil.copytree(root / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    lib = tmp_path / "lib"
    built = subprocess.run(
        [
            sys.executable,
            "-c",
            "from setuptools import setup; setup()",
            "-q",
            "build_py",
            "--build-lib",
            str(lib),
        ],
        cwd=src,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert built.returncode == 0, built.stdout
    for name in ("github-actions-base-branch.yml", "gitlab-ci.yml"):
        assert (lib / "oracle_guard/recipes" / name).read_bytes() == (
            EXAMPLES / "ci" / name
        ).read_bytes()
    repo = stripped_example(tmp_path, "harness")
    run_built = (
        "import sys; sys.path.insert(0, sys.argv[1]); import oracle_guard; "
        "assert oracle_guard.__file__.startswith(sys.argv[1]), oracle_guard.__file__; "
        "from oracle_guard.cli import main; sys.exit(main(sys.argv[2:], env={}))"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            run_built,
            str(lib),
            "init",
            "-C",
            str(repo),
            "--ci",
            "github",
            "--now",
            NOW,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert done.returncode == 0, done.stdout
    assert (repo / GATE).read_bytes() == (
        EXAMPLES / "ci/github-actions-base-branch.yml"
    ).read_bytes()


def test_ci_without_a_reachable_source_keeps_the_placeholder_and_says_so(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    rc, out, err = init(capsys, repo, "--ci", "github", "--dry-run")
    assert rc == 0 and f"would write {GATE}" in out
    assert not (repo / ".github").exists()
    rc, out, err = init(capsys, repo, "--ci", "github")
    assert rc == 0, err
    assert (repo / GATE).read_bytes() == (
        EXAMPLES / "ci/github-actions-base-branch.yml"
    ).read_bytes()
    assert f"in {GATE}, set ORACLE_GUARD" in printed_step(out, f"in {GATE}")
    hooks = init_repo(tmp_path / "og")
    commit(hooks, {"README.md": "x\n"})
    repo = stripped_example(tmp_path / "2", "harness")
    rc, out, err = init(capsys, repo, "--ci", "github", "--repo", str(hooks))
    assert rc == 0, err
    assert "0123abc" in (repo / GATE).read_text()  # CI cannot install from a local folder
    assert "a local folder, which CI cannot reach" in out


def test_ci_rerun_sets_the_install_source_in_place(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    init(capsys, repo, "--ci", "github")
    rc, out, err = init(capsys, repo, "--ci", "github", "--repo", URL, "--rev", "v1")
    assert rc == 0, err  # the placeholder goes without --force
    assert f"set the ORACLE_GUARD install source in {GATE}" in out
    assert yaml.safe_load((repo / GATE).read_text())["env"]["ORACLE_GUARD"] == f"git+{URL}@v1"
    assert f"in {GATE}, set ORACLE_GUARD" not in out
    rc, out, err = init(capsys, repo, "--ci", "github")  # no source named: the value stays
    assert rc == 0 and f"unchanged {GATE}" in out, err
    assert f"in {GATE}, set ORACLE_GUARD" not in out
    text = (repo / GATE).read_text()
    rc, out, err = init(capsys, repo, "--ci", "github", "--repo", URL, "--rev", "v2")
    assert rc == 2 and GATE in err  # a value someone chose needs --force
    rc, out, err = init(capsys, repo, "--ci", "github", "--repo", URL, "--rev", "v2", "--dry-run")
    assert (
        f"would set the ORACLE_GUARD install source in {GATE} (needs --force) (it had "
        f"ORACLE_GUARD: git+{URL}@v1)" in out
    )
    assert (repo / GATE).read_text() == text
    rc, out, err = init(capsys, repo, "--ci", "github", "--repo", URL, "--rev", "v2", "--force")
    assert rc == 0, err
    assert yaml.safe_load((repo / GATE).read_text())["env"]["ORACLE_GUARD"] == f"git+{URL}@v2"
    (repo / GATE).write_text(text.replace("3.12", "3.11"))  # edited beyond the source
    rc, out, err = init(capsys, repo, "--ci", "github", "--repo", URL, "--rev", "v2")
    assert rc == 2 and f"{GATE} exists and differs" in err


@pytest.mark.parametrize(
    "repo_url,source",
    [
        (
            "git@git.example.test:tools/oracle-guard.git",
            "git+ssh://git@git.example.test/tools/oracle-guard.git@v1",
        ),
        ("git+https://git.example.test/og", "git+https://git.example.test/og@v1"),
    ],
)
def test_ci_install_source_is_a_pip_vcs_url(tmp_path, capsys, repo_url, source):
    repo = stripped_example(tmp_path, "harness")
    rc, out, err = init(capsys, repo, "--ci", "github", "--repo", repo_url, "--rev", "v1")
    assert rc == 0, err
    assert yaml.safe_load((repo / GATE).read_text())["env"]["ORACLE_GUARD"] == source


def test_ci_gitlab_writes_a_new_gitlab_ci_yml(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    out = follow_init(capsys, repo, "--ci", "gitlab", "--repo", URL, "--rev", "v1")
    assert "wrote .gitlab-ci.yml" in out
    job = yaml.safe_load((repo / ".gitlab-ci.yml").read_text())["oracle-guard"]
    assert job["variables"]["ORACLE_GUARD"] == f"git+{URL}@v1"
    checked = check_jsonschema("vendor.gitlab-ci", repo / ".gitlab-ci.yml")
    assert checked.returncode == 0, checked.stdout
    assert "Pipelines must succeed" in out


def test_ci_gitlab_prints_the_job_for_an_existing_gitlab_ci_yml(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    ours = "test:\n  script: [pytest]\n"
    stage(repo, {".gitlab-ci.yml": ours})
    rc, out, err = init(capsys, repo, "--ci", "gitlab", "--repo", URL, "--rev", "v1")
    assert rc == 0, err
    assert (repo / ".gitlab-ci.yml").read_text() == ours
    assert printed_step(out, "add the oracle-guard job above to .gitlab-ci.yml")
    assert git_add_line(out).count(".gitlab-ci.yml") == 1
    assert "in .gitlab-ci.yml, set ORACLE_GUARD" not in out
    job = printed_snippet(out, "add this job to it yourself:")
    write(repo, {".gitlab-ci.yml": ours + job})
    doc = yaml.safe_load((repo / ".gitlab-ci.yml").read_text())
    assert doc["oracle-guard"]["variables"]["ORACLE_GUARD"] == f"git+{URL}@v1"
    checked = check_jsonschema("vendor.gitlab-ci", repo / ".gitlab-ci.yml")
    assert checked.returncode == 0, checked.stdout
    rc, out, err = init(capsys, repo, "--ci", "gitlab")  # the job is there now
    assert "already has an oracle-guard job" in out and "add the oracle-guard job" not in out


def test_ci_job_to_paste_without_a_source_names_the_file_once(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    stage(repo, {".gitlab-ci.yml": "test:\n  script: [pytest]\n"})
    rc, out, err = init(capsys, repo, "--ci", "gitlab")
    assert rc == 0, err
    paste = printed_step(out, "add the oracle-guard job above to .gitlab-ci.yml")
    source = printed_step(out, "in .gitlab-ci.yml, set ORACLE_GUARD")
    add = printed_step(out, "git add")
    assert out.index(paste) < out.index(source) < out.index(add)
    assert git_add_line(out).count(".gitlab-ci.yml") == 1


def test_ci_takes_github_or_gitlab_only(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    with pytest.raises(SystemExit) as exc:
        init(capsys, repo, "--ci", "jenkins")
    assert exc.value.code == 2
    assert "invalid choice: 'jenkins'" in capsys.readouterr().err


# -- the lock is never a fixture of its own entry --------------------------------------
def test_a_rerun_does_not_count_the_lock_as_a_fixture(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    rc, out, err = init(capsys, repo)
    assert "fixtures/ (1 file)" in out
    assert (repo / "fixtures/SHA256SUMS").exists()  # untracked now
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert "fixtures/ (1 file)" in out, out


def test_init_never_writes_through_a_symlinked_folder(tmp_path, capsys):
    repo = stripped_example(tmp_path, "merge-contract")
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".oracle-guard").symlink_to(outside)  # where the schema copies go
    rc, _, err = init(capsys, repo)
    assert rc == 2
    assert err.startswith("oracle-guard: error: .oracle-guard/") and "which is a symlink" in err, (
        err
    )
    assert list(outside.iterdir()) == []
    assert not (repo / ".oracle-guard.yaml").exists()  # all or none


# -- signed authority: the owners' keys ------------------------------------------------
SIGNERS = ".oracle-guard/allowed_signers"
HOW_TO_SIGN = (
    "git config gpg.format ssh; git config user.signingkey "
    "~/.ssh/id_ed25519.pub and rerun oracle-guard init"
)


def ssh_signing(
    repo,
    tmp_path,
    monkeypatch,
    setting="~/.ssh/id_ed25519.pub",
    email="alice@example.com",
    name="id_ed25519",
):
    """git set up for SSH signing in ``repo`` (its own config; HOME a folder of the
    test's, holding the key ssh-keygen made). Returns the private key's path."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    key = home / ".ssh" / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice@laptop", "-f", str(key)],
        check=True,
    )
    git(repo, "config", "gpg.format", "ssh")
    git(repo, "config", "user.signingkey", setting.replace("KEY", str(key)))
    if email:
        git(repo, "config", "user.email", email)
    return key


def public_line(key):
    return (key.parent / (key.name + ".pub")).read_text().strip()


def fingerprint_of(key):
    out = subprocess.run(
        ["ssh-keygen", "-lf", str(key.parent / (key.name + ".pub"))],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    return out.split()[1]


def test_init_with_ssh_signing_writes_authority_and_the_owners_key(tmp_path, capsys, monkeypatch):
    from oracle_guard.authority.keys import HEADER

    repo = stripped_example(tmp_path, "harness")
    key = ssh_signing(repo, tmp_path, monkeypatch)
    out = follow_init(capsys, repo)
    assert contract_of(repo)["authority"] == {"signers": SIGNERS}
    assert re.search(
        r"^authority: +# .+\n  signers: \.oracle-guard/allowed_signers # .+\n"
        r"  # require_touch: true +# .+$",
        (repo / ".oracle-guard.yaml").read_text(),
        re.M,
    )
    assert (repo / SIGNERS).read_text() == HEADER + f"alice@example.com {public_line(key)}\n"
    assert (
        f"  wrote {SIGNERS} (the owners' keys: alice@example.com, ssh-ed25519 "
        f"{fingerprint_of(key)}, from user.signingkey)"
    ) in out
    assert "no authority section" not in out
    rc, out, err = run_guard(capsys, repo, "check", "--head", "HEAD", "--now", NOW)
    assert rc == 0, out + err
    # the key init listed is an owner's: the user's signed oracle change passes
    git(repo, "checkout", "-q", "-b", "owner-change")
    write(repo, {"seeds/header_name.json": "[]\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-S", "-m", "owner rewrites the seeds")
    rc, out, err = run_guard(
        capsys,
        repo,
        "check",
        "--only",
        "write-set",
        "--target",
        "main",
        "--head",
        "HEAD",
        "--now",
        NOW,
    )
    assert rc == 0, out + err
    git(repo, "commit", "-q", "--amend", "--no-gpg-sign", "-m", "unsigned")
    rc, out, _ = run_guard(
        capsys,
        repo,
        "check",
        "--only",
        "write-set",
        "--target",
        "main",
        "--head",
        "HEAD",
        "--now",
        NOW,
    )
    assert rc == 1 and "oracle-change-unsigned" in out


@pytest.mark.parametrize("setting", ["KEY", "KEY.pub", "key::LITERAL", "LITERAL"])
def test_user_signingkey_as_git_reads_it(tmp_path, capsys, monkeypatch, setting):
    """A private key with its .pub beside it, the .pub, a key:: literal and a bare
    ssh- literal (which git reads as a key too)."""
    repo = stripped_example(tmp_path, "harness")
    key = ssh_signing(repo, tmp_path, monkeypatch, setting="KEY")
    git(
        repo,
        "config",
        "user.signingkey",
        setting.replace("LITERAL", public_line(key)).replace("KEY", str(key)),
    )
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert (repo / SIGNERS).read_text().endswith(f"\nalice@example.com {public_line(key)}\n")


def test_a_relative_signingkey_is_read_from_the_top_of_the_work_tree(tmp_path, capsys, monkeypatch):
    repo = stripped_example(tmp_path, "harness")
    key = ssh_signing(
        repo,
        tmp_path,
        monkeypatch,
        setting=os.path.relpath(tmp_path / "home/.ssh/id_ed25519.pub", repo),
    )
    rc, out, err = init(capsys, repo, "-C", str(repo / "src"))
    assert rc == 0, err
    assert public_line(key) in (repo / SIGNERS).read_text()


def test_the_principal_is_user_name_without_user_email(tmp_path, capsys, monkeypatch):
    repo = stripped_example(tmp_path, "harness")
    key = ssh_signing(repo, tmp_path, monkeypatch, email="")
    git(repo, "config", "user.name", "alice")
    assert init(capsys, repo)[0] == 0
    assert (repo / SIGNERS).read_text().endswith(f"\nalice {public_line(key)}\n")


@pytest.mark.parametrize(
    "config,why",
    [
        ({}, "git here is not set up for SSH signing (gpg.format is not ssh)"),
        (
            {"gpg.format": "openpgp", "user.signingkey": "ABCDEF0123456789"},
            "git here is not set up for SSH signing (gpg.format is not ssh)",
        ),
        ({"gpg.format": "ssh"}, "git here signs with SSH keys but names no user.signingkey"),
        (
            {"gpg.format": "ssh", "user.signingkey": "~/.ssh/missing.pub"},
            "user.signingkey holds no usable public key (cannot read ",
        ),
        (
            {"gpg.format": "ssh", "user.signingkey": "key::ssh-ed25519 AAAA"},
            "user.signingkey holds no usable public key (",
        ),
    ],
)
def test_init_without_ssh_signing_writes_no_authority_and_says_how(
    tmp_path, capsys, monkeypatch, config, why
):
    repo = stripped_example(tmp_path, "harness")
    monkeypatch.setenv("HOME", str(tmp_path))
    for key, value in config.items():
        git(repo, "config", key, value)
    out = follow_init(capsys, repo)
    assert "authority" not in contract_of(repo)
    assert not (repo / ".oracle-guard").joinpath("allowed_signers").exists()
    said = [ln for ln in out.splitlines() if "gpg.format ssh" in ln]
    assert len(said) == 1, out
    assert said[0].startswith(f"  note: no authority section: {why}"), said
    assert said[0].endswith(
        f"; to have owners change the oracle with SSH-signed commits, run {HOW_TO_SIGN}"
    )
    rc, out, err = run_guard(capsys, repo, "check", "--head", "HEAD", "--now", NOW)
    assert rc == 0, out + err


def test_a_user_name_that_is_no_principal_writes_no_authority(tmp_path, capsys, monkeypatch):
    repo = stripped_example(tmp_path, "harness")
    ssh_signing(repo, tmp_path, monkeypatch, email="")
    git(repo, "config", "user.name", "Ada Lovelace")
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert "authority" not in contract_of(repo)
    assert not (repo / SIGNERS).exists()
    assert (
        "  note: no authority section: user.name cannot name you in the signers file "
        "(principal 'Ada Lovelace' holds white space or a control character); to have "
        "owners change the oracle with SSH-signed commits, run git config user.email "
        "YOU@EXAMPLE.COM and rerun oracle-guard init\n"
    ) in out


def test_dry_run_with_ssh_signing_writes_nothing(tmp_path, capsys, monkeypatch):
    repo = stripped_example(tmp_path, "harness")
    ssh_signing(repo, tmp_path, monkeypatch)
    rc, out, err = init(capsys, repo, "--dry-run")
    assert rc == 0, err
    assert f"  would write {SIGNERS} (the owners' keys: alice@example.com, ssh-ed25519 " in out
    assert "\nauthority: " in out and f"  signers: {SIGNERS} " in out
    assert not (repo / ".oracle-guard").exists()
    assert not (repo / ".oracle-guard.yaml").exists()


def test_reruns_keep_an_existing_signers_file(tmp_path, capsys, monkeypatch):
    repo = stripped_example(tmp_path, "harness")
    key = ssh_signing(repo, tmp_path, monkeypatch)
    follow_init(capsys, repo)
    edited = "# edited by hand\n" + (repo / SIGNERS).read_text()
    (repo / SIGNERS).write_text(edited)
    for args in ([], ["--force"]):
        rc, out, err = init(capsys, repo, *args)
        assert rc == 0, err
        assert f"  unchanged {SIGNERS} (the owners' keys, kept as they are)" in out
        assert (repo / SIGNERS).read_text() == edited
        assert "is not in" not in out
    git(repo, "add", SIGNERS)
    commit(repo, message="a comment")
    rc, out, err = init(capsys, repo)
    assert "nothing changed: every file init writes is already in place" in out
    # a user whose key is not listed is told the command that adds it
    other = ssh_signing(repo, tmp_path, monkeypatch, setting="KEY.pub", name="id_other")
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert (repo / SIGNERS).read_text() == edited
    assert (
        f"  note: your signing key ({fingerprint_of(other)}) is not in {SIGNERS}: to sign "
        f"oracle changes with it, run oracle-guard signers add alice@example.com "
        f"{other}.pub once the contract is staged\n"
    ) in out
    assert fingerprint_of(key) != fingerprint_of(other)


def test_a_contract_without_authority_gets_it_only_with_force(tmp_path, capsys, monkeypatch):
    repo = stripped_example(tmp_path, "harness")
    follow_init(capsys, repo)
    before = contract_of(repo)
    ssh_signing(repo, tmp_path, monkeypatch)
    rc, out, err = init(capsys, repo)
    assert rc == 2
    assert "(init would add authority; it keeps the rest)" in err
    assert not (repo / SIGNERS).exists(), "nothing is written on refusal"
    rc, out, err = init(capsys, repo, "--force")
    assert rc == 0, err
    assert "overwrote .oracle-guard.yaml (the contract, adding authority; the rest kept)" in out
    assert contract_of(repo) == dict(before, authority={"signers": SIGNERS})
    assert SIGNERS in git_add_line(out)


def test_a_kept_authority_keeps_its_signers_path_and_require_touch(tmp_path, capsys, monkeypatch):
    repo = stripped_example(tmp_path, "harness")
    follow_init(capsys, repo)
    text = (repo / ".oracle-guard.yaml").read_text()
    (repo / ".oracle-guard.yaml").write_text(
        text + "authority:\n  signers: owners/allowed_signers\n  require_touch: true\n"
    )
    key = ssh_signing(repo, tmp_path, monkeypatch)
    git(repo, "config", "--unset", "user.email")
    git(repo, "config", "user.name", "alice")
    text = (repo / ".oracle-guard.yaml").read_text()
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert (repo / ".oracle-guard.yaml").read_text() == text, "nothing to add: left as it is"
    assert (repo / "owners/allowed_signers").read_text().endswith(f"alice {public_line(key)}\n")
    assert not (repo / SIGNERS).exists()
    # a rewrite (--force, with a new deny pattern to add) writes require_touch back
    (repo / ".oracle-guard.yaml").write_text(text.replace("    - .pre-commit-config.yaml", ""))
    rc, out, err = init(capsys, repo, "--force")
    assert rc == 0, err
    assert contract_of(repo)["authority"] == {
        "signers": "owners/allowed_signers",
        "require_touch": True,
    }


def test_a_symlinked_signers_file_stops_init(tmp_path, capsys, monkeypatch):
    repo = stripped_example(tmp_path, "harness")
    ssh_signing(repo, tmp_path, monkeypatch)
    outside = tmp_path / "outside"
    outside.write_text("")
    (repo / ".oracle-guard").mkdir()
    (repo / SIGNERS).symlink_to(outside)
    rc, out, err = init(capsys, repo)
    assert rc == 2
    assert err == (
        f"oracle-guard: error: {SIGNERS} in the working tree is a symlink; "
        "oracle-guard writes only regular files inside the repository\n"
    )
    assert outside.read_text() == ""
    assert not (repo / ".oracle-guard.yaml").exists()


@pytest.mark.parametrize("gpgsign", ["true", None])
def test_init_with_ssh_signing_says_when_git_does_not_sign_every_commit(
    tmp_path, capsys, monkeypatch, gpgsign
):
    repo = stripped_example(tmp_path, "harness")
    ssh_signing(repo, tmp_path, monkeypatch)
    if gpgsign:
        git(repo, "config", "commit.gpgsign", gpgsign)
    out = follow_init(capsys, repo)
    said = "git here does not sign every commit: run git config commit.gpgsign true" in out
    assert said == (gpgsign is None), out


def test_a_fixture_name_no_lock_can_hold_stops_init_with_one_line(tmp_path, capsys):
    """A staged fixture whose name is not UTF-8: init writes nothing, as lock refuses."""
    import os

    repo = stripped_example(tmp_path, "merge-contract")
    name = b"oracle/inputs/caf\xe9.json"  # Latin-1, not UTF-8
    with open(os.path.join(os.fsencode(repo), name), "wb") as f:
        f.write(b"{}\n")
    git(repo, "add", "--", name.decode("utf-8", "surrogateescape"))
    rc, out, err = init(capsys, repo)
    assert rc == 2, out + err
    assert "cannot lock oracle/fixtures.lock.json:" in err
    assert "is not a valid UTF-8 file name: a lock (UTF-8 text) cannot name it" in err
    assert not (repo / ".oracle-guard.yaml").exists()
    # the near miss: the same fixture under a UTF-8 name is locked
    git(repo, "rm", "-qf", "--", name.decode("utf-8", "surrogateescape"))
    write(repo, {"oracle/inputs/café.json": "{}\n"})
    git(repo, "add", "--", "oracle/inputs/café.json")
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
