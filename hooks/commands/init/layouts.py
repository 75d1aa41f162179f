"""The four layouts init knows: what gives each away in a repository, and the
contract each gets, with a section only where its files exist (and test-tamper's,
which judges every conftest.py and pytest configuration file, always)."""

from __future__ import annotations

import copy
import os
import re
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from oracle_guard import contract as contract_mod
from oracle_guard.commands.init.files import (
    PRE_COMMIT_CONFIG,
    PRE_COMMIT_YML,
    PREK_CONFIG,
    SCHEMA_DIR,
)
from oracle_guard.contract import Contract
from oracle_guard.errors import InitError
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.snapshot import Snapshot

LAYOUTS = ("harness", "merge-contract", "oracle-dir", "pytest", "replay-queue")
# The editor schemas, and the hook runners' configs at any depth (no slash: prek reads
# nested ones in a workspace), since a change that drops the hooks from one skips them.
ALWAYS_DENIED = (SCHEMA_DIR + "/**", PRE_COMMIT_CONFIG, PRE_COMMIT_YML, PREK_CONFIG)
# CI configuration, denied whether or not it exists yet: a patch that edits (or adds) a
# workflow can skip the check. Anchored: GitLab reads the root's .gitlab-ci.yml, and a
# pattern without a folder would list the whole tree.
CI_DENIED = (".github/workflows/**", "/.gitlab-ci.yml")
# The write set's allow patterns of the example contracts (examples/*/.oracle-guard.yaml);
# init proposes those that match something in the repository.
EXAMPLE_ALLOW: Dict[str, Tuple[str, ...]] = {
    "harness": ("src/**", "tests/**", "README.md"),
    "oracle-dir": ("src/**", "tests/**"),
    "pytest": ("src/**", "tests/**", "test/**", "testing/**"),
    "replay-queue": ("src/**", "tests/**", "quarantine/proposed/**"),
}
DEFAULT_MAX_FROZEN = 3
# test-tamper's scoring tree: the test folders (and the root conftest.py) that hold a
# file. Proposed for every layout: the section is what makes a conftest.py or a pytest
# option a patch adds anywhere a finding, so without a test folder it still names
# tests/**, where pytest users put them (a pattern that matches nothing judges nothing).
TEST_TREES = ("tests/**", "test/**", "testing/**", "properties/**", "/conftest.py")
DEFAULT_TEST_TREE = "tests/**"
# testing/ is a test tree only when it holds a test (a project's test helpers live
# there too); the others when they hold any file
TEST_TREE_SIGNS = {
    "testing/**": ("/testing/**/test_*.py", "/testing/**/*_test.py", "/testing/**/conftest.py")
}
# The folders of an ordinary pytest project whose files are data its tests read: in
# tests/ (or test/, testing/), or at the root.
TEST_FOLDERS = ("tests", "test", "testing")
DATA_FOLDERS = ("fixtures", "data", "seeds")
# Root folders that are never the project's source, even with an __init__.py.
NOT_SOURCE = set(TEST_FOLDERS) | {"docs", "doc", "examples", "benchmarks", "scripts", "properties"}
# Where ambient non-determinism is a finding: the property tests, when there are some.
HERMETIC = ("properties/**",)

# What gives each layout away: gitignore-style patterns over the repository's paths.
SIGNALS: Dict[str, Tuple[str, ...]] = {
    "harness": ("/seeds/*.json", "/fixtures/", "/freeze.json"),
    "merge-contract": (
        "/oracle/inputs/",
        "/oracle/flake_budget.yaml",
        "/oracle/flake_budget.yml",
        "/oracle/write_set.txt",
        "/oracle/*.lock.json",
    ),
    "oracle-dir": (
        "/oracle/*.jsonl",
        "/oracle/quarantine.json",
        "/oracle/seeds.toml",
        "/oracle/*.sha256",
    ),
    "pytest": tuple(f"/{t}/{d}/" for t in TEST_FOLDERS for d in DATA_FOLDERS),
    "replay-queue": ("/replays/*.json", "/seeds.lock", "/quarantine/"),
}
# An ordinary pytest project without data folders: recognised as the pytest layout
# when no layout's signal is there, from its tests and its pytest configuration.
PYTEST_SIGNS = (
    "/conftest.py",
    "/pytest.ini",
    "/tests/**/test_*.py",
    "/tests/**/*_test.py",
    "/test/**/test_*.py",
    "/testing/**/test_*.py",
)
# The locks the layouts name: a lock is never one of the fixtures it locks.
LOCKS = (
    "fixtures/SHA256SUMS",
    "fixtures.lock.json",
    "oracle/fixtures.lock.json",
    "oracle/SHA256SUMS",
    *(f"{t}/{d}/SHA256SUMS" for t in TEST_FOLDERS for d in DATA_FOLDERS),
)


