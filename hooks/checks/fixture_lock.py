"""fixture-lock: do the fixture files match their SHA-256 lock?"""

from __future__ import annotations

import datetime
import functools
import json
import re
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from oracle_guard.cache import fixture_key, lock_key
from oracle_guard.checks.sample import Sample
from oracle_guard.contract import LIMITS, Contract
from oracle_guard.findings import Finding
from oracle_guard.git.objects import BlobTooLarge, Entry
from oracle_guard.parsing import strict_input, strict_json, validation
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.snapshot import Snapshot

HOOK = "fixture-lock"
# the smallest oracle: one locked fixture, and the change of its bytes
# its lines in the complete example of docs/reference/contract.md
EXAMPLE = """\
fixtures:                    # fixture-lock
  - lock: oracle/fixtures.lock.json
    root: oracle/inputs      # optional: lock keys are relative to this folder (default: the repo root)
    paths: ["oracle/inputs/**"]
"""
SAMPLE = Sample(
    sections={
        "fixtures": [
            {
                "lock": "oracle/fixtures.lock.json",
                "root": "oracle/inputs",
                "paths": ["oracle/inputs/**"],
            }
        ]
    },
    files={
        "oracle/inputs/a.txt": "1\n",
        "oracle/fixtures.lock.json": '{\n  "a.txt": '
        '"4355a46b19d348dc2f57c046f8ef63d4538ebb936000f3c9ee954a27460dd865"\n}\n',
    },
    change={"oracle/inputs/a.txt": "2\n"},
    finding="oracle/inputs/a.txt: fixture-mismatch",
    example=EXAMPLE,
)

_HEX = re.compile(r"^[0-9a-fA-F]{64}$")  # any case here; the schema then demands lowercase
# GNU sha256sum's lines: '<hex>  <name>' (text mode), '<hex> *<name>' (-b) and
# 'SHA256 (<name>) = <hex>' (--tag); each starts with '\' when the name holds a
# backslash, LF or CR, written there as '\\', '\n' and '\r'. The greedy name of a
# tagged line ends at its last ')', as GNU reads it.
_SUM_LINE = re.compile(r"([0-9a-fA-F]{64}) ([ *])(.+)", re.DOTALL)
_TAG_LINE = re.compile(r"SHA256 \((.+)\) = ([0-9a-fA-F]{64})", re.DOTALL)
_OTHER_TAG = re.compile(r"([A-Za-z][A-Za-z0-9_-]*) ?\(")
_UNESCAPE = {"\\": "\\", "n": "\n", "r": "\r"}
_NOT_A_LINE = (
    "not a sha256sum line: '<sha256>  <path>', '<sha256> *<path>' or "
    "'SHA256 (<path>) = <sha256>', with a leading '\\' when the path is escaped"
)
_BAD_KEY = (
    "is not a normalized path relative to the lock's root (no leading '/', "
    "no '.' or '..' parts, no '//' or trailing '/')"
)
STDIN_NAME = "-"  # sha256sum -c reads standard input for this name, whatever the lock says


