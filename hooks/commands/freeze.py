"""Authoring commands: ``freeze add | renew | remove | list`` and ``lock --add``.

They write the working-tree files a human would otherwise edit by hand, by the
contract in the index (as ``oracle-guard lock`` does), and refuse (exit 2) what
the hooks would reject. The rules are the hooks' own code: the state after the
edit (the index, with the freeze files as they stand in the working tree, and
the edit) is judged by freeze-schema and flake-budget, and any finding that was
not there before the edit refuses it before a byte is written (as does an expiry
the edit writes that fails, even when it failed the same way before). Edits keep
the file's comments, layout and line endings (``text_edit``). Files are written
all or none, through temporary files, and never through a symlink.
"""
from __future__ import annotations

import datetime as dt
import math
import os
import posixpath
import re
import sys
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from oracle_guard import clock
from oracle_guard import contract as contract_mod
from oracle_guard.git import worktree
from oracle_guard.findings import Finding
from oracle_guard.report.escaping import inert, show_path, show_text
from oracle_guard.report.json import dump_json
from oracle_guard.report.text import finding_line
from oracle_guard.snapshot import Overlay, Snapshot


class Refused(Exception):
    """The command will not write what the hooks would reject (exit 2)."""


def unsafe(path: str, reason: str) -> Refused:
    return Refused(f"cannot edit {path} safely: {reason}; edit it by hand")


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
    return f"git add -- {shlex.quote(path)}" if path.startswith("-") else \
        f"git add {shlex.quote(path)}"


# -- the state being edited ----------------------------------------------------
class Workspace:
    """The repository, its index and the contract in the index."""

    def __init__(self, args) -> None:
        from oracle_guard.git.plumbing import Git

        self.git = Git(args.C, use_cache=not getattr(args, "no_cache", False))
        try:
            self.git.check_repository()
            top = self.git.toplevel()
            if top is None:
                raise Refused("this command writes files: it needs a working tree "
                              "(not a bare repository)")
            self.top = top
            self.here = os.path.realpath(args.C or ".")
            self.index = Snapshot.of_index(self.git)
            data = contract_mod.read(self.index)
            if data is None:
                raise Refused(f"no {contract_mod.CONTRACT_PATH} in the index: write and "
                              "'git add' the contract first")
            self.contract = contract_mod.Contract(data, self.index, from_base=True)
        except BaseException:
            self.git.close()
            raise

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        self.git.close()

    def git_add(self, path: str) -> str:
        """The ``git add`` for ``path`` that works where the command ran."""
        return git_add(path, self.top, self.here)

    def full_path(self, path: str) -> str:
        try:
            return worktree.full_path(self.top, path)
        except worktree.WorktreeError as exc:
            raise Refused(str(exc)) from None

    def read_worktree(self, path: str) -> Optional[bytes]:
        """The working-tree bytes of ``path``; None when it does not exist."""
        full = self.full_path(path)
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
        from oracle_guard.parsing.patterns import PatternSet

        changed = PatternSet(patterns).select(self.git.unstaged_paths()) if patterns else []
        return Overlay(self.index, {p: self.read_worktree(p) for p in changed},
                       "the working tree")

    def write(self, files: Mapping[str, Optional[bytes]]) -> None:
        """Write (or, for None, delete) working-tree files, all or none."""
        try:
            worktree.write_files(self.top, files)
        except worktree.WorktreeError as exc:
            raise Refused(str(exc)) from None


describe = finding_line  # a finding as `check` prints it


def new_findings(before: Sequence[Finding], after: Sequence[Finding],
                 grew: bool) -> List[Finding]:
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


# -- freeze: the files and their entries ----------------------------------------
class Target(NamedTuple):
    schema: str
    path: str  # the file (for a quarantine-entry add, the file to create)
    patterns: List[str]


def _freeze_sections(contract) -> List[Tuple[str, List[str]]]:
    from oracle_guard.parsing import validation

    return [(e["schema"], e["paths"]) for e in contract.section("freeze") or []
            if e["schema"] in validation.BUILTIN]


def _all_freeze_patterns(contract) -> List[str]:
    return [p for e in contract.section("freeze") or [] for p in e["paths"]]


