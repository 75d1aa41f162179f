"""pytest's configuration files: the runner options a change sets or drops.

Which file pytest reads (pytest 9, ``_pytest/config/findpaths.py``; the docs'
"Configuration file formats"): from the common ancestor of its path arguments
(the invocation folder when there are none) up to the file system's root, the
first folder holding one of these files that counts wins, and in that folder the
first that counts in this order:

1. ``pytest.toml``, ``.pytest.toml``: their ``[pytest]`` table, native TOML
   types; they count even when empty. Settings outside any table, with no
   ``[pytest]`` table, are an error.
2. ``pytest.ini``, ``.pytest.ini``: their ``[pytest]`` section; they count even
   when empty or without the section.
3. ``pyproject.toml``: ``[tool.pytest]`` (pytest 9, native TOML types: lists of
   strings, booleans) or ``[tool.pytest.ini_options]`` (INI mode: a string or a
   list of strings, scalars taken as their str()); both at once is an error. It
   counts when ``[tool.pytest]`` holds a setting or ``[tool.pytest.ini_options]``
   exists (even empty). Failing everything else, the first pyproject.toml found
   is the configuration file, with no settings.
4. ``tox.ini``: its ``[pytest]`` section, when it has one.
5. ``setup.cfg``: its ``[tool:pytest]`` section, when it has one (a ``[pytest]``
   section there makes pytest fail, so it can only make a run red: no mark).

So the nearest of these files decides for the runs under its folder: a new one
in ``tests/`` replaces the root's configuration for ``pytest tests/``, which is a
mark of its own ("replaces the project's pytest configuration").

INI files are read with iniconfig, the library pytest reads them with, called as
pytest calls it (``IniConfig(path)``: no inline comments stripped from values, so
``addopts = -v # x`` holds ``#`` and ``x``; a section header cut at its first
``#`` or ``;``, so ``[pytest] ;]`` is ``[pytest]``). Duplicate sections and keys,
a line before any header and a continuation of nothing are its errors, and so
ours.

TOML is read with tomllib (tomli before 3.11), as pytest reads it; both parsers
are imported only when a file is judged.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections import Counter
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

from oracle_guard.checks.test_tamper.arguments import added_effect, drop_matters, warning_action
from oracle_guard.checks.test_tamper.arguments import parse as parse_arguments
from oracle_guard.checks.test_tamper.marks import Mark
from oracle_guard.checks.test_tamper.option_tables import (
    _ALIASES,
    _EFFECTS,
    _HARMLESS,
    _LINT_IGNORES,
    _LOOSENS,
    _STRICT_PARTS,
    _TYPES,
    UNKNOWN,
)
from oracle_guard.checks.test_tamper.toml_lines import toml_lines as _toml_lines

# The files pytest reads its options from, by name, wherever they are: a
# pytest.ini in tests/ is the configuration of `pytest tests/`.
CONFIG_NAMES = (
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
_DEDICATED = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml")

RULE = "runner-options"
UNPARSABLE = "test-unparsable"


def is_config(path: str) -> bool:
    # a case-insensitive checkout (macOS, Windows) finds PYTEST.INI as pytest.ini
    return path.rpartition("/")[2].lower() in CONFIG_NAMES


# -- loading -----------------------------------------------------------------


class Unloadable(Exception):
    def __init__(self, message: str, line: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class Setting(NamedTuple):
    key: str  # as written
    value: Any  # normalized: a tuple for the list types, a bool, a str, ...
    line: int


class Config(NamedTuple):
    scope: str  # the section: "[pytest]", "[tool:pytest]", "tool.pytest.ini_options", ...
    header: int  # the section header's line, 0 when there is none
    settings: Dict[str, Setting]  # by canonical key
    counts: bool  # pytest takes this file as its configuration (see the module's doc)


def _rejected(detail: str, line: Optional[int]) -> Unloadable:
    """TOML or INI that loads, holding what pytest refuses to read."""
    return Unloadable(f"does not load as pytest configuration: {detail}", line)


def _decode(data: bytes, kind: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise Unloadable(
            f"does not load as {kind}: byte 0x{data[exc.start]:02x} is not UTF-8 "
            f"(line {line}, column {column})",
            line,
        ) from None


def _strtobool(value: str) -> Optional[bool]:
    """pytest's reading of an INI boolean; None when it is none."""
    lowered = value.strip().lower()
    if lowered in ("y", "yes", "t", "true", "on", "1"):
        return True
    if lowered in ("n", "no", "f", "false", "off", "0"):
        return False
    return None


