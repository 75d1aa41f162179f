"""fixture-lock: do the fixture files match their SHA-256 lock?"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Dict, List, Optional, Tuple

from oracle_guard import loaders, validation
from oracle_guard.findings import Finding
from oracle_guard.patterns import PatternSet
from oracle_guard.revisions import Snapshot

HOOK = "fixture-lock"
_HEX = re.compile(r"^[0-9a-fA-F]{64}$")
_SUM_LINE = re.compile(r"^([0-9a-fA-F]{64}) [ *](.+)$")


class LockInvalid(Exception):
    def __init__(self, message: str, line: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class Lock:
    """Parsed lock: key (relative to root) -> digest, with the line of each key."""

    def __init__(self, style: str, digests: Dict[str, str], lines: Dict[str, int]) -> None:
        self.style = style  # "json", "sha256sum" or "digest"
        self.digests = digests
        self.lines = lines


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def relative_to(root: str, path: str) -> Optional[str]:
    root = root.strip("/")
    if not root:
        return path
    return path[len(root) + 1:] if path.startswith(root + "/") else None


def fixture_files(entry: dict, snapshot: Snapshot) -> List[str]:
    lock_path = entry["lock"]
    return [p for p in PatternSet(entry["paths"]).select(snapshot.entries) if p != lock_path]


def parse_lock(data: bytes, fixtures: List[str], root: str) -> Lock:
    """Detect the style from the content: a JSON object, sha256sum lines, or one digest."""
    try:
        text = loaders.decode_text(data)
    except loaders.LoadError as exc:
        raise LockInvalid(exc.message, exc.line) from None
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            doc = loaders.load_json(data, positions=True)
        except loaders.LoadError as exc:
            raise LockInvalid(exc.message, exc.line) from None
        digests = doc.value
        lines = {k: doc.line_of((k,)) or 1 for k in digests}
        style = "json"
    elif _HEX.match(stripped):
        if len(fixtures) != 1:
            raise LockInvalid(
                f"a single-digest lock needs 'paths' to match exactly one file; "
                f"they match {len(fixtures)}", 1)
        key = relative_to(root, fixtures[0]) or fixtures[0]
        digests, lines, style = {key: stripped}, {key: 1}, "digest"
    else:
        digests, lines, style = {}, {}, "sha256sum"
        for number, line in enumerate(text.split("\n"), 1):
            if not line and number == text.count("\n") + 1:
                break  # the final newline
            match = _SUM_LINE.match(line)
            if not match:
                raise LockInvalid("not a '<sha256>  <path>' line", number)
            digest, path = match.groups()
            if path in digests:
                raise LockInvalid(f"duplicate entry for {path!r}", number)
            digests[path], lines[path] = digest, number
        if not digests:
            raise LockInvalid("empty lock", 1)
    for path, message in validation.problems(digests, "fixtures-lock"):
        key = path[0] if path else None
        raise LockInvalid(f"{key + ': ' if key else ''}{message}", lines.get(key))
    return Lock(style, digests, lines)


def check_entry(entry: dict, candidate: Snapshot) -> List[Finding]:
    lock_path = entry["lock"]
    root = entry.get("root", "")
    fixtures = fixture_files(entry, candidate)
    lock_entry = candidate.entries.get(lock_path)
    if lock_entry is None:
        return [Finding(HOOK, "lock-invalid", lock_path,
                        f"lock file is missing from {candidate.label}")]
    if not lock_entry.is_regular:
        return [Finding(HOOK, "lock-invalid", lock_path, "lock file is not a regular file")]
    try:
        lock = parse_lock(candidate.read(lock_path), fixtures, root)
    except LockInvalid as exc:
        return [Finding(HOOK, "lock-invalid", lock_path, exc.message, exc.line)]

    findings = []
    seen = set()
    for path in fixtures:
        file_entry = candidate.entries[path]
        key = relative_to(root, path)
        if key is not None:
            seen.add(key)
        if not file_entry.is_regular:
            kind = "submodule" if file_entry.mode == "160000" else "symlink"
            findings.append(Finding(HOOK, "fixture-not-regular", path,
                                    f"is a {kind} (mode {file_entry.mode}), not a regular file"))
            continue
        if key is None:
            findings.append(Finding(HOOK, "fixture-unlocked", path,
                                    f"matches the fixture paths but lies outside the lock's "
                                    f"root {root!r}"))
            continue
        if key not in lock.digests:
            findings.append(Finding(HOOK, "fixture-unlocked", path,
                                    f"has no entry in {lock_path}"))
            continue
        actual = sha256(candidate.read(path))
        if actual != lock.digests[key]:
            findings.append(Finding(
                HOOK, "fixture-mismatch", path,
                f"sha256 {actual[:12]}… does not match {lock_path} ({lock.digests[key][:12]}…)"))
    for key in sorted(set(lock.digests) - seen):
        findings.append(Finding(HOOK, "fixture-missing", lock_path,
                                f"entry {key!r} names no fixture file in {candidate.label}",
                                lock.lines.get(key)))
    return findings


def check(contract, base: Snapshot, candidate: Snapshot, now) -> List[Finding]:
    findings: List[Finding] = []
    for entry in contract.section("fixtures") or []:
        findings.extend(check_entry(entry, candidate))
    return findings


def render_lock(style: str, digests: Dict[str, str]) -> str:
    if style == "digest" and len(digests) == 1:
        return next(iter(digests.values())) + "\n"
    if style == "sha256sum":
        return "".join(f"{digests[k]}  {k}\n" for k in sorted(digests))
    return json.dumps(dict(sorted(digests.items())), indent=2) + "\n"


def build_lock(entry: dict, snapshot: Snapshot) -> Tuple[str, int]:
    """The lock text for ``entry`` from ``snapshot``, keeping an existing lock's style."""
    root = entry.get("root", "")
    fixtures = fixture_files(entry, snapshot)
    style = "json"
    if entry["lock"] in snapshot.entries:
        try:
            style = parse_lock(snapshot.read(entry["lock"]), fixtures, root).style
        except LockInvalid:
            pass  # rewritten from scratch
    digests = {}
    for path in fixtures:
        key = relative_to(root, path)
        if key is not None and snapshot.entries[path].is_regular:
            digests[key] = sha256(snapshot.read(path))
    return render_lock(style, digests), len(digests)
