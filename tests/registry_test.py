"""The registry is the one list of checks: each entry has its module, its
contract section, its codes and its manifest entry, and the judge runs exactly
the registry's checks, by the registry's rules."""

from __future__ import annotations

import datetime
import json
import re
import sys
import types
from pathlib import Path
from typing import List, Tuple, get_type_hints

import pytest
import yaml

from oracle_guard import clock
from oracle_guard import judge as judge_mod
from oracle_guard.checks import registry
from oracle_guard.checks.codes import CODES, NOT_FROM_A_CHECK, SCORE_CODES
from oracle_guard.checks.registry import CHECKS, HOOKS, Check, CodeDoc, check_module
from oracle_guard.checks.sample import Sample
from oracle_guard.contract import Contract
from oracle_guard.findings import Finding
from oracle_guard.sections import SECTIONS, Section
from oracle_guard.snapshot import Snapshot
from testing import oracle, samples
from testing.trees import MemoryRepo

ROOT = Path(__file__).resolve().parents[1]
NOW = clock.now_from(oracle.NOW, {})  # the suite's clock, as the checks take it
# every section a check reads, so that each check runs
ALL_SECTIONS = {check.section: {} for check in CHECKS}
NUMBERS = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
)


# -- each entry is whole ----------------------------------------------------------------


@pytest.mark.parametrize("check", CHECKS, ids=HOOKS)
def test_every_check_has_a_module_with_a_typed_check_function(check):
    module = check_module(check.id)
    assert callable(getattr(module, "check", None)), f"{check.module_name} has no check()"
    assert check.function() is module.check
    hints = get_type_hints(module.check)
    assert hints == {
        "contract": Contract,
        "base": Snapshot,
        "candidate": Snapshot,
        "now": datetime.datetime,
        "return": List[Finding],
    }, check.module_name
    assert list(hints)[:4] == ["contract", "base", "candidate", "now"]


def test_every_check_module_is_in_the_registry():
    """A module under hooks/checks/ with a check() the registry does not list
    would never run."""
    for path in sorted((ROOT / "hooks" / "checks").glob("*.py")):
        if re.search(r"^def check\(", path.read_text(encoding="utf-8"), re.M):
            hook = path.stem.replace("_", "-")
            assert hook in HOOKS, (
                f"{path.relative_to(ROOT)} defines check(): add "
                f"Check({hook!r}, ...) to hooks/checks/registry.py"
            )


def test_the_registry_builds_on_every_section_in_its_order():
    """sections.py holds the hook ids (the order findings sort by) and what each section
    makes oracle, for the contract; the registry is one entry on each, in that order."""
    assert tuple(check.reads for check in CHECKS) == SECTIONS
    assert [(c.id, c.section) for c in CHECKS] == [(s.hook, s.name) for s in SECTIONS]


def test_ids_and_sections_are_unique():
    assert len(set(HOOKS)) == len(HOOKS)
    sections = [check.section for check in CHECKS]
    assert len(set(sections)) == len(sections)


@pytest.mark.parametrize("check", CHECKS, ids=HOOKS)
def test_every_section_is_in_the_contract_schema(check):
    schema = json.loads((ROOT / "schemas" / "contract.schema.json").read_text("utf-8"))
    assert check.section in schema["properties"], (
        f"schemas/contract.schema.json has no property {check.section!r} for {check.id}"
    )


@pytest.mark.parametrize("check", CHECKS, ids=HOOKS)
def test_every_check_has_codes_and_explain_lists_them_under_its_id(check):
    assert check.codes, f"{check.id} has no codes in its registry entry"
    for doc in check.codes:
        assert doc.meaning and doc.fix and doc.example, doc.code
        assert CODES[doc.code].hook == check.id
        assert CODES[doc.code][1:] == doc[1:]


def test_every_code_is_defined_once():
    from_checks = [doc.code for check in CHECKS for doc in check.codes]
    every = from_checks + list(NOT_FROM_A_CHECK) + list(SCORE_CODES)
    assert len(every) == len(set(every)), sorted(c for c in every if every.count(c) > 1)
    assert list(CODES) == every  # the checks' codes in registry order, then the rest


