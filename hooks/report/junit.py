"""JUnit XML, for GitLab's and Jenkins' test reports.

One testsuite; each check that passed is one passing testcase (its note in
system-out), and each finding is a testcase of its own, ``classname`` the
check (``oracle-guard.write-set``: Jenkins' package and class) and ``name``
the code and ``path:line``, with `` #2``, `` #3`` for the second and third
finding of a code on one line, since GitLab shows one testcase of a name: an
error fails it with one ``<failure>``, a warning passes with the warning in
system-out. One failure a testcase, since Ant's
schema allows no more and GitLab shows only one; no ``file`` attribute, which
Jenkins' xUnit schema rejects (the location is in the name and the failure)."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

from oracle_guard.checks.codes import CODES
from oracle_guard.findings import Finding, HookResult
from oracle_guard.report.escaping import inert, show_path, show_text
from oracle_guard.report.text import finding_line

SUITE = "oracle-guard"
# the revisions judged, as properties of the suite, in this order
_PROPERTIES = ("base", "base_from", "candidate", "merge_tree", "contract_from", "now", "notice")


def xml_escape(text: str) -> str:
    """Text or an attribute value: shown as the text format shows it (control
    characters and undecodable bytes escaped), then any character XML 1.0 still
    forbids (a lone surrogate, U+FFFE) as ``\\uXXXX``, then the markup."""
    out = []
    for ch in show_text(text):
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):
            out.append(f"\\u{code:04x}")
        elif ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch == '"':
            out.append("&quot;")
        else:
            out.append(ch)
    return "".join(out)


def _attrs(**values: str) -> str:
    return "".join(f' {key}="{xml_escape(value)}"' for key, value in values.items())


def findings_by_check(results: Sequence[HookResult]) -> List[Tuple[str, List[Finding]]]:
    """Each check with its findings in report order, each once."""
    out = []
    for result in results:
        seen = set()
        mine = []
        for f in sorted(result.findings, key=Finding.sort_key):
            key = (f.code, f.path, f.line, f.message)
            if key not in seen:
                seen.add(key)
                mine.append(f)
        out.append((result.hook, mine))
    return out


def _case_name(f: Finding) -> str:
    where = show_path(f.path) + (f":{f.line}" if f.line else "")
    label = f.code if f.severity == "error" else f"{f.code} ({f.severity})"
    return f"{label}: {where}"


def _unique(name: str, used: Set[str]) -> str:
    """``name``, or ``name #2``, ``#3``... the first not yet used; now used."""
    candidate, n = name, 1
    while candidate in used:
        n += 1
        candidate = f"{name} #{n}"
    used.add(candidate)
    return candidate


def _body(lines: Sequence[str]) -> str:
    return "\n".join(xml_escape(line) for line in lines)


def _document(
    counts: str, stamp: Optional[str], properties: List[Tuple[str, str]], cases: List[str]
) -> str:
    suite = _attrs(name=SUITE) + counts
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', f"<testsuites{suite}>"]
    lines.append(f"  <testsuite{suite}{_attrs(timestamp=stamp) if stamp else ''}>")
    if properties:
        lines.append("    <properties>")
        lines.extend(
            f"      <property{_attrs(name=name, value=value)}/>" for name, value in properties
        )
        lines.append("    </properties>")
    lines.extend(cases)
    lines.extend(["  </testsuite>", "</testsuites>"])
    # a line of the report echoed to a CI log acts as no command (text content only)
    return "\n".join(inert(line) for line in "\n".join(lines).split("\n")) + "\n"


def render_junit(
    results: Sequence[HookResult], *, meta: Optional[Dict] = None, exit_code: int = 0
) -> str:

    cases: List[str] = []  # lines
    tests = failures = 0
    used: Set[str] = set()  # the testcase names so far
    for hook, findings in findings_by_check(results):
        classname = f"{SUITE}.{hook}"
        if not any(f.severity == "error" for f in findings):
            tests += 1
            note = next(r.note for r in results if r.hook == hook)
            out = f"      <system-out>{_body([note])}</system-out>\n" if note else ""
            cases.append(
                f'    <testcase{_attrs(classname=classname, name=_unique(hook, used))} time="0"'
                + (f">\n{out}    </testcase>" if out else "/>")
            )
        for f in findings:
            name = _unique(_case_name(f), used)
            head = f'    <testcase{_attrs(classname=classname, name=name)} time="0">'
            line = finding_line(f)
            tests += 1
            if f.severity == "error":
                failures += 1
                fix = CODES[f.code].fix if f.code in CODES else ""
                text = _body([line, f"fix: {fix}"] if fix else [line])
                inner = f"      <failure{_attrs(type=f.code, message=f.message)}>{text}</failure>"
            else:
                inner = f"      <system-out>{_body([line])}</system-out>"
            cases.extend([head, inner, "    </testcase>"])
    stamp = (meta or {}).get("now")  # the injected clock: the same run, the same bytes
    properties = [
        (key, str(meta[key])) for key in _PROPERTIES if meta and meta.get(key) is not None
    ]
    properties.append(("exit_code", str(exit_code)))
    counts = f' tests="{tests}" failures="{failures}" errors="0" time="0"'
    return _document(counts, None if stamp is None else str(stamp), properties, cases)


def render_junit_error(message: str) -> str:
    """A failed run (exit 2): one testcase in error, so no reader counts it a pass."""
    text = xml_escape(f"oracle-guard: error: {message}")
    case = (
        f'    <testcase{_attrs(classname=SUITE, name="oracle-guard run")} time="0">\n'
        f"      <error{_attrs(type='error', message=message)}>{text}</error>\n"
        "    </testcase>"
    )
    counts = ' tests="1" failures="0" errors="1" time="0"'
    return _document(counts, None, [("exit_code", "2")], [case])