# -- recognising the layout ------------------------------------------------
class Paths:
    """The repository's files as init sees them: the index plus what is not staged yet."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.all = sorted(set(paths))

    def __contains__(self, path: str) -> bool:
        return path in self.all

    def match(self, pattern: str) -> List[str]:
        return PatternSet([pattern]).select(self.all)

    def first(self, candidates: Sequence[str]) -> Optional[str]:
        return next((c for c in candidates if c in self), None)


def recognise(paths: Paths) -> Tuple[Optional[str], Dict[str, List[Tuple[str, int]]]]:
    """The layout with the most signals present, or None when none or a tie;
    and, for each layout, the signals found with their number of files."""
    evidence = {}
    for layout, signals in SIGNALS.items():
        found = [(s.lstrip("/"), len(signal_files(paths, s))) for s in signals]
        evidence[layout] = [(s, n) for s, n in found if n]
    best = max(len(found) for found in evidence.values())
    leaders = [layout for layout, found in evidence.items() if len(found) == best]
    if best == 0:
        signs = [(s.lstrip("/"), len(paths.match(s))) for s in PYTEST_SIGNS]
        evidence["pytest"] = [(s, n) for s, n in signs if n]
        return ("pytest" if evidence["pytest"] else None), evidence
    if len(leaders) > 1:
        return None, evidence
    return leaders[0], evidence


def signal_files(paths: Paths, signal: str) -> List[str]:
    """The files that make up a signal; a folder's lock is not one of its fixtures."""
    files = paths.match(signal)
    return [p for p in files if p not in LOCKS] if signal.endswith("/") else files


def describe(found: List[Tuple[str, int]]) -> str:
    return ", ".join(
        f"{s} ({n} file{'s' if n != 1 else ''})"
        if s.endswith(("/", "*.json", "*.jsonl", "*.lock.json", "*.sha256", "*.py"))
        else s
        for s, n in found
    )


def choose_layout(name: Optional[str], paths: Paths) -> Tuple[str, List[Tuple[str, int]]]:
    recognised, evidence = recognise(paths)
    if name is not None:
        if name not in LAYOUTS:
            raise InitError(f"unknown layout {name!r}; choose one of {', '.join(LAYOUTS)}")
        return name, evidence[name]
    if recognised is None:
        found = {layout: e for layout, e in evidence.items() if e}
        if found:
            what = "; ".join(f"{layout}: {describe(e)}" for layout, e in found.items())
            raise InitError(
                f"the repository matches several layouts equally ({what}); "
                f"pass --layout NAME, one of {', '.join(LAYOUTS)}"
            )
        raise InitError(
            "no known layout recognised (none of seeds/, fixtures/, freeze.json, oracle/, "
            "replays/, seeds.lock, quarantine/, tests/fixtures/, tests/data/, tests/seeds/ "
            "holds a tracked or new file, and there is no test nor conftest.py); pass --layout "
            f"NAME, one of {', '.join(LAYOUTS)} (docs: reference/examples.md), or write the "
            "contract by hand"
        )
    return recognised, evidence[recognised]


# -- proposing a contract --------------------------------------------------
def as_pattern(path: str) -> str:
    """A pattern for exactly this path, written plainly when that is unambiguous."""
    if "/" in path.rstrip("/") and not re.search(r"[*?\[\\!]", path):
        return path
    return contract_mod.literal_pattern(path)


