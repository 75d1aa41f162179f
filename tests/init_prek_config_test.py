"""init's edits of prek.toml, on plain text, and which config init writes."""

import os
import stat

import pytest

from oracle_guard.commands.init.files import REPO_PLACEHOLDER, REV_PLACEHOLDER
from oracle_guard.commands.init.prek_config import (
    choose_config,
    edit_prek_config,
    installs_both_stages,
    new_prek_config,
    prek_on_path,
    retarget_prek_config,
    toml_parser,
    toml_string,
)

tomllib = toml_parser()
OURS_ENTRY = {"repo": "https://og", "rev": "v2", "hooks": [{"id": "oracle-guard"}]}
THEIRS = """\
# my hooks
default_language_version.python = "3.12"

[[repos]]
repo = "https://x"  # theirs
rev = "v1"

[[repos.hooks]]
id = "black"
"""
OURS = '[[repos]]\nrepo = "https://old"  # mine\nrev = \'v1\'\nhooks = [{ id = "oracle-guard" }]\n'


def test_a_new_config_parses_to_the_entry_and_both_stages():
    config = tomllib.loads(new_prek_config("https://og", "v2"))
    assert config == {
        "default_install_hook_types": ["pre-commit", "pre-push"],
        "fail_fast": True,
        "repos": [OURS_ENTRY],
    }


def test_our_table_goes_before_the_first_one_and_keeps_everything_else():
    edited, why = edit_prek_config(THEIRS, "https://og", "v2")
    assert why == ""
    before, after = edited.split('[[repos]]\nrepo = "https://x"', 1)
    assert before.startswith('# my hooks\ndefault_language_version.python = "3.12"\n\n[[repos]]')
    config = tomllib.loads(edited)
    theirs = tomllib.loads(THEIRS)
    assert config == dict(theirs, repos=[OURS_ENTRY] + theirs["repos"])


def test_crlf_is_kept():
    edited, why = edit_prek_config(THEIRS.replace("\n", "\r\n"), "https://og", "v2")
    assert why == "" and "\n" not in edited.replace("\r\n", "")


def test_a_config_without_repos_gets_them_at_the_end():
    text = "fail_fast = true\n\n[default_language_version]\npython = '3.12'\n"
    edited, why = edit_prek_config(text, "https://og", "v2")
    assert why == "" and edited.startswith(text)
    assert tomllib.loads(edited) == dict(tomllib.loads(text), repos=[OURS_ENTRY])
    assert tomllib.loads(edit_prek_config("", "R", "V")[0])["repos"][0]["repo"] == "R"


def test_a_config_with_our_hooks_is_kept_as_it_is():
    assert edit_prek_config(OURS, "R", "V") == (OURS, "")
    six = '[[repos]]\nrepo = "local"\n[[repos.hooks]]\nid = "write-set"\n'
    assert edit_prek_config(six, "R", "V") == (six, "")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('repos = [{ repo = "https://x", hooks = [] }]\n', "an inline array"),
        ('repos = "x"\n', "not a list of [[repos]] tables"),
        ("[[repos]\nrepo = 1\n", "it does not parse as TOML 1.0 ("),
        ('[[repos]]\nrepo = "x"\nrepo = "y"\n', "it does not parse as TOML 1.0 ("),
        # TOML 1.1's multiline inline table, which prek reads and tomllib does not
        ('[[repos]]\nrepo = "x"\nhooks = [\n  {\n    id = "a",\n  },\n]\n', "TOML 1.0"),
    ],
)
def test_a_config_init_cannot_edit_safely_is_refused_with_the_reason(text, why):
    edited, reason = edit_prek_config(text, "R", "V")
    assert edited is None and why in reason, reason


def test_a_repos_header_inside_a_multiline_string_is_caught_by_the_read_back():
    # the line looks like the first [[repos]] header; the edit would land in the string
    text = 'note = """\n[[repos]]\n"""\n'
    assert edit_prek_config(text, "R", "V") == (
        None,
        "adding the entry would change more than the 'repos' list",
    )


@pytest.mark.parametrize("value", ['a"b', "c:\\path", "tab\there", "nl\nx", "é\x7f", "'"])
def test_toml_string_reads_back(value):
    assert tomllib.loads(f"k = {toml_string(value)}\n") == {"k": value}


