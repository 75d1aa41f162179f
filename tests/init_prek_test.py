"""init for prek users: the config prek reads (prek.toml, first), and 'prek install'."""

import os
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from oracle_guard.commands.init.prek_config import toml_parser
from testing.git import commit, git, init_repo, run_guard, stage
from testing.oracle import NOW
from testing.samples import EXAMPLES

tomllib = toml_parser()
# a folder with the real prek (the test extra installs it beside this Python)
PREK_BIN = str(Path(sys.executable).parent)
WITH_PREK = {"PATH": PREK_BIN}
URL = "https://git.example/mirrors/oracle-guard"
THEIRS = '# my hooks\nfail_fast = false\n\n[[repos]]\nrepo = "https://x"\nrev = "v1"\n\n[[repos.hooks]]\nid = "black"\n'
YAML = "repos:\n  - repo: https://x\n    rev: v1\n    hooks:\n      - id: black\n"


@pytest.fixture(autouse=True)
def _no_global_git_config(monkeypatch):
    """init reads git's signing configuration: the machine's own is never read."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)


def harness(tmp_path, files=None):
    """The harness example, without its contract and lock, staged."""
    repo = init_repo(tmp_path / "harness")
    shutil.copytree(EXAMPLES / "harness", repo, dirs_exist_ok=True)
    for path in (".oracle-guard.yaml", "fixtures/SHA256SUMS"):
        (repo / path).unlink()
    for name, text in (files or {}).items():
        (repo / name).write_text(text)
    stage(repo)
    return repo


def init(capsys, repo, *args, env=None):
    return run_guard(capsys, repo, "init", "--now", NOW, *args, env=env)


def steps(out):
    return re.findall(r"^  \d+\. (.*)$", out, re.M)


def test_prek_on_path_with_no_config_gets_the_yaml_both_runners_read_and_prek_install(
    tmp_path, capsys
):
    assert shutil.which("prek", path=PREK_BIN), "the test extra installs prek"
    repo = harness(tmp_path)
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v1", env=WITH_PREK)
    assert rc == 0, err
    assert not (repo / "prek.toml").exists()
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    assert config["repos"] == [{"repo": URL, "rev": "v1", "hooks": [{"id": "oracle-guard"}]}]
    assert config["default_install_hook_types"] == ["pre-commit", "pre-push"]
    assert (
        "  created .pre-commit-config.yaml (the oracle-guard hooks, at pre-commit and pre-push)"
        in out
    )
    assert (
        "  note: the hooks go in .pre-commit-config.yaml: prek is on PATH and reads it, as "
        "pre-commit does (teammates may run either); init writes prek.toml only where one is there"
    ) in out
    said = steps(out)
    assert "prek install   # the pre-commit and pre-push hooks (default_install_hook_types)" in said
    assert not [s for s in said if "pre-commit install" in s]
    add = next(s for s in said if s.startswith("git add "))
    assert ".pre-commit-config.yaml" in add.split()
    git(repo, "add", "--", *add.split()[2:])
    commit(repo, message="guard the oracle")
    rc, out, err = run_guard(capsys, repo, "check", "--head", "HEAD", "--now", NOW)
    assert rc == 0, out + err


def test_an_empty_prek_toml_there_gets_prek_its_own_config(tmp_path, capsys):
    repo = harness(tmp_path, {"prek.toml": ""})
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v1", env=WITH_PREK)
    assert rc == 0, err
    assert not (repo / ".pre-commit-config.yaml").exists()
    config = tomllib.loads((repo / "prek.toml").read_text())
    assert config["repos"] == [{"repo": URL, "rev": "v1", "hooks": [{"id": "oracle-guard"}]}]


def test_without_prek_on_path_init_writes_the_pre_commit_config(tmp_path, capsys):
    repo = harness(tmp_path)
    rc, out, err = init(capsys, repo, env={"PATH": str(tmp_path)})  # no prek there
    assert rc == 0, err
    assert (repo / ".pre-commit-config.yaml").exists() and not (repo / "prek.toml").exists()
    assert "pre-commit install   # the pre-commit and pre-push hooks" in out
    assert "prek install" not in out and "note: the hooks go in" not in out


def test_a_prek_toml_there_gets_the_entry_first_even_beside_a_pre_commit_config(tmp_path, capsys):
    repo = harness(tmp_path, {"prek.toml": THEIRS, ".pre-commit-config.yaml": YAML})
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v1")  # prek not on PATH
    assert rc == 0, err
    text = (repo / "prek.toml").read_text()
    assert text.startswith("# my hooks\nfail_fast = false\n\n[[repos]]\nrepo = ")
    assert text.endswith(
        '\n[[repos]]\nrepo = "https://x"\nrev = "v1"\n\n[[repos.hooks]]\nid = "black"\n'
    )
    config = tomllib.loads(text)
    assert [r["repo"] for r in config["repos"]] == [URL, "https://x"]
    assert config["fail_fast"] is False  # theirs, kept
    assert (repo / ".pre-commit-config.yaml").read_text() == YAML  # left alone
    assert "  added the oracle-guard hooks, first of its [[repos]] tables to prek.toml" in out
    assert (
        "  note: the hooks go in prek.toml: prek.toml is there, and prek reads it in "
        "preference to .pre-commit-config.yaml, which init leaves alone (pre-commit reads "
        "only .pre-commit-config.yaml)"
    ) in out
    # their config lists no install types: both are named
    assert "prek install --hook-type pre-commit --hook-type pre-push" in steps(out)


def test_a_prek_toml_that_does_not_parse_is_left_alone_with_the_entry_to_paste(tmp_path, capsys):
    broken = "[[repos]\nrepo = 1\n"
    repo = harness(tmp_path, {"prek.toml": broken})
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v1")
    assert rc == 0, err
    assert (repo / "prek.toml").read_text() == broken
    assert re.search(
        r"^  not edited: prek\.toml \(it does not parse as TOML 1\.0 \(.+\)\); add this entry "
        r"before its first \[\[repos\]\] table yourself:\n    \[\[repos\]\]\n    repo = ",
        out,
        re.M,
    ), out
    said = steps(out)
    assert "add the oracle-guard entry above to prek.toml" in said
    assert "prek.toml" in next(s for s in said if s.startswith("git add ")).split()


def test_a_rerun_with_another_rev_sets_it_in_place_with_force(tmp_path, capsys):
    repo = harness(tmp_path, {"prek.toml": ""})
    assert init(capsys, repo, "--repo", URL, "--rev", "v1", env=WITH_PREK)[0] == 0
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v2", env=WITH_PREK)
    assert rc == 2 and out == ""
    assert err.startswith(
        "oracle-guard: error: prek.toml exists and differs from what init would write "
        "(its oracle-guard entry has rev: v1); nothing was written"
    ), err
    assert tomllib.loads((repo / "prek.toml").read_text())["repos"][0]["rev"] == "v1"
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v2", "--force", env=WITH_PREK)
    assert rc == 0, err
    assert "  set the oracle-guard entry's rev: in prek.toml (it had rev: v1)" in out
    text = (repo / "prek.toml").read_text()
    assert tomllib.loads(text)["repos"][0]["rev"] == "v2"
    assert "# a tag or the full commit id you reviewed" in text  # its comment kept


def test_placeholders_are_filled_in_without_force(tmp_path, capsys):
    repo = harness(tmp_path, {"prek.toml": ""})
    assert init(capsys, repo, env=WITH_PREK)[0] == 0
    assert "in prek.toml, set repo: to where you host" in init(capsys, repo, env=WITH_PREK)[1]
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v1", env=WITH_PREK)
    assert rc == 0, err
    assert tomllib.loads((repo / "prek.toml").read_text())["repos"][0]["repo"] == URL


def test_dry_run_names_prek_toml_and_writes_nothing(tmp_path, capsys):
    repo = harness(tmp_path, {"prek.toml": ""})
    rc, out, err = init(capsys, repo, "--dry-run", env=WITH_PREK)
    assert rc == 0, err
    assert "  would add the oracle-guard hooks, first of its [[repos]] tables to prek.toml" in out
    assert "note: the hooks go in prek.toml: prek.toml is there" in out
    assert (repo / "prek.toml").read_text() == "" and not (repo / ".oracle-guard.yaml").exists()


def test_a_pre_commit_config_yml_alone_is_the_one_edited_for_prek(tmp_path, capsys):
    repo = harness(tmp_path, {".pre-commit-config.yml": YAML})
    rc, out, err = init(capsys, repo, "--repo", URL, "--rev", "v1")
    assert rc == 0, err
    assert not (repo / ".pre-commit-config.yaml").exists()  # it would hide the .yml from prek
    assert "  added the oracle-guard hooks, first in repos: to .pre-commit-config.yml" in out
    assert "prek install --hook-type pre-commit --hook-type pre-push" in steps(out)


@pytest.mark.parametrize("name", ["prek.toml", ".pre-commit-config.yml"])
def test_the_contract_init_writes_denies_the_runners_configs(tmp_path, capsys, name):
    import yaml

    repo = harness(tmp_path)
    assert init(capsys, repo, env=WITH_PREK)[0] == 0
    deny = yaml.safe_load((repo / ".oracle-guard.yaml").read_text())["write_set"]["deny"]
    assert name in deny


@pytest.mark.parametrize(
    ("files", "config"), [({"prek.toml": ""}, "prek.toml"), ({}, ".pre-commit-config.yaml")]
)
def test_the_ci_step_names_the_config_that_holds_the_rev(tmp_path, capsys, files, config):
    repo = harness(tmp_path, files)
    env = WITH_PREK
    rc, out, err = init(capsys, repo, "--ci", "github", env=env)
    assert rc == 0, err
    assert f"git+URL@REV, the repo: and rev: of {config} (or rerun" in out, out
