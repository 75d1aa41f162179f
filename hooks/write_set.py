"""write-set: did the change stay inside the allowed paths and out of the protected ones?"""
from __future__ import annotations

from typing import List, Optional

from oracle_guard import loaders
from oracle_guard.contract import ContractError
from oracle_guard.findings import Finding
from oracle_guard.patterns import PatternSet
from oracle_guard.revisions import Snapshot

HOOK = "write-set"


def changed_paths(base: Snapshot, candidate: Snapshot) -> List[str]:
    """Added, deleted, modified, and type or mode changes; a rename is both sides."""
    old, new = base.entries, candidate.entries
    changed = [p for p, e in new.items() if old.get(p) != e]
    changed.extend(p for p in old if p not in new)
    return sorted(changed)


def allow_file_patterns(path: str, source: Snapshot) -> List[str]:
    if path not in source.entries:
        raise ContractError(f"write_set.allow_file {path!r} is missing from {source.label}")
    try:
        text = loaders.decode_text(source.read(path))
    except loaders.LoadError as exc:
        raise ContractError(f"{path}: {exc}") from None
    patterns = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("!"):
            raise ContractError(f"{path}:{number}: negation ('!') is not supported")
        patterns.append(line)
    return patterns


def check(contract, base: Snapshot, candidate: Snapshot, now) -> List[Finding]:
    ws = contract.section("write_set") or {}
    allow_list = list(ws.get("allow", []))
    if "allow_file" in ws:
        allow_list += allow_file_patterns(ws["allow_file"], contract.source)
    restricted = "allow" in ws or "allow_file" in ws
    allow = PatternSet(allow_list)
    deny = PatternSet(ws.get("deny", []))
    oracle = PatternSet(contract.oracle_patterns())

    findings = []
    for path in changed_paths(base, candidate):
        reason = _denied(path, deny, oracle)
        if reason is not None:
            findings.append(Finding(HOOK, "write-denied", path, reason))
        elif restricted and allow.first_match(path) is None:
            findings.append(Finding(HOOK, "write-outside-set", path,
                                    "matches no allowed pattern of the write set"))
    return findings


def _denied(path: str, deny: PatternSet, oracle: PatternSet) -> Optional[str]:
    pattern = deny.first_match(path)
    if pattern is not None:
        return f"matches deny pattern {pattern!r}"
    pattern = oracle.first_match(path)
    if pattern is not None:
        return f"is oracle file or path {pattern.lstrip('/')!r} named by the contract"
    pattern = deny.first_match(path, fold_case=True) or oracle.first_match(path, fold_case=True)
    if pattern is not None:
        return (f"matches protected {pattern.lstrip('/')!r} when letter case is ignored "
                "(the same file on macOS and Windows)")
    return None
