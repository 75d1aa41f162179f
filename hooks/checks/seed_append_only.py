"""seed-append-only: were seed corpora only appended to?"""

from __future__ import annotations

import datetime
import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

from oracle_guard.checks import records
from oracle_guard.checks.records import Batch, Record, Rules, locator
from oracle_guard.checks.sample import Sample
from oracle_guard.contract import CONTRACT_PATH, LIMITS, Contract
from oracle_guard.findings import Finding
from oracle_guard.git.objects import BlobTooLarge
from oracle_guard.parsing import strict_input, strict_json
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.parsing.strict_equality import strict_key
from oracle_guard.snapshot import Snapshot

HOOK = "seed-append-only"
# the smallest oracle: a seed file, and the change that drops a seed
# its lines in the complete example of docs/reference/contract.md
EXAMPLE = """\
seeds:                       # seed-append-only
  - {paths: ["seeds/*.json"], format: json-array}
  - paths: ["oracle/corpus.jsonl"]
    format: jsonl
    records: corpus-line     # optional: each new record validates (a built-in, or a .json schema in the repo)
    digest: {field: payload_sha256, of: payload, form: json-sorted-compact-utf8}  # optional: corpus-line's default
    replay: {}               # optional: oracle-guard score runs each line's test (see The score)
  - {paths: ["/seeds.lock"], format: json-object}   # '/': the root one only (see Patterns)
  - paths: ["replays/*.json"]
    format: immutable
    records: replay-case     # its default digest: {field: input_sha256, of: payload}
    id_field: id             # optional: unique across the set (the built-ins' default: id)
    lock: seeds.lock         # optional: a new case's seed agrees with its id's entry
    promote: [expected, promoted_to]  # optional: fields an owner fills in later, once, from null
"""
SAMPLE = Sample(
    sections={"seeds": [{"paths": ["seeds/*.json"], "format": "json-array"}]},
    files={"seeds/a.json": "[1, 2]\n"},
    change={"seeds/a.json": "[1]\n"},
    finding="seeds/a.json: seed-removed",
    example=EXAMPLE,
)
SHOW_LIMIT = 60


def short(value: Any, limit: int = SHOW_LIMIT) -> str:
    return _clip(_render(value), limit)