def _judge(contract, snapshot: Snapshot, now: dt.datetime) -> List[Finding]:
    from oracle_guard.checks import flake_budget
    from oracle_guard.checks import freeze_schema

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

    def __init__(self, ws: Workspace, args, env: Mapping[str, str]) -> None:
        from oracle_guard.checks import freeze_schema

        self.ws, self.args = ws, args
        self.contract = ws.contract
        if not _freeze_sections(self.contract):
            raise Refused("the contract names no freeze file of a built-in schema "
                          "(its 'freeze' section)")
        self.now = clock.now_from(args.now, env)
        self.file = repo_path(args.file) if getattr(args, "file", None) else None
        self.before = ws.working(_all_freeze_patterns(self.contract))
        self.state = freeze_schema.load(self.contract, self.before)

    def require_readable(self, everywhere: bool) -> None:
        """A file that fails freeze-schema is never edited, nor counted as empty."""
        for f in self.state.findings:
            if everywhere or _in_scope(f.path or "", self.file):
                raise Refused(f"{describe(f)}; fix that file by hand first "
                              "(oracle-guard edits only files the hooks accept)")

    def located(self, ident: str):
        """The one entry with this id (in --file when given)."""
        hits = [e for e in self.state.entries if e.id == ident and _in_scope(e.path, self.file)]
        if not hits:
            scope = self.file or ", ".join(sorted({e.path for e in self.state.entries})) \
                or "no freeze file"
            raise Refused(f"unknown id {ident!r}: no frozen entry has it ({scope})")
        if len({e.path for e in hits}) > 1:
            raise Refused(f"{ident!r} is frozen in several files "
                          f"({', '.join(sorted({e.path for e in hits}))}): choose one with "
                          "--file PATH")
        return hits[0]

    def expiry(self) -> str:
        """--until, or now + --days (default: budget.max_days) as a date; never one
        that has passed (flake-budget's budget-expired, even without a budget)."""
        if self.args.until is not None:
            expires = self.args.until
        else:
            days = self.args.days
            if days is None:
                days = (self.contract.section("budget") or {}).get("max_days")
                if days is None:
                    raise Refused("name the expiry with --days N or --until DATE (the "
                                  "contract sets no budget.max_days to default to)")
            try:
                day = (self.now.astimezone(dt.timezone.utc) + dt.timedelta(days=days)).date()
            except OverflowError:
                raise Refused(f"--days {days}: the expiry would fall outside the calendar "
                              "(years 1 to 9999)") from None
            expires = day.isoformat()
        try:
            ends = clock.parse_when(expires)
        except clock.ClockError as exc:
            raise Refused(f"--until: {exc}") from None
        if self.now >= ends:
            raise Refused(f"the expiry {show_text(expires)} has already passed (now "
                          f"{_shown_now(self.now)}): budget-expired")
        return expires

    def edit(self, path: str):
        from oracle_guard.parsing import loaders
        from oracle_guard.parsing import text_edit

        try:
            return text_edit.editor_for(path, self.before.read(path))
        except (loaders.LoadError, text_edit.Unsafe) as exc:
            raise unsafe(path, str(exc)) from None

    def judged(self, intent: str, files: Dict[str, Optional[bytes]], grew: bool,
               edited: Optional[Tuple[str, str]] = None):
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
            errors += [f for f in after_findings
                       if f.code in _EXPIRY_CODES and f.severity == "error"
                       and _concerns(f, *edited) and f not in errors]
        if errors:
            raise Refused(f"cannot {intent}: {describe(errors[0])}")
        return fresh, after_findings

    def apply(self, intent: str, done: str, files: Dict[str, Optional[bytes]],
              grew: bool, edited: Optional[Tuple[str, str]] = None) -> None:
        """Judge the edited state, then write the files or refuse."""
        fresh, after_findings = self.judged(intent, files, grew, edited)
        self.ws.write(files)
        for path, data in files.items():
            if data is None and path not in self.ws.index.entries:
                print(inert(f"removed {show_path(path)} (it was never staged: nothing to add)"))
                continue
            verb = "removed" if data is None else "wrote"
            print(inert(f"{verb} {show_path(path)} ({show_text(done)}); stage it with: "
                        f"{show_text(self.ws.git_add(path))}"))
        for f in fresh:
            print(inert(f"warning: {describe(f)}"))
        for f in after_findings:
            if f.severity == "error" and f not in fresh:
                print(inert(f"note: still failing, not changed by this edit: {describe(f)}"))
        _fixture_notes(self.ws, [p for p, d in files.items() if d is not None])


