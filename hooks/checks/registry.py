"""Every check, once: its hook id, the contract section it reads, how the judge
runs it, and the finding codes it emits. The order here is the canonical order
(of reports, of ``--only``, of the manifest).

A check is a module ``oracle_guard.checks.<id with underscores>`` with a pure
``check(contract, base, candidate, now)`` returning findings. It is imported
only when it runs, so a ``--only`` run imports one check.
"""

from __future__ import annotations

import datetime
import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Dict, List, NamedTuple, Optional, Tuple

from oracle_guard.checks.sample import Sample
from oracle_guard.sections import BUDGET, FIXTURES, FREEZE, SEEDS, TAMPER, Section
from oracle_guard.sections import WRITE_SET as WRITE_SET_SECTION

if TYPE_CHECKING:
    from oracle_guard.contract import Contract
    from oracle_guard.findings import Finding
    from oracle_guard.snapshot import Snapshot

CheckFunction = Callable[["Contract", "Snapshot", "Snapshot", datetime.datetime], List["Finding"]]


class CodeDoc(NamedTuple):
    """One finding code as 'oracle-guard explain' and the codes page of the docs give it."""

    code: str
    meaning: str
    fix: str
    example: str = ""  # a finding line as the check prints it


class Check(NamedTuple):  # not a dataclass: every hook run would import inspect
    reads: Section  # its hook id, the contract section it reads, what that makes oracle
    question: str  # what it answers: the manifest's description, the docs' checks table
    codes: Tuple[CodeDoc, ...]
    # compares the candidate with the base, so the base must have had the contract
    needs_base: bool = False
    # what it still guards when the contract has no section for it (None: nothing)
    guards_without_section: Optional[str] = None
    # a needs_base check whose module also has complete(contract, candidate): what
    # the candidate must hold by itself, judged when the change introduces the contract
    complete_when_introduced: bool = False

    @property
    def id(self) -> str:  # the hook id: --only, the manifest, Finding.hook
        return self.reads.hook

    @property
    def section(self) -> str:  # the contract section it reads
        return self.reads.name

    def completeness(self) -> Callable[[Contract, Snapshot], List[Finding]]:
        return importlib.import_module(self.module_name).complete

    @property
    def module_name(self) -> str:
        return "oracle_guard.checks." + self.id.replace("-", "_")

    def function(self) -> CheckFunction:
        return importlib.import_module(self.module_name).check

    def sample(self) -> Sample:
        """The module's ``SAMPLE``: its sections and files pass, its change does not."""
        sample: Sample = importlib.import_module(self.module_name).SAMPLE
        return sample


FIXTURE_LOCK = Check(
    FIXTURES,
    question="do the fixture files match their SHA-256 lock?",
    codes=(
        CodeDoc(
            "fixture-mismatch",
            "a fixture's SHA-256 differs from its lock entry",
            "restore the fixture (git restore --staged --worktree PATH before a commit, git "
            "checkout BASE -- PATH and a commit after); if the change is intended, an owner "
            "makes it: the fixture and its lock ('oracle-guard lock') in a commit of their own, "
            "signed with a key in the authority signers file (docs: how-to/edit-the-oracle.md)",
            "oracle/inputs/prices.json: fixture-mismatch: sha256 57c7463d1e73… does not match "
            "oracle/fixtures.lock.json (1bb382b9c535…)",
        ),
        CodeDoc(
            "fixture-unlocked",
            "a file under the fixture paths has no lock entry",
            "remove the file, or have a human run 'oracle-guard lock' to record it",
            "oracle/inputs/extra.json: fixture-unlocked: has no entry in oracle/fixtures.lock.json",
        ),
        CodeDoc(
            "fixture-missing",
            "a lock entry names a file that is absent or outside the fixture paths",
            "restore the file, or have a human run 'oracle-guard lock' to drop the entry",
            "oracle/fixtures.lock.json:3: fixture-missing: entry 'rates.csv' names no fixture "
            "file in the index",
        ),
        CodeDoc(
            "lock-invalid",
            "the lock file is absent, unparsable, or has a bad entry "
            "(path not normalized or outside the root, duplicate, digest not 64 lowercase hex)",
            "regenerate it with 'oracle-guard lock' (if the finding says lock cannot rewrite it, "
            "rename the file it names first); on a branch cut before the lock existed, rebase it "
            "onto the target instead",
            "oracle/fixtures.lock.json: lock-invalid: lock file is missing from the index",
        ),
        CodeDoc(
            "fixture-not-regular",
            "a symlink or submodule sits under the fixture paths",
            "replace it with a regular file; locks hash bytes, not link targets",
            "oracle/inputs/prices.json: fixture-not-regular: is a symlink (mode 120000), not a "
            "regular file",
        ),
    ),
)

