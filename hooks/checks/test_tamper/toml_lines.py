"""Where each key of a TOML text is: its line, for the marks, read from the text
itself (tomllib gives values, not places)."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

_BARE = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(text: str, pos: int) -> Tuple[Optional[Tuple[str, ...]], int]:
    """The dotted key at ``text[pos:]`` and the position after it; None when
    there is none."""
    parts: List[str] = []
    while True:
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos < len(text) and text[pos] in "\"'":
            quote = text[pos]
            end = pos + 1
            while end < len(text) and text[end] != quote:
                end += 2 if quote == '"' and text[end] == "\\" else 1
            if end >= len(text):
                return None, pos
            parts.append(text[pos + 1 : end])
            pos = end + 1
        else:
            bare = _BARE.match(text, pos)
            if bare is None:
                return None, pos
            parts.append(bare.group())
            pos = bare.end()
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos < len(text) and text[pos] == ".":
            pos += 1
            continue
        return tuple(parts), pos


def toml_lines(text: str) -> Dict[Tuple[str, ...], int]:
    """The line each table header and each key starts on, by its full dotted
    path, in a document tomllib has read (keys inside inline tables are not
    listed: their line is the one their table's key is on)."""
    out: Dict[Tuple[str, ...], int] = {}
    table: Tuple[str, ...] = ()
    depth = 0  # open [ and { of a value
    closing = ""  # the delimiter of the multi-line string a line is in
    for number, line in enumerate(text.splitlines(), 1):
        pos = 0
        if closing:
            end = line.find(closing)
            if end < 0:
                continue
            pos, closing = end + 3, ""
        elif depth == 0:
            stripped = line.lstrip()
            pos = len(line) - len(stripped)
            if stripped.startswith("["):
                double = stripped.startswith("[[")
                path, _ = _toml_key(line, pos + (2 if double else 1))
                if path is not None:
                    table = path
                    out.setdefault(path, number)
                continue  # a header line holds nothing more than a comment
            else:
                path, after = _toml_key(line, pos)
                if path is None or not line[after:].startswith("="):
                    continue
                out.setdefault(table + path, number)
                pos = after + 1
        depth, closing = _toml_value_state(line, pos, depth)
    return out


def _toml_value_state(line: str, pos: int, depth: int) -> Tuple[int, str]:
    """Bracket depth after a value's text ``line[pos:]``, and the delimiter of a
    multi-line string left open at its end."""
    while pos < len(line):
        ch = line[pos]
        if ch == "#":
            break
        if line.startswith(('"""', "'''"), pos):
            end = line.find(line[pos : pos + 3], pos + 3)
            if end < 0:
                return depth, line[pos : pos + 3]
            pos = end + 3
            continue
        if ch in "\"'":
            end = pos + 1
            while end < len(line) and line[end] != ch:
                end += 2 if ch == '"' and line[end] == "\\" else 1
            pos = end + 1
            continue
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(0, depth - 1)
        pos += 1
    return depth, ""