def _split(key: str, value: str, line: int) -> Tuple[str, ...]:
    # deferred: shlex: under 1 ms to import, only for _split()
    import shlex

    try:
        return tuple(shlex.split(value))
    except ValueError as exc:
        raise _rejected(f"{key}: {exc}", line) from None


def _plain(value: Any) -> Any:
    """A value of a setting oracle-guard does not type, in a form that compares
    equal however it is written: lines stripped, scalars as text, lists as tuples."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "\n".join(part for part in (s.strip() for s in value.split("\n")) if part)
    if isinstance(value, list):
        return tuple(_plain(item) for item in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _plain(v)) for k, v in value.items()))
    return str(value)


def _typename(value: Any) -> str:
    names = {str: "a string", bool: "a boolean", int: "an integer", float: "a float"}
    names.update({list: "a list", dict: "a table"})
    return names.get(type(value), type(value).__name__)


def _normalize(key: str, written: str, value: Any, native: bool, where: str, line: int) -> Any:
    """``value`` as pytest reads it for ``key`` (``written`` so, perhaps an
    alias): native TOML checked as strictly as pytest 9 checks it, INI text
    split or parsed as its type says."""
    kind = _TYPES.get(key)
    key = written
    if kind in ("args", "paths", "linelist"):
        if isinstance(value, list):
            if native and not all(isinstance(item, str) for item in value):
                bad = next(item for item in value if not isinstance(item, str))
                raise _rejected(
                    f"{where}.{key} must be a list of strings; it holds {_typename(bad)}", line
                )
            return tuple(str(item) for item in value)
        if native:
            raise _rejected(
                f"{where}.{key} must be a list of strings, not {_typename(value)}", line
            )
        text = str(value)
        if kind == "linelist":
            return tuple(part for part in (s.strip() for s in text.split("\n")) if part)
        return _split(key, text, line)
    if kind == "bool":
        if native:
            if not isinstance(value, bool):
                raise _rejected(f"{where}.{key} must be a boolean, not {_typename(value)}", line)
            return value
        parsed = _strtobool(str(value))
        if parsed is None:
            raise _rejected(f"{key} = {_show(str(value))} is not a boolean", line)
        return parsed
    if kind == "str" and native and not isinstance(value, str):
        raise _rejected(f"{where}.{key} must be a string, not {_typename(value)}", line)
    return _plain(value)


def _settings(
    items: Iterable[Tuple[str, Any, int]], native: bool, where: str
) -> Dict[str, Setting]:
    out: Dict[str, Setting] = {}
    for key, value, line in items:
        canonical = _ALIASES.get(key, key)
        if canonical in out and canonical != key:
            continue  # the canonical name wins over its alias, wherever it stands
        out[canonical] = Setting(key, _normalize(canonical, key, value, native, where, line), line)
    return out


def _load_ini(name: str, data: bytes) -> Config:
    import iniconfig  # pytest's own INI reader, as _pytest/config/findpaths.py calls it

    text = _decode(data, "INI")
    try:
        parsed = iniconfig.IniConfig(name, data=text)
    except iniconfig.ParseError as exc:
        line = exc.lineno + 1
        raise Unloadable(f"does not load as INI: {exc.msg} (line {line})", line) from None
    section = "tool:pytest" if name == "setup.cfg" else "pytest"
    scope = f"[{section}]"
    if section not in parsed:
        return Config(scope, 0, {}, counts=name in _DEDICATED)
    header = parsed.lineof(section) or 0
    items = [
        (key, value, parsed.lineof(section, key) or header or 1)
        for key, value in parsed[section].items()
    ]
    return Config(scope, header, _settings(items, False, scope), counts=True)


def _toml_module() -> Any:
    """tomllib, or before Python 3.11 the tomli backport it was made from
    (setup.cfg requires it there; imported by name, as mypy checks for 3.9)."""
    if sys.version_info >= (3, 11):
        # deferred: tomllib: 2 ms to import, only for _toml_module()
        import tomllib

        return tomllib

    return importlib.import_module("tomli")


_TOML_WHERE = re.compile(
    r"^(?P<message>.*) \(at (?:line (?P<line>\d+), column (?P<col>\d+)|end of document)\)$"
)


def _load_toml(name: str, data: bytes) -> Config:
    text = _decode(data, "TOML")
    toml = _toml_module()
    try:
        document = toml.loads(text)
    except toml.TOMLDecodeError as exc:
        raise _toml_error(str(exc), text) from None
    lines = _toml_lines(text)

    def line_of(*path: str) -> int:
        for end in range(len(path), 0, -1):
            if path[:end] in lines:
                return lines[path[:end]]
        return 1

    def table(value: Any, where: str, line: int) -> Dict[str, Any]:
        if not isinstance(value, dict):
            raise _rejected(f"{where} must be a table, not {_typename(value)}", line)
        return value

    def items(values: Dict[str, Any], *path: str) -> List[Tuple[str, Any, int]]:
        return [(key, value, line_of(*path, key)) for key, value in values.items()]

    if name in ("pytest.toml", ".pytest.toml"):
        scope = "pytest"
        if "pytest" not in document:
            loose = [key for key, value in document.items() if not isinstance(value, dict)]
            if loose:
                raise _rejected(
                    f"settings outside a [pytest] table: {', '.join(loose)}", line_of(loose[0])
                )
            return Config(scope, 0, {}, counts=True)
        values = table(document["pytest"], "pytest", line_of("pytest"))
        settings = _settings(items(values, "pytest"), True, scope)
        return Config(scope, lines.get(("pytest",), 0), settings, counts=True)

    tool = table(document.get("tool", {}), "tool", line_of("tool"))
    tool_pytest = table(tool.get("pytest", {}), "tool.pytest", line_of("tool", "pytest"))
    native = {key: value for key, value in tool_pytest.items() if key != "ini_options"}
    ini = tool_pytest.get("ini_options")
    if ini is not None:
        ini = table(ini, "tool.pytest.ini_options", line_of("tool", "pytest", "ini_options"))
    if native and ini:
        raise _rejected(
            "settings in both [tool.pytest] and [tool.pytest.ini_options]",
            line_of("tool", "pytest", "ini_options"),
        )
    if native:
        scope = "tool.pytest"
        settings = _settings(items(native, "tool", "pytest"), True, scope)
        return Config(scope, lines.get(("tool", "pytest"), 0), settings, counts=True)
    scope = "tool.pytest.ini_options"
    header = lines.get(("tool", "pytest", "ini_options"), 0)
    if ini is None:
        return Config(scope, header, {}, counts=False)
    scalars = [
        (key, value if isinstance(value, list) else str(value), line)
        for key, value, line in items(ini, "tool", "pytest", "ini_options")
    ]
    return Config(scope, header, _settings(scalars, False, scope), counts=True)


def _toml_error(message: str, text: str) -> Unloadable:
    if text.startswith("\ufeff"):
        return Unloadable("does not load as TOML: it starts with a byte-order mark", 1)
    found = _TOML_WHERE.match(message)
    if found is None:  # pragma: no cover - tomllib always says where
        return Unloadable(f"does not load as TOML: {message}", None)
    if found.group("line"):
        line = int(found.group("line"))
        where = f"line {line}, column {found.group('col')}"
    else:
        line = max(1, len(text.splitlines()))
        where = "at the end of the file"
    return Unloadable(f"does not load as TOML: {found.group('message')} ({where})", line)


def _load(name: str, data: bytes) -> Config:
    if name.endswith(".toml"):
        return _load_toml(name, data)
    return _load_ini(name, data)


# -- comparing ---------------------------------------------------------------


def _show(value: Any, limit: int = 60) -> str:
    """A setting's value in a message: quoted, on one line, cut at ``limit``."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, tuple):
        text = " ".join(_show_item(item) for item in value)
    else:
        text = " ".join(str(value).split("\n"))
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"'{text}'"