SEED_APPEND_ONLY = Check(
    SEEDS,
    needs_base=True,
    complete_when_introduced=True,
    question="were seed corpora only appended to, never rewritten, reordered or deleted?",
    codes=(
        CodeDoc(
            "seed-removed",
            "a seed present in the base is gone (element, line or key)",
            "put the seed back: seeds are append-only (git checkout BASE -- PATH, then re-append)",
            "seeds/parse_header.json: seed-removed: element [2] 3 is gone: the candidate keeps 2 "
            "of the base's 3 seeds",
        ),
        CodeDoc(
            "seed-reordered",
            "an existing seed moved to another position",
            "restore the base order and append new seeds at the end",
            "seeds/parse_header.json:2: seed-reordered: element [0] moved: the base has 1 there, "
            "the candidate has 2",
        ),
        CodeDoc(
            "seed-rewritten",
            "an existing seed (or an immutable file) changed its value or type, or its mode "
            "(a promotion fills in only the entry's promote fields, from null)",
            "restore the base content; add a new seed instead of editing an old one",
            "seeds/parse_header.json:2: seed-rewritten: element [0] changed: 1 -> 1.0",
        ),
        CodeDoc(
            "seed-file-deleted",
            "a seed file of the base is missing from the candidate (a rename counts as a deletion)",
            "restore the file under its old name (git checkout BASE -- PATH)",
            "seeds/unicode_hyphen.json: seed-file-deleted: present in HEAD, missing from the "
            "index (renamed to seeds/unicode_hyphen_v2.json? a rename counts as a deletion)",
        ),
        CodeDoc(
            "seed-invalid",
            "a seed file does not parse strictly or has the wrong shape for its format",
            "fix the syntax; 'json-array' needs one JSON array, 'jsonl' one JSON value a line, "
            "'json-object' one JSON object",
            "oracle/corpus.jsonl:2: seed-invalid: line 2 is not one JSON value: expected a string "
            "key",
        ),
        CodeDoc(
            "oracle-incomplete",
            "a seeds entry matches no file, or a json-array/jsonl seed file holds no seeds",
            "give the entry its seeds: restore the seed files a change removed, or, where the "
            "contract names seed files that do not exist, correct the entry's paths in the "
            "contract or add the files: missing seeds are never a pass",
            '.oracle-guard.yaml: oracle-incomplete: seeds entry ["seeds/*.json"] matches no file '
            "in the index",
        ),
        CodeDoc(
            "record-invalid",
            "a new record (a jsonl line, a json-array element, an immutable file) fails the "
            "entry's records schema or lacks a field its rules need, or the lock it names is "
            "missing or not a JSON object",
            "fix the record at the reported line and JSON path ('oracle-guard schema NAME' "
            "prints a built-in records schema)",
            "oracle/corpus.jsonl:3: record-invalid: line 3: fails corpus-line: /expect: "
            "'flaky' is not one of ['fail', 'pass']",
        ),
        CodeDoc(
            "record-digest-mismatch",
            "a new record's declared hash is not the SHA-256 of its payload in the "
            "contract's digest form (default: compact JSON, sorted keys, UTF-8)",
            "recompute the hash from the payload ('oracle-guard seeds append --digest' writes "
            "it); a changed payload is a new record with a new id",
            'oracle/corpus.jsonl:3: record-digest-mismatch: line 3: payload_sha256 "c8f3a1b0…" '
            "is not the SHA-256 of 'payload' in the json-sorted-compact-utf8 form (2f6e…)",
        ),
        CodeDoc(
            "record-id-reused",
            "a new record's id is already held by a record of the set (any file of the base, "
            "or another new record)",
            "give the new record an id of its own; a changed case is a new case",
            'replays/2026-09-24_copy.json:2: record-id-reused: id "parse_header_a3f1" is '
            "already held by replays/2026-09-23T14-02Z_parse_header.json: a new record takes "
            "an id of its own",
        ),
        CodeDoc(
            "record-seed-mismatch",
            "a record's seed disagrees with its id's entry in the lock the entry names "
            "(seeds.lock), for a new record or an id the lock gains",
            "use the seed the lock gives the id, or a new id for a new seed",
            "replays/2026-09-24_retry.json:4: record-seed-mismatch: seed 7 disagrees with "
            'seeds.lock, which gives "retry_budget_9c2" the seed 1729',
        ),
    ),
)

