"""init's layouts: recognising one from plain paths, and the contract each proposes."""

import pytest

from oracle_guard.commands.init.layouts import Paths, choose_layout, propose, recognise
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
    assert set(data) == {"version", "seeds", "write_set"}
    assert data["write_set"]["allow"] == ["src/**"]


def test_one_corpus_is_locked_by_the_digest_beside_it():
    data = propose("oracle-dir", Paths(["oracle/corpus.jsonl"]))
    assert data["fixtures"] == [{"lock": "oracle/corpus.sha256", "paths": ["oracle/corpus.jsonl"]}]
    assert "allow" not in data["write_set"]
    assert data["write_set"]["deny"][0] == "oracle/**"


def test_given_allow_patterns_are_kept_once_each_in_order():
    data = propose("harness", Paths(["seeds/a.json"]), ["lib/**", "docs/**", "lib/**"])
    assert data["write_set"]["allow"] == ["lib/**", "docs/**"]
