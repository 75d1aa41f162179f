"""SARIF 2.1.0, for code scanning uploads: every code a rule, every finding a
result at a location.

What GitHub's code scanning asks of a file beyond the schema: a rule's
``fullDescription``; a ``region.startLine`` on every result (without one
upload-sarif computes no fingerprint, and alerts repeat), so a finding with no
line is at line 1; and at most 25,000 results a run, so a larger report keeps
the first MAX_RESULTS, errors first, and says in the run what it left out."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple
from urllib.parse import quote

from oracle_guard import __version__
from oracle_guard.checks.codes import CODES
from oracle_guard.findings import Finding, HookResult, unique_findings
from oracle_guard.report.escaping import printable
from oracle_guard.report.fingerprints import fingerprint, numbered
from oracle_guard.report.json import dump_json

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
# The file path-less findings point at: code scanning needs a location for
# every result, and the contract is what names the missing oracle.
CONTRACT_PATH = ".oracle-guard.yaml"
# GitHub rejects a run of more than 25,000 results; the margin leaves room for
# a platform that counts a little differently
MAX_RESULTS = 20_000
FINGERPRINT = "oracleGuard/v1"  # partialFingerprints key: what names a finding (gitlab's too)
ROOT_BASE = "%SRCROOT%"


def default_level(code: str) -> str:
    return "warning" if CODES[code].meaning.startswith("warning:") else "error"


def sarif_rules() -> List[Dict]:
    return [
        {
            "id": code,
            "shortDescription": {"text": info.meaning},
            "fullDescription": {"text": full_description(code)},
            "help": {"text": info.fix},
            "defaultConfiguration": {"level": default_level(code)},
            "properties": {"hook": info.hook},
        }
        for code, info in CODES.items()
    ]


def full_description(code: str) -> str:
    """The rule's meaning, the check that raises it, and the fix."""
    info = CODES[code]
    return f"{info.meaning} (raised by {info.hook}). Fix: {info.fix}"


def sarif_uri(path: str) -> str:
    """A repo-relative path as a relative URI reference: every byte outside the
    unreserved set and '/' percent-encoded (so ':' cannot read as a scheme)."""

    return quote(path.encode("utf-8", "surrogateescape"), safe="/")


def sarif_result(f: Finding, rule_index: Dict[str, int], occurrence: int = 0) -> Dict:
    physical: Dict = {
        "artifactLocation": {
            "uri": sarif_uri(CONTRACT_PATH if f.path is None else f.path),
            "uriBaseId": ROOT_BASE,
        },
        # a finding about a whole file is at its first line: a region is what
        # upload-sarif fingerprints
        "region": {"startLine": f.line or 1},
    }
    result: Dict[str, Any] = {
        "ruleId": f.code,
        "level": "error" if f.severity == "error" else "warning",
        "message": {"text": printable(f.message)},
        "locations": [{"physicalLocation": physical}],
        "partialFingerprints": {FINGERPRINT: fingerprint(f, occurrence)},
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
        "originalUriBaseIds": {
            ROOT_BASE: {"description": {"text": "the root of the repository judged"}}
        },
    }


def capped(
    every: List[Tuple[Finding, int]], limit: int
) -> Tuple[List[Tuple[Finding, int]], Dict[str, int]]:
    """The findings a run keeps (errors first, then warnings, each in report
    order) and, by code, how many it leaves out."""
    if len(every) <= limit:
        return every, {}
    ranked = sorted(range(len(every)), key=lambda i: every[i][0].severity != "error")
    left: Dict[str, int] = {}
    for i in ranked[limit:]:
        code = every[i][0].code
        left[code] = left.get(code, 0) + 1
    return [every[i] for i in sorted(ranked[:limit])], dict(sorted(left.items()))


def _sarif_log(run: Dict) -> str:
    return dump_json({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]})


def render_sarif(
    results: Sequence[HookResult], *, meta: Optional[Dict] = None, exit_code: int = 0
) -> str:
    invocation: Dict[str, Any] = {"executionSuccessful": True, "exitCode": exit_code}
    rule_index = {code: i for i, code in enumerate(CODES)}
    every = list(numbered(unique_findings(results)))
    kept, left = capped(every, MAX_RESULTS)
    checks = {
        r.hook: {"status": r.status, "errors": r.errors, "warnings": r.warnings, "note": r.note}
        for r in results
    }
    properties = dict(meta or {}, checks=checks)
    if left:
        omitted = sum(left.values())
        properties["omitted"] = {"results": omitted, "by_rule": left}
        text = (
            f"{omitted} of {len(every)} results left out, over the cap of {MAX_RESULTS} "
            "(code scanning takes at most 25,000 a run); the text or json report has "
            "them all: " + ", ".join(f"{code} {n}" for code, n in left.items())
        )
        invocation["toolExecutionNotifications"] = [{"level": "warning", "message": {"text": text}}]
    run = _sarif_run(invocation)
    run["results"] = [sarif_result(f, rule_index, n) for f, n in kept]
    run["properties"] = properties
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
