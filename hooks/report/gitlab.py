"""GitLab Code Quality JSON (an ``artifacts:reports:codequality`` file): one
issue a finding, as GitLab's documentation lists the fields.

An error finding is ``critical``, a warning ``minor``; a run that judged
nothing (exit 2) is one ``blocker`` issue, so it never reads as an empty, clean
report. A finding without a path, or without a line, points at line 1 of the
contract, the file that names what is missing (as SARIF does)."""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from oracle_guard.findings import Finding, HookResult, unique_findings
from oracle_guard.report.escaping import printable
from oracle_guard.report.json import dump_json
from oracle_guard.report.sarif import CONTRACT_PATH

SEVERITY = {"error": "critical", "warning": "minor"}


def fingerprint(f: Finding, occurrence: int) -> str:
    """SHA-256 of what names the finding: check, code, path (its bytes) and
    message, and its place among findings equal in those. No line (a line added
    above moves it, and GitLab would call it new) and nothing of the run."""
    import hashlib

    fields = (f.hook, f.code, f.path or "", f.message, str(occurrence))
    data = b"\0".join(field.encode("utf-8", "surrogateescape") for field in fields)
    return hashlib.sha256(data).hexdigest()


def _issue(f: Finding, occurrence: int) -> Dict:
    path = CONTRACT_PATH if f.path is None else printable(f.path)
    return {
        "description": printable(f.message),
        "check_name": f.code,
        "fingerprint": fingerprint(f, occurrence),
        "severity": SEVERITY.get(f.severity, "critical"),
        "location": {"path": path, "lines": {"begin": f.line or 1}},
    }


def render_gitlab(results: Sequence[HookResult]) -> str:
    issues: List[Dict] = []
    seen: Dict[Tuple, int] = {}
    for f in unique_findings(results):
        key = (f.hook, f.code, f.path, f.message)
        seen[key] = seen.get(key, -1) + 1
        issues.append(_issue(f, seen[key]))
    return dump_json(issues)


def render_gitlab_error(message: str) -> str:
    failed = Finding("oracle-guard", "oracle-guard-error", None, f"oracle-guard: error: {message}")
    issue = _issue(failed, 0)
    issue["severity"] = "blocker"
    return dump_json([issue])
