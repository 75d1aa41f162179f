"""The replay loop of a score: every record of a seeds entry with ``replay`` (a
corpus line, a replay case) is run on its own against the candidate's tree, in
parallel up to the machine's cores, each with the score's time limit, and judged
against what the record says it does. The records come from the target, as the
oracle does: a candidate cannot add a record that counts in its own score."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
)

from oracle_guard.checks import records as record_rules
from oracle_guard.errors import OracleGuardError
from oracle_guard.findings import Finding
from oracle_guard.parsing import strict_input, strict_json
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.scoring import session as sessions
from oracle_guard.snapshot import Snapshot

if TYPE_CHECKING:
    from oracle_guard.contract import Contract

HOOK = "score"
# the variables that carry a record to its run: (id, payload, seed)
DEFAULT_ENV = {
    "corpus-line": ("CORPUS_ID", "CORPUS_PAYLOAD", "CORPUS_SEED"),
    "replay-case": ("REPLAY_ID", "REPLAY_PAYLOAD", "REPLAY_SEED"),
}
EXPECTED_FORMS = (None, "pass", "fail")  # a replay case's ``expected`` the score compares
PASS, FAIL, ERRORED = "pass", "fail", "errored"
# names a record's variables may not take: the score's own environment decides them
RESERVED_PREFIXES = ("PYTHON", "PYTEST", "ORACLE_GUARD", "LC_")
RESERVED = ("PATH", "HOME", "TMPDIR", "LANG")


class ReplayError(OracleGuardError):
    """The target's records cannot be replayed (exit 2)."""


class Case(NamedTuple):
    kind: str  # corpus-line or replay-case
    ident: str
    path: str  # the record's file at the target
    line: Optional[int]  # its line, in a jsonl file
    value: Dict[str, Any]
    names: Tuple[str, str, str]  # the id, payload and seed variables

    @property
    def where(self) -> str:
        return f"{self.path} line {self.line}" if self.line is not None else self.path


class Outcome(NamedTuple):
    observed: str  # pass, fail or errored
    why: str  # for errored: what happened
    seconds: float
    exit_status: Optional[int]


def replaying(contract: Contract) -> bool:
    """Whether the contract replays any seeds entry."""
    return any("replay" in entry for entry in contract.section("seeds") or [])


def load(contract: Contract, target: Snapshot) -> List[Case]:
    """Every record of the target's replayed sets, in file order. A record that
    does not load or fails its rules at the target stops the score: what is
    replayed is never guessed."""
    cases: List[Case] = []
    limit = contract.limit("seed_bytes")
    for entry in contract.section("seeds") or []:
        if "replay" not in entry:
            continue
        shape = entry["records"]
        names = _names(shape, entry["replay"])
        rules = record_rules.Rules(entry, contract)
        for path in sorted(target.select(PatternSet(entry["paths"]))):
            for value, line in _values(target, path, entry["format"], limit):
                problems = rules.problems(value)
                if problems:
                    where = f"{path} line {line}" if line is not None else path
                    raise ReplayError(f"{where} (at {target.label}): {problems[0][1]}")
                cases.append(Case(shape, str(value["id"]), path, line, value, names))
    return cases


def _names(shape: str, replay: Dict[str, Any]) -> Tuple[str, str, str]:
    ident, payload, seed = DEFAULT_ENV[shape]
    names = (
        replay.get("id_env", ident),
        replay.get("payload_env", payload),
        replay.get("seed_env", seed),
    )
    for name in names:
        if name in RESERVED or name.startswith(RESERVED_PREFIXES):
            raise ReplayError(
                f"seeds: replay names the variable {name}, which the score's own "
                "environment sets: name another"
            )
    if len(set(names)) != 3:
        raise ReplayError(f"seeds: replay names one variable twice ({', '.join(names)})")
    return names


def _values(
    target: Snapshot, path: str, fmt: str, limit: int
) -> Iterator[Tuple[Any, Optional[int]]]:
    """(record, line) of one file: each non-blank line of jsonl, each element of a
    json-array, the whole file of an immutable set."""
    data = target.read(path, limit)
    try:
        if fmt == "jsonl":
            for number, raw in enumerate(data.split(b"\n"), 1):
                if raw.strip():
                    yield strict_json.load_json(raw).value, number
            return
        value = strict_json.load_json(data).value
    except strict_input.LoadError as exc:
        raise ReplayError(f"{path}: not JSON at the target ({exc}): nothing is replayed") from None
    if fmt == "json-array":
        if not isinstance(value, list):
            raise ReplayError(f"{path}: not a JSON array at the target: nothing is replayed")
        for element in value:
            yield element, None
    else:
        yield value, None


