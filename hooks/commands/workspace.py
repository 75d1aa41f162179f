"""What the authoring commands (freeze, seeds, signers, lock --add) share: the
repository they edit (``Workspace``), the refusals, and how their messages name
files and findings.

They write the working-tree files a human would otherwise edit by hand, by the
contract in the index (as ``oracle-guard lock`` does), and refuse (exit 2) what
the hooks would reject. Files are written all or none, through temporary files,
and never through a symlink (``git.worktree``)."""

from __future__ import annotations

import os
import re
from typing import Callable, List, Mapping, Optional, Sequence

from oracle_guard import contract as contract_mod
from oracle_guard.errors import Refused, UsageError, WorktreeError
from oracle_guard.findings import Finding
from oracle_guard.git import worktree
from oracle_guard.git.plumbing import Git
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.report.escaping import inert, show_path, show_text
from oracle_guard.report.text import finding_line
from oracle_guard.session import Session
from oracle_guard.snapshot import Overlay, Snapshot


def unsafe(path: str, reason: str) -> Refused:
    return Refused(f"cannot edit {path} safely: {reason}; edit it by hand")


def working_tree(git: Git, command: str) -> str:
    """The top of ``git``'s working tree; a bare repository has none to write in.
    ``command`` starts the message: "'oracle-guard lock'", say."""
    top = git.toplevel()
    if top is None:
        raise WorktreeError(f"{command} needs a working tree (not a bare repository)")
    return top


def repo_path(text: str) -> str:
    """A repo-relative POSIX path as the contract writes them."""
    path = text.replace(os.sep, "/")
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/")


def git_add(path: str, top: Optional[str] = None, here: Optional[str] = None) -> str:
    """The ``git add`` that stages the repo-relative ``path`` when run in ``here`` (the
    folder the command ran in, or -C DIR): the path relative to it, or ':(top)PATH'
    when ``here`` lies outside the working tree ``top``."""
    # deferred: shlex: under 1 ms to import, only for git_add()
    import shlex

    magic = []
    if top is not None and here is not None:
        if os.path.relpath(here, top).split(os.sep)[0] == os.pardir:
            magic.append("top")
        else:
            full = os.path.join(top, *path.split("/"))
            path = os.path.relpath(full, here).replace(os.sep, "/")
    if path.startswith(":") or re.search(r"[*?\[\\]", path):
        magic.append("literal")  # a pathspec globs these: name this one file only
    if magic:
        path = f":({','.join(magic)})" + path
    return (
        f"git add -- {shlex.quote(path)}"
        if path.startswith("-")
        else f"git add {shlex.quote(path)}"
    )


class Workspace:
    """The repository, its index and the contract in the index."""

    def __init__(self, directory: str, use_cache: bool = True) -> None:

        self.session = Session(Git(directory, use_cache=use_cache))
        self.git = self.session.git
        try:
            self.git.check_repository()
            self.top = working_tree(self.git, "this command writes files: it")
            self.here = os.path.realpath(directory or ".")
            self.index = Snapshot.of_index(self.git)
            data = contract_mod.read(self.index, self.session)
            if data is None:
                raise Refused(
                    f"no {contract_mod.CONTRACT_PATH} in the index: write and "
                    "'git add' the contract first"
                )
            self.contract = contract_mod.Contract(
                data, self.index, from_base=True, session=self.session
            )
        except BaseException:
            self.session.close()
            raise

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.session.close()

    def git_add(self, path: str) -> str:
        """The ``git add`` for ``path`` that works where the command ran."""
        return git_add(path, self.top, self.here)

    def read_worktree(self, path: str) -> Optional[bytes]:
        """The working-tree bytes of ``path``; None when it does not exist."""
        full = worktree.full_path(self.top, path)
        if not os.path.lexists(full):
            return None
        if not os.path.isfile(full):
            raise Refused(f"{show_path(path)} in the working tree is not a regular file")
        try:
            with open(full, "rb") as f:
                return f.read()
        except OSError as exc:
            raise Refused(f"cannot read {show_path(path)}: {exc.strerror or exc}") from None

    def working(self, patterns: Sequence[str]) -> Overlay:
        """The index, with the files matching ``patterns`` as they stand in the
        working tree (what the next ``git add`` records)."""

        changed = PatternSet(patterns).select(self.git.unstaged_paths()) if patterns else []
        return Overlay(self.index, {p: self.read_worktree(p) for p in changed}, "the working tree")

    def write(self, files: Mapping[str, Optional[bytes]]) -> None:
        """Write (or, for None, delete) working-tree files, all or none."""
        worktree.write_files(self.top, files)


describe = finding_line  # a finding as `check` prints it


def new_findings(before: Sequence[Finding], after: Sequence[Finding], grew: bool) -> List[Finding]:
    """Findings of ``after`` that ``before`` lacks (the line does not count: an
    edit moves lines). An exceeded cap is new when the count grew."""
    seen = {(f.hook, f.code, f.path, f.message, f.severity) for f in before}
    exceeded_before = any(f.code == "budget-exceeded" for f in before)
    out = []
    for f in after:
        if f.code == "budget-exceeded":
            if grew or not exceeded_before:
                out.append(f)
        elif (f.hook, f.code, f.path, f.message, f.severity) not in seen:
            out.append(f)
    return out


def fixture_notes(ws: Workspace, paths: Sequence[str]) -> None:
    """After an edit: which of the written files are also locked fixtures."""
    # deferred: under 1 ms to import, only for fixture_notes()
    from oracle_guard.checks import fixture_lock

    for entry in ws.contract.section("fixtures") or []:
        for path in fixture_lock.pending_fixtures(entry, paths):
            print(
                inert(
                    f"note: {show_path(path)} is also a fixture locked by "
                    f"{show_path(entry['lock'])}: after '{show_text(ws.git_add(path))}', "
                    f"run 'oracle-guard lock' and stage {show_path(entry['lock'])}"
                )
            )


def edit(action: Callable[[Workspace], int], directory: str, use_cache: bool = True) -> int:
    """Run an authoring command's ``action`` in the repository at ``directory``."""
    # deferred: 16 ms to import, only for edit()
    from oracle_guard.parsing.text_edit import Unsafe

    try:
        with Workspace(directory, use_cache) as ws:
            return action(ws)
    except Unsafe as exc:  # an edit not wrapped with its path: still a refusal
        raise UsageError(f"cannot edit safely: {exc}; edit it by hand") from None