class LockInvalid(Exception):
    """The lock is unusable; ``problems`` holds (message, line) for each bad spot."""

    def __init__(
        self,
        message: str,
        line: Optional[int] = None,
        more: Sequence[Tuple[str, Optional[int]]] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.problems = [(message, line), *more]


class Lock:
    """Parsed lock: key (relative to root) -> digest, with the line of each key.
    ``lines`` may be a function that finds them: only a finding needs a line."""

    def __init__(
        self,
        style: str,
        digests: Dict[str, str],
        lines: Union[Dict[str, int], Callable[[], Dict[str, int]]],
    ) -> None:
        self.style = style  # "json", "sha256sum" or "digest"
        self.digests = digests
        self._lines = lines

    @property
    def lines(self) -> Dict[str, int]:
        if callable(self._lines):
            self._lines = self._lines()
        return self._lines


def relative_to(root: str, path: str) -> Optional[str]:
    root = root.strip("/")
    if not root:
        return path
    return path[len(root) + 1 :] if path.startswith(root + "/") else None


def fixture_files(entry: dict, snapshot: Snapshot) -> List[str]:
    return [p for p in snapshot.select(PatternSet(entry["paths"])) if p != entry["lock"]]


def _listed_entry(snapshot: Snapshot, path: str) -> Entry:
    """The entry of a path ``snapshot`` listed (a fixture file): it is there."""
    found = snapshot.entry(path)
    assert found is not None
    return found


def pending_fixtures(entry: dict, paths: Iterable[str]) -> List[str]:
    """Those of ``paths`` the entry's lock covers: matching its patterns, not the lock itself."""
    lock_path = entry["lock"]
    return [p for p in PatternSet(entry["paths"]).select(paths) if p != lock_path]


def unlockable(entry: dict, snapshot: Snapshot) -> List[str]:
    """Why `oracle-guard lock` cannot record some fixtures (outside the root, not a file,
    a name the lock's style cannot hold: see ``unexpressible``)."""
    # deferred: under 1 ms to import, only for unlockable()
    from oracle_guard.report.escaping import show_path

    root = entry.get("root", "")
    style = None
    problems = []
    for path in fixture_files(entry, snapshot):
        tree_entry = _listed_entry(snapshot, path)
        key = relative_to(root, path)
        if not tree_entry.is_regular:
            kind = "a submodule" if tree_entry.mode == "160000" else "a symlink"
            problems.append(f"{path!r} is {kind}, not a regular file: replace or remove it")
        elif key is None:
            problems.append(
                f"{path!r} matches the fixture paths but lies outside the lock's "
                f"root {root!r}: move it or fix the contract"
            )
        else:
            style = style or new_lock_style(entry, snapshot)
            why = unexpressible(key, style)
            if why:
                problems.append(f"{show_path(path)} {why}; {remedy(style, key)}")
    return problems


def remedy(style: str, key: str) -> str:
    """What to do about a name ``unexpressible`` refuses."""
    if style == "sha256sum" and key == STDIN_NAME:
        return "rename the file, or use a JSON lock"
    return "rename the file"


def unexpressible(key: str, style: str) -> Optional[str]:
    """Why a lock of ``style`` cannot name ``key`` (None when it can). A lock is UTF-8
    text, so no lock names a file whose name is not UTF-8; a sha256sum lock cannot name
    '-' at its root, which ``sha256sum -c`` reads as standard input. Every other name
    git can store fits: JSON escapes anything, a sha256sum line escapes '\\', LF and CR
    as GNU does."""
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return "is not a valid UTF-8 file name: a lock (UTF-8 text) cannot name it"
    if style == "sha256sum" and key == STDIN_NAME:
        return (
            "is named '-' at the lock's root, which 'sha256sum -c' reads as standard "
            "input: a sha256sum lock cannot name it"
        )
    return None


def unescape_name(name: str) -> str:
    """A name from a GNU escaped line ('\\\\', '\\n', '\\r'); ValueError for others."""
    out, i = [], 0
    while i < len(name):
        ch = name[i]
        if ch == "\\":
            nxt = name[i + 1 : i + 2]
            if nxt not in _UNESCAPE:
                raise ValueError(
                    "the escaped path ends in a lone '\\'"
                    if not nxt
                    else f"'\\{nxt}' in an escaped path: sha256sum escapes only '\\\\', "
                    "'\\n' and '\\r'"
                )
            out.append(_UNESCAPE[nxt])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def escape_name(name: str) -> Tuple[str, str]:
    """(prefix, name) as GNU sha256sum writes them: ('\\', escaped) when the name holds a
    backslash, LF or CR, else ('', name)."""
    if not any(ch in name for ch in "\\\n\r"):
        return "", name
    return "\\", name.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


def parse_sum_line(line: str) -> Tuple[str, str, str]:
    """(digest, path, form) of one sha256sum line, form 'text', 'binary' or 'tag';
    ValueError with the reason for anything else."""
    escaped = line.startswith("\\")
    body = line[1:] if escaped else line
    match = _TAG_LINE.fullmatch(body)
    if match:
        name, digest = match.groups()
        form = "tag"
    else:
        match = _SUM_LINE.fullmatch(body)
        if not match:
            other = _OTHER_TAG.match(body)
            if other and other.group(1) != "SHA256" and not _HEX.match(body[:64]):
                raise ValueError(
                    f"a tagged {other.group(1)} line: a lock holds SHA-256 "
                    "digests ('SHA256 (<path>) = <sha256>')"
                )
            raise ValueError(_NOT_A_LINE)
        digest, mark, name = match.groups()
        form = "binary" if mark == "*" else "text"
    return digest, unescape_name(name) if escaped else name, form


def sum_line(key: str, digest: str, form: str = "text") -> str:
    """One line as ``sha256sum`` (``-b`` for 'binary', ``--tag`` for 'tag') writes it."""
    prefix, name = escape_name(key)
    if form == "tag":
        return f"{prefix}SHA256 ({name}) = {digest}"
    return f"{prefix}{digest} {'*' if form == 'binary' else ' '}{name}"


def sum_form(text: str) -> str:
    """The form of a sha256sum lock's first line ('text' when it has none or is not one),
    which `oracle-guard lock` and `lock --add` keep."""
    try:
        return parse_sum_line(text.split("\n", 1)[0])[2]
    except ValueError:
        return "text"


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
        text = strict_input.decode_text(data)
    except strict_input.LoadError as exc:
        raise LockInvalid(exc.message, exc.line) from None
    style = lock_style(text)
    if style == "json":
        try:
            # the C decoder first; it rejects what the line-tracking parser does
            # (load_json re-parses with that for the message and line)
            value = strict_json.load_json(data).value
        except strict_input.LoadError as exc:
            raise LockInvalid(exc.message, exc.line) from None
        if _passes_schema(value) or (validated and isinstance(value, dict)):
            return Lock(style, value, lambda: _json_lines(data))
        doc = strict_json.load_json(data, positions=True)  # a finding needs lines
        digests = doc.value
        lines = {k: doc.line_of((k,)) or 1 for k in digests}
    elif style == "digest":
        digest = text.strip()
        if len(fixtures) > 1:
            raise LockInvalid(
                f"a single-digest lock needs 'paths' to match exactly one file; "
                f"they match {len(fixtures)} ({fixtures[0]}, {fixtures[1]}"
                f"{', ...' if len(fixtures) > 2 else ''})",
                1,
            )
        if not fixtures:
            # Nothing for the digest to lock: check_entry reports fixture-missing.
            if _schema_rejects({"-": digest}):
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
                raise LockInvalid(
                    "line ends in CR (CRLF line endings); commit the lock with LF endings", number
                )
            # Text, binary and tagged lines may mix, as GNU reads them: each names
            # one path and its digest whatever its form.
            try:
                digest, path, _ = parse_sum_line(line)
            except ValueError as exc:
                raise LockInvalid(str(exc), number) from None
            if path in digests:
                raise LockInvalid(
                    f"duplicate entry for {path!r} (first on line {lines[path]})", number
                )
            digests[path], lines[path] = digest, number
        # An empty file locks nothing (what 'oracle-guard lock' writes for no fixtures).
    if not validated:
        _validate(digests, lines)
    return Lock(style, digests, lines)


def _json_lines(data: bytes) -> Dict[str, int]:
    """The line of each key of a JSON lock the C decoder already read."""
    doc = strict_json.load_json(data, positions=True)
    return {k: doc.line_of((k,)) or 1 for k in doc.value}


@functools.cache
def _schema_patterns() -> Optional[Tuple[Callable, Callable]]:
    """The built-in lock schema's two patterns (key, digest) as searches, when the
    schema is exactly an object of pattern-named keys to patterned strings: then
    they judge a lock alone. None for any other shape: jsonschema judges."""
    schema = validation.builtin_schema("fixtures-lock")
    names, values = schema.get("propertyNames"), schema.get("additionalProperties")
    if (
        set(schema) != {"$schema", "$id", "title", "type", "propertyNames", "additionalProperties"}
        or schema["$schema"] != "https://json-schema.org/draft/2020-12/schema"
        or schema["type"] != "object"
        or not isinstance(names, dict)
        or set(names) != {"pattern"}
        or not isinstance(values, dict)
        or set(values) != {"type", "pattern"}
        or values["type"] != "string"
        or not all(isinstance(p, str) for p in (names["pattern"], values["pattern"]))
    ):
        return None
    # re.search, as jsonschema's 'pattern' keyword matches
    return re.compile(names["pattern"]).search, re.compile(values["pattern"]).search


def _passes_schema(value: object) -> bool:
    """True when the lock schema surely accepts ``value``, without jsonschema;
    False means only that jsonschema must judge (and name what is wrong)."""
    patterns = _schema_patterns()
    if patterns is None or not isinstance(value, dict):
        return False
    key_ok, digest_ok = patterns
    return all(key_ok(k) for k in value) and all(
        isinstance(v, str) and digest_ok(v) for v in value.values()
    )


def _schema_rejects(digests: Dict[str, object]) -> bool:
    return not _passes_schema(digests) and bool(validation.problems(digests, "fixtures-lock"))


def _validate(digests: Dict[str, object], lines: Dict[str, int]) -> None:
    """Schema-check the whole lock; on failure name each bad entry and its line."""
    if _passes_schema(digests) or not validation.problems(digests, "fixtures-lock"):
        return
    found: List[Tuple[str, Optional[int]]] = []
    for key, digest in digests.items():
        for path, message in validation.problems({key: digest}, "fixtures-lock"):
            if not path:
                found.append((f"key {key!r} {_BAD_KEY}", lines.get(key)))
            elif isinstance(digest, str):
                found.append(
                    (f"{key!r}: digest {digest!r} is not 64 lowercase hex digits", lines.get(key))
                )
            else:
                found.append((f"{key!r}: {message}", lines.get(key)))
            break
    if not found:  # not expected: the schema failed on the whole but on no single entry
        found.append((validation.problems(digests, "fixtures-lock")[0][1], None))
    raise LockInvalid(found[0][0], found[0][1], found[1:])


def check_entry(
    entry: dict, candidate: Snapshot, lock_limit: int = LIMITS["lock_bytes"]
) -> List[Finding]:
    """The entry's findings; a verdict cached for the same lock, entry, limit and
    files (``Snapshot.files_key``) is used without listing, parsing or hashing."""
    lock_entry = candidate.entry(entry["lock"])
    key = None
    if lock_entry is not None and lock_entry.is_regular:
        files = candidate.files_key(PatternSet(entry["paths"]))
        if files is not None:
            key = fixture_key(lock_entry, lock_limit, entry, files)
    cache = candidate.cache
    cached = cache.get("fixture", key) if key is not None else None
    # findings name the snapshot: theirs must be this one's (a pass names none)
    if cached is not None and cached["label"] in (None, candidate.label):
        return [Finding(HOOK, *finding) for finding in cached["findings"]]
    findings = _check_entry(entry, candidate, lock_limit)
    if key is not None:
        verdict = [[f.code, f.path, f.message, f.line] for f in findings]
        cache.put(
            "fixture", key, {"label": candidate.label if verdict else None, "findings": verdict}
        )
    return findings


def _check_entry(entry: dict, candidate: Snapshot, lock_limit: int) -> List[Finding]:
    lock_path = entry["lock"]
    root = entry.get("root", "")
    fixtures = fixture_files(entry, candidate)
    lock_entry = candidate.entry(lock_path)
    if lock_entry is None:
        return [
            Finding(HOOK, "lock-invalid", lock_path, f"lock file is missing from {candidate.label}")
        ]
    if not lock_entry.is_regular:
        return [Finding(HOOK, "lock-invalid", lock_path, "lock file is not a regular file")]
    cache = candidate.cache
    cache_key = lock_key(lock_entry.oid, lock_limit)  # the style comes from the bytes alone
    try:
        validated = cache.get("lock", cache_key) is True
        lock = parse_lock(candidate.read(lock_path, lock_limit), fixtures, root, validated)
        if lock.style != "digest":  # a digest lock's verdict depends on the fixtures too
            cache.put("lock", cache_key, True)
    except BlobTooLarge as exc:
        return [
            Finding(
                HOOK, "lock-invalid", lock_path, f"lock file {exc} (limits.lock_bytes): not loaded"
            )
        ]
    except LockInvalid as exc:
        findings = [
            Finding(HOOK, "lock-invalid", lock_path, message, line)
            for message, line in exc.problems
        ]
        blockers = unlockable(entry, candidate)
        if blockers:  # the hint's 'oracle-guard lock' would refuse: say why, and what to do
            first = findings[0]
            findings[0] = Finding(
                HOOK,
                first.code,
                first.path,
                f"{first.message} ('oracle-guard lock' cannot rewrite it: {blockers[0]})",
                first.line,
            )
        return findings

    findings = []
    seen = set()
    if lock.style == "digest" and not fixtures:
        findings.append(
            Finding(
                HOOK,
                "fixture-missing",
                lock_path,
                f"the digest locks no file: the fixture paths match nothing in {candidate.label}",
                1,
            )
        )
    locked = {
        path: lock.digests[key]
        for path in fixtures
        for key in (relative_to(root, path),)
        if key in lock.digests and _listed_entry(candidate, path).is_regular
    }
    digests = candidate.sha256_of(list(locked), locked)
    for path in fixtures:
        file_entry = _listed_entry(candidate, path)
        key = relative_to(root, path)
        if key is not None:
            seen.add(key)
        if not file_entry.is_regular:
            kind = "submodule" if file_entry.mode == "160000" else "symlink"
            findings.append(
                Finding(
                    HOOK,
                    "fixture-not-regular",
                    path,
                    f"is a {kind} (mode {file_entry.mode}), not a regular file",
                )
            )
            continue
        if key is None:
            findings.append(
                Finding(
                    HOOK,
                    "fixture-unlocked",
                    path,
                    f"matches the fixture paths but lies outside the lock's root {root!r}",
                )
            )
            continue
        if key not in lock.digests:
            why = unexpressible(key, lock.style)  # then 'oracle-guard lock' cannot help
            findings.append(
                Finding(
                    HOOK,
                    "fixture-unlocked",
                    path,
                    f"has no entry in {lock_path}"
                    + (f"; it {why}; {remedy(lock.style, key)}" if why else ""),
                )
            )
            continue
        actual = digests[path]
        if actual != lock.digests[key]:
            findings.append(
                Finding(
                    HOOK,
                    "fixture-mismatch",
                    path,
                    f"sha256 {actual[:12]}… does not match {lock_path} ({lock.digests[key][:12]}…)",
                )
            )
    for key in sorted(set(lock.digests) - seen):
        findings.append(
            Finding(
                HOOK,
                "fixture-missing",
                lock_path,
                f"entry {key!r} names no fixture file in {candidate.label}",
                lock.lines.get(key),
            )
        )
    return findings


def check(
    contract: Contract, base: Snapshot, candidate: Snapshot, now: datetime.datetime
) -> List[Finding]:
    findings: List[Finding] = []
    for entry in contract.section("fixtures") or []:
        findings.extend(check_entry(entry, candidate, contract.limit("lock_bytes")))
    return findings


def render_lock(style: str, digests: Dict[str, str], form: str = "text") -> str:
    """The lock's text; a sha256sum lock's lines in ``form`` ('text', 'binary' or 'tag'),
    each escaped as GNU sha256sum escapes it, so ``sha256sum -c`` reads the same names."""
    if style == "digest" and len(digests) == 1:
        return next(iter(digests.values())) + "\n"
    if style == "sha256sum":
        return "".join(sum_line(k, digests[k], form) + "\n" for k in sorted(digests))
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


def _existing_text(entry: dict, snapshot: Snapshot) -> Optional[str]:
    lock_entry = snapshot.entry(entry["lock"])
    if lock_entry is not None and lock_entry.is_regular:
        try:
            return strict_input.decode_text(snapshot.read(entry["lock"]))
        except strict_input.LoadError:
            pass  # not text: rewritten in the style of its name
    return None


def new_lock_style(entry: dict, snapshot: Snapshot) -> str:
    """The style `oracle-guard lock` writes ``entry``'s lock in: an existing lock's own,
    else the one its name suggests."""
    text = _existing_text(entry, snapshot)
    return style_for_name(entry["lock"]) if text is None else lock_style(text)


def build_lock(entry: dict, snapshot: Snapshot) -> Tuple[str, int]:
    """The lock text for ``entry`` from ``snapshot``, keeping an existing lock's style
    (and a sha256sum lock's form: text, binary or tagged, from its first line); a new
    lock (or one that is not a text file) takes the style its name suggests. Callers
    check ``unlockable`` first: a name the style cannot hold is not written."""
    root = entry.get("root", "")
    fixtures = fixture_files(entry, snapshot)
    text = _existing_text(entry, snapshot)
    style = style_for_name(entry["lock"]) if text is None else lock_style(text)
    form = sum_form(text) if text is not None and style == "sha256sum" else "text"
    relative = {
        path: relative_to(root, path)
        for path in fixtures
        if _listed_entry(snapshot, path).is_regular
    }
    keys = {path: key for path, key in relative.items() if key is not None}
    by_path = snapshot.sha256_of(list(keys))
    digests = {key: by_path[path] for path, key in keys.items()}
    return render_lock(style, digests, form), len(digests)
