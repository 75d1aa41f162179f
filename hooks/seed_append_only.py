"""seed-append-only: were seed corpora only appended to?"""
from __future__ import annotations

import json
from typing import Any, List, Optional

from oracle_guard import loaders
from oracle_guard.findings import Finding
from oracle_guard.patterns import PatternSet
from oracle_guard.revisions import Snapshot

HOOK = "seed-append-only"


def strict_key(value: Any) -> Any:
    """A hashable form where 0, 0.0 and false differ and key order does not matter."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, str):
        return ("str", value)
    if value is None:
        return ("null",)
    if isinstance(value, list):
        return ("list", tuple(strict_key(v) for v in value))
    return ("object", tuple(sorted((k, strict_key(v)) for k, v in value.items())))


def short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Invalid(Exception):
    def __init__(self, message: str, line: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def _load(snapshot: Snapshot, path: str, kind: type, what: str) -> Any:
    try:
        value = loaders.load_json(snapshot.read(path)).value
    except loaders.LoadError as exc:
        raise Invalid(exc.message, exc.line) from None
    if not isinstance(value, kind):
        raise Invalid(f"must be a JSON {what}, found {type(value).__name__}")
    return value


def _sequence(path: str, old: List[Any], new: List[Any], unit: str,
              lines: bool) -> List[Finding]:
    """Findings when ``old`` is not an exact prefix of ``new``."""
    old_keys = [strict_key(v) for v in old] if not lines else old
    new_keys = [strict_key(v) for v in new] if not lines else new
    for i, key in enumerate(old_keys):
        where = i + 1 if lines else None
        label = f"line {i + 1}" if lines else f"{unit} [{i}]"
        show = (lambda v: short(v.decode("utf-8", "replace"))) if lines else short
        if i >= len(new_keys):
            gone = len(old_keys) - len(new_keys)
            return [Finding(HOOK, "seed-removed", path,
                            f"{label} {show(old[i])} is gone ({gone} of {len(old_keys)} base "
                            f"seeds missing at the end)", where)]
        if new_keys[i] != key:
            if key in new_keys:
                return [Finding(HOOK, "seed-reordered", path,
                                f"{label} moved: base has {show(old[i])}, candidate has "
                                f"{show(new[i])}", where)]
            code = "seed-rewritten" if len(new_keys) >= len(old_keys) else "seed-removed"
            return [Finding(HOOK, code, path,
                            f"{label} changed: {show(old[i])} -> {show(new[i])}", where)]
    return []


def _jsonl_lines(data: bytes) -> List[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _check_new_lines(path: str, lines: List[bytes], start: int) -> List[Finding]:
    for number in range(start, len(lines)):
        try:
            text = loaders.decode_text(lines[number])
            if not text.strip():
                raise loaders.LoadError("empty line")
            loaders.load_json(lines[number])
        except loaders.LoadError as exc:
            return [Finding(HOOK, "seed-invalid", path,
                            f"line {number + 1} is not one JSON value: {exc.message}",
                            number + 1)]
    return []


def compare(fmt: str, path: str, base: Optional[Snapshot], candidate: Snapshot) -> List[Finding]:
    """Findings for one seed file present in the candidate (and maybe in the base)."""
    new_entry = candidate.entries[path]
    old_entry = base.entries.get(path) if base is not None else None
    if old_entry is not None and old_entry.mode != new_entry.mode:
        return [Finding(HOOK, "seed-rewritten", path,
                        f"mode changed from {old_entry.mode} to {new_entry.mode}")]
    if not new_entry.is_regular:
        return [Finding(HOOK, "seed-invalid", path, f"is not a regular file (mode {new_entry.mode})")]
    unchanged = old_entry is not None and old_entry.oid == new_entry.oid
    if fmt == "immutable":
        if old_entry is not None and not unchanged:
            return [Finding(HOOK, "seed-rewritten", path,
                            f"immutable file changed ({old_entry.oid[:12]} -> {new_entry.oid[:12]})")]
        return []
    if fmt == "jsonl":
        new = candidate.read(path)
        new_lines = _jsonl_lines(new)
        if not new_lines:
            return [Finding(HOOK, "oracle-incomplete", path, "seed file holds no seeds")]
        if unchanged:
            return []
        if old_entry is None:
            return _check_new_lines(path, new_lines, 0)
        old = base.read(path)
        old_lines = _jsonl_lines(old)
        found = _sequence(path, old_lines, new_lines, "line", lines=True)
        if not found and old and not old.endswith(b"\n") and new[len(old):len(old) + 1] != b"\n":
            n = len(old_lines)
            found = [Finding(HOOK, "seed-rewritten", path,
                             f"line {n} changed: text was added to the base's last line", n)]
        return found or _check_new_lines(path, new_lines, len(old_lines))
    kind, what = (list, "array") if fmt == "json-array" else (dict, "object")
    try:
        new_value = _load(candidate, path, kind, what)
    except Invalid as exc:
        return [Finding(HOOK, "seed-invalid", path, exc.message, exc.line)]
    if fmt == "json-array" and not new_value:
        return [Finding(HOOK, "oracle-incomplete", path, "seed file holds no seeds")]
    if unchanged or old_entry is None:
        return []
    try:
        old_value = _load(base, path, kind, what)
    except Invalid:
        return []  # a broken base leaves nothing to compare; the candidate parsed
    if fmt == "json-array":
        return _sequence(path, old_value, new_value, "element", lines=False)
    findings = []
    for key, value in old_value.items():
        if key not in new_value:
            findings.append(Finding(HOOK, "seed-removed", path,
                                    f"key {key!r} ({short(value)}) is gone"))
        elif strict_key(new_value[key]) != strict_key(value):
            findings.append(Finding(HOOK, "seed-rewritten", path,
                                    f"key {key!r} changed: {short(value)} -> "
                                    f"{short(new_value[key])}"))
    return findings


def check(contract, base: Snapshot, candidate: Snapshot, now) -> List[Finding]:
    findings: List[Finding] = []
    for entry in contract.section("seeds") or []:
        patterns = PatternSet(entry["paths"])
        in_base = patterns.select(base.entries)
        in_candidate = patterns.select(candidate.entries)
        for path in in_base:
            if path not in candidate.entries:
                findings.append(Finding(HOOK, "seed-file-deleted", path,
                                        f"present in {base.label}, missing from "
                                        f"{candidate.label}"))
        for path in in_candidate:
            findings.extend(compare(entry["format"], path, base, candidate))
        if not in_candidate:
            findings.append(Finding(HOOK, "oracle-incomplete", None,
                                    f"seeds entry {entry['paths']} matches no file in "
                                    f"{candidate.label}"))
    return findings
