"""A content-addressed cache under the git directory: verdicts keyed by blob id
and by everything else that made them.

Blobs never change, so what was computed from one (its SHA-256, that a lock or
contract in it validated, what a freeze file holds or why it is invalid) holds
for as long as the rest of what made it holds too. So each entry's key names,
besides the blob id, the loader the file's name picked, the size cap it was
read under and the schema it was checked against (see the ``*_key`` functions);
and the file's key names the tool (its version and its source files' stat), its schemas,
the parser and validator libraries and the Python it ran on. A cached value is
then what a cold run would compute for the same key. A cache that is corrupt,
truncated, or written by another version is ignored and rebuilt, never
trusted. The file lives in the repository's git directory, which the patches
being judged cannot write.

The SHA-256 table (one entry per fixture file) is a file of its own, read
only when a digest is asked for: a warm run that finds each fixture entry's
verdict (kind ``fixture``) never needs it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import sys
from typing import Any, Dict, Optional, Tuple

from oracle_guard import __version__

FORMAT = "oracle-guard-cache"
KINDS = ("sha256", "lock", "contract", "freeze", "tamper", "fixture")
# Which file holds which kinds, by name beside the main one (the first).
FILES = (("cache.json", tuple(k for k in KINDS if k != "sha256")), ("sha256.json", ("sha256",)))
_FILE_OF = {kind: (name, kinds) for name, kinds in FILES for kind in kinds}
MAX_ENTRIES = 200_000  # per kind; entries this run did not use go first
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_OID = "(?:[0-9a-f]{40}|[0-9a-f]{64})"
_CAP = "([1-9][0-9]*)"  # the size cap, in bytes, the blob was read under
LOADERS = ("json", "yaml")  # what parsing/loaders.py's loader_for names
# The key of an entry of each kind; freeze: blob, loader, cap, then the schema
# (last: a custom schema's path may hold ':').
_KEYS = {
    "sha256": re.compile(_OID),  # the digest of the bytes: nothing else goes in
    "lock": re.compile(rf"{_OID}:{_CAP}"),  # the style is read from the bytes
    "contract": re.compile(rf"{_OID}:yaml:{_CAP}"),
    "freeze": re.compile(rf"{_OID}:(?:{'|'.join(LOADERS)}):{_CAP}:.+", re.DOTALL),
    # test-tamper's marks: the blob, then a digest of the rest that made them
    "tamper": re.compile(rf"{_OID}:[0-9a-f]{{64}}"),
    # a fixture entry's verdict: a digest of everything that made it (fixture_key)
    "fixture": re.compile(r"[0-9a-f]{64}"),
}


def _key(*parts: Any) -> str:
    return ":".join(str(part) for part in parts)


def lock_key(oid: str, cap: int) -> str:
    """That the lock in blob ``oid``, read under ``cap`` bytes, passed its schema."""
    return _key(oid, cap)


def contract_key(oid: str, cap: int) -> str:
    """The contract in blob ``oid``, loaded as YAML under ``cap`` bytes."""
    return _key(oid, "yaml", cap)


def freeze_key(oid: str, loader: str, cap: int, schema: str) -> str:
    """What the freeze file in blob ``oid`` holds when loaded by ``loader`` (which
    its file name picks), read under ``cap`` bytes and checked against ``schema``."""
    if loader not in LOADERS:
        raise ValueError(f"unknown loader {loader!r}")
    return _key(oid, loader, cap, schema)


def fixture_key(lock: Any, cap: int, entry: Any, files: str) -> str:
    """The verdict on one fixture entry: its lock's tree entry (mode, id), read under
    ``cap`` bytes, the entry as the contract gives it (lock, root, paths) and
    ``files``, what names every file its patterns can match (Snapshot.files_key)."""
    text = json.dumps([list(lock), cap, entry, files], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


# The libraries whose output a verdict holds (parse errors, schema messages), by
# module and distribution name.
_LIBRARIES = (("yaml", "pyyaml"), ("jsonschema", "jsonschema"), ("referencing", "referencing"))


def _library(module: str, dist: str) -> str:
    """The installed version, from the name of the metadata folder beside the
    package: importing it would cost a warm run what the cache saves. Failing
    that, the package file's size and time, which an upgrade changes."""

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        return f"{module}=absent"
    site = os.path.dirname(os.path.dirname(spec.origin))
    pattern = re.compile(rf"{re.escape(dist)}-([^-]+)\.dist-info", re.IGNORECASE)
    try:
        versions = sorted(m.group(1) for m in map(pattern.fullmatch, os.listdir(site)) if m)
    except OSError:
        versions = []
    if versions:
        return f"{module}={','.join(versions)}"
    try:
        st = os.stat(spec.origin)
        return f"{module}@{spec.origin}:{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        return f"{module}@{spec.origin}"


