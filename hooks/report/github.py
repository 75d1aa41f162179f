"""GitHub Actions workflow commands: an annotation a finding, then the text
report's summary lines for the log."""

from __future__ import annotations

from typing import Dict, Optional, Sequence

from oracle_guard.findings import Finding, HookResult, unique_findings
from oracle_guard.report.escaping import inert, show_text
from oracle_guard.report.text import summary_lines


def github_data(text: str) -> str:
    """Escape a workflow command's message, as the Actions runner unescapes it;
    control characters (a terminal escape in a file name) are shown escaped first."""
    shown = "\n".join(
        "\r".join(show_text(part) for part in line.split("\r")) for line in text.split("\n")
    )  # CR and LF: the runner's own escapes
    return shown.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """Escape a workflow command property (``file=``, ``title=``): ``:`` and ``,``
    would end it early."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def github_command(f: Finding) -> str:
    props = []
    if f.path is not None:
        props.append(f"file={github_property(f.path)}")
    if f.line:
        props.append(f"line={f.line}")
    props.append(f"title={github_property('oracle-guard ' + f.code)}")
    kind = "error" if f.severity == "error" else "warning"
    return f"::{kind} {','.join(props)}::{github_data(f.message)}"


def render_github(
    results: Sequence[HookResult], *, owners: Sequence[str] = (), meta: Optional[Dict] = None
) -> str:
    """One annotation a finding, then the text format's summary lines for the log.
    A summary line starts with a hook id and the hint with 'hint:', so no line
    but the commands can start with '::'."""
    lines = [github_command(f) for f in unique_findings(results)]
    lines.extend(inert(line) for line in summary_lines(results, owners=owners, meta=meta))
    return "\n".join(lines) + "\n"


def render_github_error(message: str) -> str:
    return f"::error title=oracle-guard::{github_data(message)}\n"