# flake-budget's verdicts on an expiry: what a renew writes must pass them
_EXPIRY_CODES = ("budget-too-far", "budget-expired", "budget-no-expiry")


def _concerns(f: Finding, path: str, ident: str) -> bool:
    """Is ``f`` about the entry ``ident`` of ``path``? (flake-budget's entry findings
    start with the id's repr)."""
    return f.path == path and f.message.startswith(f"{ident!r} ")


def _fixture_notes(ws: "Workspace", paths: Sequence[str]) -> None:
    from oracle_guard.checks import fixture_lock

    for entry in ws.contract.section("fixtures") or []:
        for path in fixture_lock.pending_fixtures(entry, paths):
            print(inert(f"note: {show_path(path)} is also a fixture locked by "
                        f"{show_path(entry['lock'])}: after '{show_text(ws.git_add(path))}', "
                        f"run 'oracle-guard lock' and stage {show_path(entry['lock'])}"))



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
            out.extend((schema, p, patterns)
                       for p in PatternSet(patterns).select(cmd.before.entries))
    return out


def _label(target: Tuple[str, Optional[str], List[str]]) -> str:
    schema, path, patterns = target
    return path if path is not None else f"{', '.join(patterns)} (one file an entry)"


def _entry_file(cmd: FreezeCommand, ident: str, patterns: List[str],
                folder: Optional[str] = None) -> str:
    """Where a new quarantine-entry record goes: FOLDER/ID.yaml, in the folder
    the existing records share (or the one the pattern names)."""
    from oracle_guard.parsing.patterns import PatternSet

    pattern_set = PatternSet(patterns)
    if not _SAFE_NAME.fullmatch(ident):
        raise Refused(f"id {ident!r} does not make a file name: name the new file with "
                      "--file PATH")
    existing = pattern_set.select(cmd.before.entries)
    ext = ".yml" if existing and all(p.endswith(".yml") for p in existing) else ".yaml"
    if folder is None:
        folders = sorted({posixpath.dirname(p) for p in existing})
        if len(folders) != 1:
            literal = [re.split(r"[*?\[]", p.lstrip("/"), maxsplit=1)[0] for p in patterns]
            folders = sorted({posixpath.dirname(p) for p in literal})
        if len(folders) != 1:
            raise Refused(f"cannot tell which folder a new entry goes to ({', '.join(patterns)})"
                          ": name the new file with --file PATH")
        folder = folders[0]
    path = posixpath.join(folder, ident + ext) if folder else ident + ext
    if not pattern_set.matches(path):
        raise Refused(f"{path} would not match {', '.join(patterns)}: name the new file "
                      "with --file PATH")
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
        raise Refused(f"--file {cmd.file} is not a freeze file the contract names "
                      f"(choose from: {choices})")
    if not targets:
        raise Refused("the contract's freeze files are all missing: there is no file to add to")
    if len(targets) > 1:
        raise Refused("the contract names several freeze files; choose one with --file PATH: "
                      + "; ".join(_label(t) for t in targets))
    schema, path, patterns = targets[0]
    if path is None:
        path = _entry_file(cmd, ident, patterns)
    return Target(schema, path, patterns)


def _quarantine_record(args, ident: str, owner: str, expires: str, reason: str) -> Dict:
    missing = [f"--{n.replace('_', '-')}" for n in _ENTRY_FIELDS
               if getattr(args, n) is None and n != "runs"]
    if missing:
        raise Refused(f"a quarantine-entry record also needs {', '.join(missing)}")
    seed: Any = args.seed
    if re.fullmatch(r"-?(0|[1-9][0-9]{0,17})", seed):
        seed = int(seed)
    runs = args.runs if args.runs is not None else args.pass_count + args.fail_count
    return {"id": ident, "seed": seed, "command": args.command, "runs": runs,
            "pass_count": args.pass_count, "fail_count": args.fail_count,
            "expires_at": expires, "owner": owner, "repro": args.repro, "reason": reason}


