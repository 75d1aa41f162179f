"""What names a finding across runs, for the reports platforms track alerts by
(GitLab's ``fingerprint``, SARIF's ``partialFingerprints``)."""

from __future__ import annotations

from typing import Dict, Iterable, Iterator, Tuple

from oracle_guard.findings import Finding


def fingerprint(f: Finding, occurrence: int) -> str:
    """SHA-256 of what names the finding: check, code, path (its bytes) and
    message, and its place among findings equal in those. No line (a line added
    above moves it, and a platform would call it new) and nothing of the run."""
    # deferred: hashlib: 3 ms to import, only for fingerprint()
    import hashlib

    fields = (f.hook, f.code, f.path or "", f.message, str(occurrence))
    data = b"\0".join(field.encode("utf-8", "surrogateescape") for field in fields)
    return hashlib.sha256(data).hexdigest()


def numbered(findings: Iterable[Finding]) -> Iterator[Tuple[Finding, int]]:
    """Each finding with its place among those equal in all but the line."""
    seen: Dict[Tuple, int] = {}
    for f in findings:
        key = (f.hook, f.code, f.path, f.message)
        seen[key] = seen.get(key, -1) + 1
        yield f, seen[key]