def _digest_files(digest: Any, folder: str, suffix: str) -> None:
    """Every file with this suffix under folder, subfolders included (the package's
    layers), by its path relative to folder and its stat (size, inode, modification
    and change time): any write moves the change time, which setting the times
    back moves too, so a changed file changes the key, and no run reads them all."""
    names = []
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        relative = os.path.relpath(top, folder)
        names += [n if relative == "." else f"{relative}/{n}" for n in files if n.endswith(suffix)]
    for name in sorted(names):
        try:
            st = os.stat(os.path.join(folder, name))
            made = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}:{st.st_dev}"
        except OSError:
            made = "\xff unreadable"
        digest.update(name.encode() + b"\0" + made.encode() + b"\0")


def cache_key() -> str:
    """What every verdict was made with, whatever its blob: the tool (its version,
    and its source files, which an editable install changes without a new
    version), its schema files, the YAML parser and the validator, and the Python
    they ran on."""
    # deferred: under 1 ms to import, only for cache_key()
    from oracle_guard.parsing import validation

    digest = hashlib.sha256()
    digest.update(b"schemas\0")
    _digest_files(digest, validation.schema_dir(), ".json")
    digest.update(b"\0sources\0")
    _digest_files(digest, os.path.dirname(os.path.abspath(__file__)), ".py")
    runtime = [sys.implementation.name, "%d.%d" % sys.version_info[:2]]
    runtime += [_library(module, dist) for module, dist in _LIBRARIES]
    digest.update(b"\0runtime\0" + "\0".join(runtime).encode())
    return f"{__version__}:{digest.hexdigest()}"


