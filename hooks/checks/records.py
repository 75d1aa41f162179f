"""Record integrity for seed-append-only: each new record of a seeds entry with
``records``, ``digest``, ``id_field`` or ``lock`` is well-formed, hashes its
payload as it says, holds an id no other record of the set holds, and agrees
with the lock's seed for its id. Only new records are judged (appended lines
and elements, added files); existing ones were judged when they came.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

from oracle_guard.contract import Contract, ContractError
from oracle_guard.findings import Finding
from oracle_guard.git.objects import BlobTooLarge
from oracle_guard.parsing import strict_input, strict_json, validation
from oracle_guard.parsing.strict_equality import strict_key
from oracle_guard.sections import RECORD_SHAPES
from oracle_guard.snapshot import Snapshot

HOOK = "seed-append-only"
BUILTIN = RECORD_SHAPES
FORMS = ("json-sorted-compact-utf8",)
DEFAULT_FORM = FORMS[0]
# What a built-in record shape implies when the entry does not say otherwise.
DEFAULT_DIGEST = {
    "corpus-line": {"field": "payload_sha256", "of": "payload"},
    "replay-case": {"field": "input_sha256", "of": "payload"},
}
RULE_KEYS = ("records", "digest", "id_field", "lock", "promote")


def canonical(value: Any, form: str = DEFAULT_FORM) -> bytes:
    """The bytes a digest hashes: JSON with keys sorted by code point, ',' and ':'
    separators and no other white space, non-ASCII written as UTF-8 (not
    escaped), floats as Python's shortest round-trip repr (1.0, 1e+16, -0.0).
    A value the strict loader gave always encodes (it refuses NaN and lone
    surrogates); ValueError otherwise."""
    if form != DEFAULT_FORM:
        raise ValueError(f"unknown digest form {form!r}")
    try:
        text = json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
        return text.encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        raise ValueError(f"cannot be put in the digest form: {exc}") from None


def digest_of(value: Any, form: str = DEFAULT_FORM) -> str:
    return hashlib.sha256(canonical(value, form)).hexdigest()


def _command_hint(schema: Optional[str], value: Any, path: Tuple[Any, ...]) -> str:
    """A replay case's command given as one string: say how to write it."""
    if schema != "replay-case" or tuple(path) != ("command",) or not isinstance(value, dict):
        return ""
    command = value.get("command")
    if not isinstance(command, str) or not command.strip():
        return ""
    return (
        f"; hint: a command is an argument list, never a shell string: write "
        f"{json.dumps(command.split())}"
    )


