"""``oracle-guard freeze add | renew | remove | list``: the frozen entries of the
freeze files the contract in the index names.

The rules are the hooks' own code: the state after the edit (the index, with the
freeze files as they stand in the working tree, and the edit) is judged by
freeze-schema and flake-budget, and any finding that was not there before the
edit refuses it before a byte is written (as does an expiry the edit writes that
fails, even when it failed the same way before). Edits keep the file's comments,
layout and line endings (``text_edit``, ``json_edit``, ``yaml_edit``); what every
authoring command shares is in ``workspace``.
"""

from __future__ import annotations

import datetime as dt
import math
import posixpath
import re
import sys
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from oracle_guard import clock
from oracle_guard.commands.options import common
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
from oracle_guard.report.escaping import inert, show_path, show_text
from oracle_guard.report.json import dump_json
from oracle_guard.snapshot import Overlay, Snapshot


# -- freeze: the files and their entries ----------------------------------------
class Target(NamedTuple):
    schema: str
    path: str  # the file (for a quarantine-entry add, the file to create)
    patterns: List[str]


def _freeze_sections(contract) -> List[Tuple[str, List[str]]]:
    from oracle_guard.parsing import validation

    return [
        (e["schema"], e["paths"])
        for e in contract.section("freeze") or []
        if e["schema"] in validation.BUILTIN
    ]


def _all_freeze_patterns(contract) -> List[str]:
    return [p for e in contract.section("freeze") or [] for p in e["paths"]]


def _judge(contract, snapshot: Snapshot, now: dt.datetime) -> List[Finding]:
    from oracle_guard.checks import flake_budget, freeze_schema

    findings = freeze_schema.check(contract, snapshot, snapshot, now)
    if contract.section("budget") is not None:
        findings += flake_budget.check(contract, snapshot, snapshot, now)
    return findings


def _shown_now(now: dt.datetime) -> str:
    return now.replace(microsecond=0).isoformat()


def _in_scope(path: str, chosen: Optional[str]) -> bool:
    return chosen is None or path == chosen or path.startswith(chosen + "/")


