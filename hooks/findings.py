"""Findings are data; reporters only render them."""
from __future__ import annotations

import json
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence

from oracle_guard.checks.codes import CODES

HOOKS = ("fixture-lock", "seed-append-only", "freeze-schema", "flake-budget", "write-set")


class Finding(NamedTuple):  # not a dataclass: every hook run would import inspect
    hook: str
    code: str
    path: Optional[str]
    message: str
    line: Optional[int] = None
    severity: str = "error"

    def sort_key(self):
        order = HOOKS.index(self.hook) if self.hook in HOOKS else len(HOOKS)
        return (order, self.path or "", self.line or 0, self.code, self.message)


class HookResult:
    def __init__(self, hook: str, findings: Optional[List[Finding]] = None,
                 note: Optional[str] = None) -> None:
        self.hook = hook
        self.findings: List[Finding] = findings if findings is not None else []
        self.note = note  # e.g. why there was nothing to check

    def __repr__(self) -> str:
        return f"HookResult({self.hook!r}, {self.findings!r}, {self.note!r})"

    @property
    def errors(self) -> int:
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)

    @property
    def status(self) -> str:
        return "failed" if self.errors else "passed"


def _escaped(text: str, backslash: bool) -> str:
    out = []
    for ch in text:
        if "\udc80" <= ch <= "\udcff":
            out.append(f"\\x{ord(ch) - 0xdc00:02x}")
        elif ch == "\\":
            out.append("\\\\" if backslash else ch)
        elif ord(ch) < 0x20 or 0x7f <= ord(ch) < 0xa0 or ch in "\u2028\u2029":
            out.append(ch.encode("unicode_escape").decode())
        else:
            out.append(ch)
    return "".join(out)


def show_path(path: Optional[str]) -> str:
    """Printable path: control characters and undecodable bytes escaped."""
    return "." if path is None else _escaped(path, backslash=True)


def show_text(text: str) -> str:
    """A message as printed: control characters and undecodable bytes escaped, so
    a file name inside it can neither start a line nor drive the terminal."""
    return _escaped(text, backslash=False)


def inert(line: str) -> str:
    """A printed line that no CI log reads as a command: GitHub's runner acts on a
    line starting '::' after any white space, and on '##[' anywhere in it. Finding
    lines start with a path, which git never starts with './'."""
    if line.lstrip().startswith("::"):
        line = "./" + line
    return line.replace("##[", "##\\[")


def dump_json(doc) -> str:
    """A JSON document for stdout: '##[' only ever occurs inside its strings, and
    written as '##\\u005b' it is the same text to a JSON reader and nothing to a
    CI runner; control characters json.dumps escapes itself."""
    return json.dumps(doc, indent=2, sort_keys=True).replace("##[", "##\\u005b") + "\n"


def exit_code(results: Sequence[HookResult]) -> int:
    return 1 if any(r.errors for r in results) else 0


def unique_findings(results: Sequence[HookResult]) -> List[Finding]:
    """Every finding once, in report order (hooks share files: flake-budget
    repeats what freeze-schema found, marked 'not counted')."""
    out = []
    seen = set()
    for result in results:
        for f in sorted(result.findings, key=Finding.sort_key):
            key = (f.code, f.path, f.line, f.message)
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


def _plain(role: str, text: str) -> str:
    return text


def summary_lines(results: Sequence[HookResult], *, owners: Sequence[str] = (),
                  paint: Callable[[str, str], str] = _plain) -> List[str]:
    """The per-hook summary lines, then one hint line when something failed."""
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
        if result.note:
            summary += f" ({result.note})"
        lines.append(summary)
    codes = []
    for f in unique_findings(results):
        if f.severity == "error" and f.code not in codes:
            codes.append(f.code)
    if codes:
        who = (f"an owner ({show_text(', '.join(owners))})" if owners
               else "the oracle's owners")
        why = ("" if codes == ["merge-conflict"]  # not an oracle question
               else f"; to widen the write set, ask {who}" if codes == ["write-outside-set"]
               else f"; the oracle is human-owned: to change it, ask {who}")
        lines.append(f"hint: {CODES[codes[0]].fix}{why}. "
                     f"See 'oracle-guard explain {codes[0]}'.")
    return lines


def finding_line(f: Finding, paint: Callable[[str, str], str] = _plain) -> str:
    """``path[:line]: code: message``, ruff-style; warnings read ``code (warning)``."""
    where = show_path(f.path) + (f":{f.line}" if f.line else "")
    label = f.code if f.severity == "error" else f"{f.code} ({f.severity})"
    return f"{paint('path', where)}: {paint(f.severity, label)}: {show_text(f.message)}"


def render_text(results: Sequence[HookResult], *, owners: Sequence[str] = (),
                paint: Callable[[str, str], str] = _plain) -> str:
    """ruff-style lines; ``paint(role, text)`` styles the parts (see reporters.painter)."""
    lines = [finding_line(f, paint) for f in unique_findings(results)]
    lines.extend(summary_lines(results, owners=owners, paint=paint))
    return "\n".join(inert(line) for line in lines) + "\n"


def render_json(results: Sequence[HookResult], *, meta: Optional[Dict] = None,
                error: Optional[str] = None) -> str:
    findings = []
    for result in results:
        for f in sorted(result.findings, key=Finding.sort_key):
            findings.append(dict(f._asdict(), path=None if f.path is None else show_path(f.path)))
    doc = {
        "findings": findings,
        "checks": {r.hook: {"status": r.status, "errors": r.errors, "warnings": r.warnings,
                            "note": r.note} for r in results},
    }
    if meta:
        doc.update(meta)
    if error is not None:
        doc["error"] = error
    return dump_json(doc)
