"""``oracle-guard lock``: write the fixture locks from staged content; ``lock --check``
verifies them (the fixture-lock hook); ``lock --add PATH`` adds one new, staged
fixture to its lock, in the lock's own style and order."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Dict, Optional

from oracle_guard import contract as contract_mod
from oracle_guard.check_run import check
from oracle_guard.commands.options import common, judged, resolve_outputs
from oracle_guard.commands.workspace import (
    Workspace,
    describe,
    edit,
    git_add,
    new_findings,
    repo_path,
    unsafe,
    working_tree,
)
from oracle_guard.errors import Refused, UsageError
from oracle_guard.git import worktree
from oracle_guard.git.plumbing import Git
from oracle_guard.report.escaping import inert, show_path, show_text
from oracle_guard.session import Session
from oracle_guard.snapshot import Overlay, Snapshot

if TYPE_CHECKING:
    from oracle_guard.commands.options import Subparsers


def write_locks(directory: str, use_cache: bool = True) -> int:
    """Write every lock the contract in the index names, all or none."""
    # deferred: cli imports this module for its parser; under 1 ms, for a run
    from oracle_guard.checks import fixture_lock

    session = Session(Git(directory, use_cache=use_cache))
    git = session.git
    try:
        git.check_repository()
        top = working_tree(git, "'oracle-guard lock'")
        index = Snapshot.of_index(git)
        data = contract_mod.read(index, session)
        if data is None:
            raise UsageError(
                f"no {contract_mod.CONTRACT_PATH} in the index: write and "
                "'git add' the contract first"
            )
        entries = data.get("fixtures") or []
        if not entries:
            print("nothing to lock: the contract has no 'fixtures' section")
            return 0
        unstaged = git.unstaged_paths()
        here = os.path.realpath(directory or ".")  # the printed 'git add' works from there
        for entry in entries:
            pending = fixture_lock.pending_fixtures(entry, unstaged)
            if pending:
                state = (
                    "is not tracked"
                    if pending[0] not in index.entries
                    else "has changes git has not staged"
                )
                raise UsageError(
                    f"{pending[0]!r} {state}; the lock hashes what git will commit: run "
                    f"'{git_add(pending[0], top, here)}' first"
                )
            problems = fixture_lock.unlockable(entry, index)
            problems += [
                p for p in map(unlockable_name, fixture_lock.fixture_files(entry, index)) if p
            ]
            if problems:
                raise UsageError(f"cannot lock {entry['lock']}: {problems[0]}")

        built = [(entry["lock"], *fixture_lock.build_lock(entry, index)) for entry in entries]
        # every lock or none
        worktree.write_files(top, {lock: text.encode("utf-8") for lock, text, _ in built})
        for lock, _, count in built:
            print(
                f"wrote {lock} ({count} file{'s' if count != 1 else ''}); "
                f"stage it with: {git_add(lock, top, here)}"
            )
    finally:
        session.close()
    return 0


def lock_add(ws: Workspace, path: str) -> int:
    # deferred: cli imports this module for its parser; under 1 ms, for a run
    from oracle_guard.checks import fixture_lock

    entries = [
        e for e in ws.contract.section("fixtures") or [] if fixture_lock.pending_fixtures(e, [path])
    ]
    if not entries:
        patterns = [p for e in ws.contract.section("fixtures") or [] for p in e["paths"]]
        raise Refused(
            f"{show_path(path)} matches no fixtures entry of the contract "
            f"({', '.join(patterns) or 'no fixtures section'})"
        )
    problem = unlockable_name(path)
    if problem:
        raise Refused(problem)
    if path not in ws.index.entries:
        raise Refused(
            f"{path!r} is not tracked; the lock hashes what git will commit: run "
            f"'{ws.git_add(path)}' first"
        )
    if path in ws.git.unstaged_paths():
        raise Refused(
            f"{path!r} has changes git has not staged; the lock hashes what git "
            f"will commit: run '{ws.git_add(path)}' first"
        )
    if not ws.index.entries[path].is_regular:
        raise Refused(
            f"{path!r} is not a regular file (mode {ws.index.entries[path].mode}); "
            "locks hash bytes, not link targets"
        )
    digest = ws.index.sha256_of([path])[path]
    files: Dict[str, bytes] = {}
    for entry in entries:
        files[entry["lock"]] = _lock_with(ws, entry, path, digest)
    before = Overlay(ws.index, {lock: ws.read_worktree(lock) for lock in files}, "the working tree")
    after = Overlay(before, files, "the edited working tree")
    for entry in entries:
        limit = ws.contract.limit("lock_bytes")
        fresh = new_findings(
            fixture_lock.check_entry(entry, before, limit),
            fixture_lock.check_entry(entry, after, limit),
            grew=False,
        )
        if fresh:
            raise Refused(f"cannot add {path} to {entry['lock']}: {describe(fresh[0])}")
    ws.write(files)
    for lock in files:
        print(
            inert(
                f"added {show_path(path)} to {show_path(lock)} (sha256 {digest[:12]}…); "
                f"stage it with: {show_text(ws.git_add(lock))}"
            )
        )
    return 0


def unlockable_name(path: str) -> Optional[str]:
    """Why no lock can name ``path`` (None when one can): a lock is UTF-8 text, so a
    file name that is not valid UTF-8 cannot be written in it."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return (
            f"{show_path(path)} is not a valid UTF-8 file name: a lock (UTF-8 text) "
            "cannot name it; rename the file"
        )
    return None