class FreezeCommand:
    """What freeze add, renew, remove and list share: the state before the edit."""

    def __init__(
        self, ws: Workspace, now: Optional[str], env: Mapping[str, str], file: Optional[str] = None
    ) -> None:
        from oracle_guard.checks import freeze_schema

        self.ws = ws
        self.contract = ws.contract
        if not _freeze_sections(self.contract):
            raise Refused(
                "the contract names no freeze file of a built-in schema (its 'freeze' section)"
            )
        self.now = clock.now_from(now, env)
        self.file = repo_path(file) if file else None
        self.before = ws.working(_all_freeze_patterns(self.contract))
        self.state = freeze_schema.load(self.contract, self.before)

    def require_readable(self, everywhere: bool) -> None:
        """A file that fails freeze-schema is never edited, nor counted as empty."""
        for f in self.state.findings:
            if everywhere or _in_scope(f.path or "", self.file):
                raise Refused(
                    f"{describe(f)}; fix that file by hand first "
                    "(oracle-guard edits only files the hooks accept)"
                )

    def located(self, ident: str):
        """The one entry with this id (in --file when given)."""
        hits = [e for e in self.state.entries if e.id == ident and _in_scope(e.path, self.file)]
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

    def expiry(self, days: Optional[int], until: Optional[str]) -> str:
        """--until, or now + --days (default: budget.max_days) as a date; never one
        that has passed (flake-budget's budget-expired, even without a budget)."""
        if until is not None:
            expires = until
        else:
            if days is None:
                days = (self.contract.section("budget") or {}).get("max_days")
                if days is None:
                    raise Refused(
                        "name the expiry with --days N or --until DATE (the "
                        "contract sets no budget.max_days to default to)"
                    )
            try:
                day = (self.now.astimezone(dt.timezone.utc) + dt.timedelta(days=days)).date()
            except OverflowError:
                raise Refused(
                    f"--days {days}: the expiry would fall outside the calendar (years 1 to 9999)"
                ) from None
            expires = day.isoformat()
        try:
            ends = clock.parse_when(expires)
        except clock.ClockError as exc:
            raise Refused(f"--until: {exc}") from None
        if self.now >= ends:
            raise Refused(
                f"the expiry {show_text(expires)} has already passed (now "
                f"{_shown_now(self.now)}): budget-expired"
            )
        return expires

    def edit(self, path: str):
        from oracle_guard.parsing import strict_input, text_edit
        from oracle_guard.parsing.file_editor import editor_for

        try:
            return editor_for(path, self.before.read(path))
        except (strict_input.LoadError, text_edit.Unsafe) as exc:
            raise unsafe(path, str(exc)) from None

    def judged(
        self,
        intent: str,
        files: Dict[str, Optional[bytes]],
        grew: bool,
        edited: Optional[Tuple[str, str]] = None,
    ):
        """(new findings, findings after) of the edited state, or Refused. ``edited``
        (path, id): the entry whose expiry this edit writes, refused while that
        expiry fails flake-budget even when it failed before (renewing to the same
        too-far date)."""
        after = Overlay(self.before, files, "the edited working tree")
        before_findings = _judge(self.contract, self.before, self.now)
        after_findings = _judge(self.contract, after, self.now)
        fresh = new_findings(before_findings, after_findings, grew)
        errors = [f for f in fresh if f.severity == "error"]
        if edited is not None:
            errors += [
                f
                for f in after_findings
                if f.code in _EXPIRY_CODES
                and f.severity == "error"
                and _concerns(f, *edited)
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


# flake-budget's verdicts on an expiry: what a renew writes must pass them
_EXPIRY_CODES = ("budget-too-far", "budget-expired", "budget-no-expiry")


def _concerns(f: Finding, path: str, ident: str) -> bool:
    """Is ``f`` about the entry ``ident`` of ``path``? (flake-budget's entry findings
    start with the id's repr)."""
    return f.path == path and f.message.startswith(f"{ident!r} ")


# -- freeze add ------------------------------------------------------------------
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_ENTRY_FIELDS = ("seed", "command", "runs", "pass_count", "fail_count", "repro")


def _add_targets(cmd: FreezeCommand) -> List[Tuple[str, Optional[str], List[str]]]:
    """(schema, file or None for a one-file-per-entry folder, patterns) to add to."""
    from oracle_guard.parsing.patterns import PatternSet

    out: List[Tuple[str, Optional[str], List[str]]] = []
    for schema, patterns in _freeze_sections(cmd.contract):
        if schema == "quarantine-entry":
            out.append((schema, None, patterns))
        else:
            out.extend(
                (schema, p, patterns) for p in PatternSet(patterns).select(cmd.before.entries)
            )
    return out


def _label(target: Tuple[str, Optional[str], List[str]]) -> str:
    schema, path, patterns = target
    return path if path is not None else f"{', '.join(patterns)} (one file an entry)"


def _entry_file(
    cmd: FreezeCommand, ident: str, patterns: List[str], folder: Optional[str] = None
) -> str:
    """Where a new quarantine-entry record goes: FOLDER/ID.yaml, in the folder
    the existing records share (or the one the pattern names)."""
    from oracle_guard.parsing.patterns import PatternSet

    pattern_set = PatternSet(patterns)
    if not _SAFE_NAME.fullmatch(ident):
        raise Refused(f"id {ident!r} does not make a file name: name the new file with --file PATH")
    existing = pattern_set.select(cmd.before.entries)
    ext = ".yml" if existing and all(p.endswith(".yml") for p in existing) else ".yaml"
    if folder is None:
        folders = sorted({posixpath.dirname(p) for p in existing})
        if len(folders) != 1:
            literal = [re.split(r"[*?\[]", p.lstrip("/"), maxsplit=1)[0] for p in patterns]
            folders = sorted({posixpath.dirname(p) for p in literal})
        if len(folders) != 1:
            raise Refused(
                f"cannot tell which folder a new entry goes to ({', '.join(patterns)})"
                ": name the new file with --file PATH"
            )
        folder = folders[0]
    path = posixpath.join(folder, ident + ext) if folder else ident + ext
    if not pattern_set.matches(path):
        raise Refused(
            f"{path} would not match {', '.join(patterns)}: name the new file with --file PATH"
        )
    return path


def _choose_add_target(cmd: FreezeCommand, ident: str) -> Target:
    from oracle_guard.parsing.patterns import PatternSet

    targets = _add_targets(cmd)
    if cmd.file is not None:
        for schema, path, patterns in targets:
            if path is not None and path == cmd.file:
                return Target(schema, path, patterns)
            if path is None and PatternSet(patterns).matches(cmd.file):
                return Target(schema, cmd.file, patterns)
        for schema, path, patterns in targets:
            if path is None:
                try:
                    return Target(schema, _entry_file(cmd, ident, patterns, cmd.file), patterns)
                except Refused:
                    pass
        choices = "; ".join(_label(t) for t in targets) or "none"
        raise Refused(
            f"--file {cmd.file} is not a freeze file the contract names (choose from: {choices})"
        )
    if not targets:
        raise Refused("the contract's freeze files are all missing: there is no file to add to")
    if len(targets) > 1:
        raise Refused(
            "the contract names several freeze files; choose one with --file PATH: "
            + "; ".join(_label(t) for t in targets)
        )
    schema, path, patterns = targets[0]
    if path is None:
        path = _entry_file(cmd, ident, patterns)
    return Target(schema, path, patterns)


def _quarantine_record(
    fields: Mapping[str, Any], ident: str, owner: str, expires: str, reason: str
) -> Dict:
    missing = [
        f"--{n.replace('_', '-')}" for n in _ENTRY_FIELDS if fields.get(n) is None and n != "runs"
    ]
    if missing:
        raise Refused(f"a quarantine-entry record also needs {', '.join(missing)}")
    seed: Any = fields["seed"]
    if re.fullmatch(r"-?(0|[1-9][0-9]{0,17})", seed):
        seed = int(seed)
    runs = fields.get("runs")
    if runs is None:
        runs = fields["pass_count"] + fields["fail_count"]
    return {
        "id": ident,
        "seed": seed,
        "command": fields["command"],
        "runs": runs,
        "pass_count": fields["pass_count"],
        "fail_count": fields["fail_count"],
        "expires_at": expires,
        "owner": owner,
        "repro": fields["repro"],
        "reason": reason,
    }


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
    from oracle_guard.parsing import text_edit
    from oracle_guard.parsing.yaml_edit import new_yaml_mapping

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
    fields = {n: (fields or {}).get(n) for n in _ENTRY_FIELDS}
    cmd = FreezeCommand(ws, now, env, file)
    cmd.require_readable(everywhere=True)  # an unreadable file would hide entries from the cap
    for entry in cmd.state.entries:
        if entry.id == ident:
            raise Refused(
                f"{ident!r} is already frozen in {entry.path}: use 'oracle-guard "
                f"freeze renew {ident}' to change its expiry"
            )
    target = _choose_add_target(cmd, ident)
    if target.schema != "quarantine-entry":
        given = [n for n in _ENTRY_FIELDS if fields[n] is not None]
        if given:
            raise Refused(
                f"--{given[0].replace('_', '-')} is for quarantine-entry records; "
                f"{target.path} is a {target.schema} file"
            )
    expires = cmd.expiry(days, until)
    try:
        if target.schema == "quarantine-entry":
            if target.path in cmd.before.entries or ws.read_worktree(target.path) is not None:
                raise Refused(f"{target.path} already exists: choose another file with --file")
            record = _quarantine_record(fields, ident, owner, expires, reason)
            example = _example_entry(cmd, target)
            nl = text_edit.newline_of(example) if example is not None else "\n"
            text = new_yaml_mapping(record, example, nl)
            text = _neighbour_modeline(cmd, target).replace("\n", nl) + text
            data = text.encode("utf-8")
        else:
            editor = cmd.edit(target.path)
            if target.schema == "freeze":
                editor.append(("excluded_property_ids",), ident)
                for key, value in (("reason", reason), ("owner", owner), ("expires", expires)):
                    _set_member(editor, key, ident, value)
            elif target.schema == "flake-budget":
                editor.append(
                    ("frozen",), {"id": ident, "owner": owner, "expires": expires, "reason": reason}
                )
            else:
                editor.append(
                    (), {"test": ident, "owner": owner, "expires": expires, "reason": reason}
                )
            data = editor.text.encode("utf-8")
    except text_edit.Unsafe as exc:
        raise unsafe(target.path, str(exc)) from None
    cmd.apply(
        f"add {ident!r} to {target.path}",
        f"froze {ident!r} until {expires}",
        {target.path: data},
        grew=True,
    )
    return 0


def _set_member(editor, key: str, ident: str, value: str) -> None:
    if isinstance(editor.value.get(key), dict):
        editor.set((key, ident), value)
    else:
        editor.set((key,), {ident: value})


def _example_entry(cmd: FreezeCommand, target: Target) -> Optional[str]:
    """An existing record's text, whose layout a new one copies."""
    from oracle_guard.parsing.patterns import PatternSet

    for path in sorted(PatternSet(target.patterns).select(cmd.before.entries)):
        try:
            return cmd.before.read(path).decode("utf-8")
        except UnicodeDecodeError:
            continue
    return None


def _neighbour_modeline(cmd: FreezeCommand, target: Target) -> str:
    """The editor schema line (``# yaml-language-server: ...``, which init puts first)
    that a record in the new one's folder starts with, so the new record has it too;
    "" when none has one. Its path is relative, so only the same folder's will do."""
    from oracle_guard.parsing.patterns import PatternSet

    folder = posixpath.dirname(target.path)
    for path in sorted(PatternSet(target.patterns).select(cmd.before.entries)):
        if posixpath.dirname(path) != folder:
            continue
        first = cmd.before.read(path).split(b"\n", 1)[0].rstrip(b"\r")
        if re.match(rb"[ \t]*#[ \t]*yaml-language-server:", first):
            return first.decode("utf-8", "replace") + "\n"
    return ""


# -- freeze renew / remove ----------------------------------------------------------
def _position(editor, schema: str, ident: str) -> int:
    if schema == "flake-budget":
        items = [e["id"] for e in editor.value["frozen"]]
    elif schema == "quarantine-list":
        items = [e["test"] for e in editor.value]
    else:
        items = list(editor.value["excluded_property_ids"])
    return items.index(ident)


def _schema_of(cmd: FreezeCommand, path: str) -> str:
    from oracle_guard.parsing.patterns import PatternSet

    for schema, patterns in _freeze_sections(cmd.contract):
        if PatternSet(patterns).matches(path):
            return schema
    raise Refused(f"{path} is not a freeze file of a built-in schema")


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
    from oracle_guard.parsing import text_edit

    cmd = FreezeCommand(ws, now, env, file)
    cmd.require_readable(everywhere=False)
    entry = cmd.located(ident)
    schema = _schema_of(cmd, entry.path)
    expires = cmd.expiry(days, until)
    editor = cmd.edit(entry.path)
    try:
        if schema == "quarantine-entry":
            editor.set(("expires_at",), expires)
        elif schema == "freeze":
            _set_member(editor, "expires", ident, expires)
        elif schema == "flake-budget":
            editor.set(("frozen", _position(editor, schema, ident), "expires"), expires)
        else:
            editor.set((_position(editor, schema, ident), "expires"), expires)
    except text_edit.Unsafe as exc:
        raise unsafe(entry.path, str(exc)) from None
    files = {entry.path: editor.text.encode("utf-8")}
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
    from oracle_guard.parsing import text_edit

    cmd = FreezeCommand(ws, now, env, file)
    cmd.require_readable(everywhere=False)
    entry = cmd.located(ident)
    schema = _schema_of(cmd, entry.path)
    if schema == "quarantine-entry":
        cmd.apply(f"remove {entry.path}", f"unfroze {ident!r}", {entry.path: None}, grew=False)
        return 0
    editor = cmd.edit(entry.path)
    try:
        if schema == "freeze":
            editor.delete(("excluded_property_ids", _position(editor, schema, ident)))
            for key in ("reason", "owner", "expires"):
                if ident in (editor.value.get(key) or {}):
                    editor.delete((key, ident))
        elif schema == "flake-budget":
            editor.delete(("frozen", _position(editor, schema, ident)))
        else:
            editor.delete((_position(editor, schema, ident),))
    except text_edit.Unsafe as exc:
        raise unsafe(entry.path, str(exc)) from None
    cmd.apply(
        f"remove {ident!r} from {entry.path}",
        f"unfroze {ident!r}",
        {entry.path: editor.text.encode("utf-8")},
        grew=False,
    )
    return 0


# -- freeze list -------------------------------------------------------------------
def _listing(cmd: FreezeCommand) -> List[Dict[str, Any]]:
    rows = []
    for entry in cmd.state.entries:
        if not _in_scope(entry.path, cmd.file):
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
    gone = _deleted_freeze_files(cmd)
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
        sys.stdout.write(dump_json({"now": _shown_now(cmd.now), "entries": rows}))
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
        + f" (now {_shown_now(cmd.now)})"
    )
    return 0