def _show(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Rules:
    """The record rules of one seeds entry, with the built-in shape's defaults."""

    def __init__(self, entry: Dict[str, Any], contract: Contract) -> None:
        self.schema: Optional[str] = entry.get("records")
        builtin = self.schema in BUILTIN
        digest = entry.get("digest") or (DEFAULT_DIGEST.get(self.schema or "") if builtin else None)
        self.digest_field: Optional[str] = digest["field"] if digest else None
        self.digest_of: Optional[str] = digest["of"] if digest else None
        self.form: str = (digest or {}).get("form", DEFAULT_FORM)
        self.id_field: Optional[str] = entry.get("id_field", "id" if builtin else None)
        self.lock: Optional[str] = entry.get("lock")
        self.seed_field: str = entry.get("seed_field", "seed")
        self.promote: Tuple[str, ...] = tuple(entry.get("promote", ()))
        self._contract = contract
        self._validator: Any = None
        self._lock_value: Optional[Dict[str, Any]] = None

    @classmethod
    def of(cls, entry: Dict[str, Any], contract: Contract) -> Optional[Rules]:
        if not any(key in entry for key in RULE_KEYS):
            return None
        return cls(entry, contract)

    # -- one record ---------------------------------------------------------
    def problems(self, value: Any) -> List[Tuple[str, str, Tuple[Any, ...]]]:
        """(code, message, json path) for one new record: its schema first (a
        record that fails it is judged no further), then its digest."""
        if self.schema is not None:
            found = self._schema_problems(value)
            if found:
                path, message = found[0]
                more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
                where = strict_input.json_pointer(path)
                hint = _command_hint(self.schema, value, path)
                return [
                    (
                        "record-invalid",
                        f"fails {self.schema}: {where}: {message}{more}{hint}",
                        path,
                    )
                ]
        needed = [f for f in (self.id_field, self.digest_field, self.digest_of) if f]
        if self.lock:
            needed.append(self.seed_field)
        if needed and not isinstance(value, dict):
            return [("record-invalid", "is not a JSON object, so it has no fields", ())]
        for name in dict.fromkeys(needed):
            if name not in value:
                return [("record-invalid", f"has no {name!r} field", ())]
        if self.digest_field is None:
            return []
        declared = value[self.digest_field]
        try:
            actual = digest_of(value[self.digest_of], self.form)
        except ValueError as exc:
            return [("record-invalid", f"{self.digest_of!r} {exc}", (self.digest_of,))]
        if declared != actual:
            return [
                (
                    "record-digest-mismatch",
                    f"{self.digest_field} {_show(declared, 20)} is not the SHA-256 of "
                    f"{self.digest_of!r} in the {self.form} form ({actual})",
                    (self.digest_field,),
                )
            ]
        return []

    def _schema_problems(self, value: Any) -> List[validation.Problem]:
        if self.schema in BUILTIN:
            return validation.problems(value, self.schema)
        if self._validator is None:
            self._validator = _repo_validator(self.schema or "", self._contract)
        try:
            return validation.problems(value, None, self._validator)
        except validation.SchemaError as exc:
            raise ContractError(f"records schema {self.schema!r}: {exc}") from None

    def identity(self, value: Any) -> Any:
        """The record's id as a strict key, or None (no id rule, or no id)."""
        if self.id_field is None or not isinstance(value, dict) or self.id_field not in value:
            return None
        return strict_key(value[self.id_field])

    # -- the lock -------------------------------------------------------------
    def lock_entries(self, candidate: Snapshot) -> Dict[str, Any]:
        """The lock's object in the candidate; ContractError-free: a lock that is
        missing or unreadable is a finding (``Invalid``)."""
        if self._lock_value is None:
            assert self.lock is not None
            entry = candidate.entry(self.lock)
            if entry is None or not entry.is_regular:
                raise Invalid(self.lock, "the lock the contract names is missing (or not a file)")
            try:
                value = strict_json.load_json(
                    candidate.read(self.lock, self._contract.limit("seed_bytes"))
                ).value
            except (strict_input.LoadError, BlobTooLarge) as exc:
                raise Invalid(self.lock, f"the lock does not parse: {exc}") from None
            if not isinstance(value, dict):
                raise Invalid(self.lock, "the lock is not a JSON object of id to seed")
            self._lock_value = value
        return self._lock_value


class Invalid(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def _repo_validator(schema: str, contract: Contract) -> validation.Validator:
    source = contract.source
    if schema not in source:
        raise ContractError(
            f"records schema {schema!r} named by the contract is missing from {source.label}"
        )
    try:
        doc = strict_json.load_json(source.read(schema))
        return validation.custom_validator(doc.value)
    except (strict_input.LoadError, validation.SchemaError, BlobTooLarge) as exc:
        raise ContractError(f"records schema {schema!r} ({source.label}): {exc}") from None


def locator(data: bytes) -> Callable[[Tuple[Any, ...]], Optional[int]]:
    """The line of a JSON path of ``data``: the slow parser runs only on a finding."""
    doc: List[strict_input.Document] = []

    def locate(json_path: Tuple[Any, ...]) -> Optional[int]:
        if not doc:
            doc.append(strict_json.load_json(data, positions=True))
        return doc[0].line_of(json_path)

    return locate


class Record(NamedTuple):
    value: Any
    where: str  # "line 7", "element [3]", or "" for a whole file
    line: Optional[int]  # None: found on demand (``locate``)
    prefix: Tuple[Any, ...] = ()  # the record's JSON path in its file (an element's index)


class Batch(NamedTuple):
    """The new records of one file."""

    path: str
    records: List[Record]
    base_data: Optional[bytes] = None  # a jsonl file's base bytes, read already
    base_values: Optional[List[Any]] = None  # a json-array file's base elements
    locate: Optional[Callable[[Tuple[Any, ...]], Optional[int]]] = None


def set_findings(
    rules: Rules,
    fmt: str,
    batches: List[Batch],
    base: Snapshot,
    candidate: Snapshot,
    in_base: List[str],
    in_candidate: List[str],
    limit: int,
) -> List[Finding]:
    """The new records of a seeds entry's files, judged as one set: each record,
    its id against every id the base's files hold and the other new ones, its
    seed against the lock; and an id the lock gains against the existing
    records of an immutable set."""
    wanted: Dict[Any, bool] = {}
    for batch in batches:
        for record in batch.records:
            ident = rules.identity(record.value)
            if ident is not None:
                wanted[ident] = True
    held: Dict[Any, str] = {}
    if wanted:
        own = {batch.path: batch for batch in batches}
        for path in in_base:
            held.update(_base_ids(rules, fmt, path, base, own.get(path), wanted, limit))
    out: List[Finding] = []
    for batch in batches:
        out.extend(judge(rules, batch.path, batch.records, held, candidate, batch.locate))
    if rules.lock and fmt == "immutable":
        new = {batch.path for batch in batches}
        kept = [path for path in in_candidate if path in base and path not in new]
        out.extend(_new_lock_keys(rules, base, candidate, kept, limit))
    return _once(out)


def _once(findings: List[Finding]) -> List[Finding]:
    """A broken lock is one finding, however many records asked it."""
    seen = set()
    out = []
    for finding in findings:
        key = (finding.code, finding.path, finding.message, finding.line)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return out


def _load_value(snapshot: Snapshot, path: str, limit: int) -> Any:
    """A base file's value, or _UNREAD: one that cannot be read holds no id (and
    its own findings say why)."""
    try:
        return strict_json.load_json(snapshot.read(path, limit)).value
    except (strict_input.LoadError, BlobTooLarge):
        return _UNREAD


_UNREAD = object()


def _base_ids(
    rules: Rules,
    fmt: str,
    path: str,
    base: Snapshot,
    batch: Optional[Batch],
    wanted: Dict[Any, bool],
    limit: int,
) -> Dict[Any, str]:
    """Which ``wanted`` ids a base file holds, and where."""
    assert rules.id_field is not None  # wanted is empty without an id rule
    if fmt == "jsonl":
        data = batch.base_data if batch is not None and batch.base_data else None
        if data is None:
            try:
                data = base.read(path, limit)
            except BlobTooLarge:
                return {}
        found = jsonl_ids(data, rules.id_field, wanted)
        return {key: f"{path} line {number}" for key, number in found.items()}
    if fmt == "json-array":
        values = batch.base_values if batch is not None else None
        if values is None:
            value = _load_value(base, path, limit)
            values = value if isinstance(value, list) else []
        out: Dict[Any, str] = {}
        for i, value in enumerate(values):
            ident = rules.identity(value)
            if ident is not None and ident in wanted:
                out.setdefault(ident, f"{path} element [{i}]")
        return out
    ident = rules.identity(_load_value(base, path, limit))
    return {ident: path} if ident is not None and ident in wanted else {}


def _new_lock_keys(
    rules: Rules, base: Snapshot, candidate: Snapshot, kept: List[str], limit: int
) -> List[Finding]:
    """An id the lock gains that an existing record holds: their seeds agree."""
    assert rules.lock is not None and rules.id_field is not None
    try:
        lock = rules.lock_entries(candidate)
    except Invalid as exc:
        return [Finding(HOOK, "record-invalid", exc.path, exc.message)]
    before = _load_value(base, rules.lock, limit) if rules.lock in base else {}
    gained = [key for key in lock if not (isinstance(before, dict) and key in before)]
    if not gained:
        return []
    gained_set = set(gained)
    out = []
    for path in kept:
        value = _load_value(candidate, path, limit)
        if not isinstance(value, dict):
            continue
        key = value.get(rules.id_field)
        if not isinstance(key, str) or key not in gained_set:
            continue
        seed = value.get(rules.seed_field)
        if strict_key(seed) != strict_key(lock[key]):
            data = candidate.read(rules.lock, limit)
            out.append(
                Finding(
                    HOOK,
                    "record-seed-mismatch",
                    rules.lock,
                    f"new entry {_show(key)} gives the seed {_show(lock[key])}, but {path} "
                    f"holds {rules.seed_field} {_show(seed)}",
                    locator(data)((key,)),
                )
            )
    return out


def judge(
    rules: Rules,
    path: str,
    records: Iterable[Record],
    held: Dict[Any, str],
    candidate: Snapshot,
    locate: Optional[Callable[[Tuple[Any, ...]], Optional[int]]] = None,
) -> List[Finding]:
    """Findings for the new ``records`` of ``path``. ``held``: the ids the set
    already holds (strict key -> where), to which the new ids are added.
    ``locate(json_path)``: the line of a JSON path of the file, for a finding
    whose record has no line of its own (a json-array element, a file's field)."""
    out: List[Finding] = []
    for record in records:
        prefix = f"{record.where}: " if record.where else ""

        def line(json_path: Tuple[Any, ...], record: Record = record) -> Optional[int]:
            if record.line is not None or locate is None:
                return record.line
            return locate(record.prefix + tuple(json_path))

        found = rules.problems(record.value)
        for code, message, json_path in found:
            out.append(Finding(HOOK, code, path, prefix + message, line(json_path)))
        if found and found[0][0] == "record-invalid":
            continue
        ident = rules.identity(record.value)
        if ident is not None:
            here = f"{path} {record.where}".rstrip()
            if ident in held:
                shown = _show(record.value[rules.id_field])
                out.append(
                    Finding(
                        HOOK,
                        "record-id-reused",
                        path,
                        f"{prefix}{rules.id_field} {shown} is already held by {held[ident]}: "
                        "a new record takes an id of its own",
                        line((rules.id_field,)),
                    )
                )
            else:
                held[ident] = here
        if rules.lock and ident is not None:
            try:
                lock = rules.lock_entries(candidate)
            except Invalid as exc:
                out.append(Finding(HOOK, "record-invalid", exc.path, exc.message))
                continue
            key = record.value[rules.id_field]
            if isinstance(key, str) and key in lock:
                seed = record.value.get(rules.seed_field)
                if strict_key(seed) != strict_key(lock[key]):
                    out.append(
                        Finding(
                            HOOK,
                            "record-seed-mismatch",
                            path,
                            f"{prefix}{rules.seed_field} {_show(seed)} disagrees with "
                            f"{rules.lock}, which gives {_show(key)} the seed {_show(lock[key])}",
                            line((rules.seed_field,)),
                        )
                    )
    return out


# -- the ids of a jsonl base, without parsing every line -----------------------------
_WS = rb"[ \t\r\n]*"
_STRING = rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
_NUMBER = rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"


def _key_pattern(name: str) -> bytes:
    """A JSON string token that decodes to ``name`` (an identifier: each letter
    as itself or as a \\u escape, hex in either case)."""
    parts = []
    for ch in name:
        code = "%04x" % ord(ch)
        hexes = "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in code)
        parts.append(f"(?:{re.escape(ch)}|\\\\u{hexes})")
    return ('"' + "".join(parts) + '"').encode("ascii")


def jsonl_ids(data: bytes, id_field: str, wanted: Dict[Any, bool]) -> Dict[Any, int]:
    """Which of the ``wanted`` ids (strict keys) a top-level ``id_field`` of a
    line of ``data`` holds, with that line's number, without parsing every line.
    A key spelt ``id_field`` followed by a wanted id is a candidate (nested keys
    match too); only a candidate's line is parsed, to tell a top-level id from
    a nested one. Where every key and id is spelt plainly (no escapes, no
    floats), one pass of a regex made from the wanted ids' spellings finds the
    candidates; otherwise every id-like token is decoded and compared."""
    if not wanted:
        return {}
    if any(ident[0] not in ("str", "int", "float") for ident in wanted):
        return _every_line_ids(data, id_field, wanted)
    plain = {_plain_token(ident): ident for ident in wanted}
    key = b'"' + id_field.encode("ascii") + b'"' + _WS + b":" + _WS
    escaped_key = b"\\\\u00(?:" + b"|".join(_hex_pattern(ch) for ch in id_field) + b")"
    if None in plain or re.search(escaped_key, data):
        return _decoded_ids(data, id_field, wanted)
    # one pass: a wanted id spelt plainly, or an id spelt in a way the bytes of
    # the wanted ones do not cover (an escape, a float), which sends the scan
    # to decoding every token
    candidates = re.compile(
        key
        + b"(?:("
        + _trie([token for token in plain if token is not None])
        + rb')(?![0-9.eE+-])|(?P<odd>"[^"\\\n]*\\|-?[0-9]+[.eE]))'
    )
    hits = []
    for match in candidates.finditer(data):
        if match.group("odd") is not None:
            return _decoded_ids(data, id_field, wanted)
        hits.append((match, plain[match.group(1)]))
    return _confirmed(data, id_field, iter(hits))


def _hex_pattern(ch: str) -> bytes:
    """The two hex digits after \\u00 that spell ``ch``, in either case."""
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in "%02x" % ord(ch)).encode()


def _trie(words: List[bytes]) -> bytes:
    """A regex matching exactly ``words``, factored by their common prefixes (the
    regex engine tries one branch per byte, not one per word)."""
    if len(words) == 1:
        return re.escape(words[0])
    groups: Dict[bytes, List[bytes]] = {}
    ends = False
    for word in words:
        if not word:
            ends = True
        else:
            groups.setdefault(word[:1], []).append(word[1:])
    branches = [re.escape(head) + _trie(rest) for head, rest in sorted(groups.items())]
    body = b"(?:" + b"|".join(branches) + b")" if len(branches) > 1 else branches[0]
    return b"(?:" + body + b")?" if ends else body


def _decoded_ids(data: bytes, id_field: str, wanted: Dict[Any, bool]) -> Dict[Any, int]:
    """jsonl_ids for keys or ids spelt with escapes: every string or number a key
    spelt ``id_field`` (any spelling) takes is decoded and compared."""
    key = _key_pattern(id_field) + _WS + b":" + _WS
    pattern = re.compile(key + b"(" + _STRING + b"|" + _NUMBER + rb")(?![0-9.eE+-])")
    out = []
    for match in pattern.finditer(data):
        try:
            ident = strict_key(json.loads(match.group(1)))
        except ValueError:
            continue
        if ident in wanted:
            out.append((match, ident))
    return _confirmed(data, id_field, iter(out))


def _confirmed(
    data: bytes, id_field: str, candidates: Iterable[Tuple[re.Match[bytes], Any]]
) -> Dict[Any, int]:
    """The candidates (match, id) whose line holds the id at its top level."""
    found: Dict[Any, int] = {}
    for match, ident in candidates:
        if ident in found:
            continue
        start = data.rfind(b"\n", 0, match.start()) + 1
        end = data.find(b"\n", match.end())
        try:
            value = strict_json.load_json(data[start : end if end >= 0 else len(data)]).value
        except strict_input.LoadError:
            continue  # a base line that does not parse holds no id
        if isinstance(value, dict) and id_field in value and strict_key(value[id_field]) == ident:
            found[ident] = data.count(b"\n", 0, start) + 1
    return found


def _every_line_ids(data: bytes, id_field: str, wanted: Dict[Any, bool]) -> Dict[Any, int]:
    """jsonl_ids by parsing every line: for ids that are no string or number."""
    found: Dict[Any, int] = {}
    for number, line in enumerate(data.split(b"\n"), 1):
        try:
            value = strict_json.load_json(line).value
        except strict_input.LoadError:
            continue
        if isinstance(value, dict) and id_field in value:
            ident = strict_key(value[id_field])
            if ident in wanted:
                found.setdefault(ident, number)
    return found


def _plain_token(ident: Any) -> Optional[bytes]:
    """The one spelling, without escapes, of an id that has one: a string with
    nothing JSON must escape, or an integer."""
    if ident[0] == "int":
        return str(ident[1]).encode("ascii")
    if ident[0] == "str" and not re.search(r'["\\\x00-\x1f]', ident[1]):
        return ('"' + ident[1] + '"').encode("utf-8")
    return None
