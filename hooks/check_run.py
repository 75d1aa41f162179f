"""One ``oracle-guard check`` run: the revisions, the checks, each commit of a range,
and the reports, written to the ``--output`` files and printed. The check command
runs it, and so does ``lock --check``."""

from __future__ import annotations

import datetime
import sys
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from oracle_guard import clock
from oracle_guard import contract as contract_mod
from oracle_guard.findings import HOOKS, Finding, HookResult, exit_code
from oracle_guard.git.plumbing import Git
from oracle_guard.judge import judge, next_contract_findings
from oracle_guard.report import formats as reporters
from oracle_guard.session import Session
from oracle_guard.snapshot import Snapshot, changes

if TYPE_CHECKING:
    from oracle_guard.contract import Contract
    from oracle_guard.revisions import Revisions

# A staged commit is judged by HEAD's contract, so with a broken one there no staged
# fix passes (fail closed): the way out is through history, not the index.
BROKEN_AT_HEAD = (
    "a commit is judged by the contract in HEAD, so no staged fix passes: undo the commit "
    "that broke it (git reset --soft HEAD~1, then git restore --staged --worktree "
    "{path}), or, once pushed, an owner commits the fix with --no-verify "
    "(docs: how-to/when-a-hook-blocks.md)"
)


def run_checks(
    session: Session,
    hooks: Sequence[str],
    base: Optional[str],
    head: Optional[str],
    now: datetime.datetime,
    env: Mapping[str, str],
    target: Optional[str] = None,
) -> Tuple[List[HookResult], Dict, List[str]]:
    # deferred: under 1 ms to import, only for run_checks()
    from oracle_guard import revisions

    git = session.git
    git.check_repository()
    revs = revisions.resolve(
        git,
        base,
        head,
        env,
        contract_base=lambda snap: (contract_mod.read(snap, session) or {}).get("base"),
        target=target,
        session=session,
    )
    try:
        contract = contract_mod.choose(revs.rules, revs.candidate, session)
    except contract_mod.ContractError as exc:
        if revs.candidate.commit is None and revs.rules.label == "HEAD":
            way_out = BROKEN_AT_HEAD.format(path=exc.path or contract_mod.CONTRACT_PATH)
            raise contract_mod.ContractError(f"{exc}; {way_out}", exc.problems, exc.path) from None
        raise
    meta: Dict[str, Any] = {
        "base": revs.base.commit or revs.base.label,
        "base_from": revs.base_reason,
        "candidate": revs.head or revs.candidate.label,
        "contract_from": None if contract is None else contract.source.label,
        "now": now.isoformat(),
        # where the hints' commands apply: the index, or commits
        "context": "staged" if revs.candidate.commit is None else "commits",
    }
    if contract is not None:  # the hints name only what its sections make true
        meta["sections"] = contract.section_names()
    if revs.head is not None and revs.candidate.commit != revs.head:
        meta["merge_tree"] = revs.candidate.commit
    if revs.notice:
        meta["notice"] = revs.notice
    owners = [] if contract is None else contract.owners
    if revs.conflicts:
        return _conflicted(revs, hooks), meta, owners
    pending = None
    if revs.history and contract is not None and contract.from_base and "write-set" in hooks:
        pending = git.history(*revs.history)  # runs beside the checks
    results = judge(contract, revs.base, revs.candidate, now, hooks)
    if revs.candidate.commit is None and contract is not None and "write-set" in hooks:
        _staged_authority(session, contract, revs, results)
    if pending is not None and contract is not None:  # pending is only set with one
        # deferred: under 1 ms to import, only for run_checks()
        from oracle_guard.authority import history

        result = next(r for r in results if r.hook == "write-set")
        commits = pending()
        net, per_commit, note = history.judge_with_authority(
            contract, session, commits, result.findings, revs.linear, undone=revs.pushed
        )
        if revs.pushed and revs.candidate.commit is not None:
            standing = [f for r in results for f in r.findings] + [f for _, f in per_commit]
            per_commit += history.undone_by_checks(
                contract,
                session,
                commits,
                revs.candidate.commit,
                lambda commit: _base_for(git, revs.base, commit),
                now,
                standing,
            )
        if per_commit or note:
            result.findings = net + [f for _, f in per_commit]
            result.note = note
    if contract is not None:
        _add_contract_findings(
            results, next_contract_findings(session, contract, revs.candidate, now)
        )
    return results, meta, owners