def test_the_codes_raised_outside_the_checks_name_no_check_but_write_set():
    # write-set's rules on each commit of a range; everything else is the server's
    for code, info in NOT_FROM_A_CHECK.items():
        assert info.hook in ("write-set", "pre-receive"), code


ORDINALS = (
    "zeroth",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
)
# prose and code that count the checks go stale when one is added: none does
COUNTED_TEXTS = ("README.md", "CONTRIBUTING.md", "docs/**/*.md", "hooks/**/*.py", "testing/*.py")


def counting(n: int) -> re.Pattern[str]:
    """'six checks', 'all six', 'the other five', 'a seventh hook id', for ``n`` checks."""
    words = "|".join([NUMBERS[n], NUMBERS[n - 1], str(n), str(n - 1)])
    return re.compile(
        rf"\b(?:(?:{words})(?: small, independent)? (?:checks|hooks|hook ids)\b"
        rf"|all (?:{words})\b|other (?:{words})\b|{ORDINALS[n + 1]} hook)",
        re.I,
    )


def test_no_text_counts_the_checks():
    pattern = counting(len(CHECKS))
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for glob in COUNTED_TEXTS
        for path in sorted(ROOT.glob(glob))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, "say 'each check' or 'every check', or derive it:\n" + "\n".join(found)


def test_the_counting_pattern_finds_what_a_new_check_would_make_stale():
    pattern = counting(7)
    for stale in ("six small, independent hooks", "all six in one process", "the other six"):
        assert pattern.search(stale), stale
    assert pattern.search("A eighth hook id")
    for fine in ("every check", "six git processes", "two checks share", "all of them"):
        assert not pattern.search(fine), fine


# -- each check's sample -------------------------------------------------------------


def judged(repo: MemoryRepo, hook: str) -> Tuple[int, str, List[str]]:
    """The exit code, the check's note and its error findings as 'path: code'."""
    rc, out, err = repo.check(hook, now=oracle.NOW, fmt="json")
    assert err == "", err
    doc = json.loads(out)
    errors = [f"{f['path']}: {f['code']}" for f in doc["findings"] if f["severity"] == "error"]
    return rc, doc["checks"][hook]["note"], errors


@pytest.mark.parametrize("check", CHECKS, ids=HOOKS)
def test_every_check_passes_its_sample_and_rejects_the_samples_change(check):
    sample = check.sample()
    assert isinstance(sample, Sample), f"{check.module_name} has no SAMPLE = Sample(...)"
    assert check.section in sample.sections, f"{check.id}'s sample has no {check.section!r}"
    assert sample.finding.split(": ")[-1] in [doc.code for doc in check.codes]
    repo = MemoryRepo()
    repo.commit(samples.sample_tree([check]))
    rc, note, errors = judged(repo, check.id)
    # it passes with something to judge: a diff check, no change yet
    no_change = "no change: the index has the same files as HEAD"
    assert (rc, note, errors) == (0, no_change if check.needs_base else None, [])
    samples.stage_change(repo, samples.sample_change([check]))
    assert judged(repo, check.id) == (1, None, [sample.finding])


def test_the_tree_of_every_sample_passes_every_check_and_its_change_fails_each():
    repo = MemoryRepo()
    repo.commit(samples.sample_tree())
    rc, out, err = repo.check(*HOOKS, now=oracle.NOW)
    assert (rc, err) == (0, ""), out
    samples.stage_change(repo, samples.sample_change())
    for check in CHECKS:
        rc, _, errors = judged(repo, check.id)
        assert rc == 1 and check.sample().finding in errors, (check.id, errors)


@pytest.mark.parametrize("check", CHECKS, ids=HOOKS)
def test_every_checks_example_is_its_section_alone_marked_with_its_hook(check):
    example = check.sample().example
    assert set(yaml.safe_load(example)) == {check.section}
    first = example.split("\n", 1)[0]
    assert first.startswith(f"{check.section}:") and f"# {check.id}" in first
    # near miss: the next check's example is not this one's
    other = CHECKS[(CHECKS.index(check) + 1) % len(CHECKS)]
    assert set(yaml.safe_load(other.sample().example)) != {check.section}


