"""prek.toml: a new one, the oracle-guard entry added first to one that is there,
or that entry's repo and rev set in place; each edit read back with the TOML
parser to be sure it changed nothing else. And which config init writes: the one
the repository's hook runner reads."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import sys
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Tuple

from oracle_guard.commands.init.files import (
    PRE_COMMIT_CONFIG,
    PRE_COMMIT_YML,
    PREK_CONFIG,
    RUNNER_CONFIGS,
)
from oracle_guard.commands.init.precommit_config import (
    ConfigFormat,
    Retarget,
    has_our_hooks,
    our_entry,
    retarget_lines,
)
from oracle_guard.commands.init.yaml_lines import line


def toml_parser() -> Any:
    """tomllib, or before Python 3.11 the tomli backport it was made from
    (setup.cfg requires it there; imported by name, as mypy checks for 3.9)."""
    if sys.version_info >= (3, 11):
        # deferred: tomllib: 3 ms to import, only for toml_parser()
        import tomllib

        return tomllib

    return importlib.import_module("tomli")


def toml_string(value: str) -> str:
    """A TOML basic string that reads back as ``value``."""
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def prek_entry(repo: str, rev: str) -> List[str]:
    return [
        "[[repos]]",
        line(f"repo = {toml_string(repo)}", "where you host or mirror oracle-guard"),
        line(f"rev = {toml_string(rev)}", "a tag or the full commit id you reviewed"),
        line('hooks = [{ id = "oracle-guard" }]', "every check in one process"),
    ]


def new_prek_config(repo: str, rev: str) -> str:
    lines = [
        "# prek hooks. oracle-guard comes first: with fail_fast, nothing else runs once",
        "# it fails. Written by 'oracle-guard init'.",
        line(
            'default_install_hook_types = ["pre-commit", "pre-push"]',
            "'prek install' installs both",
        ),
        line("fail_fast = true", "stop before the test hooks when the oracle was touched"),
        "",
        *prek_entry(repo, rev),
    ]
    return "\n".join(lines) + "\n"


def _parse_error(exc: Exception) -> str:
    return f"it does not parse as TOML 1.0 ({str(exc).splitlines()[0]})"


# The header of one [[repos]] table, on a line of its own.
_REPOS_HEADER = re.compile(r"[ \t]*\[\[[ \t]*repos[ \t]*\]\][ \t]*(#.*)?")


def edit_prek_config(text: str, repo: str, rev: str) -> Tuple[Optional[str], str]:
    """(new text, "") with our [[repos]] table first; (text, "") when the hooks are
    there already; (None, why) when the file does not parse or is not simple enough
    to edit safely."""
    parser = toml_parser()
    try:
        config = parser.loads(text)
    except parser.TOMLDecodeError as exc:
        return None, _parse_error(exc)
    if has_our_hooks(config):
        return text, ""
    repos = config.get("repos", [])
    if not isinstance(repos, list):
        return None, "its 'repos' is not a list of [[repos]] tables"
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    first = next((n for n, ln in enumerate(lines) if _REPOS_HEADER.fullmatch(ln)), None)
    if first is None and repos:
        return None, "its 'repos' is an inline array, not [[repos]] tables"
    if first is None:  # no repos yet: a table at the end starts the list
        body = lines[:-1] if lines and lines[-1] == "" else lines
        edited_lines = body + ([""] if body else []) + prek_entry(repo, rev) + [""]
    else:
        edited_lines = lines[:first] + prek_entry(repo, rev) + [""] + lines[first:]
    edited = newline.join(edited_lines)
    expected = dict(config, repos=[our_entry(repo, rev)] + repos)
    try:
        if parser.loads(edited) != expected:
            return None, "adding the entry would change more than the 'repos' list"
    except parser.TOMLDecodeError:
        return None, "adding the entry would not parse"
    return edited, ""


# One `repo = "..."` or `rev = '...'` key on a line of its own.
_KEY_LINE = re.compile(
    r"(?P<head>[ \t]*(?P<key>repo|rev)[ \t]*=)[ \t]*"
    r"(?P<value>\"(?:[^\"\\]|\\.)*\"|'[^']*')(?P<comment>[ \t]*#.*)?"
)


def _set_value(match: re.Match[str], value: str) -> str:
    comment = match.group("comment")
    head = f"{match.group('head')} {toml_string(value)}"
    return head + ("  " + comment.lstrip() if comment else "")


def retarget_prek_config(text: str, wanted: Mapping[str, str]) -> Retarget:
    """The config with the oracle-guard entry's ``repo``/``rev`` set to ``wanted``,
    each line edited in place, read back to be sure nothing else changed."""
    parser = toml_parser()
    try:
        config = parser.loads(text)
    except parser.TOMLDecodeError as exc:
        return Retarget(None, why=_parse_error(exc))

    def load(edited: str) -> Any:
        try:
            return parser.loads(edited)
        except parser.TOMLDecodeError:
            return None

    return retarget_lines(
        text, config, wanted, load, _KEY_LINE, _set_value, ("[[repos]] tables", "'{} ='")
    )


def installs_both_stages(text: Optional[str]) -> bool:
    """Does this prek.toml make a bare 'prek install' install pre-commit and pre-push?"""
    if text is None:
        return False
    parser = toml_parser()
    try:
        types = parser.loads(text).get("default_install_hook_types")
    except parser.TOMLDecodeError:
        return False
    return isinstance(types, list) and {"pre-commit", "pre-push"} <= set(
        t for t in types if isinstance(t, str)
    )


PREK_FORMAT = ConfigFormat(
    new_prek_config,
    edit_prek_config,
    retarget_prek_config,
    lambda repo, rev: "\n".join(prek_entry(repo, rev)),
    "first of its [[repos]] tables",
    "before its first [[repos]] table",
)


@dataclass(frozen=True)
class ConfigChoice:
    """The config init writes the oracle-guard entry into, for which runner, and why."""

    path: str
    runner: str  # pre-commit | prek
    why: str = ""  # said in init's report when the choice is not the plain default


def prek_on_path(env: Mapping[str, str]) -> bool:
    """prek on the PATH init was given; no PATH, no prek (never the test process's)."""
    path = env.get("PATH")
    return bool(path) and shutil.which("prek", path=path) is not None


def choose_config(top: str, env: Mapping[str, str]) -> ConfigChoice:
    """The config the repository's runner reads: prek reads prek.toml before
    .pre-commit-config.yaml before .pre-commit-config.yml; pre-commit only the .yaml.
    A new config is the .yaml, which both read."""
    has = {name: os.path.lexists(os.path.join(top, name)) for name in RUNNER_CONFIGS}
    if has[PREK_CONFIG]:
        yamls = [name for name in (PRE_COMMIT_CONFIG, PRE_COMMIT_YML) if has[name]]
        why = f"{PREK_CONFIG} is there" + (
            f", and prek reads it in preference to {' and '.join(yamls)}, which init "
            f"leaves alone (pre-commit reads only {PRE_COMMIT_CONFIG})"
            if yamls
            else ""
        )
        return ConfigChoice(PREK_CONFIG, "prek", why)
    if has[PRE_COMMIT_CONFIG]:
        return ConfigChoice(PRE_COMMIT_CONFIG, "pre-commit")
    if has[PRE_COMMIT_YML]:
        return ConfigChoice(
            PRE_COMMIT_YML,
            "prek",
            f"{PRE_COMMIT_YML} is there: prek reads it, pre-commit only {PRE_COMMIT_CONFIG}",
        )
    if prek_on_path(env):
        # not prek.toml: pre-commit, which teammates may run, reads only the YAML
        return ConfigChoice(
            PRE_COMMIT_CONFIG,
            "prek",
            f"prek is on PATH and reads it, as pre-commit does (teammates may run "
            f"either); init writes {PREK_CONFIG} only where one is there",
        )
    return ConfigChoice(PRE_COMMIT_CONFIG, "pre-commit")
