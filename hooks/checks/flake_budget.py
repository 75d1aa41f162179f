"""flake-budget: is every quarantined test owned, unexpired and within the cap?"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any, Dict, List, Optional, Set, Tuple

from oracle_guard import clock
from oracle_guard.checks import freeze_files
from oracle_guard.checks.sample import Sample
from oracle_guard.contract import CONTRACT_PATH, Contract
from oracle_guard.findings import NOT_COUNTED, Finding
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.snapshot import Snapshot

HOOK = "flake-budget"
# the smallest oracle: a budget and the file it counts, and the change that lets an
# entry expire
# its lines in the complete example of docs/reference/contract.md
EXAMPLE = """\
budget:                      # flake-budget
  max_frozen: 3              # required
  max_days: 14               # optional: no expiry further than this from now
  warn_days: 3               # optional: warn (exit 0) this close to an expiry
  known_ids: ["seeds/*.json"]  # optional: frozen ids must be stems of these files
"""
SAMPLE = Sample(
    sections={
        "budget": {"max_frozen": 1},
        "freeze": [{"paths": ["oracle/*.yaml"], "schema": "flake-budget"}],
    },
    files={
        "oracle/flake_budget.yaml": "max_frozen: 1\nfrozen:\n  - id: test_a\n    owner: platform\n"
        '    expires: "2099-01-01"\n    reason: flaky on CI\n'
    },
    change={
        "oracle/flake_budget.yaml": "max_frozen: 1\nfrozen:\n  - id: test_a\n    owner: platform\n"
        '    expires: "2000-01-01"\n    reason: flaky on CI\n'
    },
    finding="oracle/flake_budget.yaml: budget-expired",
    example=EXAMPLE,
)


def known_ids(patterns: List[str], snapshot: Snapshot) -> set:
    return {os.path.splitext(os.path.basename(p))[0] for p in snapshot.select(PatternSet(patterns))}


def check(
    contract: Contract, base: Snapshot, candidate: Snapshot, now: dt.datetime
) -> List[Finding]:
    budget = contract.section("budget")
    state = freeze_files.load(contract, candidate, HOOK)
    # an unreadable file is never counted as empty: it fails this hook too
    findings = [f._replace(message=NOT_COUNTED + f.message) for f in state.findings]

    # The smallest cap wins; the finding points at the line that states it.
    caps: List[Tuple[str, Any, Optional[int], str]] = [
        (CONTRACT_PATH, budget["max_frozen"], None, "budget.max_frozen in the contract")
    ]
    caps += [(path, cap, line, f"max_frozen in {path}") for path, cap, line in state.caps]
    path, cap, line, where = min(caps, key=lambda c: c[1])
    if len(state.entries) > cap:
        findings.append(
            Finding(
                HOOK,
                "budget-exceeded",
                path,
                f"{len(state.entries)} entries frozen, {where} allows {cap}",
                line,
            )
        )

    known = known_ids(budget["known_ids"], candidate) if "known_ids" in budget else None
    for entry in state.entries:
        findings += _entry_findings(entry, budget, known, now)
    return findings


def _entry_findings(
    entry: freeze_files.Frozen, budget: Dict[str, Any], known: Optional[Set[str]], now: dt.datetime
) -> List[Finding]:
    """What is wrong with one frozen entry: its owner, id and expiry."""
    findings: List[Finding] = []
    max_days = budget.get("max_days")
    warn_days = budget.get("warn_days")

    def add(code: str, message: str, severity: str = "error") -> None:
        findings.append(
            Finding(HOOK, code, entry.path, f"{entry.id!r} {message}", entry.line, severity)
        )

    if not (entry.owner or "").strip():
        add("budget-no-owner", "has no owner")
    if known is not None and entry.id not in known:
        add("budget-unknown-id", f"is not a known id (stems of {', '.join(budget['known_ids'])})")
    if not entry.expires:
        add("budget-no-expiry", "has no expiry")
        return findings
    try:
        ends = clock.parse_when(entry.expires)
    except clock.ClockError as exc:
        add("budget-no-expiry", f"has no usable expiry: {exc}")
        return findings
    if now >= ends:
        add("budget-expired", f"expired {entry.expires}")
    elif max_days is not None and ends > _latest(now, max_days, entry.expires):
        add("budget-too-far", f"expires {entry.expires}, beyond {max_days} days from now")
    elif warn_days is not None and ends - now <= dt.timedelta(days=warn_days):
        add(
            "budget-expiring",
            f"expires {entry.expires}, within {warn_days} days",
            severity="warning",
        )
    return findings


def _latest(now: dt.datetime, max_days: int, expires: str) -> dt.datetime:
    """Latest allowed end: now + max_days; a date may run to the end of that day."""
    limit = now + dt.timedelta(days=max_days)
    if "T" not in expires:
        day = limit.astimezone(dt.timezone.utc).date()
        return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc) + dt.timedelta(
            days=1
        )
    return limit
