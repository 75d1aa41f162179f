"""Reports for people and for CI systems: text (coloured on a terminal), JSON,
GitHub Actions workflow commands and SARIF 2.1.0.

Every renderer returns the whole report as one string, written once, so a
failure halfway never leaves half a report behind.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Mapping, Optional, Sequence

from oracle_guard import __version__
from oracle_guard.checks.codes import CODES
from oracle_guard.findings import (Finding, HookResult, dump_json, inert, render_json,
                                   render_text, show_text, summary_lines, unique_findings)

FORMATS = ("text", "json", "github", "sarif")
COLOR_CHOICES = ("auto", "always", "never")

# -- colour ---------------------------------------------------------------------------

_STYLES = {
    "error": "\033[1;31m",    # the code of an error: bold red
    "warning": "\033[1;33m",  # the code of a warning: bold yellow
    "path": "\033[1m",        # bold
    "passed": "\033[32m",     # green
    "failed": "\033[31m",     # red
}
_RESET = "\033[0m"


def colour_wanted(flag: str, env: Mapping[str, str], stream) -> bool:
    """Whether text output gets colour, the first rule that decides:
    ``--color always|never``; pre-commit's ``PRE_COMMIT_COLOR=always|never``;
    ``NO_COLOR`` (non-empty) off; ``FORCE_COLOR`` (non-empty) on; else only
    on a terminal (not ``TERM=dumb``)."""
    if flag in ("always", "never"):
        return flag == "always"
    pre_commit = env.get("PRE_COMMIT_COLOR", "")
    if pre_commit in ("always", "never"):
        return pre_commit == "always"
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def painter(enabled: bool) -> Callable[[str, str], str]:
    """``paint(role, text)`` for findings.render_text: ANSI styles, or none."""
    def paint(role: str, text: str) -> str:
        style = _STYLES.get(role)
        return f"{style}{text}{_RESET}" if enabled and style else text
    return paint


# -- text shared by the machine formats ------------------------------------------------

def printable(text: str) -> str:
    """Undecodable bytes (kept as surrogates by git's -z plumbing) as ``\\xNN``,
    everything else as is: the machine formats escape the rest themselves."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


# -- GitHub Actions workflow commands ----------------------------------------------------

def github_data(text: str) -> str:
    """Escape a workflow command's message, as the Actions runner unescapes it;
    control characters (a terminal escape in a file name) are shown escaped first."""
    shown = "\n".join("\r".join(show_text(part) for part in line.split("\r"))
                      for line in text.split("\n"))  # CR and LF: the runner's own escapes
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


def render_github(results: Sequence[HookResult], *, owners: Sequence[str] = ()) -> str:
    """One annotation a finding, then the text format's summary lines for the log.
    A summary line starts with a hook id and the hint with 'hint:', so no line
    but the commands can start with '::'."""
    lines = [github_command(f) for f in unique_findings(results)]
    lines.extend(inert(line) for line in summary_lines(results, owners=owners))
    return "\n".join(lines) + "\n"


def render_github_error(message: str) -> str:
    return f"::error title=oracle-guard::{github_data(message)}\n"


# -- SARIF 2.1.0 -----------------------------------------------------------------------

SARIF_SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                "sarif-schema-2.1.0.json")
# The file path-less findings point at: code scanning needs a location for
# every result, and the contract is what names the missing oracle.
CONTRACT_PATH = ".oracle-guard.yaml"


def default_level(code: str) -> str:
    return "warning" if CODES[code].meaning.startswith("warning:") else "error"


def sarif_rules() -> List[Dict]:
    return [{
        "id": code,
        "shortDescription": {"text": info.meaning},
        "help": {"text": info.fix},
        "defaultConfiguration": {"level": default_level(code)},
        "properties": {"hook": info.hook},
    } for code, info in CODES.items()]


def sarif_uri(path: str) -> str:
    """A repo-relative path as a relative URI reference: every byte outside the
    unreserved set and '/' percent-encoded (so ':' cannot read as a scheme)."""
    from urllib.parse import quote

    return quote(path.encode("utf-8", "surrogateescape"), safe="/")


def sarif_result(f: Finding, rule_index: Dict[str, int]) -> Dict:
    physical: Dict = {"artifactLocation": {
        "uri": sarif_uri(CONTRACT_PATH if f.path is None else f.path),
        "uriBaseId": "%SRCROOT%"}}
    if f.line:
        physical["region"] = {"startLine": f.line}
    result = {
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
        "tool": {"driver": {"name": "oracle-guard", "version": __version__,
                            "rules": sarif_rules()}},
        "invocations": [invocation],
    }


def _sarif_log(run: Dict) -> str:
    return dump_json({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]})


def render_sarif(results: Sequence[HookResult], *, meta: Optional[Dict] = None,
                 exit_code: int = 0) -> str:
    run = _sarif_run({"executionSuccessful": True, "exitCode": exit_code})
    rule_index = {code: i for i, code in enumerate(CODES)}
    run["results"] = [sarif_result(f, rule_index) for f in unique_findings(results)]
    checks = {r.hook: {"status": r.status, "errors": r.errors, "warnings": r.warnings,
                       "note": r.note} for r in results}
    run["properties"] = dict(meta or {}, checks=checks)
    return _sarif_log(run)


def render_sarif_error(message: str) -> str:
    """A failed run: no ``results`` at all (SARIF's 'could not produce results'),
    so an upload never reads a broken run as 'no findings'."""
    return _sarif_log(_sarif_run({
        "executionSuccessful": False,
        "exitCode": 2,
        "toolExecutionNotifications": [
            {"level": "error", "message": {"text": printable(message)}}],
    }))


# -- one entry point for the command line ------------------------------------------------

def render(fmt: str, results: Sequence[HookResult], *, meta: Optional[Dict] = None,
           owners: Sequence[str] = (), exit_code: int = 0, colour: bool = False) -> str:
    if fmt == "json":
        return render_json(results, meta=meta)
    if fmt == "github":
        return render_github(results, owners=owners)
    if fmt == "sarif":
        return render_sarif(results, meta=meta, exit_code=exit_code)
    return render_text(results, owners=owners, paint=painter(colour))


def render_error(fmt: str, message: str) -> str:
    """What goes to stdout beside the stderr line when a run fails (exit 2)."""
    if fmt == "json":
        return render_json([], error=message)
    if fmt == "github":
        return render_github_error(message)
    if fmt == "sarif":
        return render_sarif_error(message)
    return ""
