"""GitLab Code Quality JSON (an ``artifacts:reports:codequality`` file): one
issue a finding, as GitLab's documentation lists the fields.

An error finding is ``critical``, a warning ``minor``; a run that judged
nothing (exit 2) is one ``blocker`` issue, so it never reads as an empty, clean
report. A finding without a path, or without a line, points at line 1 of the
contract, the file that names what is missing (as SARIF does)."""

from __future__ import annotations

from typing import Dict, List, Sequence

from oracle_guard.findings import Finding, HookResult, unique_findings
from oracle_guard.report.escaping import printable
from oracle_guard.report.fingerprints import fingerprint, numbered
from oracle_guard.report.json import dump_json
from oracle_guard.report.sarif import CONTRACT_PATH

SEVERITY = {"error": "critical", "warning": "minor"}


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
    issues: List[Dict] = [_issue(f, n) for f, n in numbered(unique_findings(results))]
    return dump_json(issues)


def render_gitlab_error(message: str) -> str:
    failed = Finding("oracle-guard", "oracle-guard-error", None, f"oracle-guard: error: {message}")
    issue = _issue(failed, 0)
    issue["severity"] = "blocker"
    return dump_json([issue])