def _lock_with(ws: Workspace, entry: dict, path: str, digest: str) -> bytes:
    """The lock's text with one more entry, in its own style and order."""
    # deferred: cli imports this module for its parser; 15 ms, for a run
    from oracle_guard.checks import fixture_lock
    from oracle_guard.parsing import strict_input, text_edit
    from oracle_guard.parsing.json_edit import JsonEditor

    lock, root = entry["lock"], entry.get("root", "")
    key = fixture_lock.relative_to(root, path)
    if key is None:
        raise Refused(
            f"{path!r} matches the fixture paths but lies outside the lock's root "
            f"{root!r}: move it or fix the contract"
        )
    data = ws.read_worktree(lock)
    if data is None:
        raise Refused(f"{lock} does not exist yet: run 'oracle-guard lock' to write it")
    try:
        text = strict_input.decode_text(data)
    except strict_input.LoadError as exc:
        raise Refused(
            f"{lock} is not a valid lock ({exc}): rewrite it with 'oracle-guard lock'"
        ) from None
    style = fixture_lock.lock_style(text)
    if style == "digest":
        raise Refused(
            f"{lock} is a single-digest lock, which locks exactly one file: it "
            f"cannot take {path} too (lock them in a JSON or sha256sum lock)"
        )
    why = fixture_lock.unexpressible(key, style)
    if why:
        raise Refused(f"{show_path(path)} {why}; {fixture_lock.remedy(style, key)}")
    fixtures = fixture_lock.fixture_files(entry, ws.index)
    try:
        parsed = fixture_lock.parse_lock(data, fixtures, root)
    except fixture_lock.LockInvalid as exc:
        line = f":{exc.line}" if exc.line else ""
        raise Refused(
            f"{lock}{line}: {exc.message}; fix the lock or rewrite it with 'oracle-guard lock'"
        ) from None
    if key in parsed.digests:
        raise Refused(
            f"{path} is already locked in {lock} (key {key!r}); to record a "
            "changed fixture, run 'oracle-guard lock'"
        )
    keys = list(parsed.digests)
    position = sum(k < key for k in keys) if keys == sorted(keys) else len(keys)
    if style == "json":
        editor = JsonEditor(lock, text)
        try:
            editor.insert((), position, key, digest)
        except text_edit.Unsafe as exc:
            raise unsafe(lock, str(exc)) from None
        return editor.text.encode("utf-8")
    return _sum_lines_with(text, position, key, digest).encode("utf-8")


def _sum_lines_with(text: str, position: int, key: str, digest: str) -> str:
    """``text`` with one more line, escaped as GNU sha256sum escapes it and in the form
    (text, binary or tagged) of the lock's first line."""
    # deferred: cli imports this module for its parser; under 1 ms, for a run
    from oracle_guard.checks import fixture_lock

    lines = text.split("\n")
    final_newline = lines[-1] == ""
    if final_newline:
        lines.pop()
    lines.insert(position, fixture_lock.sum_line(key, digest, fixture_lock.sum_form(text)))
    return "\n".join(lines) + ("\n" if final_newline or len(lines) == 1 else "")


def add_parser(sub: Subparsers) -> None:
    lock = sub.add_parser(
        "lock", parents=[common(), judged()], help="write the fixture lock(s) from staged content"
    )
    lock.add_argument(
        "--check",
        action="store_true",
        help="verify instead of writing (same as the fixture-lock hook)",
    )
    lock.add_argument(
        "--add", metavar="PATH", help="add one new, staged fixture (repo-relative) to its lock"
    )
    lock.set_defaults(run=run)


def run(options: argparse.Namespace) -> int:

    # deferred: cli imports this module for its parser; under 1 ms, for a run
    from oracle_guard import progress

    progress.started(sys.stderr, options.env)  # a terminal only: never in a report
    try:
        return _run(options)
    finally:
        progress.stopped()


def _run(options: argparse.Namespace) -> int:
    use_cache = not options.no_cache
    if options.output and not options.check:
        raise UsageError("--output writes a verdict's reports: use it with lock --check")
    if options.add is not None:
        if options.check:
            raise UsageError("--add writes the lock and --check verifies it: use one of them")
        path = repo_path(options.add)
        return edit(lambda ws: lock_add(ws, path), options.C, use_cache)
    if options.check:
        return check(
            options.C,
            ["fixture-lock"],
            now=options.now,
            env=options.env,
            output=options.format,
            color=options.color,
            use_cache=use_cache,
            outputs=resolve_outputs(options),
        )
    return write_locks(options.C, use_cache)
