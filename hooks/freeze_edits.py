"""The edits ``oracle-guard freeze`` makes to the freeze files the contract names,
on plain values (the contract, the working tree as a snapshot, the clock): which
file a new entry goes to, the record a quarantine-entry file holds, where each
built-in schema keeps an entry's id, owner, reason and expiry, the expiry an edit
writes, and how the edited state is judged (freeze-schema and flake-budget).

The freeze command holds the workspace: it reads the state before the edit,
refuses what the judgement adds, and writes the files.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from oracle_guard import clock
from oracle_guard.contract import Contract
from oracle_guard.errors import Refused
from oracle_guard.findings import Finding
from oracle_guard.parsing import validation
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.report.escaping import show_text
from oracle_guard.snapshot import Snapshot

if TYPE_CHECKING:
    from oracle_guard.parsing.text_edit import Editor

# a quarantine-entry record's fields beyond the id, owner, reason and expiry
ENTRY_FIELDS = ("seed", "command", "runs", "pass_count", "fail_count", "repro")
# flake-budget's verdicts on an expiry: what a renew writes must pass them
EXPIRY_CODES = ("budget-too-far", "budget-expired", "budget-no-expiry")
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class Target(NamedTuple):
    schema: str
    path: str  # the file (for a quarantine-entry add, the file to create)
    patterns: List[str]


# -- the files and the state they make --------------------------------------------
def freeze_sections(contract: Contract) -> List[Tuple[str, List[str]]]:
    """(schema, paths) of each freeze file of a built-in schema the contract names."""
    return [
        (e["schema"], e["paths"])
        for e in contract.section("freeze") or []
        if e["schema"] in validation.BUILTIN
    ]


def all_freeze_patterns(contract: Contract) -> List[str]:
    return [p for e in contract.section("freeze") or [] for p in e["paths"]]


def judge_freeze_files(contract: Contract, snapshot: Snapshot, now: dt.datetime) -> List[Finding]:
    """freeze-schema's findings, and flake-budget's when the contract has a budget."""
    # deferred: the freeze command imports this module, and every --help builds its parser
    from oracle_guard.checks import flake_budget, freeze_schema

    findings = freeze_schema.check(contract, snapshot, snapshot, now)
    if contract.section("budget") is not None:
        findings += flake_budget.check(contract, snapshot, snapshot, now)
    return findings


def concerns(f: Finding, path: str, ident: str) -> bool:
    """Is ``f`` about the entry ``ident`` of ``path``? (flake-budget's entry findings
    start with the id's repr)."""
    return f.path == path and f.message.startswith(f"{ident!r} ")


def shown_now(now: dt.datetime) -> str:
    return now.replace(microsecond=0).isoformat()


def in_scope(path: str, chosen: Optional[str]) -> bool:
    """Is ``path`` the file (or in the folder) --file chose? Everything is without one."""
    return chosen is None or path == chosen or path.startswith(chosen + "/")


def schema_of(contract: Contract, path: str) -> str:
    for schema, patterns in freeze_sections(contract):
        if PatternSet(patterns).matches(path):
            return schema
    raise Refused(f"{path} is not a freeze file of a built-in schema")


def deleted_freeze_files(
    contract: Contract, index: Snapshot, working: Snapshot, file: Optional[str]
) -> List[str]:
    """Freeze files (in --file's scope) the index holds and the working tree lacks."""
    patterns = PatternSet(all_freeze_patterns(contract))
    return [
        p
        for p in sorted(index.entries)
        if patterns.matches(p) and p not in working.entries and in_scope(p, file)
    ]


def expiry(contract: Contract, now: dt.datetime, days: Optional[int], until: Optional[str]) -> str:
    """--until, or now + --days (default: budget.max_days) as a date; never one
    that has passed (flake-budget's budget-expired, even without a budget)."""
    if until is not None:
        expires = until
    else:
        if days is None:
            days = (contract.section("budget") or {}).get("max_days")
            if days is None:
                raise Refused(
                    "name the expiry with --days N or --until DATE (the "
                    "contract sets no budget.max_days to default to)"
                )
        try:
            day = (now.astimezone(dt.timezone.utc) + dt.timedelta(days=days)).date()
        except OverflowError:
            raise Refused(
                f"--days {days}: the expiry would fall outside the calendar (years 1 to 9999)"
            ) from None
        expires = day.isoformat()
    try:
        ends = clock.parse_when(expires)
    except clock.ClockError as exc:
        raise Refused(f"--until: {exc}") from None
    if now >= ends:
        raise Refused(
            f"the expiry {show_text(expires)} has already passed (now "
            f"{shown_now(now)}): budget-expired"
        )
    return expires


# -- where a new entry goes ---------------------------------------------------------
def _add_targets(
    contract: Contract, before: Snapshot
) -> List[Tuple[str, Optional[str], List[str]]]:
    """(schema, file or None for a one-file-per-entry folder, patterns) to add to."""
    out: List[Tuple[str, Optional[str], List[str]]] = []
    for schema, patterns in freeze_sections(contract):
        if schema == "quarantine-entry":
            out.append((schema, None, patterns))
        else:
            out.extend((schema, p, patterns) for p in PatternSet(patterns).select(before.entries))
    return out


def _label(target: Tuple[str, Optional[str], List[str]]) -> str:
    schema, path, patterns = target
    return path if path is not None else f"{', '.join(patterns)} (one file an entry)"


def _entry_file(
    before: Snapshot, ident: str, patterns: List[str], folder: Optional[str] = None
) -> str:
    """Where a new quarantine-entry record goes: FOLDER/ID.yaml, in the folder
    the existing records share (or the one the pattern names)."""
    pattern_set = PatternSet(patterns)
    if not _SAFE_NAME.fullmatch(ident):
        raise Refused(f"id {ident!r} does not make a file name: name the new file with --file PATH")
    existing = pattern_set.select(before.entries)
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


def add_target(contract: Contract, before: Snapshot, ident: str, file: Optional[str]) -> Target:
    """The file ``ident`` is added to: --file's, or the one freeze file the
    contract names (a new record file, for a quarantine-entry folder)."""
    targets = _add_targets(contract, before)
    if file is not None:
        for schema, path, patterns in targets:
            if path is not None and path == file:
                return Target(schema, path, patterns)
            if path is None and PatternSet(patterns).matches(file):
                return Target(schema, file, patterns)
        for schema, path, patterns in targets:
            if path is None:
                try:
                    return Target(schema, _entry_file(before, ident, patterns, file), patterns)
                except Refused:
                    pass
        choices = "; ".join(_label(t) for t in targets) or "none"
        raise Refused(
            f"--file {file} is not a freeze file the contract names (choose from: {choices})"
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
        path = _entry_file(before, ident, patterns)
    return Target(schema, path, patterns)


# -- a new quarantine-entry record -----------------------------------------------------
def quarantine_record(
    fields: Mapping[str, Any], ident: str, owner: str, expires: str, reason: str
) -> Dict[str, Any]:
    """The record's fields, in the schema's order; ``fields``: those of
    ENTRY_FIELDS given (None where not), the run count defaulting to the sum."""
    missing = [
        f"--{n.replace('_', '-')}" for n in ENTRY_FIELDS if fields.get(n) is None and n != "runs"
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


def record_file(before: Snapshot, target: Target, record: Mapping[str, Any]) -> bytes:
    """The new record file's bytes, laid out and ended as an existing record is
    (text_edit.Unsafe when they would not read back as ``record``)."""
    from oracle_guard.parsing import text_edit  # deferred, as the checks in judge_freeze_files
    from oracle_guard.parsing.yaml_edit import new_yaml_mapping

    example = _example_entry(before, target)
    nl = text_edit.newline_of(example) if example is not None else "\n"
    text = new_yaml_mapping(dict(record), example, nl)
    return (_neighbour_modeline(before, target).replace("\n", nl) + text).encode("utf-8")


def _example_entry(before: Snapshot, target: Target) -> Optional[str]:
    """An existing record's text, whose layout a new one copies."""
    for path in sorted(PatternSet(target.patterns).select(before.entries)):
        try:
            return before.read(path).decode("utf-8")
        except UnicodeDecodeError:
            continue
    return None


def _neighbour_modeline(before: Snapshot, target: Target) -> str:
    """The editor schema line (``# yaml-language-server: ...``, which init puts first)
    that a record in the new one's folder starts with, so the new record has it too;
    "" when none has one. Its path is relative, so only the same folder's will do."""
    folder = posixpath.dirname(target.path)
    for path in sorted(PatternSet(target.patterns).select(before.entries)):
        if posixpath.dirname(path) != folder:
            continue
        first = before.read(path).split(b"\n", 1)[0].rstrip(b"\r")
        if re.match(rb"[ \t]*#[ \t]*yaml-language-server:", first):
            return first.decode("utf-8", "replace") + "\n"
    return ""


# -- an entry of a file that holds several, by schema (text_edit.Unsafe when it cannot) --
def add_entry(
    editor: Editor, schema: str, ident: str, owner: str, expires: str, reason: str
) -> None:
    if schema == "freeze":
        editor.append(("excluded_property_ids",), ident)
        for key, value in (("reason", reason), ("owner", owner), ("expires", expires)):
            _set_member(editor, key, ident, value)
    elif schema == "flake-budget":
        editor.append(
            ("frozen",), {"id": ident, "owner": owner, "expires": expires, "reason": reason}
        )
    else:
        editor.append((), {"test": ident, "owner": owner, "expires": expires, "reason": reason})


def renew_entry(editor: Editor, schema: str, ident: str, expires: str) -> None:
    """Set the expiry (a quarantine-entry record's file holds the one entry)."""
    if schema == "quarantine-entry":
        editor.set(("expires_at",), expires)
    elif schema == "freeze":
        _set_member(editor, "expires", ident, expires)
    elif schema == "flake-budget":
        editor.set(("frozen", _position(editor, schema, ident), "expires"), expires)
    else:
        editor.set((_position(editor, schema, ident), "expires"), expires)


def remove_entry(editor: Editor, schema: str, ident: str) -> None:
    """Delete the entry (a quarantine-entry record goes with its file, not here)."""
    if schema == "freeze":
        editor.delete(("excluded_property_ids", _position(editor, schema, ident)))
        for key in ("reason", "owner", "expires"):
            if ident in (editor.value.get(key) or {}):
                editor.delete((key, ident))
    elif schema == "flake-budget":
        editor.delete(("frozen", _position(editor, schema, ident)))
    else:
        editor.delete((_position(editor, schema, ident),))


def _set_member(editor: Editor, key: str, ident: str, value: str) -> None:
    if isinstance(editor.value.get(key), dict):
        editor.set((key, ident), value)
    else:
        editor.set((key,), {ident: value})


def _position(editor: Editor, schema: str, ident: str) -> int:
    if schema == "flake-budget":
        items = [e["id"] for e in editor.value["frozen"]]
    elif schema == "quarantine-list":
        items = [e["test"] for e in editor.value]
    else:
        items = list(editor.value["excluded_property_ids"])
    return items.index(ident)
