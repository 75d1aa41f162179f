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

from oracle_guard import init as init_mod
from testing.git import commit, git, init_repo, run_guard, stage, write

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NOW = "2026-09-25"
# What each example ships that init writes itself.
WRITTEN_BY_INIT = {
    "harness": [".oracle-guard.yaml", "fixtures/SHA256SUMS"],
    "merge-contract": [".oracle-guard.yaml", "oracle/fixtures.lock.json"],
    "oracle-dir": [".oracle-guard.yaml", "oracle/corpus.sha256"],
    "replay-queue": [".oracle-guard.yaml"],
}


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
    unstaged = git(repo, "diff", "--name-only") + git(repo, "ls-files", "--others",
                                                        "--exclude-standard")
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
    return text.replace("1729", "1730").replace("1999", "1990").replace(
        '"fail"', '"pass"').replace("Name", "Nom").replace("http-platform", "nobody")


# (example, files the example's own contract protects, an edit and the codes it must raise)
CASES = [
    ("harness", ["fixtures/exchange_example.json", "seeds/header_name.json", "freeze.json"],
     ("seeds/header_name.json", "seed-rewritten")),
    ("merge-contract", ["oracle/inputs/pricing.json", "oracle/flake_budget.yaml",
                        "oracle/write_set.txt"],
     ("oracle/inputs/pricing.json", "fixture-mismatch")),
    ("oracle-dir", ["oracle/corpus.jsonl", "oracle/quarantine.json", "oracle/seeds.toml"],
     ("oracle/corpus.jsonl", "seed-rewritten")),
    ("replay-queue", ["seeds.lock", "replays/2026-09-23T14-02Z_parse_header.json",
                      "quarantine/active/retry_budget.yaml"],
     ("seeds.lock", "seed-rewritten")),
]


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_init_on_a_stripped_example_recognises_it_and_the_commit_passes(tmp_path, capsys,
                                                                        name):
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
def test_init_protects_what_the_example_contract_protects(tmp_path, capsys, name, protected,
                                                          characteristic):
    repo = stripped_example(tmp_path, name)
    follow_init(capsys, repo)
    baseline = git(repo, "rev-parse", "HEAD").strip()
    for path in protected + [".oracle-guard.yaml", ".oracle-guard/contract.schema.json",
                             ".pre-commit-config.yaml"]:
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
        for section in ("fixtures", "seeds", "freeze"):
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
    follow_init(capsys, repo)
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert "nothing changed: every file init writes is already in place" in out
    assert "git add" not in out and "git commit" not in out
    after = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert after == before


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
        f"A  {p}\n" for p in git(repo, "ls-files").split())


def test_layout_option_overrides_recognition(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"src/app.py": "x = 1\n"})
    rc, out, err = init(capsys, repo, "--layout", "replay-queue")
    assert rc == 0, err
    assert "layout 'replay-queue', as asked (--layout): none of its files yet" in out
    data = yaml.safe_load((repo / ".oracle-guard.yaml").read_text())
    assert data["write_set"]["deny"] == ["quarantine/active/**", ".oracle-guard/**",
                                         ".pre-commit-config.yaml"]