def _harness(paths: Paths, data: Dict[str, Any]) -> List[str]:
    lock = paths.first(["fixtures/SHA256SUMS", "fixtures.lock.json"]) or "fixtures/SHA256SUMS"
    if [p for p in paths.match("/fixtures/") if p != lock]:
        data["fixtures"] = [{"lock": lock, "root": "fixtures", "paths": ["fixtures/**"]}]
    seeds: List[Dict[str, Any]] = []
    if paths.match("/seeds/*.json"):
        seeds.append({"paths": ["seeds/*.json"], "format": "json-array"})
    if "seeds/corpus.jsonl" in paths:  # known inputs, replayed one by one
        seeds.append(
            {
                "paths": ["seeds/corpus.jsonl"],
                "format": "jsonl",
                "records": "corpus-line",
                "replay": {},
            }
        )
    if seeds:
        data["seeds"] = seeds
    if "freeze.json" in paths:
        data["freeze"] = [{"paths": ["/freeze.json"], "schema": "freeze"}]
    return []


def _merge_contract(paths: Paths, data: Dict[str, Any]) -> List[str]:
    lock = "oracle/fixtures.lock.json"
    if [p for p in paths.match("/oracle/inputs/") if p != lock]:
        data["fixtures"] = [{"lock": lock, "root": "oracle/inputs", "paths": ["oracle/inputs/**"]}]
    if paths.match("/oracle/replays/*.json"):  # captured cases, replayed one by one
        data["seeds"] = [
            {
                "paths": ["oracle/replays/*.json"],
                "format": "immutable",
                "records": "replay-case",
                "promote": list(REPLAY_PROMOTE),
                "replay": {},
            }
        ]
    budget_file = paths.first(["oracle/flake_budget.yaml", "oracle/flake_budget.yml"])
    if budget_file:
        data["freeze"] = [{"paths": [budget_file], "schema": "flake-budget"}]
    return ["oracle/**"]


# The layouts' record rules (checks/records.py): what each new record must be.
CORPUS_RECORDS = {
    "records": "corpus-line",
    "digest": {"field": "payload_sha256", "of": "payload", "form": "json-sorted-compact-utf8"},
    "replay": {},  # oracle-guard score replays each record (scoring/replay.py)
}
REPLAY_RECORDS = {
    "records": "replay-case",
    "digest": {"field": "input_sha256", "of": "payload"},
    "replay": {},
}
REPLAY_PROMOTE = ["expected", "promoted_to"]


def _oracle_dir(paths: Paths, data: Dict[str, Any]) -> List[str]:
    corpora = paths.match("/oracle/*.jsonl")
    if len(corpora) == 1:  # one corpus: locked by the single digest beside it
        pattern = as_pattern(corpora[0])
        data["fixtures"] = [{"lock": corpora[0][: -len(".jsonl")] + ".sha256", "paths": [pattern]}]
        data["seeds"] = [{"paths": [pattern], "format": "jsonl", **CORPUS_RECORDS}]
    elif corpora:
        data["fixtures"] = [
            {"lock": "oracle/SHA256SUMS", "root": "oracle", "paths": ["oracle/*.jsonl"]}
        ]
        data["seeds"] = [{"paths": ["oracle/*.jsonl"], "format": "jsonl", **CORPUS_RECORDS}]
    if "oracle/quarantine.json" in paths:
        data["freeze"] = [{"paths": ["oracle/quarantine.json"], "schema": "quarantine-list"}]
    return ["oracle/**"]


def _replay_queue(paths: Paths, data: Dict[str, Any]) -> List[str]:
    seeds = []
    if paths.match("/replays/*.json"):
        replays: Dict[str, Any] = {"paths": ["replays/*.json"], "format": "immutable"}
        replays.update(REPLAY_RECORDS)
        if "seeds.lock" in paths:
            replays["lock"] = "seeds.lock"
        replays["promote"] = list(REPLAY_PROMOTE)
        seeds.append(replays)
    if "seeds.lock" in paths:
        seeds.append({"paths": ["/seeds.lock"], "format": "json-object"})
    if seeds:
        data["seeds"] = seeds
    if paths.match("/quarantine/"):
        data["freeze"] = [{"paths": ["quarantine/active/*.yaml"], "schema": "quarantine-entry"}]
    return ["quarantine/active/**"]


