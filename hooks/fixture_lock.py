"""fixture-lock: do the fixture files match their SHA-256 lock?"""
from __future__ import annotations

import json
import re
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from oracle_guard import loaders, validation
from oracle_guard.cache import lock_key
from oracle_guard.contract import LIMITS
from oracle_guard.findings import Finding
from oracle_guard.gitio import BlobTooLarge
from oracle_guard.patterns import PatternSet
from oracle_guard.revisions import Snapshot

HOOK = "fixture-lock"
_HEX = re.compile(r"^[0-9a-fA-F]{64}$")  # any case here; the schema then demands lowercase
_SUM_LINE = re.compile(r"^([0-9a-fA-F]{64}) [ *](.+)$")
_BAD_KEY = ("is not a normalized path relative to the lock's root (no leading '/', "
            "no '.' or '..' parts, no '//', backslash or trailing '/')")


class LockInvalid(Exception):
    """The lock is unusable; ``problems`` holds (message, line) for each bad spot."""

    def __init__(self, message: str, line: Optional[int] = None,
                 more: Sequence[Tuple[str, Optional[int]]] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.problems = [(message, line), *more]


class Lock:
    """Parsed lock: key (relative to root) -> digest, with the line of each key."""

    def __init__(self, style: str, digests: Dict[str, str], lines: Dict[str, int]) -> None:
        self.style = style  # "json", "sha256sum" or "digest"
        self.digests = digests
        self.lines = lines


def relative_to(root: str, path: str) -> Optional[str]:
    root = root.strip("/")
    if not root:
        return path
    return path[len(root) + 1:] if path.startswith(root + "/") else None


def fixture_files(entry: dict, snapshot: Snapshot) -> List[str]:
    return [p for p in snapshot.select(PatternSet(entry["paths"])) if p != entry["lock"]]


def pending_fixtures(entry: dict, paths: Iterable[str]) -> List[str]:
    """Those of ``paths`` the entry's lock covers: matching its patterns, not the lock itself."""
    lock_path = entry["lock"]
    return [p for p in PatternSet(entry["paths"]).select(paths) if p != lock_path]


def unlockable(entry: dict, snapshot: Snapshot) -> List[str]:
    """Why `oracle-guard lock` cannot record some fixtures (outside the root, not a file)."""
    root = entry.get("root", "")
    problems = []
    for path in fixture_files(entry, snapshot):
        tree_entry = snapshot.entry(path)
        if not tree_entry.is_regular:
            kind = "a submodule" if tree_entry.mode == "160000" else "a symlink"
            problems.append(f"{path!r} is {kind}, not a regular file: replace or remove it")
        elif relative_to(root, path) is None:
            problems.append(f"{path!r} matches the fixture paths but lies outside the lock's "
                            f"root {root!r}: move it or fix the contract")
    return problems


def lock_style(text: str) -> str:
    """The style a lock is written in, judged from its shape alone (valid or not)."""
    stripped = text.strip()
    if stripped.startswith("{"):
        return "json"
    if _HEX.match(stripped):
        return "digest"
    return "sha256sum"


def parse_lock(data: bytes, fixtures: List[str], root: str, validated: bool = False) -> Lock:
    """Detect the style from the content: a JSON object, sha256sum lines, or one digest.
    ``validated``: these very bytes passed the schema before (the cache says so)."""
    try:
        text = loaders.decode_text(data)
    except loaders.LoadError as exc:
        raise LockInvalid(exc.message, exc.line) from None
    style = lock_style(text)
    if style == "json":
        try:
            doc = loaders.load_json(data, positions=True)
        except loaders.LoadError as exc:
            raise LockInvalid(exc.message, exc.line) from None
        digests = doc.value
        lines = {k: doc.line_of((k,)) or 1 for k in digests}
    elif style == "digest":
        digest = text.strip()
        if len(fixtures) > 1:
            raise LockInvalid(
                f"a single-digest lock needs 'paths' to match exactly one file; "
                f"they match {len(fixtures)} ({fixtures[0]}, {fixtures[1]}"
                f"{', ...' if len(fixtures) > 2 else ''})", 1)
        if not fixtures:
            # Nothing for the digest to lock: check_entry reports fixture-missing.
            if validation.problems({"-": digest}, "fixtures-lock"):
                raise LockInvalid(f"digest {digest!r} is not 64 lowercase hex digits", 1)
            return Lock(style, {}, {})
        key = relative_to(root, fixtures[0]) or fixtures[0]
        digests, lines = {key: digest}, {key: 1}
    else:
        digests, lines = {}, {}
        for number, line in enumerate(text.split("\n"), 1):
            if not line and number == text.count("\n") + 1:
                break  # the final newline
            if line.endswith("\r"):
                raise LockInvalid("line ends in CR (CRLF line endings); commit the lock "
                                  "with LF endings", number)
            match = _SUM_LINE.match(line)
            if not match:
                raise LockInvalid(
                    "not a '<sha256>  <path>' line (64 hex digits, two spaces, the path)",
                    number)
            digest, path = match.groups()
            if path in digests:
                raise LockInvalid(f"duplicate entry for {path!r} (first on line "
                                  f"{lines[path]})", number)
            digests[path], lines[path] = digest, number
        # An empty file locks nothing (what 'oracle-guard lock' writes for no fixtures).
    if not validated:
        _validate(digests, lines)
    return Lock(style, digests, lines)


def _validate(digests: Dict[str, object], lines: Dict[str, int]) -> None:
    """Schema-check the whole lock; on failure name each bad entry and its line."""
    if not validation.problems(digests, "fixtures-lock"):
        return
    found: List[Tuple[str, Optional[int]]] = []
    for key, digest in digests.items():
        for path, message in validation.problems({key: digest}, "fixtures-lock"):
            if not path:
                found.append((f"key {key!r} {_BAD_KEY}", lines.get(key)))
            elif isinstance(digest, str):
                found.append((f"{key!r}: digest {digest!r} is not 64 lowercase hex digits",
                              lines.get(key)))
            else:
                found.append((f"{key!r}: {message}", lines.get(key)))
            break
    if not found:  # not expected: the schema failed on the whole but on no single entry
        found.append((validation.problems(digests, "fixtures-lock")[0][1], None))
    raise LockInvalid(found[0][0], found[0][1], found[1:])


def check_entry(entry: dict, candidate: Snapshot,
                lock_limit: int = LIMITS["lock_bytes"]) -> List[Finding]:
    lock_path = entry["lock"]
    root = entry.get("root", "")
    fixtures = fixture_files(entry, candidate)
    lock_entry = candidate.entry(lock_path)
    if lock_entry is None:
        return [Finding(HOOK, "lock-invalid", lock_path,
                        f"lock file is missing from {candidate.label}")]
    if not lock_entry.is_regular:
        return [Finding(HOOK, "lock-invalid", lock_path, "lock file is not a regular file")]
    cache = candidate.cache
    key = lock_key(lock_entry.oid, lock_limit)  # the style comes from the bytes alone
    try:
        validated = cache.get("lock", key) is True
        lock = parse_lock(candidate.read(lock_path, lock_limit), fixtures, root, validated)
        if lock.style != "digest":  # a digest lock's verdict depends on the fixtures too
            cache.put("lock", key, True)
    except BlobTooLarge as exc:
        return [Finding(HOOK, "lock-invalid", lock_path,
                        f"lock file {exc} (limits.lock_bytes): not loaded")]
    except LockInvalid as exc:
        return [Finding(HOOK, "lock-invalid", lock_path, message, line)
                for message, line in exc.problems]

    findings = []
    seen = set()
    if lock.style == "digest" and not fixtures:
        findings.append(Finding(HOOK, "fixture-missing", lock_path,
                                f"the digest locks no file: the fixture paths match nothing "
                                f"in {candidate.label}", 1))
    digests = candidate.sha256_of([
        path for path in fixtures if candidate.entry(path).is_regular
        and relative_to(root, path) in lock.digests])
    for path in fixtures:
        file_entry = candidate.entry(path)
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
        actual = digests[path]
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
        findings.extend(check_entry(entry, candidate, contract.limit("lock_bytes")))
    return findings


def render_lock(style: str, digests: Dict[str, str]) -> str:
    if style == "digest" and len(digests) == 1:
        return next(iter(digests.values())) + "\n"
    if style == "sha256sum":
        return "".join(f"{digests[k]}  {k}\n" for k in sorted(digests))
    return json.dumps(dict(sorted(digests.items())), indent=2) + "\n"


def style_for_name(lock_path: str) -> str:
    """The style of a new lock, from its file name: ``SHA256SUMS``, ``*.sha256sum`` and
    ``*.sums`` hold sha256sum lines (``sha256sum -c`` reads them), ``*.sha256`` one
    digest (JSON when it locks other than one file), anything else JSON."""
    name = lock_path.rsplit("/", 1)[-1]
    if name.endswith(("SHA256SUMS", ".sha256sum", ".sums")):
        return "sha256sum"
    if name.endswith(".sha256"):
        return "digest"
    return "json"


def build_lock(entry: dict, snapshot: Snapshot) -> Tuple[str, int]:
    """The lock text for ``entry`` from ``snapshot``, keeping an existing lock's style;
    a new lock (or one that is not a text file) takes the style its name suggests."""
    root = entry.get("root", "")
    fixtures = fixture_files(entry, snapshot)
    style = style_for_name(entry["lock"])
    lock_entry = snapshot.entry(entry["lock"])
    if lock_entry is not None and lock_entry.is_regular:
        try:
            style = lock_style(loaders.decode_text(snapshot.read(entry["lock"])))
        except loaders.LoadError:
            pass  # not text: rewritten in the style of its name
    keys = {path: relative_to(root, path) for path in fixtures
            if snapshot.entry(path).is_regular}
    keys = {path: key for path, key in keys.items() if key is not None}
    by_path = snapshot.sha256_of(list(keys))
    digests = {key: by_path[path] for path, key in keys.items()}
    return render_lock(style, digests), len(digests)
