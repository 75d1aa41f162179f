"""The freeze, quarantine and budget files the contract names, read into
frozen entries: freeze-schema reports what does not parse or fails its schema,
flake-budget counts the entries, and both read the files the same way.
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from oracle_guard import clock
from oracle_guard.cache import freeze_key
from oracle_guard.contract import Contract, ContractError
from oracle_guard.findings import Finding
from oracle_guard.git.objects import BlobTooLarge
from oracle_guard.parsing import loaders, strict_input, strict_json, validation
from oracle_guard.parsing.patterns import PatternSet
from oracle_guard.snapshot import Snapshot


class Frozen(NamedTuple):
    """One frozen entry, whatever file format it came from."""

    id: str
    owner: Optional[str]
    expires: Optional[str]
    reason: Optional[str]
    path: str
    line: Optional[int]


class FreezeState(NamedTuple):
    entries: List[Frozen]
    caps: List[Tuple[str, int, Optional[int]]]  # (path, max_frozen, line) of budget files
    findings: List[Finding]
    unreadable: List[str]  # files whose entries could not be counted


def _schema_key(schema: str, contract: Contract) -> str:
    """Names the schema in cache keys: a built-in by name, a custom one by its blob too."""
    if schema in validation.BUILTIN:
        return schema
    entry = contract.source.entry(schema)
    if entry is None:
        raise ContractError(
            f"schema file {schema!r} named by the contract is missing from {contract.source.label}"
        )
    return f"{schema}@{entry.oid}"


def _validator(schema: str, contract: Contract) -> Optional[validation.Validator]:
    if schema in validation.BUILTIN:
        return None
    source = contract.source
    try:
        doc = strict_json.load_json(source.read(schema))
        return validation.custom_validator(doc.value)
    except (strict_input.LoadError, validation.SchemaError) as exc:
        raise ContractError(f"schema file {schema!r} ({source.label}): {exc}") from None


def _records(schema: str, value: Any, doc: strict_input.Document, path: str) -> List[Frozen]:
    def at(*json_path: Any) -> Optional[int]:
        return doc.line_of(json_path)

    if schema == "freeze":
        owners, expires, reasons = (
            value.get("owner", {}),
            value.get("expires", {}),
            value.get("reason", {}),
        )
        return [
            Frozen(
                i,
                owners.get(i),
                expires.get(i),
                reasons.get(i),
                path,
                at("excluded_property_ids", n),
            )
            for n, i in enumerate(value["excluded_property_ids"])
        ]
    if schema == "flake-budget":
        return [
            Frozen(e["id"], e["owner"], e["expires"], e["reason"], path, at("frozen", n))
            for n, e in enumerate(value["frozen"])
        ]
    if schema == "quarantine-entry":
        return [
            Frozen(
                value["id"],
                value["owner"],
                value["expires_at"],
                value.get("reason"),
                path,
                at("id"),
            )
        ]
    if schema == "quarantine-list":
        return [
            Frozen(e["test"], e.get("owner"), e.get("expires"), e.get("reason"), path, at(n))
            for n, e in enumerate(value)
        ]
    return []


def _rules(schema: str, value: Any, doc: strict_input.Document) -> List[Tuple[Tuple, str]]:
    """Cross-field rules a JSON Schema cannot say."""
    out: List[Tuple[Tuple, str]] = []

    def unique(ids: List[Tuple[Tuple, str]], what: str) -> None:
        seen: Dict[str, Tuple] = {}
        for json_path, ident in ids:
            if ident in seen:
                out.append((json_path, f"duplicate {what} {ident!r}"))
            seen.setdefault(ident, json_path)

    def dates(items: List[Tuple[Tuple, Any]]) -> None:
        for json_path, text in items:
            try:
                clock.parse_when(text)
            except clock.ClockError as exc:
                out.append((json_path, str(exc)))

    if schema == "freeze":
        ids = value["excluded_property_ids"]
        unique([(("excluded_property_ids", n), i) for n, i in enumerate(ids)], "id")
        for n, i in enumerate(ids):
            if i not in value["reason"]:
                out.append((("excluded_property_ids", n), f"excluded id {i!r} has no reason"))
        for key in ("reason", "owner", "expires"):
            for i in value.get(key, {}):
                if i not in ids:
                    out.append(((key, i), f"{key} names {i!r}, which is not excluded"))
        dates([(("expires", i), t) for i, t in value.get("expires", {}).items()])
    elif schema == "flake-budget":
        frozen = value["frozen"]
        unique([(("frozen", n, "id"), e["id"]) for n, e in enumerate(frozen)], "id")
        dates([(("frozen", n, "expires"), e["expires"]) for n, e in enumerate(frozen)])
    elif schema == "quarantine-entry":
        runs, passed, failed = value["runs"], value["pass_count"], value["fail_count"]
        if passed + failed != runs:
            out.append(
                (("runs",), f"pass_count + fail_count = {passed + failed}, but runs is {runs}")
            )
        for key in ("pass_count", "fail_count"):
            if value[key] <= 0:
                out.append(((key,), f"{key} must be above zero for a flaky case"))
        dates([(("expires_at",), value["expires_at"])])
    elif schema == "quarantine-list":
        unique([((n, "test"), e["test"]) for n, e in enumerate(value)], "test")
        dates([((n, "expires"), e["expires"]) for n, e in enumerate(value) if "expires" in e])
    return out


def load(contract: Contract, candidate: Snapshot, hook: str) -> FreezeState:
    """The frozen entries of every file the contract's ``freeze`` section names,
    and the findings (under ``hook``) of the files that could not be read."""
    state = FreezeState([], [], [], [])
    entry_ids: Dict[str, str] = {}
    for entry in contract.section("freeze") or []:
        schema = entry["schema"]
        key = _schema_key(schema, contract)
        validator = _validator(schema, contract)  # None for a built-in: nothing imported yet
        for path in candidate.select(PatternSet(entry["paths"])):
            found = _load_file(
                schema, key, validator, path, candidate, hook, state, contract.limit("freeze_bytes")
            )
            if found is None:
                state.unreadable.append(path)
                continue
            if schema == "quarantine-entry":
                for record in found:
                    if record.id in entry_ids:
                        state.findings.append(
                            Finding(
                                hook,
                                "freeze-invalid",
                                path,
                                f"duplicate id {record.id!r} (also in {entry_ids[record.id]})",
                                record.line,
                            )
                        )
                    entry_ids.setdefault(record.id, path)
            state.entries.extend(found)
    return state


def _load_file(
    schema: str,
    schema_key: str,
    validator: Optional[validation.Validator],
    path: str,
    candidate: Snapshot,
    hook: str,
    state: FreezeState,
    limit: int,
) -> Optional[List[Frozen]]:
    """One file's records, or None with its findings in ``state``. The verdict
    depends on the bytes, the loader the file's name picks (the same bytes may be
    YAML at ``x.yaml`` and not JSON at ``x.json``), the size cap and the schema,
    so it is cached under all four; the cached size is checked against the cap too."""

    def invalid(message: str, line: Optional[int] = None) -> None:
        state.findings.append(Finding(hook, "freeze-invalid", path, message, line))

    entry = candidate.entry(path)
    assert entry is not None  # a path candidate.select found
    if not entry.is_regular:
        invalid(f"is not a regular file (mode {entry.mode})")
        return None
    cache_key = freeze_key(entry.oid, loaders.loader_for(path), limit, schema_key)
    verdict = candidate.cache.get("freeze", cache_key)
    if verdict is not None and verdict["size"] > limit:
        verdict = None  # read again, so the cap's finding is the reader's own
    if verdict is None:
        try:
            data = candidate.read(path, limit)
        except BlobTooLarge as exc:
            invalid(f"{exc} (limits.freeze_bytes): not loaded")
            return None
        verdict = _verdict(schema, validator, path, data)
        candidate.cache.put("freeze", cache_key, verdict)
    for message, line in verdict["problems"]:
        invalid(message, line)
    if verdict["problems"]:
        return None
    if verdict["cap"] is not None:
        state.caps.append((path, verdict["cap"][0], verdict["cap"][1]))
    return [
        Frozen(i, owner, expires, reason, path, line)
        for i, owner, expires, reason, line in verdict["records"]
    ]


def _verdict(
    schema: str, validator: Optional[validation.Validator], path: str, data: bytes
) -> Dict[str, Any]:
    """What a freeze file says, as JSON data: ``problems`` ([message, line] pairs),
    or its ``records`` and, for a budget file, its ``cap`` ([max_frozen, line])."""
    verdict: Dict[str, Any] = {"size": len(data), "problems": [], "records": [], "cap": None}
    try:
        doc = loaders.load_by_name(path, data)
    except strict_input.LoadError as exc:
        column = f" (column {exc.column})" if exc.line and exc.column else ""
        verdict["problems"] = [[f"does not parse: {exc.message}{column}", exc.line]]
        return verdict
    try:
        found = validation.problems(doc.value, schema if validator is None else None, validator)
    except validation.SchemaError as exc:
        raise ContractError(f"schema file {schema!r}: {exc}") from None
    if validator is None and not found:
        found = _rules(schema, doc.value, doc)
    if found:
        verdict["problems"] = [
            [f"{strict_input.json_pointer(json_path)}: {message}", doc.line_of(json_path)]
            for json_path, message in found
        ]
        return verdict
    if schema == "flake-budget":
        verdict["cap"] = [doc.value["max_frozen"], doc.line_of(("max_frozen",))]
    verdict["records"] = [
        [r.id, r.owner, r.expires, r.reason, r.line] for r in _records(schema, doc.value, doc, path)
    ]
    return verdict
