"""SARIF 2.1.0, for code scanning uploads: every code a rule, every finding a
result at a location."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from oracle_guard import __version__
from oracle_guard.checks.codes import CODES
from oracle_guard.findings import Finding, HookResult, unique_findings
from oracle_guard.report.escaping import printable
from oracle_guard.report.json import dump_json

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
# The file path-less findings point at: code scanning needs a location for
# every result, and the contract is what names the missing oracle.
CONTRACT_PATH = ".oracle-guard.yaml"


def default_level(code: str) -> str:
    return "warning" if CODES[code].meaning.startswith("warning:") else "error"


def sarif_rules() -> List[Dict]:
    return [
        {
            "id": code,
            "shortDescription": {"text": info.meaning},
            "help": {"text": info.fix},
            "defaultConfiguration": {"level": default_level(code)},
            "properties": {"hook": info.hook},
        }
        for code, info in CODES.items()
    ]


def sarif_uri(path: str) -> str:
    """A repo-relative path as a relative URI reference: every byte outside the
    unreserved set and '/' percent-encoded (so ':' cannot read as a scheme)."""
    from urllib.parse import quote

    return quote(path.encode("utf-8", "surrogateescape"), safe="/")


def sarif_result(f: Finding, rule_index: Dict[str, int]) -> Dict:
    physical: Dict = {
        "artifactLocation": {
            "uri": sarif_uri(CONTRACT_PATH if f.path is None else f.path),
            "uriBaseId": "%SRCROOT%",
        }
    }
    if f.line:
        physical["region"] = {"startLine": f.line}
    result: Dict[str, Any] = {
        "ruleId": f.code,
        "level": "error" if f.severity == "error" else "warning",
        "message": {"text": printable(f.message)},
        "locations": [{"physicalLocation": physical}],
    }
    if f.code in rule_index:
        result["ruleIndex"] = rule_index[f.code]
    return result


def _sarif_run(invocation: Dict) -> Dict:
    return {
        "tool": {
            "driver": {"name": "oracle-guard", "version": __version__, "rules": sarif_rules()}
        },
        "invocations": [invocation],
    }


def _sarif_log(run: Dict) -> str:
    return dump_json({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]})


def render_sarif(
    results: Sequence[HookResult], *, meta: Optional[Dict] = None, exit_code: int = 0
) -> str:
    run = _sarif_run({"executionSuccessful": True, "exitCode": exit_code})
    rule_index = {code: i for i, code in enumerate(CODES)}
    run["results"] = [sarif_result(f, rule_index) for f in unique_findings(results)]
    checks = {
        r.hook: {"status": r.status, "errors": r.errors, "warnings": r.warnings, "note": r.note}
        for r in results
    }
    run["properties"] = dict(meta or {}, checks=checks)
    return _sarif_log(run)


def render_sarif_error(message: str) -> str:
    """A failed run: no ``results`` at all (SARIF's 'could not produce results'),
    so an upload never reads a broken run as 'no findings'."""
    return _sarif_log(
        _sarif_run(
            {
                "executionSuccessful": False,
                "exitCode": 2,
                "toolExecutionNotifications": [
                    {"level": "error", "message": {"text": printable(message)}}
                ],
            }
        )
    )