def freeze_add(ws: Workspace, args, env: Mapping[str, str]) -> int:
    from oracle_guard.parsing import text_edit

    ident, owner, reason = args.id, args.owner, args.reason
    for name, text in (("the id", ident), ("--owner", owner), ("--reason", reason)):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise Refused(f"{name} is not valid UTF-8 text") from None
    if not ident.strip():
        raise Refused("the id is empty")
    if not owner.strip():
        raise Refused("--owner must name the owning team or person (flake-budget: "
                      "budget-no-owner)")
    if not reason.strip():
        raise Refused("--reason must say why the entry is frozen")
    cmd = FreezeCommand(ws, args, env)
    cmd.require_readable(everywhere=True)  # an unreadable file would hide entries from the cap
    for entry in cmd.state.entries:
        if entry.id == ident:
            raise Refused(f"{ident!r} is already frozen in {entry.path}: use 'oracle-guard "
                          f"freeze renew {ident}' to change its expiry")
    target = _choose_add_target(cmd, ident)
    if target.schema != "quarantine-entry":
        given = [n for n in _ENTRY_FIELDS if getattr(args, n) is not None]
        if given:
            raise Refused(f"--{given[0].replace('_', '-')} is for quarantine-entry records; "
                          f"{target.path} is a {target.schema} file")
    expires = cmd.expiry()
    try:
        if target.schema == "quarantine-entry":
            if target.path in cmd.before.entries or ws.read_worktree(target.path) is not None:
                raise Refused(f"{target.path} already exists: choose another file with --file")
            record = _quarantine_record(args, ident, owner, expires, reason)
            example = _example_entry(cmd, target)
            nl = text_edit.newline_of(example) if example is not None else "\n"
            text = text_edit.new_yaml_mapping(record, example, nl)
            text = _neighbour_modeline(cmd, target).replace("\n", nl) + text
            data = text.encode("utf-8")
        else:
            editor = cmd.edit(target.path)
            if target.schema == "freeze":
                editor.append(("excluded_property_ids",), ident)
                for key, value in (("reason", reason), ("owner", owner), ("expires", expires)):
                    _set_member(editor, key, ident, value)
            elif target.schema == "flake-budget":
                editor.append(("frozen",), {"id": ident, "owner": owner, "expires": expires,
                                            "reason": reason})
            else:
                editor.append((), {"test": ident, "owner": owner, "expires": expires,
                                   "reason": reason})
            data = editor.text.encode("utf-8")
    except text_edit.Unsafe as exc:
        raise unsafe(target.path, str(exc)) from None
    cmd.apply(f"add {ident!r} to {target.path}", f"froze {ident!r} until {expires}",
              {target.path: data}, grew=True)
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


def freeze_renew(ws: Workspace, args, env: Mapping[str, str]) -> int:
    from oracle_guard.parsing import text_edit

    cmd = FreezeCommand(ws, args, env)
    cmd.require_readable(everywhere=False)
    entry = cmd.located(args.id)
    schema = _schema_of(cmd, entry.path)
    expires = cmd.expiry()
    editor = cmd.edit(entry.path)
    try:
        if schema == "quarantine-entry":
            editor.set(("expires_at",), expires)
        elif schema == "freeze":
            _set_member(editor, "expires", args.id, expires)
        elif schema == "flake-budget":
            editor.set(("frozen", _position(editor, schema, args.id), "expires"), expires)
        else:
            editor.set((_position(editor, schema, args.id), "expires"), expires)
    except text_edit.Unsafe as exc:
        raise unsafe(entry.path, str(exc)) from None
    files = {entry.path: editor.text.encode("utf-8")}
    intent = f"renew {args.id!r} in {entry.path}"
    if entry.expires is not None and str(entry.expires) == str(expires):
        cmd.judged(intent, files, grew=False, edited=(entry.path, args.id))
        print(inert(f"{show_text(args.id)!r} already expires {expires} in "
                    f"{show_path(entry.path)}: nothing written (pass --days N or --until DATE "
                    "for another date)"))
        return 0
    was = f" (was {entry.expires})" if entry.expires else ""
    cmd.apply(intent, f"renewed {args.id!r} until {expires}{was}", files, grew=False,
              edited=(entry.path, args.id))
    return 0