def test_an_unknown_layout_exits_2_listing_the_names(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    rc, out, err = init(capsys, repo, "--layout", "monorepo")
    assert rc == 2
    assert err == ("oracle-guard: error: unknown layout 'monorepo'; choose one of harness, "
                   "merge-contract, oracle-dir, replay-queue\n")
    assert not (repo / ".oracle-guard.yaml").exists()


def test_an_unrecognised_repository_exits_2_with_the_hint(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    commit(repo, {"src/app.py": "x = 1\n", "tests/test_app.py": "def test(): pass\n"})
    rc, out, err = init(capsys, repo)
    assert rc == 2
    assert err.startswith("oracle-guard: error: no known layout recognised")
    assert "pass --layout NAME, one of harness, merge-contract, oracle-dir, replay-queue" in err
    assert not (repo / ".oracle-guard.yaml").exists()


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
    assert "What the hooks will report on the staged oracle today:" in out
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
    return subprocess.run([sys.executable, "-m", "pre_commit", "validate-config",
                           ".pre-commit-config.yaml"], cwd=repo, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)


def test_a_new_pre_commit_config_is_valid_for_pre_commit(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    init(capsys, repo)
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    assert config["default_install_hook_types"] == ["pre-commit", "pre-push"]
    assert config["fail_fast"] is True
    assert config["repos"] == [{"repo": init_mod.REPO_PLACEHOLDER,
                                "rev": init_mod.REV_PLACEHOLDER,
                                "hooks": [{"id": "oracle-guard"}]}]
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


def test_an_existing_simple_config_gets_the_entry_first_and_keeps_the_rest(tmp_path, capsys):
    repo = stripped_example(tmp_path, "harness")
    stage(repo, {".pre-commit-config.yaml": EXISTING})
    rc, out, err = init(capsys, repo, "--repo", "https://git.example.test/oracle-guard",
                        "--rev", "v0.1.0")
    assert rc == 0, err
    assert "added the oracle-guard hooks, first in repos: to .pre-commit-config.yaml" in out
    text = (repo / ".pre-commit-config.yaml").read_text()
    assert text.startswith("# our hooks\nfail_fast: false\nrepos:\n- repo: https://git.")
    assert text.endswith(EXISTING.split("repos:\n", 1)[1]), "the old entries, byte for byte"
    config = yaml.safe_load(text)
    assert config["fail_fast"] is False
    assert [r["repo"] for r in config["repos"]] == ["https://git.example.test/oracle-guard",
                                                    "local"]
    assert config["repos"][0]["rev"] == "v0.1.0"
    assert validate_config(repo).returncode == 0
    # idempotent: the entry is there now
    rc, out, err = init(capsys, repo, "--repo", "https://git.example.test/oracle-guard",
                        "--rev", "v0.1.0")
    assert "unchanged .pre-commit-config.yaml" in out
    assert (repo / ".pre-commit-config.yaml").read_text() == text


@pytest.mark.parametrize("config", [
    "repos: [{repo: local, hooks: [{id: lint, name: lint, entry: 'true', "
    "language: system}]}]\n",                                     # a flow list
    '{"repos": [{"repo": "local", "hooks": [{"id": "lint", "name": "lint", '
    '"entry": "true", "language": "system"}]}]}\n',                # JSON
    "repos:\n",                                                    # no list at all
])
def test_a_config_it_cannot_edit_safely_is_left_alone_and_the_snippet_printed(
        tmp_path, capsys, config):
    repo = stripped_example(tmp_path, "harness")
    stage(repo, {".pre-commit-config.yaml": config})
    rc, out, err = init(capsys, repo)
    assert rc == 0, err
    assert (repo / ".pre-commit-config.yaml").read_text() == config
    assert "not edited: .pre-commit-config.yaml" in out
    assert f"- repo: {init_mod.REPO_PLACEHOLDER}" in out and "- id: oracle-guard" in out
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
    assert config["repos"][0] == {"repo": str(hooks), "rev": sha,
                                  "hooks": [{"id": "oracle-guard"}]}
    assert "set repo: to where you host" not in out
    (tmp_path / "empty").mkdir()
    rc, _, err = init(capsys, stripped_example(tmp_path / "2", "harness"), "--repo",
                      str(tmp_path / "empty"))
    assert rc == 2 and "not a git clone" in err


# -- editor schemas ------------------------------------------------------------
def editor_validator(repo, name):
    from jsonschema import Draft7Validator

    schema = json.loads((repo / ".oracle-guard" / f"{name}.schema.json").read_text())
    Draft7Validator.check_schema(schema)
    assert "urn:" not in json.dumps(schema) and "$defs" not in json.dumps(schema)
    return Draft7Validator(schema)


def test_editor_schemas_are_self_contained_draft_07_and_judge_like_the_built_ins(tmp_path,
                                                                                 capsys):
    repo = stripped_example(tmp_path, "merge-contract")
    _, out, _ = init(capsys, repo)
    assert ("oracle/flake_budget.yaml: # yaml-language-server: "
            "$schema=../.oracle-guard/flake-budget.schema.json") in out
    contract = editor_validator(repo, "contract")
    for name in WRITTEN_BY_INIT:
        doc = yaml.safe_load((EXAMPLES / name / ".oracle-guard.yaml").read_text())
        assert not list(contract.iter_errors(doc)), name
    for bad in ({"version": 2}, {"version": 1, "fixture": []},
                {"version": 1, "seeds": [{"paths": ["!x"], "format": "jsonl"}]},
                {"version": 1, "base": "HEAD~1"}):
        assert list(contract.iter_errors(bad)), bad
    budget = editor_validator(repo, "flake-budget")
    good = yaml.safe_load((EXAMPLES / "merge-contract/oracle/flake_budget.yaml").read_text())
    assert not list(budget.iter_errors(good))
    good["frozen"][0]["expires"] = "next week"
    assert list(budget.iter_errors(good))


def test_the_modeline_hint_names_each_yaml_freeze_file_without_one(tmp_path, capsys):
    repo = stripped_example(tmp_path, "replay-queue")
    rc, out, _ = init(capsys, repo)
    assert ("quarantine/active/retry_budget.yaml: # yaml-language-server: "
            "$schema=../../.oracle-guard/quarantine-entry.schema.json") in out
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


def test_init_then_pre_commit_install_guards_the_next_commit(tmp_path, capsys, hook_repo):
    hook_path, sha = hook_repo
    repo = stripped_example(tmp_path, "merge-contract")
    out = follow_init(capsys, repo, "--repo", str(hook_path))
    assert f"rev: {sha}" in (repo / ".pre-commit-config.yaml").read_text()
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "home"), PRE_COMMIT_COLOR="never",
               ORACLE_GUARD_NOW=NOW)
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=env,
                   check=True, stdout=subprocess.PIPE)
    assert (repo / ".git/hooks/pre-push").exists(), "default_install_hook_types: pre-push too"
    write(repo, {"oracle/inputs/pricing.json": "[]\n"})
    git(repo, "add", "-A")
    blocked = subprocess.run(["git", "commit", "-q", "-m", "rewrite a fixture"], cwd=repo,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    assert blocked.returncode != 0, blocked.stdout
    assert "oracle/inputs/pricing.json: fixture-mismatch:" in blocked.stdout
    git(repo, "reset", "-q", "--hard")
    write(repo, {"src/pricing.py": "def price(c, r):\n    return c\n"})
    git(repo, "add", "-A")
    honest = subprocess.run(["git", "commit", "-q", "-m", "honest"], cwd=repo, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
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
    assert data["fixtures"] == [{"lock": "oracle/SHA256SUMS", "root": "oracle",
                                 "paths": ["oracle/*.jsonl"]}]
    assert re.fullmatch(r"([0-9a-f]{64}  [ab]\.jsonl\n){2}",
                        (repo / "oracle/SHA256SUMS").read_text())
    rc, out, err = run_guard(capsys, repo, "check", "--head", "HEAD", "--now", NOW)
    assert rc == 0, out + err


def test_a_proposal_that_does_not_load_is_never_written(tmp_path, capsys):
    repo = init_repo(tmp_path / "r")
    stage(repo, {"oracle/a\\b.jsonl": '{"x": 1}\n'})  # a backslash: not a contract path
    rc, out, err = init(capsys, repo)
    assert rc == 2
    assert err.startswith("oracle-guard: error: the proposed contract does not load: "
                          ".oracle-guard.yaml:")
    assert not (repo / ".oracle-guard.yaml").exists()


def test_a_stale_lock_is_refused_with_the_lock_command_named(tmp_path, capsys):
    repo = stripped_example(tmp_path, "merge-contract")
    follow_init(capsys, repo)
    stage(repo, {"oracle/inputs/pricing.json": "[]\n"})
    rc, _, err = init(capsys, repo)
    assert rc == 2
    assert err.startswith("oracle-guard: error: oracle/fixtures.lock.json exists and differs")
    assert "run 'oracle-guard lock'" in err