def _show_item(item: Any) -> str:
    if isinstance(item, tuple):
        return "(" + " ".join(_show_item(part) for part in item) + ")"
    return str(item)


def _subject(key: str, value: Any) -> str:
    return f"{key} = {_show(value, limit=10**6)[1:-1]}"


def counts(path: str, data: bytes) -> bool:
    """Does pytest take this file as its configuration? (One that does not load
    is taken to: pytest would fail on it, or read it.)"""
    name = path.rpartition("/")[2].lower()
    try:
        return _load(name, data).counts
    except Unloadable:
        return True


def changed_options(
    path: str,
    before: Optional[bytes],
    after: bytes,
    replaces: Callable[[], bool] = lambda: True,
) -> List[Mark]:
    """The runner options ``after`` sets, changes or drops compared with
    ``before`` (None: the file is new), as marks of rule runner-options (or
    test-unparsable when ``after`` does not load). ``replaces`` says whether a
    file that becomes a configuration here takes the place of one pytest read
    before (the base's, in this folder or above); only such a file is a mark
    for what it is, whatever it holds."""
    name = path.rpartition("/")[2].lower()
    if name not in CONFIG_NAMES:
        return []
    try:
        new = _load(name, after)
    except Unloadable as exc:
        return [Mark(UNPARSABLE, exc.line or 1, "unparsable", "", exc.message)]
    old: Optional[Config] = None
    if before is not None:
        try:
            old = _load(name, before)
        except Unloadable:
            old = Config(new.scope, 0, {}, counts=name in _DEDICATED)
    marks: List[Mark] = []
    if new.counts and (old is None or not old.counts) and replaces():
        folder = path.rpartition("/")[0] or "."
        what = f"a new {name}" if old is None else f"{name}, now with {_section_name(new)},"
        marks.append(
            Mark(
                RULE,
                new.header or 1,
                f"configuration file {name}",
                new.scope,
                f"{what} becomes the pytest configuration of the runs under "
                f"{'the root' if folder == '.' else folder + '/'} (the nearest file wins), "
                "in place of the one they read and every option it set",
            )
        )
    marks.extend(_compare(old.settings if old else {}, new))
    return sorted(marks, key=lambda mark: mark.line)


