"""init's contract writer: a commented contract that loads back as proposed, and a
kept contract merged with only what it lacks."""

import pytest

from oracle_guard import contract as contract_mod
from oracle_guard.commands.init.contract_writer import checked_contract, merge_contract
from oracle_guard.errors import InitError

KEPT = {"version": 1, "write_set": {"deny": ["oracle/**"], "allow": ["src/**"]}}
PROPOSED = {
    "version": 1,
    "seeds": [{"paths": ["seeds/*.json"], "format": "json-array"}],
    "write_set": {"allow": ["lib/**"], "deny": ["oracle/**", ".pre-commit-config.yaml"]},
}


def test_a_merge_adds_missing_sections_and_deny_patterns_and_keeps_the_allow():
    merged, added = merge_contract(PROPOSED, KEPT, allow_given=False)
    assert added == ["seeds", "write_set.deny .pre-commit-config.yaml"]
    assert merged["write_set"] == {
        "allow": ["src/**"],
        "deny": ["oracle/**", ".pre-commit-config.yaml"],
    }
    assert list(merged) == ["version", "seeds", "write_set"]  # docs/reference/contract.md's order
    assert KEPT["write_set"]["deny"] == ["oracle/**"]  # the kept data is not edited


def test_a_merge_with_allow_given_replaces_the_allow():
    merged, added = merge_contract(PROPOSED, KEPT, allow_given=True)
    assert merged["write_set"]["allow"] == ["lib/**"]
    assert "write_set.allow lib/** (--allow)" in added


def test_the_written_contract_loads_back_as_proposed():
    text = checked_contract(PROPOSED, "harness")
    assert contract_mod.parse(text.encode("utf-8"), ".oracle-guard.yaml") == PROPOSED
    assert '  - paths: ["seeds/*.json"]' in text and "# seed-append-only" in text


def test_a_kept_value_init_cannot_write_stops_it():
    kept = dict(PROPOSED, timeout_s=1e20)
    with pytest.raises(
        InitError,
        match=r"cannot rewrite \.oracle-guard\.yaml \(cannot write "
        r"1e\+20\): edit it by hand",
    ):
        checked_contract(kept, "harness")


TAMPER = {"paths": ["tests/**", "properties/**"], "hermetic": ["properties/**"]}


def test_the_tamper_section_is_written_with_a_comment_on_each_key_and_loads_back():
    proposed = dict(PROPOSED, tamper=TAMPER)
    text = checked_contract(proposed, "harness")
    assert contract_mod.parse(text.encode("utf-8"), ".oracle-guard.yaml") == proposed
    lines = text.splitlines()
    start = lines.index(next(ln for ln in lines if ln.startswith("tamper:")))
    assert lines[start].endswith("# test-tamper: how the suite collects, runs and scores")
    assert lines[start + 1].startswith('  paths: ["tests/**", "properties/**"]  ')
    assert lines[start + 1].endswith("# the tests judged (every conftest.py and pytest config too)")
    assert lines[start + 2].startswith('  hermetic: ["properties/**"]  ')
    # the optional key it lacks, as a commented example
    assert lines[start + 3].startswith('  # allow: [{rule: process-exit, path: "tests/')


def test_a_kept_tamper_allow_is_written_back_as_it_was():
    kept = {"paths": ["tests/**"], "allow": [{"rule": "process-exit", "path": "tests/cli/*.py"}]}
    text = checked_contract(dict(PROPOSED, tamper=kept), "harness")
    assert contract_mod.parse(text.encode("utf-8"))["tamper"] == kept
    assert '  # hermetic: ["properties/**"]' in text and "  # allow:" not in text


def test_a_kept_contract_without_tamper_gets_it_and_one_with_it_keeps_its_own():
    proposed = dict(PROPOSED, tamper={"paths": ["tests/**"]})
    merged, added = merge_contract(proposed, KEPT, allow_given=False)
    assert "tamper" in added and merged["tamper"] == {"paths": ["tests/**"]}
    assert list(merged) == ["version", "seeds", "write_set", "tamper"]
    # near miss: the human's section stays, paths and all
    mine = dict(KEPT, tamper={"paths": ["spec/**"]})
    merged, added = merge_contract(proposed, mine, allow_given=False)
    assert "tamper" not in added and merged["tamper"] == {"paths": ["spec/**"]}