def _names_test(nodeid: str, test: str) -> bool:
    """A node id names a test, or a module or class of tests."""
    return nodeid == test or nodeid.startswith((test + "::", test + "["))


def excluded_by(case: Case, frozen: Sequence[str]) -> Optional[str]:
    """The frozen id that leaves ``case`` out, or None: its own id, its test, or a
    test its pytest command names."""
    named = [case.ident]
    if case.kind == "corpus-line":
        named.append(case.value["test"])
    elif _pytest_arguments(case.value["command"]) is not None:
        named += [a for a in case.value["command"] if "::" in a or a.endswith(".py")]
    for ident in frozen:
        if ident and any(_names_test(name, ident) for name in named):
            return ident
    return None


def _pytest_arguments(command: Sequence[str]) -> Optional[List[str]]:
    """The arguments of a pytest command (``pytest ...``, ``python -m pytest ...``),
    or None for any other program."""
    program = os.path.basename(command[0])
    if program == "pytest":
        return list(command[1:])
    if program in ("python", "python3") and list(command[1:3]) == ["-m", "pytest"]:
        return list(command[3:])
    return None


class Replayer(NamedTuple):
    """What every replay of one score shares."""

    python: str
    tree: str
    config: Optional[str]
    folders: Dict[str, str]
    records: str  # the folder the plugin's record files go in
    settings: Dict[str, Any]  # the oracle session's: frozen ids, Hypothesis
    seed: int  # the pinned seed
    timeout: float


def run_one(replayer: Replayer, number: int, case: Case) -> Outcome:
    """One record's run, and what it observed."""
    record = os.path.join(replayer.records, f"replay-{number}.jsonl")
    ident_env, payload_env, seed_env = case.names
    seed = replayer.seed if case.kind == "corpus-line" else case.value["seed"]
    extra = {
        ident_env: case.ident,
        payload_env: record_rules.canonical(case.value.get("payload")).decode("utf-8"),
        seed_env: str(seed),
    }
    settings = {**replayer.settings, "seed": seed, "record": record}
    env = {**sessions.environment(replayer.folders, settings, seed), **extra}
    base = sessions.pytest_command(
        replayer.python, replayer.tree, replayer.config, replayer.folders
    )
    if case.kind == "corpus-line":
        command = [*base, "-q", case.value["test"]]
        wanted: Optional[str] = case.value["test"]
    else:
        arguments = _pytest_arguments(case.value["command"])
        wanted = None
        if arguments is not None:
            command = [*base, *arguments]
        else:
            program, *rest = case.value["command"]
            command = [replayer.python if program in ("python", "python3") else program, *rest]
    try:
        ran = sessions.execute(command, replayer.tree, env, record, replayer.timeout)
    except OSError as exc:  # the program is not there, or cannot run
        return Outcome(ERRORED, f"{command[0]!r} did not start: {exc}", 0.0, None)
    if ran.returncode is None:
        why = f"it ran past score.timeout ({replayer.timeout:g} s) and was stopped"
        return Outcome(ERRORED, why, ran.seconds, None)
    if case.kind == "corpus-line" or _pytest_arguments(case.value["command"]) is not None:
        observed, why = _from_plugin(ran, wanted)
    else:
        observed, why = _from_status(ran.returncode)
    return Outcome(observed, why, ran.seconds, ran.returncode)


def _from_status(status: int) -> Tuple[str, str]:
    if status == 0:
        return PASS, ""
    if status == 1:
        return FAIL, ""
    if status < 0:
        return ERRORED, f"it was killed by signal {-status}"
    return ERRORED, f"it exited with status {status}, which is neither a pass (0) nor a fail (1)"


def _from_plugin(ran: sessions.Session, test: Optional[str]) -> Tuple[str, str]:
    """A pytest replay's result, from what the plugin recorded: every test it ran
    passed (pass), one failed in its call (fail), or anything else (errored); the
    exit status must say the same."""
    if not ran.ended:
        return ERRORED, f"pytest exited with status {ran.returncode} before its session ended"
    if ran.of("frozen-collected"):
        return ERRORED, "a frozen test was still collected, so the session was refused"
    errors = ran.of("collect-error")
    if errors:
        return ERRORED, f"collecting {errors[0].get('nodeid') or 'it'} failed: " + str(
            errors[0].get("message")
        )
    tests = [t for t in ran.of("test") if test is None or _names_test(t.get("nodeid", ""), test)]
    if not tests:
        what = test or "the command's tests"
        return ERRORED, f"{what} was not collected, so nothing was replayed"
    outcomes = {t.get("outcome") for t in tests}
    odd = outcomes - {"passed", "failed"}
    if odd:
        first = next(t for t in tests if t.get("outcome") in odd)
        return (
            ERRORED,
            f"{first.get('nodeid')} was {first.get('outcome')}, neither passed nor failed",
        )
    observed = FAIL if "failed" in outcomes else PASS
    status = 1 if observed == FAIL else 0
    if ran.returncode != status:
        return ERRORED, f"pytest exited with status {ran.returncode}, but what ran says {status}"
    return observed, ""


