"""``oracle-guard freeze add | renew | remove | list``: the frozen entries of the
freeze files the contract in the index names.

The rules are the hooks' own code: the state after the edit (the index, with the
freeze files as they stand in the working tree, and the edit) is judged by
freeze-schema and flake-budget, and any finding that was not there before the
edit refuses it before a byte is written (as does an expiry the edit writes that
fails, even when it failed the same way before). Edits keep the file's comments,
layout and line endings (``text_edit``). Where an entry is written, and how the
state is judged, is ``freeze_edits``; what every authoring command shares is in
``workspace``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import re
import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Tuple

from oracle_guard import clock
from oracle_guard.commands.options import Parser, common
from oracle_guard.commands.workspace import (
    Workspace,
    describe,
    edit,
    fixture_notes,
    new_findings,
    repo_path,
    unsafe,
)
from oracle_guard.errors import Refused
from oracle_guard.findings import Finding
from oracle_guard.freeze_edits import (
    ENTRY_FIELDS,
    EXPIRY_CODES,
    add_entry,
    add_target,
    all_freeze_patterns,
    concerns,
    deleted_freeze_files,
    expiry,
    freeze_sections,
    in_scope,
    judge_freeze_files,
    quarantine_record,
    record_file,
    remove_entry,
    renew_entry,
    schema_of,
    shown_now,
)
from oracle_guard.parsing import strict_input
from oracle_guard.report.escaping import inert, show_path, show_text
from oracle_guard.report.json import dump_json
from oracle_guard.snapshot import Overlay

if TYPE_CHECKING:
    from oracle_guard.checks.freeze_files import Frozen
    from oracle_guard.commands.options import Subparsers
    from oracle_guard.parsing.text_edit import Editor


class FreezeCommand:
    """What freeze add, renew, remove and list share: the state before the edit."""

    def __init__(
        self, ws: Workspace, now: Optional[str], env: Mapping[str, str], file: Optional[str] = None
    ) -> None:
        self.ws = ws
        self.contract = ws.contract
        if not freeze_sections(self.contract):
            raise Refused(
                "the contract names no freeze file of a built-in schema (its 'freeze' section)"
            )
        self.now = clock.now_from(now, env)
        self.file = repo_path(file) if file else None
        self.before = ws.working(all_freeze_patterns(self.contract))
        # deferred: every --help builds freeze's parser, and it needs neither the checks
        # nor the editors
        from oracle_guard.checks import freeze_schema

        self.state = freeze_schema.load(self.contract, self.before)

    def require_readable(self, everywhere: bool) -> None:
        """A file that fails freeze-schema is never edited, nor counted as empty."""
        for f in self.state.findings:
            if everywhere or in_scope(f.path or "", self.file):
                raise Refused(
                    f"{describe(f)}; fix that file by hand first "
                    "(oracle-guard edits only files the hooks accept)"
                )

    def located(self, ident: str) -> Frozen:
        """The one entry with this id (in --file when given)."""
        hits = [e for e in self.state.entries if e.id == ident and in_scope(e.path, self.file)]
        if not hits:
            scope = (
                self.file
                or ", ".join(sorted({e.path for e in self.state.entries}))
                or "no freeze file"
            )
            raise Refused(f"unknown id {ident!r}: no frozen entry has it ({scope})")
        if len({e.path for e in hits}) > 1:
            raise Refused(
                f"{ident!r} is frozen in several files "
                f"({', '.join(sorted({e.path for e in hits}))}): choose one with "
                "--file PATH"
            )
        return hits[0]

    def edited(self, path: str, change: Callable[[Editor], None]) -> bytes:
        """``path``'s bytes after ``change``, made on its editor; refused when the
        file cannot be edited safely."""
        from oracle_guard.parsing import text_edit  # deferred, as the checks in __init__
        from oracle_guard.parsing.file_editor import editor_for

        try:
            editor = editor_for(path, self.before.read(path))
            change(editor)
        except (strict_input.LoadError, text_edit.Unsafe) as exc:
            raise unsafe(path, str(exc)) from None
        return editor.text.encode("utf-8")

    def judged(
        self,
        intent: str,
        files: Dict[str, Optional[bytes]],
        grew: bool,
        edited: Optional[Tuple[str, str]] = None,
    ) -> Tuple[List[Finding], List[Finding]]:
        """(new findings, findings after) of the edited state, or Refused. ``edited``
        (path, id): the entry whose expiry this edit writes, refused while that
        expiry fails flake-budget even when it failed before (renewing to the same
        too-far date)."""
        after = Overlay(self.before, files, "the edited working tree")
        before_findings = judge_freeze_files(self.contract, self.before, self.now)
        after_findings = judge_freeze_files(self.contract, after, self.now)
        fresh = new_findings(before_findings, after_findings, grew)
        errors = [f for f in fresh if f.severity == "error"]
        if edited is not None:
            errors += [
                f
                for f in after_findings
                if f.code in EXPIRY_CODES
                and f.severity == "error"
                and concerns(f, *edited)
                and f not in errors
            ]
        if errors:
            raise Refused(f"cannot {intent}: {describe(errors[0])}")
        return fresh, after_findings

    def apply(
        self,
        intent: str,
        done: str,
        files: Dict[str, Optional[bytes]],
        grew: bool,
        edited: Optional[Tuple[str, str]] = None,
    ) -> None:
        """Judge the edited state, then write the files or refuse."""
        fresh, after_findings = self.judged(intent, files, grew, edited)
        self.ws.write(files)
        for path, data in files.items():
            if data is None and path not in self.ws.index.entries:
                print(inert(f"removed {show_path(path)} (it was never staged: nothing to add)"))
                continue
            verb = "removed" if data is None else "wrote"
            print(
                inert(
                    f"{verb} {show_path(path)} ({show_text(done)}); stage it with: "
                    f"{show_text(self.ws.git_add(path))}"
                )
            )
        for f in fresh:
            print(inert(f"warning: {describe(f)}"))
        for f in after_findings:
            if f.severity == "error" and f not in fresh:
                print(inert(f"note: still failing, not changed by this edit: {describe(f)}"))
        fixture_notes(self.ws, [p for p, d in files.items() if d is not None])


# -- freeze add ------------------------------------------------------------------
def freeze_add(
    ws: Workspace,
    ident: str,
    owner: str,
    reason: str,
    *,
    now: Optional[str],
    env: Mapping[str, str],
    file: Optional[str] = None,
    days: Optional[int] = None,
    until: Optional[str] = None,
    fields: Optional[Mapping[str, Any]] = None,
) -> int:
    """Freeze ``ident``; ``fields``: the quarantine-entry record's fields given (seed, command,
    runs, pass_count, fail_count, repro), None where not given."""
    for name, text in (("the id", ident), ("--owner", owner), ("--reason", reason)):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise Refused(f"{name} is not valid UTF-8 text") from None
    if not ident.strip():
        raise Refused("the id is empty")
    if not owner.strip():
        raise Refused("--owner must name the owning team or person (flake-budget: budget-no-owner)")
    if not reason.strip():
        raise Refused("--reason must say why the entry is frozen")
    fields = {n: (fields or {}).get(n) for n in ENTRY_FIELDS}
    cmd = FreezeCommand(ws, now, env, file)
    cmd.require_readable(everywhere=True)  # an unreadable file would hide entries from the cap
    for entry in cmd.state.entries:
        if entry.id == ident:
            raise Refused(
                f"{ident!r} is already frozen in {entry.path}: use 'oracle-guard "
                f"freeze renew {ident}' to change its expiry"
            )
    target = add_target(cmd.contract, cmd.before, ident, cmd.file)
    if target.schema != "quarantine-entry":
        given = [n for n in ENTRY_FIELDS if fields[n] is not None]
        if given:
            raise Refused(
                f"--{given[0].replace('_', '-')} is for quarantine-entry records; "
                f"{target.path} is a {target.schema} file"
            )
    expires = expiry(cmd.contract, cmd.now, days, until)
    if target.schema == "quarantine-entry":
        from oracle_guard.parsing.text_edit import Unsafe  # deferred, as in FreezeCommand

        if target.path in cmd.before.entries or ws.read_worktree(target.path) is not None:
            raise Refused(f"{target.path} already exists: choose another file with --file")
        record = quarantine_record(fields, ident, owner, expires, reason)
        try:
            data = record_file(cmd.before, target, record)
        except Unsafe as exc:
            raise unsafe(target.path, str(exc)) from None
    else:
        data = cmd.edited(
            target.path,
            lambda editor: add_entry(editor, target.schema, ident, owner, expires, reason),
        )
    cmd.apply(
        f"add {ident!r} to {target.path}",
        f"froze {ident!r} until {expires}",
        {target.path: data},
        grew=True,
    )
    return 0


# -- freeze renew / remove ----------------------------------------------------------
def freeze_renew(
    ws: Workspace,
    ident: str,
    *,
    now: Optional[str],
    env: Mapping[str, str],
    file: Optional[str] = None,
    days: Optional[int] = None,
    until: Optional[str] = None,
) -> int:
    cmd = FreezeCommand(ws, now, env, file)
    cmd.require_readable(everywhere=False)
    entry = cmd.located(ident)
    schema = schema_of(cmd.contract, entry.path)
    expires = expiry(cmd.contract, cmd.now, days, until)
    data = cmd.edited(entry.path, lambda editor: renew_entry(editor, schema, ident, expires))
    files: Dict[str, Optional[bytes]] = {entry.path: data}
    intent = f"renew {ident!r} in {entry.path}"
    if entry.expires is not None and str(entry.expires) == str(expires):
        cmd.judged(intent, files, grew=False, edited=(entry.path, ident))
        print(
            inert(
                f"{show_text(ident)!r} already expires {expires} in "
                f"{show_path(entry.path)}: nothing written (pass --days N or --until DATE "
                "for another date)"
            )
        )
        return 0
    was = f" (was {entry.expires})" if entry.expires else ""
    cmd.apply(
        intent,
        f"renewed {ident!r} until {expires}{was}",
        files,
        grew=False,
        edited=(entry.path, ident),
    )
    return 0


def freeze_remove(
    ws: Workspace,
    ident: str,
    *,
    now: Optional[str],
    env: Mapping[str, str],
    file: Optional[str] = None,
) -> int:
    cmd = FreezeCommand(ws, now, env, file)
    cmd.require_readable(everywhere=False)
    entry = cmd.located(ident)
    schema = schema_of(cmd.contract, entry.path)
    if schema == "quarantine-entry":
        cmd.apply(f"remove {entry.path}", f"unfroze {ident!r}", {entry.path: None}, grew=False)
        return 0
    data = cmd.edited(entry.path, lambda editor: remove_entry(editor, schema, ident))
    cmd.apply(
        f"remove {ident!r} from {entry.path}",
        f"unfroze {ident!r}",
        {entry.path: data},
        grew=False,
    )
    return 0


# -- freeze list -------------------------------------------------------------------
def _listing(cmd: FreezeCommand) -> List[Dict[str, Any]]:
    rows = []
    for entry in cmd.state.entries:
        if not in_scope(entry.path, cmd.file):
            continue
        ends = None
        try:
            ends = clock.parse_when(entry.expires) if entry.expires else None
        except clock.ClockError:
            pass
        left = None if ends is None else math.floor((ends - cmd.now).total_seconds() / 86400)
        rows.append(
            {
                "id": entry.id,
                "owner": entry.owner,
                "expires": entry.expires,
                "days_left": left,
                "expired": ends is not None and cmd.now >= ends,
                "path": entry.path,
                "line": entry.line,
                "_ends": ends,
            }
        )
    far = dt.datetime.max.replace(tzinfo=dt.timezone.utc)
    rows.sort(key=lambda r: (r["_ends"] or far, r["id"], r["path"]))
    for row in rows:
        del row["_ends"]
    return rows


def _left(row: Dict[str, Any]) -> str:
    if row["expires"] is None or row["days_left"] is None:
        return "no expiry"
    if row["expired"]:
        return "EXPIRED"
    days = row["days_left"]
    return "under a day" if days == 0 else f"{days} day{'s' if days != 1 else ''}"


def freeze_list(
    ws: Workspace,
    *,
    now: Optional[str],
    env: Mapping[str, str],
    file: Optional[str] = None,
    output: str = "text",
) -> int:
    """``output``: text (a table) or json."""
    cmd = FreezeCommand(ws, now, env, file)
    cmd.require_readable(everywhere=False)
    rows = _listing(cmd)
    gone = deleted_freeze_files(cmd.contract, cmd.ws.index, cmd.before, cmd.file)
    for path in gone:  # its entries are not listed: say so, never a silent "none"
        print(
            inert(
                f"note: {show_path(path)} is deleted in the working tree but the index "
                "still holds it: its entries are not listed (restore it with 'git "
                f"restore', or stage the deletion)"
            ),
            file=sys.stderr if output == "json" else sys.stdout,
        )
    if output == "json":
        sys.stdout.write(dump_json({"now": shown_now(cmd.now), "entries": rows}))
        return 0
    if not rows:
        print("no frozen entries" + (" in the working tree" if gone else ""))
        return 0
    table = [("EXPIRES", "LEFT", "ID", "OWNER", "FILE")]
    for row in rows:
        file = show_path(row["path"]) + (f":{row['line']}" if row["line"] else "")
        table.append(
            (
                show_text(row["expires"] or "-"),
                _left(row),
                show_text(row["id"]),
                show_text(row["owner"] or "-"),
                file,
            )
        )
    widths = [max(len(r[i]) for r in table) for i in range(4)]
    for r in table:
        print(inert("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[4]))
    expired = sum(r["expired"] for r in rows)
    print(
        f"{len(rows)} frozen"
        + (f", {expired} expired" if expired else "")
        + f" (now {shown_now(cmd.now)})"
    )
    return 0


# -- command line ---------------------------------------------------------------
def _days(text: str) -> int:
    """ASCII digits only, as the clock reads dates (int() would also take '٣', '3_0'
    and ' 3')."""
    if re.fullmatch(r"-?[0-9]{1,100}", text):
        return int(text)
    raise argparse.ArgumentTypeError(
        f"--days wants a whole number of days (ASCII digits), not {text!r}"
    )


def _count(text: str) -> int:
    """A record's run count: ASCII digits only, as for --days."""
    if re.fullmatch(r"-?[0-9]{1,100}", text):
        return int(text)
    raise argparse.ArgumentTypeError(f"wants a whole number (ASCII digits), not {text!r}")