def test_odd_repo_names_are_written_so_they_read_back():
    repo = '/tmp/a "quoted" \\ folder'
    assert tomllib.loads(new_prek_config(repo, "v1"))["repos"][0]["repo"] == repo


def test_retarget_edits_the_values_in_place_and_keeps_the_comment():
    change = retarget_prek_config(OURS, {"repo": "https://new", "rev": "v2"})
    assert change.text == OURS.replace('"https://old"', '"https://new"').replace("'v1'", '"v2"')
    assert "# mine" in change.text
    assert change.changed == {"repo": "https://old", "rev": "v1"}
    assert change.needs_force


def test_retarget_of_init_s_own_placeholders_needs_no_force():
    text = new_prek_config(REPO_PLACEHOLDER, REV_PLACEHOLDER)
    change = retarget_prek_config(text, {"repo": "https://new", "rev": "v9"})
    assert not change.needs_force
    assert tomllib.loads(change.text)["repos"][0] == dict(OURS_ENTRY, repo="https://new", rev="v9")


def test_retarget_refuses_what_it_cannot_edit_line_by_line():
    inline = 'repos = [{ repo = "https://old", rev = "v1", hooks = [{ id = "oracle-guard" }] }]\n'
    change = retarget_prek_config(inline, {"rev": "v2"})
    assert change.text is None and change.why == (
        "its oracle-guard entry's 'rev =' is not a plain key on a line of its own"
    )
    twice = OURS + OURS
    assert retarget_prek_config(twice, {"rev": "v2"}).why == (
        "2 of its [[repos]] tables run oracle-guard hooks"
    )
    local = '[[repos]]\nrepo = "local"\nhooks = [{ id = "oracle-guard" }]\n'
    change = retarget_prek_config(local, {"rev": "v2"})
    assert change.text == local and "repo: local" in change.why


def test_installs_both_stages_only_when_both_are_listed():
    assert installs_both_stages(new_prek_config("R", "V"))
    assert not installs_both_stages('default_install_hook_types = ["pre-commit"]\n')
    assert not installs_both_stages("[[repos]\n")
    assert not installs_both_stages(None)


# -- which config init writes ----------------------------------------------------------
@pytest.fixture
def prek_bin(tmp_path):
    folder = tmp_path / "bin"
    folder.mkdir()
    exe = folder / "prek"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(folder)


def put(top, *names):
    for name in names:
        (top / name).write_text("")


def test_prek_is_on_path_only_on_the_path_given(prek_bin, tmp_path):
    assert prek_on_path({"PATH": prek_bin})
    assert not prek_on_path({"PATH": str(tmp_path)})
    assert not prek_on_path({})  # never the test process's own PATH
    assert not prek_on_path({"PATH": ""})


@pytest.mark.parametrize(
    ("files", "prek", "path", "runner", "why"),
    [
        ((), False, ".pre-commit-config.yaml", "pre-commit", ""),
        (
            (),
            True,
            ".pre-commit-config.yaml",
            "prek",
            "prek is on PATH and reads it, as pre-commit does",
        ),
        ((".pre-commit-config.yaml",), True, ".pre-commit-config.yaml", "pre-commit", ""),
        (("prek.toml",), False, "prek.toml", "prek", "prek.toml is there"),
        (
            ("prek.toml", ".pre-commit-config.yaml"),
            False,
            "prek.toml",
            "prek",
            "prek reads it in preference to .pre-commit-config.yaml, which init leaves alone",
        ),
        ((".pre-commit-config.yml",), False, ".pre-commit-config.yml", "prek", "prek reads it"),
        (
            (".pre-commit-config.yml", ".pre-commit-config.yaml"),
            True,
            ".pre-commit-config.yaml",
            "pre-commit",
            "",
        ),
    ],
)
def test_init_writes_the_config_the_runner_reads(
    tmp_path, prek_bin, files, prek, path, runner, why
):
    top = tmp_path / "repo"
    top.mkdir()
    put(top, *files)
    choice = choose_config(str(top), {"PATH": prek_bin if prek else str(tmp_path)})
    assert (choice.path, choice.runner) == (path, runner)
    assert why in choice.why and bool(choice.why) == bool(why)


def test_a_prek_that_is_not_executable_is_not_on_path(prek_bin):
    os.chmod(os.path.join(prek_bin, "prek"), 0o644)
    assert not prek_on_path({"PATH": prek_bin})
