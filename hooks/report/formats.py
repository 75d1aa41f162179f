"""Reports for people and for CI systems, by name: text (coloured on a
terminal), JSON, GitHub Actions workflow commands, SARIF 2.1.0, a markdown
job summary, JUnit XML and GitLab Code Quality JSON.

Every renderer returns the whole report as one string, written once, so a
failure halfway never leaves half a report behind.
"""

from __future__ import annotations

from typing import IO, Callable, Dict, Mapping, NamedTuple, Optional, Sequence

from oracle_guard.findings import HookResult
from oracle_guard.report.escaping import inert, show_text
from oracle_guard.report.github import render_github, render_github_error
from oracle_guard.report.json import render_json
from oracle_guard.report.sarif import render_sarif, render_sarif_error
from oracle_guard.report.text import painter, render_text

COLOR_CHOICES = ("auto", "always", "never")


def colour_wanted(flag: str, env: Mapping[str, str], stream: IO[str]) -> bool:
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


Renderer = Callable[[Sequence[HookResult], Optional[Dict], Sequence[str], int, bool], str]


class Format(NamedTuple):
    render: Renderer  # (results, meta, owners, exit_code, colour) -> the report
    render_error: Callable[[str], str]  # a failed run's report (exit 2)


def _text(
    results: Sequence[HookResult],
    meta: Optional[Dict],
    owners: Sequence[str],
    exit_code: int,
    colour: bool,
) -> str:
    return render_text(results, owners=owners, paint=painter(colour), meta=meta)


def _json(
    results: Sequence[HookResult],
    meta: Optional[Dict],
    owners: Sequence[str],
    exit_code: int,
    colour: bool,
) -> str:
    return render_json(results, meta=meta)


def _github(
    results: Sequence[HookResult],
    meta: Optional[Dict],
    owners: Sequence[str],
    exit_code: int,
    colour: bool,
) -> str:
    return render_github(results, owners=owners, meta=meta)


def _sarif(
    results: Sequence[HookResult],
    meta: Optional[Dict],
    owners: Sequence[str],
    exit_code: int,
    colour: bool,
) -> str:
    return render_sarif(results, meta=meta, exit_code=exit_code)


def _markdown(
    results: Sequence[HookResult],
    meta: Optional[Dict],
    owners: Sequence[str],
    exit_code: int,
    colour: bool,
) -> str:
    # deferred: 1 ms to import, only for _markdown()
    from oracle_guard.report.markdown import render_markdown

    return render_markdown(results, meta=meta, owners=owners, exit_code=exit_code)


def _markdown_error(message: str) -> str:
    # deferred: 1 ms to import, only for _markdown_error()
    from oracle_guard.report.markdown import render_markdown_error

    return render_markdown_error(message)


def _junit(
    results: Sequence[HookResult],
    meta: Optional[Dict],
    owners: Sequence[str],
    exit_code: int,
    colour: bool,
) -> str:
    # deferred: 1 ms to import, only for _junit()
    from oracle_guard.report.junit import render_junit

    return render_junit(results, meta=meta, exit_code=exit_code)


def _junit_error(message: str) -> str:
    # deferred: 1 ms to import, only for _junit_error()
    from oracle_guard.report.junit import render_junit_error

    return render_junit_error(message)


def _gitlab(
    results: Sequence[HookResult],
    meta: Optional[Dict],
    owners: Sequence[str],
    exit_code: int,
    colour: bool,
) -> str:
    # deferred: under 1 ms to import, only for _gitlab()
    from oracle_guard.report.gitlab import render_gitlab

    return render_gitlab(results)


def _gitlab_error(message: str) -> str:
    # deferred: under 1 ms to import, only for _gitlab_error()
    from oracle_guard.report.gitlab import render_gitlab_error

    return render_gitlab_error(message)


def _no_report(message: str) -> str:
    return ""  # the stderr line says it all


def _json_error(message: str) -> str:
    return render_json([], error=message)


RENDERERS: Dict[str, Format] = {
    "text": Format(_text, _no_report),
    "json": Format(_json, _json_error),
    "github": Format(_github, render_github_error),
    "sarif": Format(_sarif, render_sarif_error),
    "markdown": Format(_markdown, _markdown_error),
    "junit": Format(_junit, _junit_error),
    "gitlab": Format(_gitlab, _gitlab_error),
}
FORMATS = tuple(RENDERERS)


def render(
    fmt: str,
    results: Sequence[HookResult],
    *,
    meta: Optional[Dict] = None,
    owners: Sequence[str] = (),
    exit_code: int = 0,
    colour: bool = False,
) -> str:
    return RENDERERS.get(fmt, RENDERERS["text"]).render(results, meta, owners, exit_code, colour)


def render_error(fmt: str, message: str) -> str:
    """What goes to stdout beside the stderr line when a run fails (exit 2)."""
    return RENDERERS.get(fmt, RENDERERS["text"]).render_error(message)


def error_line(message: str) -> str:
    """The one line a failed run prints on stderr."""

    return inert(f"oracle-guard: error: {show_text(message)}")


def render_error_file(fmt: str, message: str) -> str:
    """A failed run's report file (--output): the stdout document, or, where
    stdout gets none (text), the error line, so no file reads as a pass."""
    return render_error(fmt, message) or error_line(message) + "\n"
