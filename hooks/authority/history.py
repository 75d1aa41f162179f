"""The commits that lead to a candidate, each judged on its own.

The candidate's tree says what will be recorded; its commits say how it got
there. An oracle change rides alone in a commit of its own, and a merge
commit changes nothing that git's clean remerge of its parents does not. An
oracle edit that a later commit of the range undoes never reaches the tree
that is recorded, and is not a finding of its own in CI: a red run is made green
by restoring the oracle. A push is stricter (``undone``): the server records
every commit, and a ref can later point at the one that edited the oracle.
"""

from __future__ import annotations

import datetime
import itertools
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Optional, Tuple

from oracle_guard.findings import Finding
from oracle_guard.git.history import Commit
from oracle_guard.git.plumbing import Git
from oracle_guard.git.process import decode_path
from oracle_guard.report.escaping import show_path

if TYPE_CHECKING:
    from oracle_guard.checks.write_set import WriteSet
    from oracle_guard.contract import Contract
    from oracle_guard.session import Session
    from oracle_guard.snapshot import Snapshot

HOOK = "write-set"
Attributed = Tuple[str, Finding]  # (commit id, finding)


def judge(
    contract: Contract,
    session: Session,
    commits: Iterable[Commit],
    denied: Optional[Dict[bytes, Finding]] = None,
) -> List[Attributed]:
    """Findings for ``commits`` by ``contract``'s write set, for everyone,
    owners included. ``denied``: the write set's findings on their paths, when
    known (``_denied``)."""
    # deferred: 22 ms to import, only for judge()
    from oracle_guard.checks.write_set import WriteSet

    write_set = WriteSet.of(contract)
    commits = list(commits)
    if denied is None:
        denied = _denied(commits, write_set)
    out: List[Attributed] = []
    for commit in reversed(commits):  # oldest first
        if commit.is_merge:
            out.extend(_merge(session.git, commit, write_set))
            continue
        if not denied or denied.keys().isdisjoint(commit.paths):
            continue  # nothing protected: no mixed commit
        protected, allowed = _split(commit.paths, denied)
        if protected and allowed:
            out.append(
                (
                    commit.id,
                    Finding(
                        HOOK,
                        "contract-mixed-commit",
                        protected[0],
                        f"commit {commit.id[:12]} changes protected {show_path(protected[0])!r} "
                        f"and allowed {show_path(allowed[0])!r}: an oracle change rides alone in "
                        "its own commit",
                    ),
                )
            )
    return out


AUTHORIZED = "an owner signed every commit of this oracle change"


def judge_with_authority(
    contract: Contract,
    session: Session,
    commits: Iterable[Commit],
    net: List[Finding],
    linear: bool = True,
    undone: bool = False,
) -> Tuple[List[Finding], List[Attributed], Optional[str]]:
    """(what stands of ``net``, the change as a whole; each commit's findings;
    a note) with the owners' signed authority applied: when it holds, ``net``
    is lifted and the note says so. ``linear``: no history is replaced.
    ``undone``: an oracle edit a later commit undoes is a finding too (a push
    by someone who is not an owner)."""
    # deferred: 19 ms to import, only for judge_with_authority()
    from oracle_guard.authority import signatures as authority
    from oracle_guard.checks.write_set import WriteSet

    commits = list(commits)
    denied = _denied(commits, WriteSet.of(contract))
    per_commit = judge(contract, session, commits, denied)
    if undone:
        per_commit += _undone(contract, session, commits, net, per_commit, denied)
    unsigned, authorized = authority.judge(contract, session, commits, net, linear)
    if authorized and not per_commit:
        return [], [], AUTHORIZED
    return net, per_commit + unsigned, None


def _undone(
    contract: Contract,
    session: Session,
    commits: List[Commit],
    net: List[Finding],
    found: List[Attributed],
    findings: Dict[bytes, Finding],
) -> List[Attributed]:
    """Commits that edit an oracle file the change as a whole leaves as it was:
    the tip is clean, but the edit stays in the history a push records, where a
    tag or branch can point at it. An owner-signed commit may."""
    # deferred: 10 ms to import, only for _undone()
    from oracle_guard.authority.signatures import Authority

    authority = Authority.of(contract, session)
    shown = {f.path for f in net} | {f.path for _, f in found}
    out: List[Attributed] = []
    for commit in reversed(commits):  # oldest first
        if commit.is_merge:
            continue  # judged against a clean remerge of its parents
        for raw in commit.paths:
            denied = findings.get(raw)
            if denied is None or denied.code != "write-denied":
                continue
            path = decode_path(raw)
            if path in shown:
                continue
            if authority is not None and authority.why_not(commit) is None:
                break
            out.append(
                (
                    commit.id,
                    Finding(
                        HOOK,
                        "oracle-edit-undone",
                        path,
                        f"commit {commit.id[:12]} changes protected {show_path(path)!r} and a "
                        "later commit undoes it: the push would record the edit in history, where "
                        "a tag or branch can point at it",
                    ),
                )
            )
            shown.add(path)
    return out


