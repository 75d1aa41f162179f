"""A markdown job summary (GitHub's ``$GITHUB_STEP_SUMMARY``, a merge request
note): the verdict, the revisions judged, and a table of findings by check.

Every name from the repository (path, message, note, ref) is shown in a code
span, with control characters escaped as the text format shows them: inside
one, markdown and HTML are inert and GitHub links nothing, so a file name can
neither break a table nor inject a link or a tag."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from oracle_guard.findings import Finding, HookResult
from oracle_guard.report.escaping import inert, show_path, show_text
from oracle_guard.report.text import summary_lines

TITLE = "## oracle-guard"


def code_span(shown: str, *, in_table: bool = True) -> str:
    """``shown`` (already escaped for print) as a code span: a fence longer than
    any run of backticks inside, and a space each side (which the span drops)."""
    if not shown:
        return ""
    if in_table:  # a table cell ends at '|', even in a span; '\|' is one inside
        shown = shown.replace("|", "\\|")
    longest = run = 0
    for ch in shown:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    return f"{fence} {shown} {fence}"


def _location(f: Finding) -> str:
    where = show_path(f.path) + (f":{f.line}" if f.line else "")
    return code_span(where)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> List[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines


def _revisions(meta: Optional[Dict]) -> List[str]:
    meta = meta or {}
    rows = []
    for key, label in (
        ("base", "base"),
        ("base_from", "base from"),
        ("candidate", "candidate"),
        ("merge_tree", "merge tree"),
        ("contract_from", "contract from"),
        ("now", "now"),
    ):
        value = meta.get(key)
        if value is not None:
            rows.append([label, code_span(show_text(str(value)))])
    return _table(["Revision", "Value"], rows) if rows else []


def render_markdown(
    results: Sequence[HookResult],
    *,
    meta: Optional[Dict] = None,
    owners: Sequence[str] = (),
    exit_code: int = 0,
) -> str:
    verdict = "passed" if exit_code == 0 else "failed"
    errors = sum(r.errors for r in results)
    warnings = sum(r.warnings for r in results)
    lines = [
        f"{TITLE}: {verdict}",
        "",
        f"**Verdict: {verdict}** (exit {exit_code}): {errors} error{'s' * (errors != 1)}, "
        f"{warnings} warning{'s' * (warnings != 1)}, {len(results)} "
        f"check{'s' * (len(results) != 1)}",
        "",
    ]
    revisions = _revisions(meta)
    if revisions:
        lines.extend(["### Revisions judged", "", *revisions, ""])
    if meta and meta.get("notice"):
        lines.extend([f"Note: {code_span(show_text(meta['notice']), in_table=False)}", ""])
    findings = []
    seen = set()
    for result in results:  # by check, each finding once, as unique_findings keeps them
        for f in sorted(result.findings, key=Finding.sort_key):
            key = (f.code, f.path, f.line, f.message)
            if key not in seen:
                seen.add(key)
                label = f.code if f.severity == "error" else f"{f.code} ({f.severity})"
                findings.append([result.hook, label, _location(f), code_span(show_text(f.message))])
    lines.extend(["### Findings", ""])
    if findings:
        lines.extend(_table(["Check", "Code", "Location", "Message"], findings))
    else:
        lines.append("None.")
    lines.extend(["", "### Checks", ""])
    checks = [
        [r.hook, r.status, str(r.errors), str(r.warnings), code_span(show_text(r.note or ""))]
        for r in results
    ]
    lines.extend(_table(["Check", "Status", "Errors", "Warnings", "Note"], checks))
    hint = [
        line
        for line in summary_lines(results, owners=owners, meta=_sections_only(meta))
        if line.startswith("hint: ")
    ]
    if hint:
        lines.extend(["", f"Hint: {code_span(hint[0][len('hint: ') :], in_table=False)}"])
    return "\n".join(inert(line) for line in lines) + "\n"


def render_markdown_error(message: str) -> str:
    """A failed run (exit 2): the error line, and no table a reader could take
    for an empty pass."""
    line = code_span(show_text(f"oracle-guard: error: {message}"), in_table=False)
    return inert(f"{TITLE}: error") + "\n\n" + inert(f"**Not judged (exit 2)**: {line}") + "\n"


def _sections_only(meta: Optional[Dict]) -> Optional[Dict]:
    """The hint fitted to the contract's sections, in no context's commands."""
    return {"sections": meta["sections"]} if meta and "sections" in meta else None
