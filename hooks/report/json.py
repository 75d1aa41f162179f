"""The JSON report: every finding, and each check's status and note."""

from __future__ import annotations

import json
from typing import Dict, Optional, Sequence

from oracle_guard.findings import Finding, HookResult
from oracle_guard.report.escaping import show_path


def dump_json(doc: object) -> str:
    """A JSON document for stdout: '##[' only ever occurs inside its strings, and
    written as '##\\u005b' it is the same text to a JSON reader and nothing to a
    CI runner; control characters json.dumps escapes itself."""
    return json.dumps(doc, indent=2, sort_keys=True).replace("##[", "##\\u005b") + "\n"


def render_json(
    results: Sequence[HookResult], *, meta: Optional[Dict] = None, error: Optional[str] = None
) -> str:
    return dump_json(json_document(results, meta=meta, error=error))


def json_document(
    results: Sequence[HookResult], *, meta: Optional[Dict] = None, error: Optional[str] = None
) -> Dict:
    """The report as data: each finding, each check's status and note, and ``meta``."""
    findings = []
    for result in results:
        for f in sorted(result.findings, key=Finding.sort_key):
            findings.append(dict(f._asdict(), path=None if f.path is None else show_path(f.path)))
    doc = {
        "findings": findings,
        "checks": {
            r.hook: {"status": r.status, "errors": r.errors, "warnings": r.warnings, "note": r.note}
            for r in results
        },
    }
    if meta:
        doc.update(meta)
    if error is not None:
        doc["error"] = error
    return doc
