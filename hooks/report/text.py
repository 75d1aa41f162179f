"""The text report, ruff-style: a line a finding, then a summary line a hook,
coloured on a terminal."""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence

from oracle_guard.checks.codes import CODES, fix_in
from oracle_guard.findings import Finding, HookResult, unique_findings
from oracle_guard.report.escaping import inert, show_path, show_text

_STYLES = {
    "error": "\033[1;31m",  # the code of an error: bold red
    "warning": "\033[1;33m",  # the code of a warning: bold yellow
    "path": "\033[1m",  # bold
    "passed": "\033[32m",  # green
    "failed": "\033[31m",  # red
}
_RESET = "\033[0m"


def painter(enabled: bool) -> Callable[[str, str], str]:
    """``paint(role, text)`` for render_text: ANSI styles, or none."""

    def paint(role: str, text: str) -> str:
        style = _STYLES.get(role)
        return f"{style}{text}{_RESET}" if enabled and style else text

    return paint


def _plain(role: str, text: str) -> str:
    return text


def summary_lines(
    results: Sequence[HookResult],
    *,
    owners: Sequence[str] = (),
    paint: Callable[[str, str], str] = _plain,
    meta: Optional[Dict] = None,
) -> List[str]:
    """The per-hook summary lines, then one hint line when something failed: the
    fix as it applies where the change is (``meta``'s context and base)."""
    lines = []
    for result in results:
        summary = f"{result.hook}: {paint(result.status, result.status)}"
        counts = []
        if result.errors:
            counts.append(f"{result.errors} error{'s' if result.errors != 1 else ''}")
        if result.warnings:
            counts.append(f"{result.warnings} warning{'s' if result.warnings != 1 else ''}")
        if counts:
            summary += f" ({', '.join(counts)})"
        if result.note:  # it may quote a name from the contract: one line, inert
            summary += f" ({show_text(result.note)})"
        lines.append(summary)
    codes = []
    first: Dict[str, Finding] = {}
    for f in unique_findings(results):
        if f.severity == "error" and f.code not in codes:
            codes.append(f.code)
            first[f.code] = f
    if codes:
        who = f"an owner ({show_text(', '.join(owners))})" if owners else "the oracle's owners"
        why = (
            ""
            if codes in (["merge-conflict"], ["contract-invalid"])  # no owner to ask: fix it
            else f"; to widen the write set, ask {who}"
            if codes == ["write-outside-set"]
            else f"; ask {who}"  # the fix says already that it is the owners' choice
            if all(CODES[code].hook == "test-tamper" for code in codes)
            else f"; the oracle is human-owned: to change it, ask {who}"
        )
        meta = meta or {}
        fix = fix_in(
            codes[0],
            meta.get("context") or "",
            meta.get("base"),
            first[codes[0]].path,
            first[codes[0]].message,
            meta.get("sections"),
        )
        lines.append(f"hint: {fix}{why}. See 'oracle-guard explain {codes[0]}'.")
    return lines


def finding_line(f: Finding, paint: Callable[[str, str], str] = _plain) -> str:
    """``path[:line]: code: message``, ruff-style; warnings read ``code (warning)``."""
    where = show_path(f.path) + (f":{f.line}" if f.line else "")
    label = f.code if f.severity == "error" else f"{f.code} ({f.severity})"
    return f"{paint('path', where)}: {paint(f.severity, label)}: {show_text(f.message)}"


def render_text(
    results: Sequence[HookResult],
    *,
    owners: Sequence[str] = (),
    paint: Callable[[str, str], str] = _plain,
    meta: Optional[Dict] = None,
) -> str:
    """ruff-style lines; ``paint(role, text)`` styles the parts (see painter)."""
    lines = [finding_line(f, paint) for f in unique_findings(results)]
    lines.extend(summary_lines(results, owners=owners, paint=paint, meta=meta))
    return "\n".join(inert(line) for line in lines) + "\n"
