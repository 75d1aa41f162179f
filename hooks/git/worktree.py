"""Working-tree files, for the commands that write them (lock, init, freeze, seeds):
never through a symlink, never outside the repository, and all or none."""

from __future__ import annotations

import os
from typing import List, Mapping, Optional, Tuple

from oracle_guard.errors import WorktreeError
from oracle_guard.report.escaping import show_path


def full_path(top: str, path: str) -> str:
    """The working-tree file of repo-relative ``path``, refused when it or a folder
    above it is a symlink: git sees no file behind a symlinked folder, and a write
    through it would land outside the repository."""
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise WorktreeError(f"{show_path(path)} is not a normalized repo-relative path")
    if any(part.lower().rstrip(". ") == ".git" for part in parts):
        # git never tracks such a path; a write there could replace a hook git runs
        raise WorktreeError(
            f"{show_path(path)} lies in a .git folder: oracle-guard never writes there"
        )
    full = top
    for number, part in enumerate(parts, 1):
        full = os.path.join(full, part)
        if os.path.islink(full):
            what = (
                "is"
                if number == len(parts)
                else f"lies in {show_path('/'.join(parts[:number]))}, which is"
            )
            raise WorktreeError(
                f"{show_path(path)} in the working tree {what} a symlink; "
                "oracle-guard writes only regular files inside the repository"
            )
    real_top = os.path.realpath(top)
    if os.path.commonpath([real_top, os.path.realpath(full)]) != real_top:
        raise WorktreeError(f"{show_path(path)} leads outside the repository")
    return full


def write_files(top: str, files: Mapping[str, Optional[bytes]]) -> None:
    """Write (or, for None, delete) working-tree files, all or none: each new text
    goes to a temporary file beside its target first, and only when every one is
    written do they replace their targets, so a failure (a full disk, a quota)
    leaves every file as it was."""
    staged: List[Tuple[str, str, str]] = []  # (temporary file, target, path)
    made: List[str] = []  # folders created for new files
    replaced, path = False, ""
    try:
        for path, data in files.items():
            full = full_path(top, path)
            if os.path.lexists(full) and not os.path.isfile(full):
                raise WorktreeError(f"{show_path(path)} in the working tree is not a regular file")
            if data is not None:
                made.extend(_make_folders(os.path.dirname(full)))
                staged.append((_temporary_copy(full, data), full, path))
        for temporary, full, path in staged:  # noqa: B007 (path: for the error below)
            os.replace(temporary, full)
        staged, replaced = [], True
        for path, data in files.items():
            if data is None and os.path.lexists(full_path(top, path)):
                os.remove(full_path(top, path))
    except OSError as exc:
        raise WorktreeError(f"cannot write {show_path(path)}: {exc.strerror or exc}") from None
    finally:
        for temporary, _, _ in staged:
            _remove_quietly(temporary)
        if not replaced:
            for folder in reversed(made):
                _remove_quietly(folder, folder=True)


def _make_folders(folder: str) -> List[str]:
    """Create ``folder`` and the missing ones above it; the folders created, outermost
    first."""
    missing = []
    while not os.path.lexists(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    for name in reversed(missing):
        os.mkdir(name)
    return list(reversed(missing))


def _temporary_copy(full: str, data: bytes) -> str:
    """A new file beside ``full`` holding ``data``, with ``full``'s permissions (or, for a
    new file, those the umask gives)."""
    # deferred: secrets: 4 ms to import, only for _temporary_copy()
    import secrets

    folder, name = os.path.split(full)
    temporary = os.path.join(folder, f".{name}.oracle-guard-{secrets.token_hex(4)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            if os.path.isfile(full):
                os.chmod(temporary, os.stat(full).st_mode & 0o7777)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _remove_quietly(temporary)
        raise
    return temporary


def _remove_quietly(path: str, folder: bool = False) -> None:
    try:
        (os.rmdir if folder else os.remove)(path)
    except OSError:
        pass