FREEZE_SCHEMA = Check(
    FREEZE,
    question="is every freeze, quarantine and budget file well-formed against its JSON Schema?",
    codes=(
        CodeDoc(
            "freeze-invalid",
            "a freeze, quarantine or budget file does not parse strictly, fails "
            "its schema, or breaks a cross-field rule (duplicate ids, reason without an "
            "excluded id, pass_count + fail_count != runs); flake-budget reports the same file as "
            "'not counted'",
            "fix the file at the reported line and JSON path",
            "oracle/flake_budget.yaml:3: freeze-invalid: does not parse: anchor &entry is not "
            "allowed (column 5)",
        ),
    ),
)

FLAKE_BUDGET = Check(
    BUDGET,
    question="is every quarantined test owned, unexpired and within the cap?",
    codes=(
        CodeDoc(
            "budget-exceeded",
            "more entries are frozen than max_frozen allows (the smaller of the "
            "contract's and the file's own)",
            "fix a frozen test and have an owner run 'oracle-guard freeze remove ID'; raising the "
            "cap is a human's change to the base",
            ".oracle-guard.yaml: budget-exceeded: 4 entries frozen, budget.max_frozen in the "
            "contract allows 3",
        ),
        CodeDoc(
            "budget-no-owner",
            "a frozen entry has no owner",
            "name the owning team or person in the entry",
            "oracle/flake_budget.yaml:3: budget-no-owner: 'unicode_hyphen' has no owner",
        ),
        CodeDoc(
            "budget-no-expiry",
            "a frozen entry has no expiry date",
            "give the entry an expiry (a date or a date-time with offset)",
            "oracle/quarantine.json:2: budget-no-expiry: 'tests/test_api.py::test_timeout' has no "
            "expiry",
        ),
        CodeDoc(
            "budget-expired",
            "a frozen entry's expiry has passed (a date lasts through its day in UTC)",
            "fix the test and remove the entry ('oracle-guard freeze remove ID'); renewing "
            "('oracle-guard freeze renew ID --days N') is a human's decision",
            "freeze.json:3: budget-expired: 'parse_header' expired 2026-09-24",
        ),
        CodeDoc(
            "budget-too-far",
            "a frozen entry expires later than now + max_days",
            "shorten the expiry to at most max_days from now ('oracle-guard freeze renew ID' "
            "writes the longest allowed)",
            "oracle/flake_budget.yaml:3: budget-too-far: 'unicode_hyphen' expires 2026-12-31, "
            "beyond 14 days from now",
        ),
        CodeDoc(
            "budget-unknown-id",
            "a frozen id is not among the known ids (stems of known_ids files)",
            "use an existing property id; check for typos",
            "freeze.json:3: budget-unknown-id: 'parse_headr' is not a known id (stems of "
            "seeds/*.json)",
        ),
        CodeDoc(
            "budget-expiring",
            "warning: a frozen entry expires within warn_days",
            "plan the fix or ask the owner to renew ('oracle-guard freeze renew ID --days N')",
            "oracle/flake_budget.yaml:3: budget-expiring (warning): "
            "'tests/test_io.py::test_upload' expires 2026-09-27, within 3 days",
        ),
    ),
)

WRITE_SET = Check(
    WRITE_SET_SECTION,
    needs_base=True,
    guards_without_section="only what the contract names is guarded",
    question="did the change stay inside the allowed paths and out of the protected ones?",
    codes=(
        CodeDoc(
            "write-outside-set",
            "a changed path matches no 'allow' pattern or allow_file line",
            "drop the change to that path (git restore --staged PATH), or ask an owner to widen "
            "the write set in its own change",
            "Makefile: write-outside-set: matches no allowed pattern of the write set",
        ),
        CodeDoc(
            "write-denied",
            "a changed path is protected: it matches 'deny' (also ignoring letter "
            "case) or is an oracle file the contract names",
            "drop the change (git restore --staged PATH); oracle edits are made by an owner "
            "in a change of their own",
            "oracle/corpus.jsonl: write-denied: matches deny pattern 'oracle/**'",
        ),
    ),
)

