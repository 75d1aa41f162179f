"""init's layouts: recognising one from plain paths, and the contract each proposes."""

import pytest

from oracle_guard.commands.init.layouts import (
    LAYOUTS,
    Paths,
    choose_layout,
    missing_tests_note,
    propose,
    recognise,
)
from oracle_guard.errors import InitError


def test_the_layout_with_the_most_signals_is_recognised():
    layout, evidence = recognise(Paths(["seeds/a.json", "fixtures/x.bin", "src/a.py"]))
    assert layout == "harness"
    assert evidence["harness"] == [("seeds/*.json", 1), ("fixtures/", 1)]


def test_a_lock_alone_is_no_fixture_and_recognises_nothing():
    assert recognise(Paths(["fixtures/SHA256SUMS"]))[0] is None


def test_a_tie_stops_init_naming_both_layouts():
    with pytest.raises(
        InitError,
        match=r"several layouts equally \(harness: seeds/\*\.json "
        r"\(1 file\); replay-queue: replays/\*\.json",
    ):
        choose_layout(None, Paths(["seeds/a.json", "replays/a.json"]))


def test_an_asked_layout_wins_over_the_evidence_and_an_unknown_one_stops():
    assert choose_layout("replay-queue", Paths(["seeds/a.json"])) == ("replay-queue", [])
    with pytest.raises(InitError, match="unknown layout 'harnes'"):
        choose_layout("harnes", Paths(["seeds/a.json"]))


def test_a_section_only_where_its_files_exist_and_allow_only_what_matches():
    data = propose("harness", Paths(["seeds/a.json", "src/a.py"]))
    assert set(data) == {"version", "seeds", "write_set", "tamper"}  # tamper: always
    assert data["write_set"]["allow"] == ["src/**"]


def test_one_corpus_is_locked_by_the_digest_beside_it():
    data = propose("oracle-dir", Paths(["oracle/corpus.jsonl"]))
    assert data["fixtures"] == [{"lock": "oracle/corpus.sha256", "paths": ["oracle/corpus.jsonl"]}]
    assert "allow" not in data["write_set"]
    assert data["write_set"]["deny"][0] == "oracle/**"


def test_given_allow_patterns_are_kept_once_each_in_order():
    data = propose("harness", Paths(["seeds/a.json"]), ["lib/**", "docs/**", "lib/**"])
    assert data["write_set"]["allow"] == ["lib/**", "docs/**"]


# -- test-tamper's section ---------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_tests_folder_is_the_tamper_section_of_every_layout(layout):
    paths = Paths(["seeds/a.json", "oracle/quarantine.json", "tests/unit/test_a.py"])
    data = propose(layout, paths)
    assert data["tamper"] == {"paths": ["tests/**"], "frozen_tests": ["tests/**"]}
    assert list(data)[-2:] == ["write_set", "tamper"]  # the schema's order
    assert missing_tests_note(paths) == []


def test_every_test_tree_that_holds_a_file_is_judged_and_properties_are_hermetic():
    paths = Paths(
        ["seeds/a.json", "test/test_a.py", "properties/test_p.py", "conftest.py", "tests/x.py"]
    )
    assert propose("harness", paths)["tamper"] == {
        "paths": ["tests/**", "test/**", "properties/**", "/conftest.py"],
        "hermetic": ["properties/**"],
        "frozen_tests": ["tests/**", "test/**", "properties/**"],
    }


def test_look_alike_folders_and_a_nested_conftest_are_no_test_tree():
    # near miss: testing/ without a test (helpers), src/tests/ and src/conftest.py
    # are not the root test trees
    paths = Paths(["seeds/a.json", "testing/x.py", "src/tests/test_a.py", "src/conftest.py"])
    assert propose("harness", paths)["tamper"] == {"paths": ["tests/**"]}
    assert missing_tests_note(paths) != []


def test_without_a_test_folder_tamper_names_tests_and_the_note_says_so():
    paths = Paths(["seeds/a.json", "src/a.py"])
    assert propose("harness", paths)["tamper"] == {"paths": ["tests/**"]}
    (note,) = missing_tests_note(paths)
    assert note.startswith(
        "tamper.paths is tests/**, though no test is there yet (nor in test/**, "
        "testing/**, properties/**, conftest.py): set it to where your tests live"
    )


def test_the_budget_goes_before_the_write_set_and_tamper():
    from oracle_guard.commands.init.layouts import add_budget
    from oracle_guard.snapshot import MemorySnapshot

    freeze = b'{"excluded_property_ids": [], "reason": {}}'
    paths = Paths(["freeze.json", "tests/test_a.py"])
    data = propose("harness", paths)
    add_budget(data, "harness", paths, MemorySnapshot({"freeze.json": freeze}))
    assert list(data) == ["version", "freeze", "budget", "write_set", "tamper"]
