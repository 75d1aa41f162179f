"""Findings are data; the modules of oracle_guard.report only render them."""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Sequence, Tuple

from oracle_guard.sections import HOOKS

NOT_COUNTED = "not counted: "  # flake-budget's mark on a file freeze-schema refuses


class Finding(NamedTuple):  # not a dataclass: every hook run would import inspect
    hook: str
    code: str
    path: Optional[str]
    message: str
    line: Optional[int] = None
    severity: str = "error"

    def sort_key(self) -> Tuple[int, str, int, str, str]:
        order = HOOKS.index(self.hook) if self.hook in HOOKS else len(HOOKS)
        return (order, self.path or "", self.line or 0, self.code, self.message)


class HookResult:
    def __init__(
        self, hook: str, findings: Optional[List[Finding]] = None, note: Optional[str] = None
    ) -> None:
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


def exit_code(results: Sequence[HookResult]) -> int:
    return 1 if any(r.errors for r in results) else 0


def unique_findings(results: Sequence[HookResult]) -> List[Finding]:
    """Every finding once, in report order: one problem (a file, a line, a cause)
    is one line, though hooks share files (flake-budget repeats what
    freeze-schema found, marked 'not counted', and shows it alone under --only)."""
    out = []
    seen = set()
    for result in results:
        for f in sorted(result.findings, key=Finding.sort_key):
            cause = (
                f.message[len(NOT_COUNTED) :] if f.message.startswith(NOT_COUNTED) else f.message
            )
            key = (f.code, f.path, f.line, cause)
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out
