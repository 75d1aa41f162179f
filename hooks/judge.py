"""Run the checks: one HookResult per hook, the same in every context."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, List, Optional, Sequence

from oracle_guard.checks import registry
from oracle_guard.checks.registry import Check
from oracle_guard.contract import CONTRACT_PATH, Contract
from oracle_guard.contract import read as read_contract
from oracle_guard.errors import ContractError
from oracle_guard.findings import Finding, HookResult
from oracle_guard.snapshot import Snapshot

if TYPE_CHECKING:
    from oracle_guard.session import Session


def judge(
    contract: Optional[Contract],
    base: Snapshot,
    candidate: Snapshot,
    now: datetime.datetime,
    hooks: Optional[Sequence[str]] = None,
) -> List[HookResult]:
    """``contract`` is read from the rules revision (None when neither it nor the
    candidate has one); ``hooks`` (default: all) are run in the registry's order."""
    return [
        run_check(check, contract, base, candidate, now)
        for check in registry.CHECKS
        if hooks is None or check.id in hooks
    ]


def run_check(
    check: Check,
    contract: Optional[Contract],
    base: Snapshot,
    candidate: Snapshot,
    now: datetime.datetime,
) -> HookResult:
    result = HookResult(check.id)
    section = contract.section(check.section) if contract is not None else None
    if contract is None:
        result.note = f"nothing to check: no {CONTRACT_PATH} in base or candidate"
    elif section is None and check.guards_without_section is None:
        result.note = f"nothing to check: the contract has no '{check.section}' section"
    elif check.needs_base and not contract.from_base:
        result.note = (
            f"nothing to check: the base ({contract.rules_label}) has no "
            "contract; this change introduces it"
        )
        if check.complete_when_introduced:  # no diff, but never an empty oracle
            result.findings = check.completeness()(contract, candidate)
            if result.findings:
                result.note = (
                    f"the base ({contract.rules_label}) has no contract: "
                    "the candidate was judged alone for completeness"
                )
    else:
        try:
            result.findings = check.function()(contract, base, candidate, now)
        except SystemExit as exc:  # a stray exit() in a hook is a bug, never a pass
            raise RuntimeError(f"{check.id} tried to exit (status {exc.code!r})") from None
        if check.needs_base and not result.findings and base.same_files(candidate):
            result.note = f"no change: {candidate.label} has the same files as {base.label}"
        elif section is None:
            result.note = f"no '{check.section}' section: {check.guards_without_section}"
    return result


def validate_next_contract(
    rules: Optional[Contract], candidate: Snapshot, now: datetime.datetime, session: Session
) -> List[Finding]:
    """The candidate's contract judges every later change, the one that would fix
    it included: when the candidate changes it (or a file it reads rules from:
    a schema, the allow_file, the signers) from the ``rules`` contract, it must
    load, or ContractError. Returns what it adds that the candidate already
    fails, such as a seeds entry that matches no file (every later change would
    fail on it)."""
    if rules is not None and rules.source.entry(CONTRACT_PATH) == candidate.entry(CONTRACT_PATH):
        if all(rules.source.entry(p) == candidate.entry(p) for p in rules.oracle_files()):
            return []  # the same contract, reading the same files
    data = read_contract(candidate, session)
    if data is None:
        return []
    following = Contract(data, candidate, from_base=True, session=session)
    # builds the write set (allow_file), the freeze validators (schema files) and
    # the owners' keys (authority.signers)
    judge(following, candidate, candidate, now, ("freeze-schema",))
    # deferred: under 1 ms to import, only for validate_next_contract()
    from oracle_guard.authority.signatures import Authority
    from oracle_guard.checks.write_set import WriteSet

    WriteSet.of(following)
    Authority.of(following, session)
    if rules is None:
        return []  # the introducing change: run_check judges it alone for completeness
    added: List[Finding] = []
    for check in registry.CHECKS:
        if check.complete_when_introduced:
            already = check.completeness()(rules, candidate)  # the check reports these
            added += [f for f in check.completeness()(following, candidate) if f not in already]
    return added


def next_contract_findings(
    session: Session, contract: Contract, candidate: Snapshot, now: datetime.datetime
) -> List[Finding]:
    """contract-invalid findings when the candidate changes its contract (or a file
    it names) and that contract would not load: it would judge every later
    change, so each later check would exit 2. The change itself is still judged
    by ``contract``, the rules revision's."""
    try:
        return validate_next_contract(
            contract if contract.from_base else None, candidate, now, session
        )
    except ContractError as exc:
        why = f"the contract in {candidate.label} would judge every later change, and it does not load"
        path = exc.path or CONTRACT_PATH
        if not exc.problems:
            # the message names the revision already
            plain = "the contract would judge every later change, and it does not load"
            return [Finding("write-set", "contract-invalid", path, f"{exc}: {plain}")]
        return [
            Finding(
                "write-set",
                "contract-invalid",
                path,
                text
                + (f" (column {column})" if column and "column" not in text else "")
                + f": {why}",
                line,
            )
            for line, column, text in exc.problems
        ]