def freeze_remove(ws: Workspace, args, env: Mapping[str, str]) -> int:
    from oracle_guard.parsing import text_edit

    cmd = FreezeCommand(ws, args, env)
    cmd.require_readable(everywhere=False)
    entry = cmd.located(args.id)
    schema = _schema_of(cmd, entry.path)
    if schema == "quarantine-entry":
        cmd.apply(f"remove {entry.path}", f"unfroze {args.id!r}", {entry.path: None},
                  grew=False)
        return 0
    editor = cmd.edit(entry.path)
    try:
        if schema == "freeze":
            editor.delete(("excluded_property_ids", _position(editor, schema, args.id)))
            for key in ("reason", "owner", "expires"):
                if args.id in (editor.value.get(key) or {}):
                    editor.delete((key, args.id))
        elif schema == "flake-budget":
            editor.delete(("frozen", _position(editor, schema, args.id)))
        else:
            editor.delete((_position(editor, schema, args.id),))
    except text_edit.Unsafe as exc:
        raise unsafe(entry.path, str(exc)) from None
    cmd.apply(f"remove {args.id!r} from {entry.path}", f"unfroze {args.id!r}",
              {entry.path: editor.text.encode("utf-8")}, grew=False)
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
        left = None if ends is None else \
            math.floor((ends - cmd.now).total_seconds() / 86400)
        rows.append({"id": entry.id, "owner": entry.owner, "expires": entry.expires,
                     "days_left": left, "expired": ends is not None and cmd.now >= ends,
                     "path": entry.path, "line": entry.line, "_ends": ends})
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


