"""The merge contract, ``.oracle-guard.yaml``: loaded strictly, from the base."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from oracle_guard import loaders, validation
from oracle_guard.revisions import Snapshot

CONTRACT_PATH = ".oracle-guard.yaml"


class ContractError(Exception):
    """The contract is unusable (exit 2)."""


class Contract:
    def __init__(self, data: Dict[str, Any], source: Snapshot, from_base: bool) -> None:
        self.data = data
        self.source = source  # the revision the rules (and repo schema files) come from
        self.from_base = from_base

    def section(self, name: str) -> Any:
        return self.data.get(name)

    @property
    def owners(self) -> List[str]:
        return list((self.data.get("write_set") or {}).get("owners", []))

    def oracle_patterns(self) -> List[str]:
        """What the contract names: denied to every change without being listed."""
        files = [CONTRACT_PATH]
        patterns: List[str] = []
        for entry in self.data.get("fixtures", []):
            files.append(entry["lock"])
            patterns.extend(entry["paths"])
        for entry in self.data.get("seeds", []):
            patterns.extend(entry["paths"])
        for entry in self.data.get("freeze", []):
            patterns.extend(entry["paths"])
            if entry["schema"] not in validation.BUILTIN:
                files.append(entry["schema"])
        ws = self.data.get("write_set") or {}
        if "allow_file" in ws:
            files.append(ws["allow_file"])
        return [literal_pattern(f) for f in files] + patterns


def literal_pattern(path: str) -> str:
    """A pattern matching exactly this repo-relative path."""
    escaped = "".join("\\" + ch if ch in "*?[\\" else ch for ch in path)
    return "/" + escaped

def parse(data: bytes, label: str = CONTRACT_PATH) -> Dict[str, Any]:
    try:
        doc = loaders.load_yaml(data)
    except loaders.LoadError as exc:
        where = f"{label}:{exc.line}" if exc.line else label
        raise ContractError(f"{where}: {exc.message}") from None
    found = validation.problems(doc.value, "contract")
    if found:
        path, message = found[0]
        line = doc.line_of(path)
        where = f"{label}:{line}" if line else label
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise ContractError(
            f"{where}: invalid contract at {loaders.json_pointer(path)}: {message}{more}")
    return doc.value


def read(snapshot: Snapshot) -> Optional[Dict[str, Any]]:
    entry = snapshot.entries.get(CONTRACT_PATH)
    if entry is None:
        return None
    if not entry.is_regular:
        raise ContractError(f"{CONTRACT_PATH} in {snapshot.label} is not a regular file")
    return parse(snapshot.read(CONTRACT_PATH), f"{CONTRACT_PATH} ({snapshot.label})")


def choose(base: Snapshot, candidate: Snapshot) -> Optional[Contract]:
    """The base's contract when it has one, else the candidate's, else None."""
    data = read(base)
    if data is not None:
        return Contract(data, base, from_base=True)
    data = read(candidate)
    if data is not None:
        return Contract(data, candidate, from_base=False)
    return None
