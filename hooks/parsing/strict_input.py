"""What the strict loaders share: the error, the loaded document, UTF-8 decoding, the limits."""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Optional, Tuple

MAX_DEPTH = 200
MAX_INT_DIGITS = 4000  # below CPython's own 4300-digit limit, the same on every version
BOM = b"\xef\xbb\xbf"

JsonPath = Tuple[Any, ...]


class LoadError(Exception):
    """A file a strict loader refuses, and where (line and column, from 1) when known."""

    def __init__(
        self, message: str, line: Optional[int] = None, column: Optional[int] = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        # the same problem in plain words, placed where the construct it is about
        # opened (YAML only, where the parser knows it): (line, column, text)
        self.explained: Optional[Tuple[int, int, str]] = None

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", column {self.column}" if self.column else "")
        return f"{self.message} ({where})" if self.line else self.message


class Document:
    """A loaded value plus the line each JSON path starts on."""

    def __init__(
        self, value: Any, lines: Dict[JsonPath, int], columns: Optional[Dict[JsonPath, int]] = None
    ) -> None:
        self.value = value
        self._lines = lines
        self._columns = columns or {}

    def column_of(self, path: JsonPath) -> Optional[int]:
        """The column where ``path`` (its key, for a mapping's value) starts, when known."""
        path = tuple(path)
        while path not in self._columns:
            if not path:
                return None
            path = path[:-1]
        return self._columns[path]

    def line_of(self, path: JsonPath) -> Optional[int]:
        path = tuple(path)
        while True:
            if path in self._lines:
                return self._lines[path]
            if not path:
                return None
            path = path[:-1]


def decode_text(data: bytes) -> str:
    """UTF-8 without a byte-order mark, or a LoadError placed at the first bad byte."""
    if data.startswith(BOM):
        raise LoadError("starts with a UTF-8 byte-order mark", 1, 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise LoadError(f"invalid UTF-8 (byte 0x{data[exc.start]:02x})", line, column) from None


def line_col(text: str, pos: int) -> Tuple[int, int]:
    """(line, column), from 1, of offset ``pos`` in ``text``."""
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def json_pointer(path: JsonPath) -> str:
    """``$.a[0].b`` style, as check-jsonschema prints it."""
    out = "$"
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", part):
            out += f".{part}"
        else:
            out += f"[{json.dumps(part)}]"
    return out