def data_folders(paths: Paths) -> List[str]:
    """The pytest data folders (tests/fixtures, testing/data, ...) that hold a file
    besides their lock."""
    return [
        f"{t}/{d}" for t in TEST_FOLDERS for d in DATA_FOLDERS if signal_files(paths, f"/{t}/{d}/")
    ]


def _pytest(paths: Paths, data: Dict[str, Any]) -> List[str]:
    """Each fixtures/ or data/ folder locked; a seeds/ folder's JSON Lines files grow
    by appending, its other files by adding files (a JSON file may be no array)."""
    fixtures, seeds = [], []
    for folder in data_folders(paths):
        if not folder.endswith("/seeds"):
            lock = f"{folder}/SHA256SUMS"
            fixtures.append({"lock": lock, "root": folder, "paths": [f"{folder}/**"]})
            continue
        files = [p for p in paths.match(f"/{folder}/") if p not in LOCKS]
        jsonl = [p for p in files if p.endswith(".jsonl")]
        if jsonl:
            seeds.append({"paths": [f"{folder}/**/*.jsonl"], "format": "jsonl"})
        others = [p for p in files if not p.endswith(".jsonl")]
        patterns = sorted(
            {f"{folder}/**/*{os.path.splitext(p)[1]}" for p in others if os.path.splitext(p)[1]}
        ) + [as_pattern(p) for p in others if not os.path.splitext(p)[1]]
        if patterns:
            seeds.append({"paths": patterns, "format": "immutable"})
    if fixtures:
        data["fixtures"] = fixtures
    if seeds:
        data["seeds"] = seeds
    return []


# Each fills in the sections whose files exist and returns the layout's own deny patterns.
PROPOSERS = {
    "harness": _harness,
    "merge-contract": _merge_contract,
    "oracle-dir": _oracle_dir,
    "pytest": _pytest,
    "replay-queue": _replay_queue,
}