def _base_for(git: Git, base: Snapshot, commit: str) -> Snapshot:
    """What a commit of a pre-push range is judged from, as the server would judge
    a ref there: its merge-base with the range's base (the base itself when that
    is no single commit)."""

    if base.commit is not None and git.resolve_commit(base.commit) is not None:
        bases = git.merge_bases(base.commit, commit)
        if len(bases) == 1 and bases[0] != base.commit:
            return Snapshot.of_commit(git, bases[0], f"the merge-base of {commit[:12]}")
    return base


def _add_contract_findings(results: List[HookResult], findings: List[Finding]) -> None:
    """The findings of the contract the candidate leaves: each to the check it
    names when that check ran, the rest to write-set, which guards the contract
    (under --only without write-set, a write-set result holds only them)."""
    ran = {r.hook: r for r in results if r.hook != "write-set"}
    for finding in [f for f in findings if f.hook in ran]:
        ran[finding.hook].findings.append(finding)
    findings = [f for f in findings if f.hook not in ran]
    if not findings:
        return
    for result in results:
        if result.hook == "write-set":
            result.findings.extend(findings)
            if result.note and result.note.startswith("nothing to check: "):
                result.note = "the candidate's contract was checked; " + result.note[18:]
            return
    result = HookResult(
        "write-set",
        findings,
        note="--only: of write-set, only the candidate's contract was checked",
    )
    after = [i for i, r in enumerate(results) if HOOKS.index(r.hook) > HOOKS.index("write-set")]
    results.insert(after[0] if after else len(results), result)


def _staged_authority(
    session: Session, contract: Contract, revs: Revisions, results: List[HookResult]
) -> None:
    """A commit being made: the owners' signing configuration, where set up."""
    # deferred: under 1 ms to import, only for _staged_authority()
    from oracle_guard.authority import signatures as authority

    result = next(r for r in results if r.hook == "write-set")
    if not result.findings or contract.section("authority") is None:
        return
    changed = [path for path, _, _ in changes(revs.base, revs.candidate)]
    result.findings, note = authority.judge_staged(contract, session, changed, result.findings)
    result.note = note or result.note


def _conflicted(revs: Revisions, hooks: Sequence[str]) -> List[HookResult]:
    """A merge that conflicts is not judged (no check reports a pass): the
    platform cannot record it as is, and a conflicted oracle file is never
    judged as one side."""
    return [
        HookResult(
            "write-set",
            [
                Finding(
                    "write-set",
                    "merge-conflict",
                    path,
                    f"{revs.candidate.label} conflicts here; it is judged once it merges cleanly",
                )
                for path in revs.conflicts
            ],
        )
    ]


def check(
    directory: str = ".",
    hooks: Sequence[str] = HOOKS,
    base: Optional[str] = None,
    head: Optional[str] = None,
    target: Optional[str] = None,
    *,
    now: Optional[str],
    env: Mapping[str, str],
    output: str = "text",
    color: str = "auto",
    use_cache: bool = True,
    outputs: Sequence = (),
) -> int:
    """Judge and print the verdict in ``output`` (a name of reporters.FORMATS),
    after writing each of ``outputs`` (report.outputs.Output) in its own format;
    the exit code: 0 passed, 1 findings."""

    when = clock.now_from(now, env)
    with Session(Git(directory, use_cache=use_cache)) as session:
        results, meta, owners = run_checks(session, hooks, base, head, when, env, target)
    code = exit_code(results)
    if meta.get("notice"):
        sys.stderr.write(f"oracle-guard: note: {meta['notice']}\n")
    if outputs:  # the files first: one that cannot be written fails the run
        # deferred: 2 ms to import, only for check()
        from oracle_guard.report import outputs as report_files

        for wanted in outputs:
            text = reporters.render(
                wanted.format, results, meta=meta, owners=owners, exit_code=code
            )
            report_files.write(wanted, text)
    colour = output == "text" and reporters.colour_wanted(color, env, sys.stdout)
    sys.stdout.write(
        reporters.render(output, results, meta=meta, owners=owners, exit_code=code, colour=colour)
    )
    return code