def _render(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _render_line(line: bytes) -> str:
    # repr keeps whitespace and quotes visible: a changed space must show
    return repr(line.decode("utf-8", "backslashreplace"))


def _clip(text: str, limit: int = SHOW_LIMIT, start: int = 0) -> str:
    head = "…" if start else ""
    body = text[start:]
    return head + (body if len(body) <= limit else body[: limit - 1] + "…")


def _pair(old: str, new: str, limit: int = SHOW_LIMIT) -> Tuple[str, str]:
    """Both texts clipped; when clipping would hide the difference, both
    windows start a little before the first character that differs."""
    start = 0
    if old != new and (len(old) > limit or len(new) > limit):
        first = next(
            (i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new))
        )
        if first >= limit - 1:
            start = max(0, first - limit // 3)
    return _clip(old, limit, start), _clip(new, limit, start)


_JSON_TYPE = {
    dict: "an object",
    list: "an array",
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    type(None): "null",
}


class Invalid(Exception):
    def __init__(self, message: str, line: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def _load(snapshot: Snapshot, path: str, kind: type, limit: int) -> Any:
    try:
        value = strict_json.load_json(snapshot.read(path, limit)).value
    except strict_input.LoadError as exc:
        raise Invalid(exc.message, exc.line) from None
    if not isinstance(value, kind):
        raise Invalid(
            f"must be {_JSON_TYPE[kind]} at the top level, found {_JSON_TYPE[type(value)]}", 1
        )
    return value


def first_break(old: Sequence[Any], new: Sequence[Any]) -> Optional[Tuple[str, int]]:
    """(code, index) of the first place where ``old`` stops being a prefix of
    ``new``, or None when it is one."""
    for i, key in enumerate(old):
        if i >= len(new):
            return "seed-removed", i
        if new[i] != key:
            # an old seed further on means the order changed; elsewhere it is gone
            if key in new[i + 1 :]:
                return "seed-reordered", i
            return ("seed-rewritten" if len(new) >= len(old) else "seed-removed"), i
    return None


def _break_message(
    code: str, label: str, old: str, new: Optional[str], old_count: int, new_count: int
) -> str:
    if new is None:
        return (
            f"{label} {_clip(old)} is gone: the candidate keeps {new_count} of the base's "
            f"{old_count} seeds"
        )
    old, new = _pair(old, new)
    if code == "seed-reordered":
        return f"{label} moved: the base has {old} there, the candidate has {new}"
    if code == "seed-removed":
        return (
            f"{label} {old} is gone: the candidate has {new} there and keeps "
            f"{new_count} of the base's {old_count} seeds"
        )
    return f"{label} changed: {old} -> {new}"


def _array_findings(path: str, old: List[Any], new: List[Any], new_data: bytes) -> List[Finding]:
    found = first_break([strict_key(v) for v in old], [strict_key(v) for v in new])
    if found is None:
        return []
    code, i = found
    line = None
    if i < len(new):
        # positions only now: the slow parser never runs on a passing file
        line = strict_json.load_json(new_data, positions=True).line_of((i,))
    message = _break_message(
        code,
        f"element [{i}]",
        _render(old[i]),
        _render(new[i]) if i < len(new) else None,
        len(old),
        len(new),
    )
    return [Finding(HOOK, code, path, message, line)]


def _object_findings(
    path: str, old: Dict[str, Any], new: Dict[str, Any], new_data: bytes
) -> List[Finding]:
    findings = []
    changed = []
    for key, value in old.items():
        if key not in new:
            findings.append(
                Finding(HOOK, "seed-removed", path, f"key {_render(key)} ({short(value)}) is gone")
            )
        elif strict_key(new[key]) != strict_key(value):
            changed.append(key)
    if changed:
        doc = strict_json.load_json(new_data, positions=True)
        for key in changed:
            old_text, new_text = _pair(_render(old[key]), _render(new[key]))
            findings.append(
                Finding(
                    HOOK,
                    "seed-rewritten",
                    path,
                    f"key {_render(key)} changed: {old_text} -> {new_text}",
                    doc.line_of((key,)),
                )
            )
    return findings


def _jsonl_lines(data: bytes) -> List[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _check_new_lines(
    path: str,
    lines: List[bytes],
    start: int,
    skipped: int = 0,
    records: Optional[List[Record]] = None,
) -> List[Finding]:
    """Each of ``lines[start:]`` must be one JSON value; ``skipped`` lines come
    before ``lines`` in the file (for the line numbers). ``records``: gets each
    new line's value, for the record rules."""
    for index in range(start, len(lines)):
        number = skipped + index + 1
        try:
            if not strict_input.decode_text(lines[index]).strip():
                raise strict_input.LoadError("the line is empty")
            value = strict_json.load_json(lines[index]).value
        except strict_input.LoadError as exc:
            return [
                Finding(
                    HOOK,
                    "seed-invalid",
                    path,
                    f"line {number} is not one JSON value: {exc.message}",
                    number,
                )
            ]
        if records is not None:
            records.append(Record(value, f"line {number}", number))
    return []


def _jsonl_findings(
    path: str,
    old_lines: List[bytes],
    new_lines: List[bytes],
    records: Optional[List[Record]] = None,
) -> List[Finding]:
    found = first_break(old_lines, new_lines)
    if found is None:
        return _check_new_lines(path, new_lines, len(old_lines), records=records)
    code, i = found
    new = _render_line(new_lines[i]) if i < len(new_lines) else None
    message = _break_message(
        code, f"line {i + 1}", _render_line(old_lines[i]), new, len(old_lines), len(new_lines)
    )
    return [Finding(HOOK, code, path, message, i + 1 if new is not None else None)]


def compare(
    fmt: str,
    path: str,
    base: Optional[Snapshot],
    candidate: Snapshot,
    limit: int = LIMITS["seed_bytes"],
    rules: Optional[Rules] = None,
    batches: Optional[List[Batch]] = None,
) -> List[Finding]:
    """Findings for one seed file present in the candidate (and maybe in the base);
    a file above ``limit`` bytes is seed-invalid, never loaded. With ``rules``
    (the entry's record rules), the file's new records go to ``batches`` and a
    changed immutable file may be a promotion."""
    try:
        return _compare(fmt, path, base, candidate, limit, rules, batches)
    except BlobTooLarge as exc:
        return [Finding(HOOK, "seed-invalid", path, f"{exc} (limits.seed_bytes): not loaded")]


def _compare(
    fmt: str,
    path: str,
    base: Optional[Snapshot],
    candidate: Snapshot,
    limit: int,
    rules: Optional[Rules] = None,
    batches: Optional[List[Batch]] = None,
) -> List[Finding]:
    collect = rules is not None and batches is not None
    records: List[Record] = []
    new_entry = candidate.entry(path)
    assert new_entry is not None  # compare's callers pass a file the candidate holds
    old_entry = base.entry(path) if base is not None else None
    if old_entry is not None and old_entry.mode != new_entry.mode:
        return [
            Finding(
                HOOK,
                "seed-rewritten",
                path,
                f"mode changed from {old_entry.mode} to {new_entry.mode}",
            )
        ]
    if not new_entry.is_regular:
        return [
            Finding(HOOK, "seed-invalid", path, f"is not a regular file (mode {new_entry.mode})")
        ]
    unchanged = old_entry is not None and old_entry.oid == new_entry.oid
    if fmt == "immutable":
        if old_entry is not None and not unchanged and rules is not None and rules.promote:
            assert base is not None
            return _promotion(path, base, candidate, limit, rules, old_entry.oid, new_entry.oid)
        if old_entry is None and collect:
            data = candidate.read(path, limit)
            try:
                value = strict_json.load_json(data).value
            except strict_input.LoadError as exc:
                return [
                    Finding(
                        HOOK, "record-invalid", path, f"does not parse: {exc.message}", exc.line
                    )
                ]
            assert batches is not None
            batches.append(Batch(path, [Record(value, "", None)], locate=locator(data)))
        if old_entry is not None and not unchanged:
            return [
                Finding(
                    HOOK,
                    "seed-rewritten",
                    path,
                    f"immutable file changed (blob {old_entry.oid[:12]} -> "
                    f"{new_entry.oid[:12]}); add a new file instead",
                )
            ]
        return []
    new_data = candidate.read(path, limit)
    if fmt == "jsonl":
        if not new_data.strip(b"\n"):
            return [Finding(HOOK, "oracle-incomplete", path, "seed file holds no seeds")]
        if unchanged:
            return []
        sink = records if collect else None
        old_data = b""
        if old_entry is None:
            found = _check_new_lines(path, _jsonl_lines(new_data), 0, records=sink)
        else:
            assert base is not None
            old_data = base.read(path, limit)
            if old_data.endswith(b"\n") and new_data.startswith(old_data):
                # the common case, an append: only the new lines need reading
                found = _check_new_lines(
                    path,
                    _jsonl_lines(new_data[len(old_data) :]),
                    0,
                    skipped=old_data.count(b"\n"),
                    records=sink,
                )
            else:
                # split on b"\n" keeps a missing final newline visible: text glued
                # onto the base's last line makes that line differ
                found = _jsonl_findings(
                    path, _jsonl_lines(old_data), _jsonl_lines(new_data), records=sink
                )
        if collect and not found and records:
            assert batches is not None
            batches.append(Batch(path, records, base_data=old_data))
        return found
    kind = list if fmt == "json-array" else dict
    try:
        new_value = _load(candidate, path, kind, limit)
    except Invalid as exc:
        return [Finding(HOOK, "seed-invalid", path, exc.message, exc.line)]
    if fmt == "json-array" and not new_value:
        return [
            Finding(
                HOOK, "oracle-incomplete", path, "seed file holds no seeds (the array is empty)"
            )
        ]
    if unchanged:
        return []
    if old_entry is None:
        if collect and fmt == "json-array":
            assert batches is not None
            batches.append(_array_batch(path, new_value, [], new_data))
        return []
    assert base is not None
    try:
        old_value = _load(base, path, kind, limit)
    except Invalid as exc:
        # fail closed: no append can be verified against a base that does not
        # parse, so any change to it is a rewrite only a human may make
        return [
            Finding(
                HOOK,
                "seed-rewritten",
                path,
                f"changed, but the base copy does not parse ({exc.message}), so "
                "no append can be verified; a human repairs it in its own commit",
            )
        ]
    if fmt == "json-array":
        found = _array_findings(path, old_value, new_value, new_data)
        if collect and not found and len(new_value) > len(old_value):
            assert batches is not None
            batches.append(_array_batch(path, new_value, old_value, new_data))
        return found
    return _object_findings(path, old_value, new_value, new_data)


def _array_batch(path: str, new: List[Any], old: List[Any], data: bytes) -> Batch:
    records = [Record(v, f"element [{i}]", None, (i,)) for i, v in enumerate(new) if i >= len(old)]
    return Batch(path, records, base_values=old, locate=locator(data))


_ABSENT = object()


def _promotion(
    path: str,
    base: Snapshot,
    candidate: Snapshot,
    limit: int,
    rules: Rules,
    old_oid: str,
    new_oid: str,
) -> List[Finding]:
    """A changed file of an immutable set with ``promote``: only the listed fields
    may change, each from null to a value, and the result is still a valid
    record. Anything else is the immutable file's rewrite."""
    rewritten = (
        f"immutable file changed (blob {old_oid[:12]} -> {new_oid[:12]}); add a new file instead"
    )
    try:
        old = strict_json.load_json(base.read(path, limit)).value
        data = candidate.read(path, limit)
        new = strict_json.load_json(data).value
    except strict_input.LoadError:
        return [Finding(HOOK, "seed-rewritten", path, rewritten)]
    if not isinstance(old, dict) or not isinstance(new, dict):
        return [Finding(HOOK, "seed-rewritten", path, rewritten)]
    changed = [
        key
        for key in list(old) + [k for k in new if k not in old]
        if key not in old or key not in new or strict_key(old[key]) != strict_key(new[key])
    ]
    allowed = ", ".join(rules.promote)
    for key in changed:
        before, after = old.get(key, _ABSENT), new.get(key, _ABSENT)
        if key not in rules.promote:
            why = f"field {_render(key)} changed"
        elif before is _ABSENT or after is _ABSENT:
            why = f"field {_render(key)} was {'added' if before is _ABSENT else 'removed'}"
        elif before is not None:
            why = f"field {_render(key)} was already {short(before)}"
        else:
            continue
        line = locator(data)((key,)) if after is not _ABSENT else None
        return [
            Finding(
                HOOK,
                "seed-rewritten",
                path,
                f"{why}: an existing record changes only by filling in {allowed} "
                "from null (a promotion); add a new file instead",
                line,
            )
        ]
    if not changed:  # the same record, other bytes: the file is still immutable
        return [Finding(HOOK, "seed-rewritten", path, rewritten)]
    findings = []
    for code, message, json_path in rules.problems(new):
        findings.append(
            Finding(HOOK, code, path, f"the promoted record {message}", locator(data)(json_path))
        )
    return findings


def check(
    contract: Contract, base: Snapshot, candidate: Snapshot, now: datetime.datetime
) -> List[Finding]:
    findings: List[Finding] = []
    added: Dict[str, List[str]] = {}  # blob id -> paths new in the candidate, once asked
    for entry in contract.section("seeds") or []:
        findings.extend(entry_findings(entry, contract, base, candidate, added))
    return findings


def entry_findings(
    entry: Dict[str, Any],
    contract: Contract,
    base: Snapshot,
    candidate: Snapshot,
    added: Optional[Dict[str, List[str]]] = None,
) -> List[Finding]:
    """The findings of one seeds entry: each file by its format, then the new
    records of the whole set by the entry's record rules. ``added``: blob id ->
    paths new in the candidate, filled when first needed (shared by entries)."""
    findings: List[Finding] = []
    added = {} if added is None else added
    rules = Rules.of(entry, contract)
    batches: List[Batch] = []
    limit = contract.limit("seed_bytes")
    patterns = PatternSet(entry["paths"])
    in_base = base.select(patterns)
    in_candidate = candidate.select(patterns)
    for path in in_base:
        if path not in candidate:
            if not added:
                added[""] = []  # asked: the map is filled, even when nothing is new
                for new_path, new_entry in candidate.entries.items():
                    if new_path not in base.entries:
                        added.setdefault(new_entry.oid, []).append(new_path)
            findings.append(_deleted(path, base, candidate, added))
    for path in in_candidate:
        findings.extend(compare(entry["format"], path, base, candidate, limit, rules, batches))
    if rules is not None:
        findings.extend(
            records.set_findings(
                rules, entry["format"], batches, base, candidate, in_base, in_candidate, limit
            )
        )
    if not in_candidate:
        findings.append(_matches_nothing(entry, candidate))
    return findings


def complete(contract: Contract, candidate: Snapshot) -> List[Finding]:
    """The change that introduces the contract: every seeds entry matches a file."""
    return [
        _matches_nothing(entry, candidate)
        for entry in contract.section("seeds") or []
        if not candidate.select(PatternSet(entry["paths"]))
    ]


def _matches_nothing(entry: Dict[str, Any], candidate: Snapshot) -> Finding:
    return Finding(
        HOOK,
        "oracle-incomplete",
        CONTRACT_PATH,  # the entry is what is wrong, or what the change emptied
        f"seeds entry {_render(entry['paths'])} matches no file in {candidate.label}",
    )


def _deleted(
    path: str, base: Snapshot, candidate: Snapshot, added: Dict[str, List[str]]
) -> Finding:
    old_entry = base.entry(path)
    assert old_entry is not None  # a path base.select listed
    moved = sorted(added.get(old_entry.oid, []))
    renamed = f" (renamed to {moved[0]}? a rename counts as a deletion)" if moved else ""
    return Finding(
        HOOK,
        "seed-file-deleted",
        path,
        f"present in {base.label}, missing from {candidate.label}{renamed}",
    )
