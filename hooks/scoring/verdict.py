"""What a score's sessions recorded, judged: each rule a finding code of its own
(checks/codes.py, hook ``score``). The score passes only when every scored test
passed (or was skipped or xfailed by the target's own test code) and no rule fired."""

from __future__ import annotations

import os
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Set

from oracle_guard.findings import Finding
from oracle_guard.scoring.session import Session

HOOK = "score"
EXIT_TESTS_FAILED, EXIT_INTERRUPTED, EXIT_NO_TESTS = 1, 2, 5  # pytest's ExitCode
PASSING = ("passed", "xpassed")


class Judged(NamedTuple):
    findings: List[Finding]
    tests: List[Dict[str, Any]]  # nodeid, outcome, duration of each scored test
    collected: List[str]


def _frozen(nodeid: str, frozen: Sequence[str]) -> bool:
    return any(nodeid == f or nodeid.startswith((f + "::", f + "[")) for f in frozen if f)


def _path_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def judge(
    oracle: Session,
    baseline: Optional[Session],
    frozen: Sequence[str],
    oracle_files: Set[str],
    tree: str,
    timeout: float,
) -> Judged:
    findings: List[Finding] = []

    def add(code: str, path: Optional[str], message: str) -> None:
        findings.append(Finding(HOOK, code, path, message))

    if oracle.returncode is None:
        add(
            "score-timeout",
            None,
            f"the oracle's session ran past its limit of {timeout:g} s and was stopped; "
            "a run that does not end is not a pass",
        )
    tests = oracle.of("test")
    collected = [i for r in oracle.of("collected") for i in r.get("ids", [])]
    for record in oracle.of("frozen-collected"):
        for nodeid in record.get("ids", []):
            add(
                "frozen-collected",
                _path_of(nodeid),
                f"{nodeid} is frozen at the target and still collected after every plugin "
                "ran: the session was refused before any test ran",
            )
    failed = 0
    for record in oracle.of("collect-error"):
        failed += 1
        add(
            "test-failed",
            _path_of(record.get("nodeid") or "") or None,
            f"collecting {record.get('nodeid') or 'the session'} failed: {record.get('message')}",
        )
    for record in tests:
        nodeid, outcome = record.get("nodeid", ""), record.get("outcome")
        if outcome in ("failed", "error"):
            failed += 1
            what = "failed" if outcome == "failed" else "errored"
            add("test-failed", _path_of(nodeid), f"{nodeid} {what}" + _said(record))
        elif outcome in ("skipped", "xfailed"):
            why = _undeclared_skip(record, oracle_files, tree)
            if why:
                add("skip-at-run", _path_of(nodeid), f"{nodeid} was {outcome} at run time {why}")
    ran_out = (
        oracle.returncode is not None and not oracle.ended and not oracle.of("frozen-collected")
    )
    if ran_out:
        add(
            "run-incomplete",
            None,
            f"pytest exited with status {oracle.returncode} after {len(tests)} of "
            f"{len(collected)} tests, before its session ended: an exit during the run "
            "(os._exit, a signal) is not a pass",
        )
    elif oracle.ended and oracle.returncode is not None and not oracle.of("frozen-collected"):
        expected = (
            EXIT_INTERRUPTED
            if oracle.of("collect-error")
            else EXIT_TESTS_FAILED
            if failed
            else (EXIT_NO_TESTS if not collected else 0)
        )
        if oracle.returncode != expected:
            add(
                "outcome-mismatch",
                None,
                f"pytest exited with status {oracle.returncode}, but what ran says "
                f"{expected} ({failed} failed of {len(tests)}): something in the session "
                "changed its exit status",
            )
    whole = oracle.ended and oracle.returncode is not None and not oracle.of("frozen-collected")
    if baseline is not None and whole:  # a run cut short has its own finding
        seen = set(collected)
        for record in oracle.of("deselected"):
            seen.update(record.get("ids", []))
        wanted = [i for r in baseline.of("collected") for i in r.get("ids", [])]
        # a module that did not collect is test-failed already, once
        broken = {_path_of(r.get("nodeid") or "") for r in oracle.of("collect-error")}
        for nodeid in wanted:
            if (
                nodeid not in seen
                and not _frozen(nodeid, frozen)
                and _path_of(nodeid) not in broken
            ):
                add(
                    "test-vanished",
                    _path_of(nodeid),
                    f"{nodeid} is collected from the target's own tree and not from the "
                    "candidate's, and it is not frozen",
                )
    scored = [
        {"nodeid": r.get("nodeid"), "outcome": r.get("outcome"), "duration": r.get("duration")}
        for r in tests
    ]
    return Judged(findings, scored, collected)


def _said(record: Dict[str, Any]) -> str:
    message = (record.get("message") or "").strip()
    return f": {message}" if message else ""


def _undeclared_skip(record: Dict[str, Any], oracle_files: Set[str], tree: str) -> Optional[str]:
    """Why a skip is not the target's own doing, or None: a skip mark (or xfail mark)
    of the test, or a skip raised from one of the target's files, is declared; one
    raised from any other file of the candidate's tree is not. A skip raised
    outside the tree (an installed plugin's) is the environment's, not the change's."""
    declared = record.get("declared") or {}
    if record.get("outcome") == "xfailed" and declared.get("xfail"):
        return None
    skip = record.get("skip") or {}
    if record.get("outcome") == "skipped" and declared.get("skip"):
        return None
    path = skip.get("path")
    if not path:
        return "with no skip or xfail mark in the target's test code"
    root = os.path.realpath(tree)
    full = os.path.realpath(os.path.join(root, path))
    if os.path.commonpath([full, root]) != root:
        return None
    relative = os.path.relpath(full, root).replace(os.sep, "/")
    if relative in oracle_files:
        return None
    where = f"{relative}:{skip.get('line')}" if skip.get("line") is not None else relative
    return (
        f"by {where}, a file of the candidate's, not the target's test code ({skip.get('reason')})"
    )