def _section_name(config: Config) -> str:
    return config.scope if config.scope.startswith("[") else f"[{config.scope}]"


def _compare(old: Dict[str, Setting], new: Config) -> List[Mark]:
    marks: List[Mark] = []
    removed_line = new.header or 1

    def mark(line: int, subject: str, message: str) -> None:
        marks.append(Mark(RULE, line, subject, new.scope, message))

    for key in list(new.settings) + [key for key in old if key not in new.settings]:
        if key in _HARMLESS or key == "strict" or key in _STRICT_PARTS:
            continue
        before, after = old.get(key), new.settings.get(key)
        if before is not None and after is not None and before.value == after.value:
            continue
        line = after.line if after is not None else removed_line
        if key == "addopts":
            _compare_addopts(before, after, line, mark, new.settings)
        elif key == "filterwarnings":
            _compare_filters(before, after, line, mark)
        elif key == "required_plugins":
            kept = set(after.value) if after is not None else set()
            for entry in before.value if before is not None else ():
                if entry not in kept:
                    mark(line, f"required_plugins drops {entry}", f"required_plugins drops {entry}")
        elif key == "max_warnings" and before is None or key in _LINT_IGNORES and after is None:
            continue  # a new cap only fails runs; a dropped lint exemption lints more
        else:
            text = _change(before, after)
            shown = after if after is not None else before
            assert shown is not None
            mark(line, _subject(key, shown.value), f"{text}: {_EFFECTS.get(key, UNKNOWN)}")
    marks.extend(_compare_strictness(old, new, removed_line))
    return marks


def _change(before: Optional[Setting], after: Optional[Setting]) -> str:
    if before is None:
        assert after is not None
        return f"{after.key} is set to {_show(after.value)}"
    if after is None:
        return f"{before.key} is removed (it was {_show(before.value)})"
    return f"{after.key} changes from {_show(before.value)} to {_show(after.value)}"


def _strict_value(settings: Dict[str, Setting], key: str) -> bool:
    setting = settings.get(key)
    if setting is None and key != "strict":
        setting = settings.get("strict")
    return bool(setting is not None and setting.value is True)


def _compare_strictness(old: Dict[str, Setting], new: Config, removed_line: int) -> List[Mark]:
    """A mark for each strictness option the change turns off, by the setting
    that turns it off: its own, or ``strict`` when it is not set."""
    out: List[Mark] = []
    for key in ("strict", *_STRICT_PARTS):
        if not _strict_value(old, key) or _strict_value(new.settings, key):
            continue
        if key != "strict" and key not in old and key not in new.settings:
            continue  # `strict` turned it off: that setting's mark says so
        after = new.settings.get(key)
        if key in old:
            text = _change(old[key], after)
        else:
            assert after is not None
            text = f"{after.key} is set to {_show(after.value)}, over strict = true"
        line = after.line if after is not None else removed_line
        out.append(Mark(RULE, line, f"{key} off", new.scope, f"{text}: {_LOOSENS[key]}"))
    return out