def undone_by_checks(
    contract: Contract,
    session: Session,
    commits: Iterable[Commit],
    tip: str,
    base_for: Callable[[str], Snapshot],
    now: datetime.datetime,
    standing: Iterable[Finding],
) -> List[Attributed]:
    """Each commit of a push before its tip judged by the other checks as a ref
    there would be: from ``base_for(commit)`` (for a new branch, its merge-base
    with the default branch, so a commit made before main's later seed appends
    is not taken for removing them). A finding the tip no longer has (a skip
    added, then removed) is ``oracle-edit-undone``, since the server records the
    commit and a ref can later be made there. Merges are judged too: a ref can
    point at one as well. The write set's own rules are ``_undone``'s."""
    # deferred: 12 ms to import, only for undone_by_checks()
    from oracle_guard.checks.registry import CHECKS
    from oracle_guard.judge import judge as judge_checks
    from oracle_guard.snapshot import Snapshot

    hooks = [check.id for check in CHECKS if check.id != HOOK]
    # one finding a path, as _undone: a path the push is rejected for already is not repeated
    shown = {f.path or f.code for f in standing}
    out: List[Attributed] = []
    for commit in reversed(list(commits)):  # oldest first
        if commit.id == tip:
            continue
        state = Snapshot.of_commit(session.git, commit.id, f"commit {commit.id[:12]}")
        for result in judge_checks(contract, base_for(commit.id), state, now, hooks):
            for found in result.findings:
                if found.severity != "error" or (found.path or found.code) in shown:
                    continue
                shown.add(found.path or found.code)
                out.append(
                    (
                        commit.id,
                        Finding(
                            HOOK,
                            "oracle-edit-undone",
                            found.path,
                            f"commit {commit.id[:12]} is {found.code} ({found.message}) and a "
                            "later commit undoes it: the push would record it in history, where "
                            "a tag or branch can point at it",
                            found.line,
                        ),
                    )
                )
    return out


def _denied(commits: List[Commit], write_set: WriteSet) -> Dict[bytes, Finding]:
    """The write set's findings on every path the commits change, by path: all
    paths at once, whatever the number of commits."""
    changing = [commit.paths for commit in commits if commit.paths]
    if len(changing) == 1:  # as it is: the write set may have judged this very list
        return write_set.findings(changing[0])
    return write_set.findings(list(dict.fromkeys(itertools.chain.from_iterable(changing))))


def _split(paths: Iterable[bytes], denied: Dict[bytes, Finding]) -> Tuple[List[str], List[str]]:
    """(the paths the write set denies, the first it allows: at most one)."""
    protected: List[str] = []
    allowed: List[str] = []
    for raw in paths:
        found = denied.get(raw)
        if found is not None:
            protected.append(decode_path(raw))
        elif not allowed:
            allowed.append(decode_path(raw))
    return protected, allowed


def _merge(git: Git, commit: Commit, write_set: WriteSet) -> List[Attributed]:
    """A merge's protected paths must be what its parents merge to."""
    if len(commit.parents) == 2:
        differing = git.remerge_differences(commit.id, commit.parents)
        why = "its parents do not merge to that"
    else:  # git merges two commits at a time; an octopus cannot be remerged here
        differing = git.differing_paths(commit.parents[0], commit.id)
        why = (
            "its first parent does not have it, and an octopus merge cannot be "
            "remerged (merge oracle changes two at a time)"
        )
    out = []
    for path in differing:
        denied = write_set.finding(path)
        if denied is not None and denied.code == "write-denied":
            out.append(
                (
                    commit.id,
                    Finding(
                        HOOK,
                        "merge-edits-oracle",
                        path,
                        f"merge commit {commit.id[:12]} records protected {show_path(path)!r} as "
                        f"{why} ({denied.message}): the merge changes the oracle itself, which "
                        "'git log -p' does not show",
                    ),
                )
            )
    return out
