"""``oracle-guard seeds append FILE VALUE...``: append seeds the way seed-append-only
reads them.

FILE is a json-array or jsonl seed file of the contract in the index; each VALUE
is strict JSON text. A JSON array gets the new elements before its closing ``]``
in the layout of its last element; a JSONL file gets one line a value, written
the way its existing lines are (compact separators and sorted keys when they
use them). A value already present is refused (a duplicate seed), and so is a
file that would exceed ``limits.seed_bytes``; the result is judged by
seed-append-only against HEAD before anything is written, record rules
included. ``--digest`` fills in each new record's hash field from its payload,
in the entry's digest form, for a human who cannot compute it by hand.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any, Dict, List, Sequence, Tuple

from oracle_guard.commands.options import common
from oracle_guard.commands.workspace import (
    Workspace,
    describe,
    edit,
    fixture_notes,
    repo_path,
    unsafe,
)
from oracle_guard.errors import Refused
from oracle_guard.parsing import strict_input, strict_json
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.report.escaping import inert, show_path, show_text
from oracle_guard.snapshot import Overlay, Snapshot

if TYPE_CHECKING:
    from oracle_guard.contract import Contract

if TYPE_CHECKING:
    from oracle_guard.commands.options import Subparsers

FORMATS = ("json-array", "jsonl")


def _values(texts: Sequence[str]) -> List[Any]:
    values = []
    for text in texts:
        try:
            values.append(strict_json.load_json(text.encode("utf-8")).value)
        except UnicodeEncodeError:
            raise Refused(f"VALUE {text!r} is not valid UTF-8") from None
        except strict_input.LoadError as exc:
            raise Refused(f"VALUE {text!r} is not strict JSON: {exc}") from None
    return values


def _existing(path: str, fmt: str, data: bytes) -> List[Tuple[Any, str]]:
    """(seed, where) for every seed in the file; a file that does not parse is refused."""

    def broken(message: str) -> Refused:
        return Refused(f"{path}: {message}; fix the file by hand first")

    if fmt == "json-array":
        try:
            value = strict_json.load_json(data).value
        except strict_input.LoadError as exc:
            raise broken(f"does not parse: {exc}") from None
        if not isinstance(value, list):
            raise broken("is not a JSON array")
        return [(v, f"element [{i}]") for i, v in enumerate(value)]
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = []
    for number, line in enumerate(lines, 1):
        try:
            out.append((strict_json.load_json(line).value, f"line {number}"))
        except strict_input.LoadError as exc:
            raise broken(f"line {number} is not one JSON value: {exc.message}") from None
    return out


def _jsonl_style(data: bytes) -> Dict[str, Any]:
    """json.dumps options that reproduce the file's last lines (compact first)."""
    lines = [line for line in data.split(b"\n") if line.strip()][-50:]
    parsed = [(line.rstrip(b"\r"), strict_json.load_json(line).value) for line in lines]
    for separators in ((",", ":"), (", ", ": ")):
        for sort_keys in (True, False):
            for ensure_ascii in (False, True):
                style: Dict[str, Any] = {
                    "separators": separators,
                    "sort_keys": sort_keys,
                    "ensure_ascii": ensure_ascii,
                }
                if parsed and all(
                    json.dumps(v, **style).encode("utf-8") == line for line, v in parsed
                ):
                    return style
    return {"separators": (",", ":"), "sort_keys": False, "ensure_ascii": False}


def _appended(path: str, fmt: str, data: bytes, values: List[Any]) -> bytes:
    if fmt == "jsonl":
        style = _jsonl_style(data)
        last = data.rfind(b"\n")  # the ending of the last line that has one
        nl = b"\r\n" if last > 0 and data[last - 1 : last] == b"\r" else b"\n"
        # a last line without its newline gets a bare LF: seed-append-only reads a CR
        # added to an existing line as a rewrite of that seed
        out = data if not data or data.endswith(b"\n") else data + b"\n"
        return out + b"".join(json.dumps(v, **style).encode("utf-8") + nl for v in values)
    # deferred: cli imports this module for its parser; 15 ms, for a run
    from oracle_guard.parsing import text_edit
    from oracle_guard.parsing.json_edit import JsonEditor

    try:
        editor = JsonEditor(path, strict_input.decode_text(data))
        for value in values:
            editor.append((), value)
    except text_edit.Unsafe as exc:
        raise unsafe(path, str(exc)) from None
    return editor.text.encode("utf-8")


