"""init's edits of .pre-commit-config.yaml, on plain text."""

from oracle_guard.commands.init.files import REPO_PLACEHOLDER, REV_PLACEHOLDER
from oracle_guard.commands.init.precommit_config import (
    edit_pre_commit_config,
    installs_both_stages,
    plan_config,
    retarget_pre_commit_config,
)

OURS = "repos:\n  - repo: https://old  # mine\n    rev: v1\n    hooks:\n      - id: oracle-guard\n"


def test_our_entry_goes_first_in_a_plain_block_list():
    text = "repos:\n- repo: https://x\n  rev: v1\n  hooks:\n  - id: black\n"
    edited, why = edit_pre_commit_config(text, "https://og", "v2")
    assert why == ""
    assert edited.startswith("repos:\n- repo: https://og ")
    assert edited.endswith(text[len("repos:\n") :])


def test_a_flow_list_is_not_edited():
    assert edit_pre_commit_config("repos: []\n", "R", "V") == (
        None,
        "it has no non-empty 'repos:' list",
    )
    assert edit_pre_commit_config(OURS, "R", "V") == (OURS, "")  # ours already


def test_retarget_edits_the_values_in_place_and_keeps_the_comment():
    change = retarget_pre_commit_config(OURS, {"repo": "https://new", "rev": "v2"})
    assert change.text == OURS.replace("https://old", "https://new").replace("v1", "v2")
    assert change.changed == {"repo": "https://old", "rev": "v1"}
    assert change.needs_force


def test_retarget_of_init_s_own_placeholders_needs_no_force():
    text = OURS.replace("https://old", REPO_PLACEHOLDER).replace("v1", REV_PLACEHOLDER)
    assert not retarget_pre_commit_config(text, {"repo": "https://new"}).needs_force


def test_retarget_refuses_a_flow_mapping():
    change = retarget_pre_commit_config(
        "repos:\n  - {repo: https://old, rev: v1, hooks: [{id: oracle-guard}]}\n", {"rev": "v2"}
    )
    assert change.text is None
    assert change.why == "its oracle-guard entry's 'rev:' is not a plain key on a line of its own"


def test_installs_both_stages_only_when_both_are_listed():
    assert installs_both_stages("default_install_hook_types: [pre-push, pre-commit]\n")
    assert not installs_both_stages("default_install_hook_types: [pre-commit]\n")
    assert not installs_both_stages("a: [\n")


def test_an_unchanged_config_asked_for_a_new_rev_it_cannot_set_is_left_to_you(tmp_path):
    (tmp_path / ".pre-commit-config.yaml").write_text(
        "repos:\n  - {repo: https://old, rev: v1, hooks: [{id: oracle-guard}]}\n"
    )
    config = plan_config(str(tmp_path), "https://old", "v2", REPO_PLACEHOLDER)
    assert config.planned.state == "new" and config.planned.what == "the oracle-guard hooks"
    assert config.todo.startswith(
        "in .pre-commit-config.yaml, set the oracle-guard entry's rev: v2 yourself"
    )
    assert config.notes == [
        ".pre-commit-config.yaml not edited: its oracle-guard entry's "
        "'rev:' is not a plain key on a line of its own"
    ]