def _checksum(entries: Dict[str, Dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()


def _well_formed(entries: Any, kinds: Any = KINDS) -> bool:
    if not isinstance(entries, dict) or set(entries) != set(kinds):
        return False
    for kind, table in entries.items():
        key = _KEYS[kind]
        if not isinstance(table, dict) or not all(key.fullmatch(k) for k in table):
            return False
        if kind == "sha256" and not all(
            isinstance(v, str) and _HEX64.match(v) for v in table.values()
        ):
            return False
        if kind == "lock" and not all(v is True for v in table.values()):
            return False
        if kind == "contract" and not all(isinstance(v, dict) for v in table.values()):
            return False
        if kind == "tamper" and not all(_tamper_marks(v) for v in table.values()):
            return False
        if kind == "fixture" and not all(_fixture_verdict(v) for v in table.values()):
            return False
        if kind == "freeze" and not all(
            _freeze_verdict(v) and v["size"] <= int(key.fullmatch(k).group(1))  # type: ignore[union-attr]  # matched above
            for k, v in table.items()
        ):
            return False  # a verdict on more bytes than its cap lets be read: not made so
    return True


def _tamper_marks(value: Any) -> bool:
    """The shape test_tamper writes: a list of [rule, line, subject, scope, message]."""
    return isinstance(value, list) and all(
        isinstance(m, list)
        and len(m) == 5
        and type(m[1]) is int
        and m[1] > 0
        and all(isinstance(v, str) for v in (m[0], m[2], m[3], m[4]))
        for m in value
    )


def _fixture_verdict(value: Any) -> bool:
    """The shape fixture_lock writes: the findings, each [code, path, message, line],
    and the label of the snapshot they name (None only when there are none: a
    passing verdict holds for a snapshot of any name)."""
    if not isinstance(value, dict) or set(value) != {"label", "findings"}:
        return False
    label, findings = value["label"], value["findings"]
    return (
        isinstance(findings, list)
        and (isinstance(label, str) or (label is None and not findings))
        and all(
            isinstance(f, list)
            and len(f) == 4
            and isinstance(f[0], str)
            and (f[1] is None or isinstance(f[1], str))
            and isinstance(f[2], str)
            and (f[3] is None or (type(f[3]) is int and f[3] > 0))
            for f in findings
        )
    )


def _freeze_verdict(value: Any) -> bool:
    """The shape freeze_files._verdict writes; anything else is not trusted."""

    def line(v: Any) -> bool:
        return v is None or (type(v) is int and v > 0)

    def text(v: Any) -> bool:
        return v is None or isinstance(v, str)

    if not isinstance(value, dict) or set(value) != {"size", "problems", "records", "cap"}:
        return False
    problems, records, cap = value["problems"], value["records"], value["cap"]
    return (
        type(value["size"]) is int
        and value["size"] >= 0
        and isinstance(problems, list)
        and isinstance(records, list)
        and all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and line(p[1])
            for p in problems
        )
        and all(
            isinstance(r, list)
            and len(r) == 5
            and isinstance(r[0], str)
            and all(text(v) for v in r[1:4])
            and line(r[4])
            for r in records
        )
        and (
            cap is None
            or (isinstance(cap, list) and len(cap) == 2 and type(cap[0]) is int and line(cap[1]))
        )
    )


class Cache:
    def __init__(self, path: Optional[str]) -> None:
        self.path = path  # None: off (--no-cache); the main file, FILES[0]
        self._entries: Dict[str, Dict[str, Any]] = {kind: {} for kind in KINDS}
        self._used: Dict[str, set] = {kind: set() for kind in KINDS}
        self._loaded: set = set()  # the files read so far, by name
        self._dirty: set = set()  # the files to write, by name
        self._key = ""
        if path is not None:
            self._key = cache_key()

    def _file_of(self, kind: str) -> Tuple[str, Tuple[str, ...]]:
        return _FILE_OF[kind]

    def _path_of(self, name: str) -> str:
        assert self.path is not None
        return os.path.join(os.path.dirname(self.path), name)

    def _table(self, kind: str) -> Dict[str, Any]:
        """The kind's entries, its file read on first use."""
        name, kinds = self._file_of(kind)
        if self.path is not None and name not in self._loaded:
            self._loaded.add(name)
            self._load(self._path_of(name), kinds)
        return self._entries[kind]

    def _load(self, path: str, kinds: Tuple[str, ...]) -> None:
        try:
            with open(path, "rb") as f:
                doc = json.loads(f.read().decode("utf-8"))
        except (OSError, ValueError):
            return  # absent, truncated or not JSON: start empty
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("key") != self._key:
            return  # another version's or a foreign file
        entries: Any = doc.get("entries")  # untrusted until _well_formed says otherwise
        if not _well_formed(entries, kinds) or doc.get("checksum") != _checksum(entries):
            return
        self._entries.update(entries)

    def get(self, kind: str, oid: str) -> Any:
        value = self._table(kind).get(oid)
        if value is not None:
            self._used[kind].add(oid)
        return value

    def put(self, kind: str, oid: str, value: Any) -> None:
        if self.path is None:
            return
        table = self._table(kind)
        if table.get(oid) != value:
            table[oid] = value
            self._dirty.add(self._file_of(kind)[0])
        self._used[kind].add(oid)

    def save(self) -> None:
        """Write atomically; a failure to write only loses the speed-up."""
        if self.path is None:
            return
        for name, kinds in FILES:
            if name in self._dirty:
                self._save(self._path_of(name), kinds)
        self._dirty.clear()

    def _save(self, path: str, kinds: Tuple[str, ...]) -> None:
        for kind in kinds:
            table = self._entries[kind]
            if len(table) > MAX_ENTRIES:
                keep = [k for k in table if k in self._used[kind]]
                keep += [k for k in table if k not in self._used[kind]]
                self._entries[kind] = {k: table[k] for k in keep[:MAX_ENTRIES]}
        entries = {kind: self._entries[kind] for kind in kinds}
        doc = {
            "format": FORMAT,
            "key": self._key,
            "entries": entries,
            "checksum": _checksum(entries),
        }
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(doc, f, sort_keys=True)
            os.replace(tmp, path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
