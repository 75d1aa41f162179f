"""A content-addressed cache under the git directory: verdicts keyed by blob id.

Blobs never change, so what was computed from one (its SHA-256, that a lock or
contract in it validated, what a freeze file holds or why it is invalid) holds until the tool or its schemas change; both are
part of the cache's key. A cache that is corrupt, truncated, or written by
another version is ignored and rebuilt, never trusted. The file lives in the
repository's git directory, which the patches being judged cannot write.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any, Dict, Optional

FORMAT = "oracle-guard-cache"
KINDS = ("sha256", "lock", "contract", "freeze")
MAX_ENTRIES = 200_000  # per kind; entries this run did not use go first
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_OID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_OID_AND_SCHEMA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64}):.")


def cache_key() -> str:
    """The tool version and a digest of the schemas the verdicts were made with."""
    from oracle_guard import __version__, validation

    digest = hashlib.sha256()
    folder = validation.schema_dir()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name), "rb") as f:
                digest.update(name.encode() + b"\0" + f.read())
    return f"{__version__}:{digest.hexdigest()}"


def _checksum(entries: Dict[str, Dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()


def _well_formed(entries: Any) -> bool:
    if not isinstance(entries, dict) or set(entries) != set(KINDS):
        return False
    for kind, table in entries.items():
        key = _OID_AND_SCHEMA if kind == "freeze" else _OID
        if not isinstance(table, dict) or not all(key.match(k) for k in table):
            return False
        if kind == "sha256" and not all(isinstance(v, str) and _HEX64.match(v)
                                        for v in table.values()):
            return False
        if kind == "lock" and not all(v is True for v in table.values()):
            return False
        if kind == "contract" and not all(isinstance(v, dict) for v in table.values()):
            return False
        if kind == "freeze" and not all(_freeze_verdict(v) for v in table.values()):
            return False
    return True


def _freeze_verdict(value: Any) -> bool:
    """The shape freeze_schema._verdict writes; anything else is not trusted."""
    def line(v: Any) -> bool:
        return v is None or (type(v) is int and v > 0)

    def text(v: Any) -> bool:
        return v is None or isinstance(v, str)

    if not isinstance(value, dict) or set(value) != {"size", "problems", "records", "cap"}:
        return False
    problems, records, cap = value["problems"], value["records"], value["cap"]
    return (type(value["size"]) is int and value["size"] >= 0
            and isinstance(problems, list) and isinstance(records, list)
            and all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
                    and line(p[1]) for p in problems)
            and all(isinstance(r, list) and len(r) == 5 and isinstance(r[0], str)
                    and all(text(v) for v in r[1:4]) and line(r[4]) for r in records)
            and (cap is None or (isinstance(cap, list) and len(cap) == 2
                                 and type(cap[0]) is int and line(cap[1]))))


class Cache:
    def __init__(self, path: Optional[str]) -> None:
        self.path = path  # None: off (--no-cache)
        self._entries: Dict[str, Dict[str, Any]] = {kind: {} for kind in KINDS}
        self._used: Dict[str, set] = {kind: set() for kind in KINDS}
        self._dirty = False
        self._key = ""
        if path is not None:
            self._key = cache_key()
            self._load()

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as f:
                doc = json.loads(f.read().decode("utf-8"))
        except (OSError, ValueError):
            return  # absent, truncated or not JSON: start empty
        if not isinstance(doc, dict) or doc.get("format") != FORMAT \
                or doc.get("key") != self._key:
            return  # another version's or a foreign file
        entries = doc.get("entries")
        if not _well_formed(entries) or doc.get("checksum") != _checksum(entries):
            return
        self._entries = entries

    def get(self, kind: str, oid: str) -> Any:
        value = self._entries[kind].get(oid)
        if value is not None:
            self._used[kind].add(oid)
        return value

    def put(self, kind: str, oid: str, value: Any) -> None:
        if self.path is None:
            return
        if self._entries[kind].get(oid) != value:
            self._entries[kind][oid] = value
            self._dirty = True
        self._used[kind].add(oid)

    def save(self) -> None:
        """Write atomically; a failure to write only loses the speed-up."""
        if self.path is None or not self._dirty:
            return
        for kind, table in self._entries.items():
            if len(table) > MAX_ENTRIES:
                keep = [k for k in table if k in self._used[kind]]
                keep += [k for k in table if k not in self._used[kind]]
                self._entries[kind] = {k: table[k] for k in keep[:MAX_ENTRIES]}
        doc = {"format": FORMAT, "key": self._key, "entries": self._entries,
               "checksum": _checksum(self._entries)}
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(doc, f, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        self._dirty = False