def propose(layout: str, paths: Paths, allow: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """The contract's data for ``layout``; a section only where its files exist, and
    ``tamper`` always. The write set allows ``allow`` (--allow), else the example's
    patterns that match a path."""
    data: Dict[str, Any] = {"version": 1}
    deny = PROPOSERS[layout](paths, data)
    write_set: Dict[str, Any] = {}
    if allow is None:
        allow = proposed_allow(layout, paths)[0]
    if allow:
        write_set["allow"] = list(dict.fromkeys(allow))
    if layout == "merge-contract" and "oracle/write_set.txt" in paths:
        write_set["allow_file"] = "oracle/write_set.txt"
    write_set["deny"] = deny + list(CI_DENIED) + list(ALWAYS_DENIED)
    data["write_set"] = write_set
    data["tamper"] = proposed_tamper(paths)
    return data


def proposed_tamper(paths: Paths) -> Dict[str, Any]:
    """test-tamper's section: the test trees that hold a file (else tests/**), the
    property tests as hermetic where there are some, and the test folders found as
    frozen_tests."""
    section: Dict[str, Any] = {"paths": test_trees(paths)}
    if not section["paths"]:
        section["paths"] = [DEFAULT_TEST_TREE]
    hermetic = [p for p in HERMETIC if paths.match(p)]
    if hermetic:
        section["hermetic"] = hermetic
    # the test folders init found: their existing tests are oracle, new ones may be added
    frozen = [p for p in test_trees(paths) if p.endswith("/**")]
    if frozen:
        section["frozen_tests"] = frozen
    return section


def test_trees(paths: Paths) -> List[str]:
    """The test trees that hold a file (testing/: a test)."""
    return [
        p for p in TEST_TREES if any(paths.match(sign) for sign in TEST_TREE_SIGNS.get(p, (p,)))
    ]


def missing_tests_note(paths: Paths) -> List[str]:
    """A note when tamper.paths names no test, since none is where init looked."""
    if test_trees(paths):
        return []
    return [
        f"tamper.paths is {DEFAULT_TEST_TREE}, though no test is there yet (nor in "
        f"{', '.join(p.lstrip('/') for p in TEST_TREES[1:])}): set it to where your tests "
        "live; every conftest.py and pytest configuration file is judged wherever it is"
    ]


def proposed_allow(layout: str, paths: Paths) -> Tuple[List[str], List[str]]:
    """The example's allow patterns that match a path here, and those left out."""
    example = EXAMPLE_ALLOW.get(layout, ())
    kept = [p for p in example if paths.match(p)]
    if layout == "pytest" or example:  # the source a change edits: src/ and root packages
        kept += [f"{name}/**" for name in root_packages(paths) if f"{name}/**" not in kept]
    # the pytest layout names the three test folders a project may use: one is enough
    left_out = [p for p in example if p not in kept and not p.startswith(("test/", "testing/"))]
    return kept, left_out


def root_packages(paths: Paths) -> List[str]:
    """The root folders with an __init__.py (httpx/, rich/): a project's source when
    it has no src/ folder; never a test or docs folder."""
    return [
        p.split("/")[0]
        for p in paths.match("/*/__init__.py")
        if p.split("/")[0] not in NOT_SOURCE and not p.startswith(".")
    ]


def unguarded_data(data: Dict[str, Any], paths: Paths, layout: str) -> List[str]:
    """A warning for each data folder (fixtures/, data/, seeds/ at the root or in a
    test folder) with files the contract leaves writable: no section names them, and
    write-set does not deny them. It names the layout that guards the folder, when
    that is another one."""

    probe = contract_mod.Contract(data, Snapshot.empty(), from_base=False)
    guarded = PatternSet(probe.oracle_globs() + data["write_set"]["deny"])
    named = set(probe.oracle_files())
    warnings = []
    folders = [d for d in DATA_FOLDERS if signal_files(paths, f"/{d}/")] + data_folders(paths)
    for folder in folders:
        files = signal_files(paths, f"/{folder}/")
        left = [p for p in files if p not in named and not guarded.matches(p)]
        if not left:
            continue
        guards = "pytest" if "/" in folder else {"fixtures": "harness"}.get(folder)
        rerun = f", or rerun init with --layout {guards}" if guards and guards != layout else ""
        warnings.append(
            f"{folder}/ holds {len(left)} file{'s' if len(left) != 1 else ''} the contract "
            "leaves writable (no fixtures or seeds section names "
            f"{'it' if len(left) == 1 else 'them'}): add a section for {folder}/{rerun}"
        )
    return warnings


def add_budget(data: Dict[str, Any], layout: str, paths: Paths, index: Snapshot) -> List[str]:
    """Put a ``budget`` before ``write_set`` and ``tamper`` when something can be
    frozen: a cap no lower than what is frozen today, and ``known_ids`` where the
    frozen ids are seed-file stems (the harness layout). Returns notes for the user."""
    if "freeze" not in data:
        return []
    # deferred: 3 ms to import, only for add_budget()
    from oracle_guard.checks import freeze_schema

    probe = Contract(copy.deepcopy(data), index, from_base=False)
    state = freeze_schema.load(probe, index)
    frozen = len(state.entries)
    budget: Dict[str, Any] = {
        "max_frozen": max(DEFAULT_MAX_FROZEN, frozen),
        "max_days": 14,
        "warn_days": 3,
    }
    notes = []
    if frozen > DEFAULT_MAX_FROZEN:
        notes.append(
            f"{frozen} entries are frozen today, so max_frozen is {frozen}: "
            "lower it as they are fixed"
        )
    if layout == "harness" and "seeds" in data:
        stems = {os.path.splitext(os.path.basename(p))[0] for p in paths.match("/seeds/*.json")}
        if all(entry.id in stems for entry in state.entries):
            budget["known_ids"] = ["seeds/*.json"]
        else:
            notes.append("known_ids is not set: some frozen ids are not seed-file stems")
    after = {key: data.pop(key) for key in ("write_set", "tamper") if key in data}
    data["budget"] = budget
    data.update(after)
    return notes