def freeze_list(ws: Workspace, args, env: Mapping[str, str]) -> int:
    cmd = FreezeCommand(ws, args, env)
    cmd.require_readable(everywhere=False)
    rows = _listing(cmd)
    gone = _deleted_freeze_files(cmd)
    for path in gone:  # its entries are not listed: say so, never a silent "none"
        print(inert(f"note: {show_path(path)} is deleted in the working tree but the index "
                    "still holds it: its entries are not listed (restore it with 'git "
                    f"restore', or stage the deletion)"),
              file=sys.stderr if args.format == "json" else sys.stdout)
    if args.format == "json":
        sys.stdout.write(dump_json({"now": _shown_now(cmd.now), "entries": rows}))
        return 0
    if not rows:
        print("no frozen entries" + (" in the working tree" if gone else ""))
        return 0
    table = [("EXPIRES", "LEFT", "ID", "OWNER", "FILE")]
    for row in rows:
        file = show_path(row["path"]) + (f":{row['line']}" if row["line"] else "")
        table.append((show_text(row["expires"] or "-"), _left(row), show_text(row["id"]),
                      show_text(row["owner"] or "-"), file))
    widths = [max(len(r[i]) for r in table) for i in range(4)]
    for r in table:
        print(inert("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[4]))
    expired = sum(r["expired"] for r in rows)
    print(f"{len(rows)} frozen" + (f", {expired} expired" if expired else "")
          + f" (now {_shown_now(cmd.now)})")
    return 0


def _deleted_freeze_files(cmd: FreezeCommand) -> List[str]:
    """Freeze files (in --file's scope) the index holds and the working tree lacks."""
    from oracle_guard.parsing.patterns import PatternSet

    patterns = PatternSet(_all_freeze_patterns(cmd.contract))
    return [p for p in sorted(cmd.ws.index.entries) if patterns.matches(p)
            and p not in cmd.before.entries and _in_scope(p, cmd.file)]


# -- lock --add -------------------------------------------------------------------
def lock_add(ws: Workspace, path: str) -> int:
    from oracle_guard.checks import fixture_lock

    entries = [e for e in ws.contract.section("fixtures") or []
               if fixture_lock.pending_fixtures(e, [path])]
    if not entries:
        patterns = [p for e in ws.contract.section("fixtures") or [] for p in e["paths"]]
        raise Refused(f"{show_path(path)} matches no fixtures entry of the contract "
                      f"({', '.join(patterns) or 'no fixtures section'})")
    problem = unlockable_name(path)
    if problem:
        raise Refused(problem)
    if path not in ws.index.entries:
        raise Refused(f"{path!r} is not tracked; the lock hashes what git will commit: run "
                      f"'{ws.git_add(path)}' first")
    if path in ws.git.unstaged_paths():
        raise Refused(f"{path!r} has changes git has not staged; the lock hashes what git "
                      f"will commit: run '{ws.git_add(path)}' first")
    if not ws.index.entries[path].is_regular:
        raise Refused(f"{path!r} is not a regular file (mode {ws.index.entries[path].mode}); "
                      "locks hash bytes, not link targets")
    digest = ws.index.sha256_of([path])[path]
    files: Dict[str, bytes] = {}
    for entry in entries:
        files[entry["lock"]] = _lock_with(ws, entry, path, digest)
    before = Overlay(ws.index, {lock: ws.read_worktree(lock) for lock in files},
                     "the working tree")
    after = Overlay(before, files, "the edited working tree")
    for entry in entries:
        limit = ws.contract.limit("lock_bytes")
        fresh = new_findings(fixture_lock.check_entry(entry, before, limit),
                             fixture_lock.check_entry(entry, after, limit), grew=False)
        if fresh:
            raise Refused(f"cannot add {path} to {entry['lock']}: {describe(fresh[0])}")
    ws.write(files)
    for lock in files:
        print(inert(f"added {show_path(path)} to {show_path(lock)} (sha256 {digest[:12]}…); "
                    f"stage it with: {show_text(ws.git_add(lock))}"))
    return 0


def unlockable_name(path: str) -> Optional[str]:
    """Why no lock can name ``path`` (None when one can): a lock is UTF-8 text, so a
    file name that is not valid UTF-8 cannot be written in it."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return (f"{show_path(path)} is not a valid UTF-8 file name: a lock (UTF-8 text) "
                "cannot name it; rename the file")
    return None


def _lock_with(ws: Workspace, entry: dict, path: str, digest: str) -> bytes:
    """The lock's text with one more entry, in its own style and order."""
    from oracle_guard.checks import fixture_lock
    from oracle_guard.parsing import loaders
    from oracle_guard.parsing import text_edit

    lock, root = entry["lock"], entry.get("root", "")
    key = fixture_lock.relative_to(root, path)
    if key is None:
        raise Refused(f"{path!r} matches the fixture paths but lies outside the lock's root "
                      f"{root!r}: move it or fix the contract")
    data = ws.read_worktree(lock)
    if data is None:
        raise Refused(f"{lock} does not exist yet: run 'oracle-guard lock' to write it")
    try:
        text = loaders.decode_text(data)
    except loaders.LoadError as exc:
        raise Refused(f"{lock} is not a valid lock ({exc}): rewrite it with "
                      "'oracle-guard lock'") from None
    style = fixture_lock.lock_style(text)
    if style == "digest":
        raise Refused(f"{lock} is a single-digest lock, which locks exactly one file: it "
                      f"cannot take {path} too (lock them in a JSON or sha256sum lock)")
    why = fixture_lock.unexpressible(key, style)
    if why:
        raise Refused(f"{show_path(path)} {why}; {fixture_lock.remedy(style, key)}")
    fixtures = fixture_lock.fixture_files(entry, ws.index)
    try:
        parsed = fixture_lock.parse_lock(data, fixtures, root)
    except fixture_lock.LockInvalid as exc:
        line = f":{exc.line}" if exc.line else ""
        raise Refused(f"{lock}{line}: {exc.message}; fix the lock or rewrite it with "
                      "'oracle-guard lock'") from None
    if key in parsed.digests:
        raise Refused(f"{path} is already locked in {lock} (key {key!r}); to record a "
                      "changed fixture, run 'oracle-guard lock'")
    keys = list(parsed.digests)
    position = sum(k < key for k in keys) if keys == sorted(keys) else len(keys)
    if style == "json":
        editor = text_edit.JsonEditor(lock, text)
        try:
            editor.insert((), position, key, digest)
        except text_edit.Unsafe as exc:
            raise unsafe(lock, str(exc)) from None
        return editor.text.encode("utf-8")
    return _sum_lines_with(text, position, key, digest).encode("utf-8")


def _sum_lines_with(text: str, position: int, key: str, digest: str) -> str:
    """``text`` with one more line, escaped as GNU sha256sum escapes it and in the form
    (text, binary or tagged) of the lock's first line."""
    from oracle_guard.checks import fixture_lock

    lines = text.split("\n")
    final_newline = lines[-1] == ""
    if final_newline:
        lines.pop()
    lines.insert(position, fixture_lock.sum_line(key, digest, fixture_lock.sum_form(text)))
    return "\n".join(lines) + ("\n" if final_newline or len(lines) == 1 else "")


# -- command line --------------------------------------------------------------------
def _run(action, args, env: Mapping[str, str]) -> int:
    from oracle_guard.cli import UsageError
    from oracle_guard.parsing.text_edit import Unsafe

    try:
        with Workspace(args) as ws:
            return action(ws, args, env)
    except Refused as exc:
        raise UsageError(str(exc)) from None
    except Unsafe as exc:  # an edit not wrapped with its path: still a refusal
        raise UsageError(f"cannot edit safely: {exc}; edit it by hand") from None


def cmd_freeze(args, env: Mapping[str, str]) -> int:
    actions = {"add": freeze_add, "renew": freeze_renew, "remove": freeze_remove,
               "list": freeze_list}
    return _run(actions[args.freeze_action], args, env)


def cmd_lock_add(args, env: Mapping[str, str]) -> int:
    from oracle_guard.cli import UsageError

    if args.check:
        raise UsageError("--add writes the lock and --check verifies it: use one of them")
    return _run(lambda ws, a, e: lock_add(ws, repo_path(a.add)), args, env)


def _days(text: str) -> int:
    """ASCII digits only, as the clock reads dates (int() would also take '٣', '3_0'
    and ' 3')."""
    import argparse

    if re.fullmatch(r"-?[0-9]{1,100}", text):
        return int(text)
    raise argparse.ArgumentTypeError(f"--days wants a whole number of days (ASCII digits), "
                                     f"not {text!r}")


def _count(text: str) -> int:
    """A record's run count: ASCII digits only, as for --days."""
    import argparse

    if re.fullmatch(r"-?[0-9]{1,100}", text):
        return int(text)
    raise argparse.ArgumentTypeError(f"wants a whole number (ASCII digits), not {text!r}")


def register(sub, common) -> None:
    """The ``freeze`` subcommands (cli.build_parser calls this)."""
    import argparse

    clocked = argparse.ArgumentParser(add_help=False)
    clocked.add_argument("--now", metavar="TIME",
                         help="the clock: ISO-8601 date or date-time with offset "
                              "(default: $ORACLE_GUARD_NOW, else the system clock in UTC)")
    clocked.add_argument("--file", metavar="PATH",
                         help="the freeze file (repo-relative) when the contract names "
                              "several")
    when = argparse.ArgumentParser(add_help=False)
    group = when.add_mutually_exclusive_group()
    group.add_argument("--days", type=_days, metavar="N",
                       help="expire N days from now (default: the contract's budget.max_days)")
    group.add_argument("--until", metavar="DATE",
                       help="expire at DATE (YYYY-MM-DD, through that day in UTC, or a "
                            "date-time with offset)")

    freeze = sub.add_parser("freeze", help="add, renew, remove or list frozen entries")
    actions = freeze.add_subparsers(dest="freeze_action", metavar="ACTION")
    actions.required = True
    add = actions.add_parser("add", parents=[common, clocked, when],
                             help="freeze a test or property (owner, reason, expiry)")
    add.add_argument("id", metavar="ID", help="the test, property or case id to freeze")
    add.add_argument("--owner", required=True, metavar="NAME",
                     help="the owning team or person")
    add.add_argument("--reason", required=True, metavar="TEXT", help="why it is frozen")
    record = add.add_argument_group("quarantine-entry records (one YAML file an entry)")
    record.add_argument("--seed", metavar="SEED")
    record.add_argument("--command", metavar="CMD")
    record.add_argument("--runs", type=_count, metavar="N",
                        help="default: pass count + fail count")
    record.add_argument("--pass-count", type=_count, metavar="N")
    record.add_argument("--fail-count", type=_count, metavar="N")
    record.add_argument("--repro", metavar="TEXT")
    renew = actions.add_parser("renew", parents=[common, clocked, when],
                               help="move a frozen entry's expiry")
    renew.add_argument("id", metavar="ID", help="a frozen id")
    remove = actions.add_parser("remove", parents=[common, clocked],
                                help="unfreeze an entry")
    remove.add_argument("id", metavar="ID", help="a frozen id")
    listing = actions.add_parser("list", parents=[common, clocked],
                                 help="frozen entries with days left, soonest expiry first")
    listing.add_argument("--format", choices=("text", "json"), default="text")
    for parser in (add, renew, remove, listing):
        parser.set_defaults(func=cmd_freeze)