def test_two_samples_that_give_one_section_give_it_alike():
    # flake-budget counts the files freeze-schema validates: one freeze section
    budget, freeze = registry.FLAKE_BUDGET.sample(), registry.FREEZE_SCHEMA.sample()
    assert budget.sections["freeze"] == freeze.sections["freeze"]
    other = Check(Section("x", "freeze"), question="?", codes=())
    odd = Sample({"freeze": []}, {}, {}, "-: x", "freeze: []\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Check, "sample", lambda self: odd if self.id == "x" else freeze)
        with pytest.raises(ValueError, match="x's sample gives the section 'freeze' otherwise"):
            samples.sample_sections([registry.FREEZE_SCHEMA, other])


# -- the judge runs the registry -------------------------------------------------------


class Files:
    """What the judge itself asks of a snapshot: its label, and whether it has
    the same files as another."""

    def __init__(self, label: str, files: frozenset = frozenset()) -> None:
        self.label = label
        self.files = files

    def same_files(self, other: Files) -> bool:
        return self.files == other.files


BASE = Files("HEAD")
CHANGED = Files("the index", frozenset({"src/a.py"}))


def contract(sections=ALL_SECTIONS, from_base: bool = True) -> Contract:
    return Contract(dict(sections, version=1), Snapshot.empty("HEAD"), from_base)


def without(section: str):
    return {name: value for name, value in ALL_SECTIONS.items() if name != section}


@pytest.fixture
def ran(monkeypatch) -> List[str]:
    """Every check replaced by one that records its run and finds one error."""
    calls: List[str] = []
    for check in CHECKS:

        def fake(contract, base, candidate, now, hook=check.id):
            calls.append(hook)
            return [Finding(hook, "fake", None, "found")]

        monkeypatch.setattr(check_module(check.id), "check", fake)
    return calls


def notes(results):
    return {r.hook: r.note for r in results}


def test_judge_runs_exactly_the_registrys_checks_in_its_order(ran):
    results = judge_mod.judge(contract(), BASE, CHANGED, NOW)
    assert ran == list(HOOKS)
    assert [r.hook for r in results] == list(HOOKS)
    assert all(r.note is None and r.errors == 1 for r in results)


def test_judge_runs_the_hooks_asked_for_in_the_registrys_order(ran):
    asked = list(reversed(HOOKS[1:]))
    results = judge_mod.judge(contract(), BASE, CHANGED, NOW, asked)
    assert ran == list(HOOKS[1:]) == [r.hook for r in results]


def test_a_check_added_to_the_registry_is_run_by_the_judge(monkeypatch):
    module = types.ModuleType("oracle_guard.checks.extra_check")
    module.check = lambda contract, base, candidate, now: [
        Finding("extra-check", "x", None, "found")
    ]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    extra = Check(
        Section("extra-check", "fixtures"), question="?", codes=(CodeDoc("x", "m", "f", "e"),)
    )
    monkeypatch.setattr(registry, "CHECKS", (extra,))
    [result] = judge_mod.judge(contract(), BASE, CHANGED, NOW)
    assert (result.hook, result.errors, result.note) == ("extra-check", 1, None)


def test_no_contract_is_a_note_for_every_check(ran):
    results = judge_mod.judge(None, BASE, CHANGED, NOW)
    assert ran == []
    assert set(notes(results).values()) == {
        "nothing to check: no .oracle-guard.yaml in base or candidate"
    }


@pytest.mark.parametrize(
    "check", [c for c in CHECKS if c.guards_without_section is None], ids=lambda c: c.id
)
def test_a_missing_section_is_a_note_and_the_check_does_not_run(ran, check):
    results = judge_mod.judge(contract(without(check.section)), BASE, CHANGED, NOW)
    assert check.id not in ran
    assert notes(results)[check.id] == (
        f"nothing to check: the contract has no '{check.section}' section"
    )
    # near miss: with the section, it runs
    ran.clear()
    results = judge_mod.judge(contract(), BASE, CHANGED, NOW, [check.id])
    assert ran == [check.id] and notes(results) == {check.id: None}


def test_write_set_runs_without_its_section_and_says_so(ran):
    results = judge_mod.judge(contract(without("write_set")), BASE, CHANGED, NOW, ["write-set"])
    assert ran == ["write-set"]
    assert notes(results) == {
        "write-set": "no 'write_set' section: only what the contract names is guarded"
    }
    # near miss: with the section, no note
    ran.clear()
    results = judge_mod.judge(contract(), BASE, CHANGED, NOW, ["write-set"])
    assert ran == ["write-set"] and notes(results) == {"write-set": None}


def test_only_write_set_guards_without_its_section():
    assert [c.id for c in CHECKS if c.guards_without_section] == ["write-set"]


def test_a_base_without_the_contract_is_a_note_for_the_diff_checks(ran):
    results = judge_mod.judge(contract(from_base=False), BASE, CHANGED, NOW)
    diff_checks = [c.id for c in CHECKS if c.needs_base]
    assert diff_checks and len(diff_checks) < len(CHECKS)  # some of each
    assert ran == [c.id for c in CHECKS if not c.needs_base]
    for hook in diff_checks:
        assert notes(results)[hook] == (
            "nothing to check: the base (HEAD) has no contract; this change introduces it"
        )
    # near miss: a base with the contract runs them
    ran.clear()
    judge_mod.judge(contract(from_base=True), BASE, CHANGED, NOW, diff_checks)
    assert ran == diff_checks


def test_a_diff_check_that_finds_nothing_in_no_change_says_so(monkeypatch):
    for check in CHECKS:
        monkeypatch.setattr(check_module(check.id), "check", lambda *args: [])
    same = judge_mod.judge(contract(), BASE, Files("the index"), NOW)
    assert {hook: note for hook, note in notes(same).items() if note} == {
        c.id: "no change: the index has the same files as HEAD" for c in CHECKS if c.needs_base
    }
    # near miss: changed files, no note
    assert set(notes(judge_mod.judge(contract(), BASE, CHANGED, NOW)).values()) == {None}


def test_a_check_that_exits_is_a_bug_not_a_pass(monkeypatch):
    def exits(*args):
        raise SystemExit(0)

    monkeypatch.setattr(check_module("fixture-lock"), "check", exits)
    with pytest.raises(RuntimeError, match=r"^fixture-lock tried to exit \(status 0\)$"):
        judge_mod.judge(contract(), BASE, CHANGED, NOW, ["fixture-lock"])


# -- what each check's section makes oracle ----------------------------------------

EVERY_SECTION = """\
version: 1
fixtures:
  - {lock: oracle/fixtures.lock.json, root: oracle/inputs, paths: ["oracle/inputs/**"]}
seeds:
  - {paths: ["seeds/*.json"], format: json-array}
freeze:
  - {paths: ["oracle/flake_budget.yaml"], schema: flake-budget}
  - {paths: ["quarantine/*.yaml"], schema: oracle/quarantine.schema.json}
budget:
  max_frozen: 3
  known_ids: ["seeds/*.json"]
write_set:
  allow_file: oracle/write_set.txt
authority:
  signers: .oracle-guard/allowed_signers
"""


def contract_of(text: str) -> Contract:
    from oracle_guard.contract import parse
    from oracle_guard.snapshot import MemorySnapshot

    return Contract(parse(text.encode()), MemorySnapshot({}, "rules"), from_base=True)


def test_each_checks_section_names_its_oracle_files_and_patterns_in_registry_order():
    contract = contract_of(EVERY_SECTION)
    assert contract.oracle_files() == [
        ".oracle-guard.yaml",
        "oracle/fixtures.lock.json",  # fixture-lock: its locks
        "oracle/quarantine.schema.json",  # freeze-schema: a schema kept in the repository
        "oracle/write_set.txt",  # write-set: its allow file
        ".oracle-guard/allowed_signers",
    ]
    assert contract.oracle_globs() == [
        "oracle/inputs/**",
        "seeds/*.json",
        "oracle/flake_budget.yaml",
        "quarantine/*.yaml",
        "seeds/*.json",  # flake-budget: the known ids
        ".gitattributes",
    ]


def test_a_contract_without_those_sections_names_only_itself():
    contract = contract_of("version: 1\nwrite_set:\n  allow: ['src/**']\n")
    assert contract.oracle_files() == [".oracle-guard.yaml"]
    assert contract.oracle_globs() == [".gitattributes"]