def _deleted_freeze_files(cmd: FreezeCommand) -> List[str]:
    """Freeze files (in --file's scope) the index holds and the working tree lacks."""
    from oracle_guard.parsing.patterns import PatternSet

    patterns = PatternSet(_all_freeze_patterns(cmd.contract))
    return [
        p
        for p in sorted(cmd.ws.index.entries)
        if patterns.matches(p) and p not in cmd.before.entries and _in_scope(p, cmd.file)
    ]


# -- command line ---------------------------------------------------------------
def _days(text: str) -> int:
    """ASCII digits only, as the clock reads dates (int() would also take '٣', '3_0'
    and ' 3')."""
    import argparse

    if re.fullmatch(r"-?[0-9]{1,100}", text):
        return int(text)
    raise argparse.ArgumentTypeError(
        f"--days wants a whole number of days (ASCII digits), not {text!r}"
    )


def _count(text: str) -> int:
    """A record's run count: ASCII digits only, as for --days."""
    import argparse

    if re.fullmatch(r"-?[0-9]{1,100}", text):
        return int(text)
    raise argparse.ArgumentTypeError(f"wants a whole number (ASCII digits), not {text!r}")


def add_parser(sub) -> None:
    """The ``freeze`` subcommands."""
    from oracle_guard.commands.options import Parser

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


def run(options) -> int:
    action = options.freeze_action  # add, renew and remove take a positional ID
    clocked = {"now": options.now, "env": options.env, "file": options.file}
    if action == "add":
        fields = {n: getattr(options, n) for n in _ENTRY_FIELDS}
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