def _with_digests(
    path: str, entry: Dict[str, Any], contract: Contract, values: List[Any]
) -> List[Any]:
    """Each value with its digest field set from its payload (--digest)."""
    # deferred: cli imports this module for its parser; under 1 ms, for a run
    from oracle_guard.checks.records import Rules, digest_of

    rules = Rules(entry, contract)
    if rules.digest_field is None or rules.digest_of is None:
        raise Refused(
            f"--digest: the seeds entry of {path} has no digest rule (digest: {{field, of}}, "
            "or a built-in records shape)"
        )
    out = []
    for number, value in enumerate(values, 1):
        if not isinstance(value, dict) or rules.digest_of not in value:
            raise Refused(f"--digest: VALUE {number} is no JSON object with {rules.digest_of!r}")
        try:
            digest = digest_of(value[rules.digest_of], rules.form)
        except ValueError as exc:
            raise Refused(f"--digest: VALUE {number}: {rules.digest_of!r} {exc}") from None
        declared = value.get(rules.digest_field)
        if declared is not None and declared != digest:
            raise Refused(
                f"--digest: VALUE {number} declares {rules.digest_field} {declared!r}, but the "
                f"SHA-256 of its {rules.digest_of!r} is {digest}"
            )
        out.append({**value, rules.digest_field: digest})
    return out


def seeds_append(ws: Workspace, file: str, texts: Sequence[str], digest: bool = False) -> int:
    """Append the seeds ``texts`` (JSON text each) to the seed file ``file``;
    ``digest``: fill in each one's hash field first."""
    # deferred: cli imports this module for its parser; under 1 ms, for a run
    from oracle_guard.checks import seed_append_only

    path = repo_path(file)
    entries = [
        e for e in ws.contract.section("seeds") or [] if PatternSet(e["paths"]).matches(path)
    ]
    if not entries:
        patterns = [p for e in ws.contract.section("seeds") or [] for p in e["paths"]]
        raise Refused(
            f"{path} is not a seed file of the contract "
            f"({', '.join(patterns) or 'no seeds section'})"
        )
    fmt = entries[0]["format"]
    if fmt not in FORMATS:
        raise Refused(
            f"{path} is a {fmt} seed file; 'seeds append' writes json-array and jsonl files"
        )
    data = ws.read_worktree(path)
    if data is None:
        raise Refused(f"{path} does not exist in the working tree")
    values = _values(texts)
    if digest:
        values = _with_digests(path, entries[0], ws.contract, values)
    seen = {seed_append_only.strict_key(v): at for v, at in _existing(path, fmt, data)}
    for number, value in enumerate(values):
        key = seed_append_only.strict_key(value)
        if key in seen:
            raise Refused(
                f"duplicate seed: {seed_append_only.short(value)} is already in "
                f"{path} ({seen[key]})"
            )
        seen[key] = f"VALUE {number + 1}"
    new = _appended(path, fmt, data, values)
    limit = ws.contract.limit("seed_bytes")
    if len(new) > limit:
        raise Refused(
            f"cannot append to {path}: it would be {len(new):,} bytes, above "
            f"limits.seed_bytes ({limit:,})"
        )
    head = ws.git.resolve_commit("HEAD")
    base = Snapshot.of_commit(ws.git, head, "HEAD") if head else Snapshot.empty()
    after = Overlay(ws.index, {path: new}, "the edited working tree")
    for entry in entries:
        # this file's findings only: the rest of the index is not this edit's doing
        for finding in seed_append_only.entry_findings(entry, ws.contract, base, after):
            if finding.severity == "error" and finding.path == path:
                raise Refused(f"cannot append to {path}: {describe(finding)}")
    ws.write({path: new})
    count = len(values)
    print(
        inert(
            f"appended {count} seed{'s' if count != 1 else ''} to {show_path(path)}; "
            f"stage it with: {show_text(ws.git_add(path))}"
        )
    )
    fixture_notes(ws, [path])
    return 0


def add_parser(sub: Subparsers) -> None:
    """The ``seeds`` subcommands."""
    seeds = sub.add_parser("seeds", help="append seeds to a seed file")
    actions = seeds.add_subparsers(dest="seeds_action", metavar="ACTION")
    actions.required = True
    append = actions.add_parser(
        "append", parents=[common()], help="append seeds to a json-array or jsonl seed file"
    )
    append.add_argument("file", metavar="FILE", help="the seed file (repo-relative)")
    append.add_argument(
        "values",
        metavar="VALUE",
        nargs="+",
        help="a seed as JSON text (put '--' before values starting with '-')",
    )
    append.add_argument(
        "--digest",
        action="store_true",
        help="fill in each value's hash field (the entry's digest rule) from its payload",
    )
    append.set_defaults(run=run)


def run(options: argparse.Namespace) -> int:
    return edit(
        lambda ws: seeds_append(ws, options.file, options.values, options.digest), options.C
    )