TEST_TAMPER = Check(
    TAMPER,
    needs_base=True,
    question="did the change leave how the suite collects, runs and scores its tests alone?",
    codes=(
        CodeDoc(
            "skip-added",
            "the change adds a skip, xfail or rerun to test code: a pytest or unittest skip "
            "marker, a flaky/rerun marker, a skip, xfail or importorskip call, raise SkipTest, "
            "__test__ = False, an empty parameter set, or a doctest +SKIP directive",
            "make the test pass, or leave it failing; excluding a test is the owners' decision, "
            "recorded in the freeze file the scoring harness reads, never a skip in the test",
            "tests/test_pricing.py:12: skip-added: @pytest.mark.skip on test_discount: a "
            "skipped test scores as a pass",
        ),
        CodeDoc(
            "collection-changed",
            "the change adds a collection hook (pytest_collection_modifyitems, "
            "pytest_ignore_collect, ...), collect_ignore, a pytest_plugins entry, or loads, "
            "unregisters or blocks a plugin through the plugin manager",
            "drop it: which tests run is the owners' choice; test-tamper judges owners too, so "
            "one who wants the hook first lists its file in tamper.allow (rule "
            "collection-changed), in a contract change of its own",
            "tests/conftest.py:4: collection-changed: defines pytest_collection_modifyitems: "
            "it can deselect tests before they run",
        ),
        CodeDoc(
            "outcome-changed",
            "the change adds a hook that can change a test's outcome or the run's "
            "(pytest_runtest_*, pytest_report_teststatus, pytest_sessionfinish, ...), or "
            "assigns session.exitstatus or testsfailed, or replaces the function a collected "
            "test runs (item.obj)",
            "drop it; a reporting plugin an owner wants is first listed in tamper.allow (rule "
            "outcome-changed), in a contract change of its own",
            "tests/conftest.py:8: outcome-changed: defines pytest_runtest_makereport: it can "
            "turn a failure into a pass",
        ),
        CodeDoc(
            "process-exit",
            "test code the change adds exits the process: sys.exit, os._exit, os.kill, "
            "os.abort, exit(), quit(), pytest.exit or raise SystemExit",
            "remove the exit: the runner must report the tests' outcome; a test of exit "
            "codes runs the program in a subprocess, or an owner lists the file in "
            "tamper.allow (rule process-exit)",
            "tests/test_cli.py:3: process-exit: calls sys.exit at module level: the run would "
            "end with its status, not the tests'",
        ),
        CodeDoc(
            "oracle-patched",
            "test code the change adds patches the oracle: assigns to or setattr()s a name "
            "imported from the oracle's paths, monkeypatches or mocks it, rebinds a name "
            "imported from it, overrides builtins, or (in a conftest) replaces what time, "
            "random, datetime, uuid or secrets give every module",
            "patch the code under test, never the oracle that judges it",
            "tests/test_pricing.py:9: oracle-patched: monkeypatch.setattr on "
            "oracle.invariants.check in test_total, which the contract protects ('oracle/**')",
        ),
        CodeDoc(
            "module-shadowed",
            "a new module in the scoring tree has the name of one outside it (the oracle's, or "
            "the code under test's), which a test importing that name, with the tree's folder on "
            "sys.path, would get instead",
            "rename the module, or import it by its package (tests.helpers, not helpers)",
            "tests/oracle/invariants.py:1: module-shadowed: shadows oracle.invariants, the "
            "oracle's module, which the contract protects ('oracle/**'): with tests/ on "
            "sys.path, importing oracle.invariants gets this file",
        ),
        CodeDoc(
            "runner-options",
            "the change sets pytest options that deselect, ignore, disable plugins, fix or "
            "drop the random seed, or lower Hypothesis settings (pytest.ini, tox.ini, "
            "setup.cfg, pyproject.toml, pytest.toml, a conftest)",
            "drop the option; how the suite runs is the owners' choice: one who changes it "
            "first lists the file in tamper.allow (rule runner-options), in a contract change of "
            "its own",
            'pyproject.toml:12: runner-options: addopts adds -k "not discount": it deselects tests',
        ),
        CodeDoc(
            "non-hermetic",
            "test code the change adds in a hermetic path reads the wall clock, unseeded "
            "entropy (/dev/urandom among it) or the network (asyncio's connections among it)",
            "use the seam the finding names: a fake clock fixture, committed seeds "
            "(random.Random(SEED)), or a recorded transport",
            "properties/test_retry.py:7: non-hermetic: datetime.datetime.now reads the wall "
            "clock in test_backoff: take the time from a fake clock fixture",
        ),
        CodeDoc(
            "dynamic-code",
            "test code the change adds builds code at run time where this reading cannot "
            "follow: exec, eval, compile, getattr with a computed name on sys, os, builtins or "
            "pytest, or a module-level __getattr__",
            "write the call out: a name written in the source is judged, one computed at run "
            "time is not",
            "tests/conftest.py:5: dynamic-code: calls exec at module level: code made at run "
            "time cannot be judged",
        ),
        CodeDoc(
            "test-unparsable",
            "a changed file in the scoring tree cannot be judged: Python that does not parse, "
            "a pytest configuration that does not load, a file over limits.test_bytes, a "
            "symlink, a submodule, or compiled code",
            "commit the test as plain Python source that parses; the runner would fail on it "
            "anyway",
            "tests/test_io.py:4: test-unparsable: does not parse: invalid syntax (column 12)",
        ),
        CodeDoc(
            "startup-file",
            "the change adds or modifies, anywhere in the tree, a file the interpreter or pytest "
            "runs or loads at start-up from any folder on sys.path: sitecustomize.py, "
            "usercustomize.py, a .pth file, or a .dist-info or .egg-info folder's "
            "entry_points.txt (pytest11 plugins load from it)",
            "remove it: code under test never needs one; an installed package's metadata is "
            "built by the installer, never committed. An owner who does lists the path in "
            "tamper.allow (rule startup-file), in a contract change of its own",
            "src/sitecustomize.py:1: startup-file: sitecustomize.py runs at every interpreter "
            "start with its folder on sys.path: it can set PYTEST_ADDOPTS, patch modules or "
            "exit before a test runs",
        ),
        CodeDoc(
            "source-reaches-runner",
            "a Python file the change adds or modifies outside the scoring tree (the code under "
            "test) imports pytest, _pytest, pluggy or unittest's internals, walks the call "
            "stack (sys._getframe, inspect.stack, ...) or names PYTEST_CURRENT_TEST",
            "the code under test computes its answer without knowing it is tested; a pytest "
            "plugin the project ships is listed in tamper.allow (rule source-reaches-runner) "
            "by an owner, in a contract change of its own",
            "src/pricing.py:3: source-reaches-runner: imports _pytest.runner: code under test "
            "that reaches the test runner can change how its tests run or score",
        ),
        CodeDoc(
            "oracle-read",
            "a Python file the change adds or modifies outside the scoring tree names a path "
            "the contract protects, or one in the scoring tree, as a string",
            "compute the answer; never read the oracle's files or the tests from the code under "
            "test",
            "src/pricing.py:8: oracle-read: names 'tests/expected.json', which lies in the "
            "scoring tree (tamper.paths): code under test that reads the oracle or the tests "
            "can answer them instead of computing",
        ),
        CodeDoc(
            "constant-equality",
            "a class in a Python file the change adds or modifies outside the scoring tree has "
            "an __eq__ or __ne__ that returns a constant True or False",
            "compare the values: an object equal to everything passes every assertEqual",
            "src/pricing.py:12: constant-equality: Price.__eq__ returns True whatever it is "
            "compared with: an assertion of equality on it passes without checking anything",
        ),
        CodeDoc(
            "test-removed",
            "a test, helper or fixture the base holds under tamper.frozen_tests (or a conftest "
            "fixture its tests request) is gone from the candidate, and not moved unchanged "
            "to another file of the change",
            "put it back: existing tests are oracle; add a new test beside it instead. An "
            "owner who retires one does it in a change of their own, or lists the path in "
            "tamper.allow (rule test-removed)",
            "tests/test_pricing.py:12: test-removed: the test test_discount is gone: an "
            "existing test is oracle (tamper.frozen_tests); add a new test instead",
        ),
        CodeDoc(
            "test-changed",
            "a test, helper or fixture the base holds under tamper.frozen_tests (or a conftest "
            "fixture its tests request) has other code or decorators at the candidate, "
            "compared on its syntax (formatting and comments do not count)",
            "restore it as it was: an expected value or an assertion is the oracle's; add a "
            "new test for the new behaviour instead",
            "tests/test_pricing.py:12: test-changed: the test test_discount is changed: an "
            "existing test is oracle (tamper.frozen_tests); add a new test instead",
        ),
        CodeDoc(
            "frozen-skipped",
            "warning: a test the freeze files exclude is still collected, with a skip marker",
            "remove the marker: the freeze file is the record, and the scoring harness leaves "
            "frozen ids out of collection (an in-place skip is a signal others copy)",
            "tests/test_api.py:20: frozen-skipped (warning): 'tests/test_api.py::test_timeout' "
            "is frozen in oracle/quarantine.json, yet still collected with pytest.mark.skip: "
            "exclude it from collection instead",
        ),
    ),
)

CHECKS: Tuple[Check, ...] = (
    FIXTURE_LOCK,
    SEED_APPEND_ONLY,
    FREEZE_SCHEMA,
    FLAKE_BUDGET,
    WRITE_SET,
    TEST_TAMPER,
)
HOOKS: Tuple[str, ...] = tuple(check.id for check in CHECKS)  # sections.py's, in its order
BY_ID: Dict[str, Check] = {check.id: check for check in CHECKS}


def check_module(hook: str) -> ModuleType:
    """The module of the check ``hook``, imported now."""
    return importlib.import_module(BY_ID[hook].module_name)