def add_parser(sub: Subparsers) -> None:
    """The ``freeze`` subcommands."""
    clocked = Parser(add_help=False)
    clocked.add_argument(
        "--now",
        metavar="TIME",
        help="the clock: ISO-8601 date or date-time with offset "
        "(default: $ORACLE_GUARD_NOW, else the system clock in UTC)",
    )
    clocked.add_argument(
        "--file",
        metavar="PATH",
        help="the freeze file (repo-relative) when the contract names several",
    )
    when = Parser(add_help=False)
    group = when.add_mutually_exclusive_group()
    group.add_argument(
        "--days",
        type=_days,
        metavar="N",
        help="expire N days from now (default: the contract's budget.max_days)",
    )
    group.add_argument(
        "--until",
        metavar="DATE",
        help="expire at DATE (YYYY-MM-DD, through that day in UTC, or a date-time with offset)",
    )

    freeze = sub.add_parser("freeze", help="add, renew, remove or list frozen entries")
    actions = freeze.add_subparsers(dest="freeze_action", metavar="ACTION")
    actions.required = True
    add = actions.add_parser(
        "add",
        parents=[common(), clocked, when],
        help="freeze a test or property (owner, reason, expiry)",
    )
    add.add_argument("id", metavar="ID", help="the test, property or case id to freeze")
    add.add_argument("--owner", required=True, metavar="NAME", help="the owning team or person")
    add.add_argument("--reason", required=True, metavar="TEXT", help="why it is frozen")
    record = add.add_argument_group("quarantine-entry records (one YAML file an entry)")
    record.add_argument("--seed", metavar="SEED", help="the seed that reproduces the failure")
    record.add_argument("--command", metavar="CMD", help="the command that runs the case")
    record.add_argument(
        "--runs", type=_count, metavar="N", help="how many runs (default: pass count + fail count)"
    )
    record.add_argument("--pass-count", type=_count, metavar="N", help="runs that passed")
    record.add_argument("--fail-count", type=_count, metavar="N", help="runs that failed")
    record.add_argument("--repro", metavar="TEXT", help="how to reproduce the failure")
    renew = actions.add_parser(
        "renew", parents=[common(), clocked, when], help="move a frozen entry's expiry"
    )
    renew.add_argument("id", metavar="ID", help="a frozen id")
    remove = actions.add_parser("remove", parents=[common(), clocked], help="unfreeze an entry")
    remove.add_argument("id", metavar="ID", help="a frozen id")
    listing = actions.add_parser(
        "list",
        parents=[common(), clocked],
        help="frozen entries with days left, soonest expiry first",
    )
    listing.add_argument("--format", choices=("text", "json"), default="text")
    for parser in (add, renew, remove, listing):
        parser.set_defaults(run=run)


def run(options: argparse.Namespace) -> int:
    action = options.freeze_action  # add, renew and remove take a positional ID
    clocked = {"now": options.now, "env": options.env, "file": options.file}
    if action == "add":
        fields = {n: getattr(options, n) for n in ENTRY_FIELDS}
        return edit(
            lambda ws: freeze_add(
                ws,
                options.id,
                options.owner,
                options.reason,
                days=options.days,
                until=options.until,
                fields=fields,
                **clocked,
            ),
            options.C,
        )
    if action == "renew":
        return edit(
            lambda ws: freeze_renew(
                ws, options.id, days=options.days, until=options.until, **clocked
            ),
            options.C,
        )
    if action == "remove":
        return edit(lambda ws: freeze_remove(ws, options.id, **clocked), options.C)
    return edit(lambda ws: freeze_list(ws, output=options.format, **clocked), options.C)
