"""Trees in memory for check tests: snapshots built from plain dicts, and a
repository's commits and index judged as ``oracle-guard check`` judges them,
without a repository on disk (tests/snapshot_test.py shows both agree with git)."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from oracle_guard.errors import GitError
from oracle_guard.git.objects import MODE_GITLINK, MODE_SYMLINK
from oracle_guard.snapshot import MODE_EXECUTABLE, File, MemorySnapshot, Snapshot


def content(value: Any) -> bytes:
    """As testing.git.write stores it: bytes as is, str as UTF-8, else indented JSON."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return (json.dumps(value, indent=2) + "\n").encode("utf-8")


def link(target: str) -> File:
    """A symlink to ``target``, as git stores it."""
    return (MODE_SYMLINK, target.encode("utf-8", "surrogateescape"))


def executable(value: Any) -> File:
    return (MODE_EXECUTABLE, content(value))


def gitlink(commit: str) -> File:
    """A submodule at ``commit``."""
    return (MODE_GITLINK, commit.encode("ascii"))


def _file(value: Any) -> File:
    return value if isinstance(value, tuple) else content(value)


def memory(
    files: Mapping[str, Any], label: str = "the index", commit: Optional[str] = None
) -> MemorySnapshot:
    """A snapshot of ``files``: values as ``content`` takes them, or link(),
    executable(), gitlink()."""
    return MemorySnapshot({path: _file(value) for path, value in files.items()}, label, commit)


def judged(
    base: Snapshot, candidate: Snapshot, hooks: Sequence[str], now: str, fmt: str = "text"
) -> Tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``oracle-guard check --only HOOKS`` on these
    two snapshots: the contract chosen, the checks run and the report rendered
    as the command does; an error the command reports is exit 2 and one line."""
    from oracle_guard import clock
    from oracle_guard import contract as contract_mod
    from oracle_guard.findings import exit_code
    from oracle_guard.judge import judge
    from oracle_guard.report import formats
    from oracle_guard.report.escaping import inert, show_text

    try:
        contract = contract_mod.choose(base, candidate)
        results = judge(contract, base, candidate, clock.now_from(now, {}), hooks)
    except (contract_mod.ContractError, GitError) as exc:
        return (
            2,
            formats.render_error(fmt, str(exc)),
            inert(f"oracle-guard: error: {show_text(str(exc))}") + "\n",
        )
    code = exit_code(results)
    owners = [] if contract is None else contract.owners
    # the hint names the command a staged change is fixed with, as the command's
    # does (its json carries the revisions, which a memory repository has not)
    meta: Optional[Dict[str, Any]] = None
    if fmt != "json":
        meta = {"context": "staged", "base": base.commit}
        if contract is not None:
            meta["sections"] = contract.section_names()
    return code, formats.render(fmt, results, owners=owners, exit_code=code, meta=meta), ""


class MemoryRepo:
    """A repository's commits and index as trees in memory, changed as
    testing.git's commit, stage and remove change a real one."""

    def __init__(self, files: Optional[Mapping[str, Any]] = None) -> None:
        self.index: Dict[str, File] = {}
        self.commits: List[Dict[str, File]] = []
        self.stage(files)

    def stage(self, files: Optional[Mapping[str, Any]] = None) -> None:
        for path, value in (files or {}).items():
            self._clear(path)
            self.index[path] = _file(value)

    def _clear(self, path: str) -> None:
        """What a file put at ``path`` replaces: a file at a folder above it, or a folder."""
        parts = path.split("/")
        for end in range(1, len(parts)):
            self.index.pop("/".join(parts[:end]), None)
        for inside in [p for p in self.index if p.startswith(path + "/")]:
            del self.index[inside]

    def remove(self, *paths: str) -> None:
        """``git rm -r``: each path, or every file under it."""
        for path in paths:
            gone = [p for p in self.index if p == path or p.startswith(path + "/")]
            if not gone:
                raise AssertionError(f"pathspec {path!r} did not match any files")
            for p in gone:
                del self.index[p]

    def move(self, old: str, new: str) -> None:
        """``git mv``: a file, or a folder with every file below it."""
        moved = {
            new + p[len(old) :]: self.index.pop(p)
            for p in list(self.index)
            if p == old or p.startswith(old + "/")
        }
        if not moved:
            raise AssertionError(f"bad source {old!r}")
        self.stage(moved)

    def make_executable(self, path: str, on: bool = True) -> None:
        """``git update-index --chmod=+x`` (``on=False``: ``-x``)."""
        data = self.index[path]
        data = data if isinstance(data, bytes) else data[1]
        self.index[path] = executable(data) if on else data

    def commit(self, files: Optional[Mapping[str, Any]] = None) -> None:
        self.stage(files)
        self.commits.append(dict(self.index))

    def reset(self) -> None:
        """``git reset --hard``: the index is HEAD again."""
        self.index = dict(self.commits[-1]) if self.commits else {}

    def head(self) -> Snapshot:
        if not self.commits:
            return MemorySnapshot({}, "no commits yet")
        return MemorySnapshot(self.commits[-1], "HEAD")

    def staged(self) -> Snapshot:
        return MemorySnapshot(self.index, "the index")

    def check(self, *hooks: str, now: str, fmt: str = "text") -> Tuple[int, str, str]:
        """``oracle-guard check --only HOOKS --now NOW``: the index against HEAD."""
        return judged(self.head(), self.staged(), hooks, now, fmt)