def replay_all(replayer: Replayer, cases: Sequence[Case]) -> List[Outcome]:
    """Every case, in parallel up to the machine's cores; results in case order."""
    if not cases:
        return []
    os.makedirs(replayer.records, exist_ok=True)
    workers = max(1, min(len(cases), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda pair: run_one(replayer, *pair), enumerate(cases)))


def verdict(case: Case, outcome: Outcome) -> Tuple[Optional[str], str]:
    """(code or None when the record holds, the message)."""
    what = f"{case.kind} {case.ident!r}"
    if outcome.observed == ERRORED:
        return "replay-errored", f"{what} neither passed nor failed: {outcome.why}"
    if case.kind == "corpus-line":
        expect = case.value["expect"]
        test = case.value["test"]
        if expect == FAIL and outcome.observed == PASS:
            return (
                "example-lost",
                f"{what} (expect: fail) passes {test}: the failing example no longer fails",
            )
        if expect == PASS and outcome.observed == FAIL:
            return (
                "example-regressed",
                f"{what} (expect: pass) fails {test}: a known-good example regressed",
            )
        return None, ""
    expected = case.value["expected"]
    if expected not in EXPECTED_FORMS:
        return (
            "replay-errored",
            f"{what}: expected {record_rules.canonical(expected).decode('utf-8')[:60]} is none "
            'of null, "pass" and "fail", so the score cannot compare it',
        )
    if expected is not None and expected != outcome.observed:
        return (
            "replay-mismatch",
            f"{what} was expected to {expected} and its command's result was a {outcome.observed}",
        )
    return None, ""


class Judged(NamedTuple):
    findings: List[Finding]
    replays: List[Dict[str, Any]]  # each record's run, for the score's record
    queues: Dict[str, Any]  # captured, generalized, time_boxed


def judge(
    cases: Sequence[Case],
    run: Callable[[Sequence[Case]], List[Outcome]],
    frozen: Sequence[str],
    frozen_entries: Sequence[Dict[str, Any]],
    tests: Sequence[Dict[str, Any]],
) -> Judged:
    """Replay the cases no frozen id excludes, and sort what ran into the queues.
    ``tests``: the oracle session's test records (property tests among them)."""
    left_out: Dict[str, List[str]] = {}
    kept: List[Case] = []
    for case in cases:
        by = excluded_by(case, frozen)
        if by is None:
            kept.append(case)
        else:
            left_out.setdefault(by, []).append(case.ident)
    outcomes = run(kept)
    findings: List[Finding] = []
    replays: List[Dict[str, Any]] = []
    captured: List[str] = []
    broken_tests = set()
    for case, outcome in zip(kept, outcomes):
        code, message = verdict(case, outcome)
        if code is None:
            captured.append(case.ident)
        else:
            findings.append(Finding(HOOK, code, case.path, message, case.line))
            if case.kind == "corpus-line":
                broken_tests.add(case.value["test"])
        replays.append(
            {
                "id": case.ident,
                "kind": case.kind,
                "path": case.path,
                "line": case.line,
                "observed": outcome.observed,
                "verdict": code or "holds",
                "exit_status": outcome.exit_status,
                "seconds": round(outcome.seconds, 3),
            }
        )
    corpus_tests = {c.value["test"] for c in kept if c.kind == "corpus-line"}
    generalized = sorted(
        t["nodeid"]
        for t in tests
        if t.get("outcome") == "passed"
        and (
            (t.get("declared") or {}).get("property")
            or any(_names_test(t["nodeid"], test) for test in corpus_tests)
        )
        and not any(_names_test(t["nodeid"], test) for test in broken_tests)
    )
    time_boxed = [
        {
            "id": entry["id"],
            "owner": entry["owner"],
            "expires": entry["expires"],
            "path": entry["path"],
            "excludes": left_out.get(entry["id"], []),
        }
        for entry in frozen_entries
        if not entry["expired"]
    ]
    queues = {"captured": captured, "generalized": generalized, "time_boxed": time_boxed}
    return Judged(findings, replays, queues)
