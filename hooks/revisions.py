"""Which revisions are judged: the candidate, the base, and their snapshots."""
from __future__ import annotations

import os
from typing import Callable, Dict, Mapping, Optional

from oracle_guard.gitio import Entry, Git


class RevisionError(Exception):
    """The base or candidate cannot be determined (exit 2)."""


class Snapshot:
    """A tree of files as git objects: a commit, the index, or nothing."""

    def __init__(self, git: Optional[Git], label: str, entries: Dict[str, Entry],
                 commit: Optional[str] = None) -> None:
        self._git = git
        self.label = label
        self.entries = entries
        self.commit = commit

    def __contains__(self, path: str) -> bool:
        return path in self.entries

    def read(self, path: str) -> bytes:
        entry = self.entries[path]
        assert self._git is not None
        return self._git.read_blob(entry.oid)

    @classmethod
    def empty(cls, label: str = "the empty tree") -> "Snapshot":
        return cls(None, label, {})

    @classmethod
    def of_commit(cls, git: Git, commit: str, label: str) -> "Snapshot":
        return cls(git, label, git.tree_entries(commit), commit=commit)

    @classmethod
    def of_index(cls, git: Git) -> "Snapshot":
        return cls(git, "the index", git.index_entries())


class Revisions:
    def __init__(self, base: Snapshot, candidate: Snapshot, base_reason: str) -> None:
        self.base = base
        self.candidate = candidate
        self.base_reason = base_reason


CONTRACT_BASE = "the contract's 'base'"
SHALLOW_HINT = (
    "fetch full history (actions/checkout with 'fetch-depth: 0', or "
    "'git fetch --unshallow origin' / 'git fetch origin main')"
)


def _commit_or_fail(git: Git, rev: str, what: str) -> str:
    oid = git.resolve_commit(rev)
    if oid is None:
        hint = f"; {SHALLOW_HINT}" if git.is_shallow() else ""
        raise RevisionError(f"{what} {rev!r} does not name a commit in this repository{hint}")
    return oid


def resolve(git: Git, base: Optional[str], head: Optional[str],
            env: Mapping[str, str],
            contract_base: Callable[[Snapshot], Optional[str]] = lambda s: None) -> Revisions:
    """Apply the revision model (README: "The revision model")."""
    from_ref = env.get("PRE_COMMIT_FROM_REF") or None
    to_ref = env.get("PRE_COMMIT_TO_REF") or None

    if head is None and base is None and from_ref and to_ref:
        head = to_ref
    if head is not None:
        head_oid = _commit_or_fail(git, head, "--head")
        candidate = Snapshot.of_commit(git, head_oid, head)
    else:
        head_oid = None
        candidate = Snapshot.of_index(git)

    if base is not None:
        oid = _commit_or_fail(git, base, "--base")
        return Revisions(Snapshot.of_commit(git, oid, base), candidate, "--base")
    if from_ref and to_ref:
        oid = _commit_or_fail(git, from_ref, "PRE_COMMIT_FROM_REF")
        return Revisions(Snapshot.of_commit(git, oid, from_ref), candidate,
                         "PRE_COMMIT_FROM_REF")
    if env.get("CI"):
        return _ci_base(git, candidate, head_oid, env, contract_base)
    head_commit = git.resolve_commit("HEAD")
    if head_commit is None:
        return Revisions(Snapshot.empty("no commits yet"), candidate, "no commits yet")
    return Revisions(Snapshot.of_commit(git, head_commit, "HEAD"), candidate, "HEAD")


def _ci_base(git: Git, candidate: Snapshot, head_oid: Optional[str],
             env: Mapping[str, str],
             contract_base_of: Callable[[Snapshot], Optional[str]]) -> Revisions:
    tried = []
    options = []
    contract_base = contract_base_of(candidate)
    if env.get("GITHUB_BASE_REF"):
        options.append((f"origin/{env['GITHUB_BASE_REF']}", "GITHUB_BASE_REF"))
    if env.get("CI_MERGE_REQUEST_DIFF_BASE_SHA"):
        options.append((env["CI_MERGE_REQUEST_DIFF_BASE_SHA"], "CI_MERGE_REQUEST_DIFF_BASE_SHA"))
    if contract_base:
        options.append((contract_base, CONTRACT_BASE))
    target = head_oid or git.resolve_commit("HEAD")
    for rev, source in options:
        oid = git.resolve_commit(rev)
        if oid is None:
            tried.append(f"{rev} ({source})")
            continue
        if target is None:
            raise RevisionError("CI is set but the repository has no commits to judge")
        merge_base = git.merge_base(oid, target)
        if merge_base is None:
            raise RevisionError(
                f"no merge-base between {rev} ({source}) and the candidate; {SHALLOW_HINT}")
        if merge_base == target:
            raise RevisionError(
                f"the base {rev} ({source}) already contains the candidate {target[:12]}: "
                "nothing to compare; pass --base with the previous tip "
                "(for a push build, the 'before' commit of the push)")
        label = f"merge-base of {rev} and the candidate"
        base = Snapshot.of_commit(git, merge_base, label)
        if source == CONTRACT_BASE:
            # the candidate's contract picks its own base: the base must agree, or a
            # change could name its own earlier commit and hide what that commit did
            named_by_base = contract_base_of(base)
            if named_by_base != contract_base:
                raise RevisionError(
                    f"the contract's 'base' is {contract_base!r} in the candidate but "
                    f"{named_by_base!r} in the base it names: a change cannot move its own "
                    "base; pass --base REV")
        return Revisions(base, candidate, source)
    if tried:
        why = "none of " + ", ".join(tried) + " resolves"
    else:
        why = "no base is named (GITHUB_BASE_REF, CI_MERGE_REQUEST_DIFF_BASE_SHA, contract 'base')"
    raise RevisionError(
        f"CI is set but {why}; pass --base REV or {SHALLOW_HINT}")