MarkAt = Callable[[int, str, str], None]  # (line, subject, message)


def _compare_filters(
    before: Optional[Setting], after: Optional[Setting], line: int, mark: MarkAt
) -> None:
    old_entries = before.value if before is not None else ()
    new_entries = after.value if after is not None else ()
    old, new = Counter(old_entries), Counter(new_entries)
    for entry in (new - old).elements():
        if warning_action(entry) != "error":
            mark(
                line,
                f"filterwarnings {entry}",
                f"filterwarnings adds {_show(entry)}: it can silence warnings that would fail tests",
            )
    for entry in (old - new).elements():
        if warning_action(entry) == "error":
            mark(line, f"filterwarnings drops {entry}", f"filterwarnings drops {_show(entry)}")
    # a later entry wins: one that moves past an error filter can now silence it
    for entry in dict.fromkeys(new_entries):
        if entry not in old or warning_action(entry) == "error":
            continue
        lost = [
            e
            for e in _errors_after(old_entries, entry)
            if e not in _errors_after(new_entries, entry)
        ]
        if lost:
            mark(
                line,
                f"filterwarnings {entry} after {lost[0]}",
                f"filterwarnings moves {_show(entry)} after {_show(lost[0])}: it can silence "
                "warnings that would fail tests",
            )


def _errors_after(entries: Tuple[str, ...], entry: str) -> List[str]:
    """The error filters that win over ``entry``'s last line (they come later)."""
    last = len(entries) - 1 - entries[::-1].index(entry)
    return [e for e in entries[last + 1 :] if warning_action(e) == "error"]


def _overridden(value: str) -> Tuple[str, str]:
    key, _, setting = value.partition("=")
    return key.strip(), setting


def _override_effect(value: str) -> Optional[str]:
    """Why adding ``-o key=value`` matters, by the setting it overrides: not at
    all for a harmless one, a strictness option turned on, or a warnings cap."""
    written, setting = _overridden(value)
    key = _ALIASES.get(written, written)
    if key in _HARMLESS or key == "max_warnings":
        return None
    if (key == "strict" or key in _STRICT_PARTS) and _strtobool(setting) is True:
        return None
    return f"it overrides {written}"


# the command-line flags the strictness settings stand for: dropping one the new
# configuration sets as a setting (pytest 9's strict = true among them) drops nothing
_STRICT_FLAGS = {
    "--strict-markers": "strict_markers",
    "--strict": "strict_markers",
    "--strict-config": "strict_config",
}


def _compare_addopts(
    before: Optional[Setting],
    after: Optional[Setting],
    line: int,
    mark: MarkAt,
    settings: Optional[Dict[str, Setting]] = None,
) -> None:
    old_args = parse_arguments(before.value if before is not None else ())
    new_args = parse_arguments(after.value if after is not None else ())
    old = Counter((arg.name, arg.value) for arg in old_args)
    new = Counter((arg.name, arg.value) for arg in new_args)
    added, dropped = new - old, old - new
    for arg in new_args:
        unit = (arg.name, arg.value)
        if added[unit] <= 0:
            continue
        added[unit] -= 1
        if arg.name == "-o":
            effect = _override_effect(arg.value or "")
        else:
            effect = added_effect(arg)
        if effect is not None:
            mark(line, f"addopts {arg.subject}", f"addopts adds {arg.shown}: {effect}")
    for arg in old_args:
        unit = (arg.name, arg.value)
        if dropped[unit] <= 0:
            continue
        dropped[unit] -= 1
        if arg.name == "-o":
            matters = _overridden(arg.value or "")[0] not in _HARMLESS
        elif arg.name in _STRICT_FLAGS and _strict_value(settings or {}, _STRICT_FLAGS[arg.name]):
            matters = False  # the configuration keeps it as a setting
        else:
            matters = drop_matters(arg)
        if matters:
            text = f"addopts drops {arg.shown}"
            if not arg.known:
                text += ": an option oracle-guard does not know; an owner sets runner options"
            mark(line, f"addopts drops {arg.subject}", text)


load, compare = _load, _compare  # for effective.py: a file as pytest reads it, two compared
